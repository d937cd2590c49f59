import { Controller, Delete, Post, UseInterceptors, type NestInterceptor } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AuditInterceptor } from '../../src/core/audit/audit.interceptor.js';
import { Audited } from '../../src/core/audit/audited.decorator.js';
import { ApiError } from '../../src/core/errors/api-error.js';
import {
  callerOf,
  canonicalJson,
  parseIdempotencyKey,
  requestFingerprint,
  type FingerprintInput,
} from '../../src/core/http/idempotency/idempotency-request.js';
import { IdempotencyInterceptor } from '../../src/core/http/idempotency/idempotency.interceptor.js';
import {
  documentIdempotency,
  takesIdempotencyKey,
} from '../../src/core/http/idempotency/idempotency.openapi.js';
import type { Request } from 'express';

describe('Idempotency-Key values', () => {
  it('takes 1 to 255 printable ASCII characters, bare or as a Structured Field string', () => {
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    expect(parseIdempotencyKey('"8e03978e"')).toBe('8e03978e');
    expect(parseIdempotencyKey('"a \\"quoted\\" \\\\ key"')).toBe('a "quoted" \\ key');
    expect(parseIdempotencyKey('with spaces ~!')).toBe('with spaces ~!');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(parseIdempotencyKey(['a', 'b'])).toBe('a, b');
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
    ['a control character', 'a\tb'],
    ['an unterminated string', '"abc'],
    ['an escape the draft does not allow', '"a\\nb"'],
    ['an empty string', '""'],
  ])('refuses %s with 400 invalid_idempotency_key', (_what, value) => {
    let thrown: unknown;
    try {
      parseIdempotencyKey(value);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).code).toBe('invalid_idempotency_key');
    expect((thrown as ApiError).getStatus()).toBe(400);
  });
});

describe('request fingerprints', () => {
  const caller = { accountId: 1, identity: 'user:7:key:3' };
  const base: FingerprintInput = {
    method: 'POST',
    url: '/api/v1/groups',
    caller,
    body: { name: 'Finance', tags: [{ b: 1, a: 2 }] },
    multipart: false,
  };

  it('reads key order and absent bodies as JSON reads them', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson(undefined)).toBe('{}');
    expect(canonicalJson(JSON.parse('{"__proto__": {"x": 1}}'))).toBe('{"__proto__":{"x":1}}');
  });

  it('is the same for the same request, whatever the order of the body’s keys', () => {
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint({ ...base, body: { tags: [{ a: 2, b: 1 }], name: 'Finance' } })).toBe(
      requestFingerprint(base),
    );
  });

  it('differs for another method, path, query, caller or body; a multipart body is not read', () => {
    const print = requestFingerprint(base);
    for (const change of [
      { method: 'PUT' },
      { url: '/api/v1/roles' },
      { url: '/api/v1/groups?x=1' },
      { caller: { accountId: 1, identity: 'user:7:key:4' } },
      { caller: { accountId: 1, identity: 'embed-user:7' } },
      { body: { name: 'Finance ' } },
      { body: { name: 'Finance', tags: [{ a: 2, b: 1 }, {}] } },
    ])
      expect({ change, same: requestFingerprint({ ...base, ...change }) === print }).toEqual({
        change,
        same: false,
      });
    expect(requestFingerprint({ ...base, multipart: true, body: { a: 1 } })).toBe(
      requestFingerprint({ ...base, multipart: true, body: undefined }),
    );
  });

  it('names the caller the guard left on the request: a token’s user and key, or an embed user', () => {
    const principal = { userId: 7, accountId: 1, apiKeyId: 3 };
    expect(callerOf({ principal } as unknown as Request)).toEqual(caller);
    const embedPrincipal = { accountId: 2, embedUserId: 9 };
    expect(callerOf({ embedPrincipal } as unknown as Request)).toEqual({
      accountId: 2,
      identity: 'embed-user:9',
    });
    expect(callerOf({} as Request)).toBeNull();
  });
});

describe('@Audited() and Idempotency-Key', () => {
  class Other implements NestInterceptor {
    intercept(): never {
      throw new Error('not run');
    }
  }

  @Controller('x')
  class Routes {
    @Post()
    @Audited()
    create(): void {}

    @Audited()
    @UseInterceptors(Other)
    @Post('stacked')
    stacked(): void {}

    @Delete()
    @Audited()
    remove(): void {}
  }

  it('puts the idempotency interceptor outermost, before the audit interceptor', () => {
    const proto = Routes.prototype as unknown as Record<string, object>;
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, proto.create)).toEqual([
      IdempotencyInterceptor,
      AuditInterceptor,
    ]);
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, proto.stacked)).toEqual([
      IdempotencyInterceptor,
      AuditInterceptor,
      Other,
    ]);
    // On other methods it passes the request on (it acts on POST only).
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, proto.remove)).toEqual([
      IdempotencyInterceptor,
      AuditInterceptor,
    ]);
  });
});

