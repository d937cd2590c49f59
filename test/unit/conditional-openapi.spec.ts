import fs from 'node:fs';
import type { OpenAPIObject } from '@nestjs/swagger';
import {
  documentConditionalRequests,
  readsForWrite,
  type Operation,
} from '../../src/core/http/conditional/conditional.openapi.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walking a parsed OpenAPI document */
type Json = Record<string, any>;

const ERROR_REF = '#/components/schemas/ErrorResponseDto';
const WRITES = ['put', 'patch', 'delete'] as const;
const PLATFORM = [{ bearer: [] }, { apiKey: [] }];

/** The committed document, as `buildOpenApiDocument` makes it (the post-processor is idempotent). */
function committed(): Json {
  const document = JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as Json;
  documentConditionalRequests(document as OpenAPIObject);
  return document;
}

const errorCodes = (op: Json, status: string): string[] =>
  Object.keys(op.responses?.[status]?.content?.['application/json']?.examples ?? {});
const header = (op: Json, name: string) =>
  (op.parameters ?? []).find((p: Json) => p.in === 'header' && p.name === name);
const ownErrors = (op: Json) =>
  Object.entries(op.responses ?? {}).some(
    ([status, r]: [string, any]) =>
      Number(status) >= 400 &&
      Object.values(r.content ?? {}).some((m: any) => m.schema?.$ref && m.schema.$ref !== ERROR_REF),
  );

describe('conditional requests in the OpenAPI document', () => {
  const document = committed();
  const paths = Object.entries(document.paths as Record<string, Json>);

  it('marks every GET with a PUT, PATCH or DELETE sibling: ETag on its 200, If-None-Match, 304', () => {
    const marked: string[] = [];
    for (const [path, item] of paths) {
      if (!item.get || !WRITES.some((m) => item[m]) || path.startsWith('/api/scim/')) continue;
      const get = item.get as Json;
      expect({ path, etag: get.responses['200'].headers?.ETag?.schema }).toEqual({
        path,
        etag: { type: 'string', example: expect.stringMatching(/^"[^"]+"$/) },
      });
      expect({ path, ifNoneMatch: header(get, 'If-None-Match')?.required }).toEqual({
        path,
        ifNoneMatch: false,
      });
      expect({ path, notModified: get.responses['304']?.headers?.ETag !== undefined }).toEqual({
        path,
        notModified: true,
      });
      marked.push(path);
    }
    // Users, groups, roles, deployments, workbooks, reports, notifications, settings...
    expect(marked.length).toBeGreaterThan(20);
    expect(marked).toContain('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}');
  });

  it('gives each write whose GET qualifies If-Match, If-None-Match, 412, 400 and 409 in the one error shape', () => {
    let writes = 0;
    for (const [path, item] of paths) {
      if (path.startsWith('/api/scim/')) continue;
      for (const method of WRITES) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        writes += 1;
        const qualifies = item.get !== undefined && readsForWrite(item.get as Operation, op);
        const summary = {
          where: `${method} ${path}`,
          ifMatch: header(op, 'If-Match') !== undefined,
          ifNoneMatch: header(op, 'If-None-Match') !== undefined,
          412: errorCodes(op, '412'),
          400: errorCodes(op, '400').filter((c) => /precondition/.test(c)),
          409: errorCodes(op, '409').includes('resource_busy'),
        };
        expect(summary).toEqual(
          qualifies
            ? {
                where: summary.where,
                ifMatch: true,
                ifNoneMatch: true,
                412: ['precondition_failed'],
                400: ['invalid_precondition'],
                409: true,
              }
            : {
                where: summary.where,
                ifMatch: false,
                ifNoneMatch: false,
                412: [],
                400: ['precondition_unsupported'],
                409: false,
              },
        );
        if (qualifies) {
          expect(op.responses['412'].headers.ETag).toBeDefined();
          expect(op.responses['412'].content['application/json'].schema.$ref).toBe(ERROR_REF);
          expect(op.responses['409'].headers['Retry-After']).toBeDefined();
        }
      }
    }
    expect(writes).toBeGreaterThan(40);
    const workbook = document.paths['/api/v1/deployments/{deploymentId}/workbooks/{workbookId}'];
    expect(header(workbook.put, 'If-Match')).toBeDefined();
    // Folders have no GET of their own: If-Match is refused there.
    const folder = document.paths['/api/v1/deployments/{deploymentId}/folders/{folderId}'];
    expect(errorCodes(folder.put, '400')).toContain('precondition_unsupported');
    // A list's GET (first/after) does not qualify.
    const envVars = document.paths['/api/v1/deployments/{deploymentId}/env-vars'];
    expect(header(envVars.put, 'If-Match')).toBeUndefined();
  });

  it('leaves SCIM, which answers its own errors, as it is', () => {
    const scim = paths.filter(([path]) => path.startsWith('/api/scim/'));
    expect(scim.length).toBeGreaterThan(0);
    for (const [, item] of scim)
      for (const method of ['get', ...WRITES]) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        expect(ownErrors(op)).toBe(true);
        expect(errorCodes(op, '400').filter((c) => /precondition/.test(c))).toEqual([]);
        expect(errorCodes(op, '409')).not.toContain('resource_busy');
      }
  });

  it('is the same document when applied twice', () => {
    const once = committed();
    const twice = structuredClone(once);
    documentConditionalRequests(twice as OpenAPIObject);
    expect(twice).toEqual(once);
  });

  it('keeps the codes and headers an operation documented already', () => {
    const document = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/api/v1/things/{id}': {
          get: { security: PLATFORM, responses: { '200': { description: 'ok' } } },
          put: {
            security: PLATFORM,
            responses: {
              '200': { description: 'ok' },
              '409': {
                description: 'x',
                headers: { 'X-Kept': { schema: { type: 'string' } } },
                content: {
                  'application/json': {
                    schema: { $ref: ERROR_REF },
                    examples: { conflict: { value: {} } },
                  },
                },
              },
            },
          },
        },
        '/api/v1/boards/{id}': {
          get: { security: [{ embedToken: [] }], responses: { '200': { description: 'ok' } } },
          patch: { security: PLATFORM, responses: { '200': { description: 'ok' } } },
        },
        '/api/v1/open/{id}': {
          get: { security: [{}], responses: { '200': { description: 'ok' } } },
          delete: { security: PLATFORM, responses: { '204': { description: 'gone' } } },
        },
      },
    } as Json;
    documentConditionalRequests(document as OpenAPIObject);
    const put = document.paths['/api/v1/things/{id}'].put;
    expect(errorCodes(put, '409')).toEqual(['conflict', 'resource_busy']);
    expect(Object.keys(put.responses['409'].headers).sort()).toEqual(['Retry-After', 'X-Kept']);
    // An embed-token GET cannot be read with the writer's Platform API token.
    expect(errorCodes(document.paths['/api/v1/boards/{id}'].patch, '400')).toEqual([
      'precondition_unsupported',
    ]);
    // A public GET reads for any caller.
    expect(header(document.paths['/api/v1/open/{id}'].delete, 'If-Match')).toBeDefined();
  });
});
