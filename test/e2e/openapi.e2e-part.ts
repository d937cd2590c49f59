import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ACCESS_METADATA } from '../../src/core/auth/access.decorators.js';
import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import { API_TAGS } from '../../src/core/openapi/openapi-tags.js';
import { bearer, startApp, type TestApp } from '../support/app.js';
import { operations } from '../support/routes.js';

describe('OpenAPI document and Swagger UI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('serves the OpenAPI 3.1 document, version 1.0.0, to an authenticated caller', async () => {
    expect((await t.http().get('/api/v1/spec')).status).toBe(401);
    const res = await t.http().get('/api/v1/spec').set(bearer(t.admin.token));
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    expect(res.body.components.securitySchemes.bearer).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
  });

  /**
   * Probes, the session exchange and the OAuth callback (the state is the credential) take no
   * token; the embed dashboard takes an embed token only.
   */
  const PUBLIC_PATHS = new Set([
    '/api/v1/github/setup',
    '/health/live',
    '/health/ready',
    '/api/v1/embed/session/token',
    '/api/v1/oauth/callback',
  ]);
  const EMBED_TOKEN_ROUTES = new Set([
    'get /api/v1/embed/dashboard/{publicId}',
    'post /api/v1/embed/dashboard/{publicId}/python-run',
    'get /api/v1/embed/dashboard/{publicId}/comments',
    'post /api/v1/embed/dashboard/{publicId}/comments',
    'get /api/v1/embed/dashboard/{publicId}/comments/mentionable-users',
    'patch /api/v1/embed/dashboard/{publicId}/comments/{commentId}',
    'delete /api/v1/embed/dashboard/{publicId}/comments/{commentId}',
    'post /api/v1/embed/dashboard/{publicId}/comments/{commentId}/resolve',
  ]);
  /** Routes taking an embed token or a Platform API token. */
  const EMBED_OR_PLATFORM_TOKEN_ROUTES = new Set(['get /api/v1/deployments/{deploymentId}/shared-workspace']);
  /**
   * git's smart HTTP routes (git-http.controller.ts) speak git's protocol: its media types both
   * ways, the token also as a Basic password, and a push that is only ever refused.
   */
  const GIT_ROUTES =
    /^\/build\/api\/v1\/deployments\/\{deploymentId\}\/git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
  /** Routes answering a file, with the media types they declare. */
  const BINARY_ROUTES = new Map([
    [
      'get /api/v1/deployments/{deploymentId}/dashboard-exports/{jobId}/download',
      ['image/png', 'application/pdf'],
    ],
    // Not binary, but not JSON either: the unified diff, as `git diff` prints it.
    ['get /build/api/v1/deployments/{deploymentId}/branches/diff/patch', ['text/x-diff']],
  ]);
  const ONLY_REFUSED = 'post /build/api/v1/deployments/{deploymentId}/git/git-receive-pack';

  it('gives every operation a unique operationId, a tag, its security, and response schemas', () => {
    const ops = operations(t.app.get(OpenApiDocument).get());
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of ops) {
      const where = `${op.method} ${op.path}`;
      expect({ where, id: typeof op.operationId }).toEqual({ where, id: 'string' });
      expect({ where, tags: (op.op.tags as string[]).length > 0 }).toEqual({ where, tags: true });
      const expected = PUBLIC_PATHS.has(op.path)
        ? [{}]
        : EMBED_TOKEN_ROUTES.has(where)
          ? [{ embedToken: [] }]
          : EMBED_OR_PLATFORM_TOKEN_ROUTES.has(where)
            ? [{ embedToken: [] }, { bearer: [] }, { apiKey: [] }]
            : GIT_ROUTES.test(op.path)
              ? [{ bearer: [] }, { apiKey: [] }, { basicToken: [] }]
              : [{ bearer: [] }, { apiKey: [] }];
      expect({ where, security: op.op.security }).toEqual({ where, security: expected });
      const responses = op.op.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>;
      const success = Object.entries(responses).filter(([code]) => code.startsWith('2'));
      expect({ where, hasSuccess: success.length > 0 || where === ONLY_REFUSED }).toEqual({
        where,
        hasSuccess: true,
      });
      for (const [code, response] of success) {
        if (code === '204') continue;
        const media = GIT_ROUTES.test(op.path)
          ? [Object.keys(response.content ?? {}).find((m) => m.startsWith('application/x-git-')) ?? '']
          : (BINARY_ROUTES.get(where) ?? ['application/json']);
        for (const m of media)
          expect({ where, code, media: m, schema: Boolean(response.content?.[m]?.schema) }).toEqual({
            where,
            code,
            media: m,
            schema: true,
          });
      }
      // Membership links (`PUT /roles/{roleId}/users/{userId}`, `PUT /groups/{id}/users/{userId}`...) take no body.
      // Nor does `creation-step/reset` (the reference's takes none).
      const link =
        /\/(users|groups)\/\{(userId|groupId)\}$/.test(op.path) || op.path.endsWith('/creation-step/reset');
      if (['post', 'put', 'patch'].includes(op.method) && !link) {
        const body = op.op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined;
        // The one file upload takes multipart/form-data, git's routes git's requests; every other body is JSON.
        const media = where.endsWith('/data-model/upload/file')
          ? 'multipart/form-data'
          : GIT_ROUTES.test(op.path)
            ? `application/x-${op.path.split('/').pop()}-request`
            : 'application/json';
        expect({ where, body: Boolean(body?.content?.[media]?.schema) }).toEqual({
          where,
          body: true,
        });
      }
    }
  });

  it('lists its tags once, described, in the declared order, and files every operation under exactly one', () => {
    const doc = t.app.get(OpenApiDocument).get();
    expect(doc.tags?.map((tag) => tag.name)).toEqual(API_TAGS.map((tag) => tag.name));
    for (const tag of doc.tags ?? [])
      expect({ tag: tag.name, described: Boolean(tag.description) }).toEqual({
        tag: tag.name,
        described: true,
      });
    const used = new Set<string>();
    for (const op of operations(doc)) {
      const where = `${op.method} ${op.path}`;
      const tags = op.op.tags as string[];
      expect({ where, tags: tags.length }).toEqual({ where, tags: 1 });
      expect({ where, declared: API_TAGS.some((tag) => tag.name === tags[0]) }).toEqual({
        where,
        declared: true,
      });
      used.add(tags[0]);
    }
    expect(API_TAGS.map((tag) => tag.name).filter((name) => !used.has(name))).toEqual([]);
  });

  it('claims a JWT only for the embed token, and names the server relative to itself', () => {
    const doc = t.app.get(OpenApiDocument).get();
    const schemes = doc.components?.securitySchemes as Record<string, { bearerFormat?: string }>;
    expect(schemes.bearer.bearerFormat).toBeUndefined();
    expect(schemes.apiKey.bearerFormat).toBeUndefined();
    expect(schemes.embedToken.bearerFormat).toBe('JWT');
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('is committed and up to date (run `npm run openapi` after changing the contract)', () => {
    const committed = fs.readFileSync('openapi/openapi.json', 'utf8');
    const generated = execFileSync(process.execPath, ['dist/src/cli.js', 'openapi'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(JSON.parse(committed)).toEqual(JSON.parse(generated));
    expect(JSON.parse(committed)).toEqual(JSON.parse(JSON.stringify(t.app.get(OpenApiDocument).get())));
  });

  it('resolves every schema reference to a component', () => {
    const doc = t.app.get(OpenApiDocument).get() as { components: { schemas: Record<string, unknown> } };
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((name) => !(name in doc.components.schemas))).toEqual([]);
  });

  it('serves the Swagger UI at /docs from local assets only', async () => {
    const html = await t.http().get('/docs/');
    expect(html.status).toBe(200);
    expect(html.text).toContain('swagger-ui');
    const refs = [...html.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(ref).not.toMatch(/^(https?:)?\/\//);
    const init = await t.http().get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain('"openapi": "3.1.0"');
    expect(init.text).toContain('validatorUrl');
    expect(init.text).not.toMatch(/https?:\/\/(?!deployment-)[a-z]/i);
    expect((await t.http().get('/docs-json')).status).toBe(404);
  });

  it('has an access declaration on every route (default deny)', () => {
    const discovery = t.app.get(DiscoveryService);
    const scanner = t.app.get(MetadataScanner);
    const reflector = t.app.get(Reflector);
    const undeclared: string[] = [];
    let routes = 0;
    for (const wrapper of discovery.getControllers()) {
      const proto = wrapper.metatype?.prototype as object | undefined;
      if (!proto || !wrapper.metatype) continue;
      for (const method of scanner.getAllMethodNames(proto)) {
        const handler = (proto as Record<string, () => unknown>)[method];
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        routes += 1;
        const rule = reflector.getAllAndOverride(ACCESS_METADATA, [handler, wrapper.metatype]);
        if (!rule) undeclared.push(`${wrapper.name}.${method}`);
      }
    }
    expect(routes).toBeGreaterThan(20);
    expect(undeclared).toEqual([]);
  });
});