describe('the OpenAPI document of Idempotency-Key', () => {
  const errorRef = '#/components/schemas/ErrorResponseDto';
  const ours = (status: number, code: string) => ({
    description: `\`${code}\`: something`,
    content: {
      'application/json': {
        schema: { $ref: errorRef },
        examples: { [code]: { summary: code, value: { statusCode: status, code } } },
      },
    },
  });
  const scimError = {
    description: 'scimType uniqueness: taken',
    content: { 'application/scim+json': { schema: { $ref: '#/components/schemas/ScimErrorDto' } } },
  };
  const document = (): OpenAPIObject => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/groups': {
        post: {
          security: [{ bearer: [] }],
          requestBody: { content: { 'application/json': { schema: {} } } },
          responses: { '200': { description: '' }, '409': ours(409, 'group_name_taken') },
        },
        get: { responses: { '200': { description: '' } } },
      },
      '/session': {
        post: { security: [{}], responses: { '200': { description: '' } } },
      },
      '/git/git-upload-pack': {
        post: {
          security: [{ bearer: [] }],
          requestBody: { content: { 'application/x-git-upload-pack-request': { schema: {} } } },
          responses: { '200': { description: '' } },
        },
      },
      '/scim/Users': {
        post: {
          security: [{ bearer: [] }],
          requestBody: { content: { 'application/scim+json': { schema: {} } } },
          responses: { '201': { description: '' }, '409': scimError },
        },
      },
    },
  });

  it('applies to POSTs taking a token and a parsed body', () => {
    const doc = document();
    const post = (path: string) => (doc.paths[path] as Record<string, object>).post;
    expect(takesIdempotencyKey('post', post('/groups'))).toBe(true);
    expect(takesIdempotencyKey('post', post('/scim/Users'))).toBe(true);
    expect(takesIdempotencyKey('post', post('/session'))).toBe(false);
    expect(takesIdempotencyKey('post', post('/git/git-upload-pack'))).toBe(false);
    expect(takesIdempotencyKey('get', (doc.paths['/groups'] as Record<string, object>).get)).toBe(false);
  });

  it('adds the optional header and merges its codes into the error responses, in their form', () => {
    const doc = document();
    documentIdempotency(doc);
    const groups = doc.paths['/groups'].post!;
    expect(groups.parameters).toEqual([
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      }),
    ]);
    const responses = groups.responses as Record<
      string,
      { description: string; content?: unknown; headers?: unknown }
    >;
    expect(responses['200'].headers).toEqual({ 'Idempotent-Replayed': expect.any(Object) });
    expect(responses['409'].description).toBe(
      '`group_name_taken`: A group with that name exists.\n\n' +
        '`idempotency_key_in_progress`: A request with this `Idempotency-Key` is still being processed; retry after `Retry-After` to get its answer.',
    );
    expect(responses['409'].content).toEqual({
      'application/json': {
        schema: { $ref: errorRef },
        examples: {
          group_name_taken: expect.objectContaining({
            value: expect.objectContaining({ code: 'group_name_taken' }),
          }),
          idempotency_key_in_progress: {
            summary: 'idempotency_key_in_progress',
            value: expect.objectContaining({
              statusCode: 409,
              error: 'Conflict',
              code: 'idempotency_key_in_progress',
            }),
          },
        },
      },
    });
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '409', '422']);

    // Twice is once.
    const once = JSON.stringify(doc);
    documentIdempotency(doc);
    expect(JSON.stringify(doc)).toBe(once);
  });

  it('names its codes, with examples in that schema, on an operation with an error schema of its own (SCIM), and skips the others', () => {
    const doc = document();
    documentIdempotency(doc);
    const scim = doc.paths['/scim/Users'].post!.responses as Record<
      string,
      { description: string; content?: Record<string, { schema: unknown; examples?: unknown }> }
    >;
    expect(scim['409'].description).toContain('scimType uniqueness: taken');
    expect(scim['409'].description).toContain('`idempotency_key_in_progress`');
    expect(scim['422']).toEqual({
      description: expect.stringContaining('`idempotency_key_reused`'),
      content: {
        'application/scim+json': {
          schema: { $ref: '#/components/schemas/ScimErrorDto' },
          examples: {
            idempotency_key_reused: {
              summary: 'idempotency_key_reused',
              value: {
                schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
                status: '422',
                detail: expect.stringContaining('Idempotency-Key'),
              },
            },
          },
        },
      },
    });
    expect(doc.paths['/session'].post!.parameters).toBeUndefined();
    expect(doc.paths['/git/git-upload-pack'].post!.parameters).toBeUndefined();
  });
});
