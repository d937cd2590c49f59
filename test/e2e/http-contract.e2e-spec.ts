import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { OpenApiDocument } from '../../src/core/http/openapi-document.js';
import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';
import { operations } from '../support/routes.js';

describe('HTTP contract', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ BODY_LIMIT: '64kb' });
  });
  afterAll(() => t.close());

  it('answers an unknown route with the error shape', async () => {
    const res = await t.http().get('/api/v1/nope').set(bearer(t.admin.token));
    expect(res.status).toBe(404);
    expectErrorShape(res.body, 404, 'not_found');
  });

  it('rejects malformed JSON with 400', async () => {
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .set('Content-Type', 'application/json')
      .send('{"email": ');
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'malformed_json');
  });

  it('rejects a JSON body that is not an object', async () => {
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .set('Content-Type', 'application/json')
      .send('[1,2]');
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400);
  });

  it('rejects unknown fields, naming them, and changes nothing', async () => {
    const before = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM users');
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .send({ email: 'new@acme.test', username: 'new', ephemeralTtlSeconds: 5 });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'validation_failed');
    expect(res.body.message).toEqual(
      expect.arrayContaining([expect.stringContaining('ephemeralTtlSeconds')]),
    );
    expect(await t.sql('SELECT count(*)::int AS n FROM users')).toEqual(before);
  });

  it('refuses grants on resource types that cannot carry them yet with 400, not 500', async () => {
    const res = await t
      .http()
      .put(`/api/v1/users/${t.admin.userId}/policies`)
      .set(bearer(t.admin.token))
      .send({ policies: [{ resourceType: 'ChatThread', actions: ['ChatThreadRead'], resources: ['1'] }] });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'unsupported_resource_type');
  });

  it('names each bad field, nested ones by their path', async () => {
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .send({ email: 42, username: ['x'], settings: { locale: 7 } });
    expect(res.status).toBe(400);
    const messages: string[] = res.body.message;
    expect(messages.some((m) => m.startsWith('email'))).toBe(true);
    expect(messages.some((m) => m.startsWith('username'))).toBe(true);
    expect(messages.some((m) => m.startsWith('settings.locale'))).toBe(true);
  });

  it.each([
    [
      'a NUL in the body',
      (r: TestApp) =>
        r
          .http()
          .post('/api/v1/users')
          .set(bearer(r.admin.token))
          .send({ email: 'a@b.test', username: 'a\u0000b' }),
    ],
    [
      'a NUL in the query',
      (r: TestApp) => r.http().get('/api/v1/users?search=a%00b').set(bearer(r.admin.token)),
    ],
    ['a NUL in the path', (r: TestApp) => r.http().get('/api/v1/users/1%00').set(bearer(r.admin.token))],
  ])('rejects %s with 400', async (_, send) => {
    const res = await send(t);
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'invalid_characters');
  });

  it('rejects a body over the size limit with 413', async () => {
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .send({ email: 'big@acme.test', username: 'x'.repeat(100_000) });
    expect(res.status).toBe(413);
    expectErrorShape(res.body, 413, 'payload_too_large');
  });

  it.each(['abc', '0', '-1', '1.5', '99999999999', '2147483648', '1e3'])(
    'rejects the id %s with 400',
    async (id) => {
      const res = await t.http().get(`/api/v1/users/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    },
  );

  it('never answers 500 to garbage on any route', async () => {
    const garbage: unknown[] = [
      {},
      { name: 123, email: {}, policies: 'x', first: 'y', resources: [[]] },
      { name: 'x'.repeat(5000), templateVariables: [1], settings: 'no', expiresAt: 'yesterday' },
      { policies: [{ resourceType: 'Deployment', actions: ['Nope'], resources: ['abc'] }] },
      { policies: [{ resourceType: 'Report', actions: ['ReportRead'], resources: ['99999'] }] },
    ];
    const ids = ['1', 'abc', '99999999999', '0'];
    const queries = [
      '',
      '?first=abc',
      '?first=0',
      '?first=100000',
      '?after=%%%',
      '?after=WzFd&limit=3',
      '?limit=-1',
      '?search=%25_%5C',
    ];
    const failures: string[] = [];
    for (const op of operations(t.app.get(OpenApiDocument).get())) {
      if (op.path === '/api/v1/users/{id}' && op.method === 'delete') continue; // would delete the admin's peers; covered elsewhere
      for (const id of ids) {
        for (const query of op.method === 'get' ? queries : ['']) {
          for (const body of op.method === 'get' ? [undefined] : garbage) {
            const req = t
              .http()
              [op.method](op.concrete(id) + query)
              .set(bearer(t.admin.token));
            const res = body === undefined ? await req : await req.send(body as object);
            if (res.status >= 500) failures.push(`${op.method} ${op.concrete(id)}${query} -> ${res.status}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('gives every response a request id, echoing a well-formed one', async () => {
    const own = await t
      .http()
      .get('/api/v1/users/me')
      .set(bearer(t.admin.token))
      .set('X-Request-Id', 'abc-123');
    expect(own.headers['x-request-id']).toBe('abc-123');
    const fresh = await t.http().get('/api/v1/nope');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(t.admin.token))
      .set('Content-Type', 'application/json')
      .send('{');
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await t.http().get('/health/live').set('X-Request-Id', 'a b\tc<script>');
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends security headers', async () => {
    const res = await t.http().get('/health/live');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('rate limiting', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_SECONDS: '60' });
  });
  afterAll(() => t.close());

  it('limits per token with standard headers and 429 + Retry-After', async () => {
    const responses = [];
    for (let i = 0; i < 6; i++)
      responses.push(await t.http().get('/api/v1/users/me').set(bearer(t.admin.token)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    const last = responses[5];
    expect(last.headers['retry-after']).toMatch(/^\d+$/);
    expect(last.headers['ratelimit']).toContain('r=0');
    expect(last.headers['ratelimit-policy']).toContain('q=5');
    expectErrorShape(last.body, 429, 'rate_limited');
  });

  it('counts each token on its own', async () => {
    const { token } = await t.app
      .get((await import('../../src/modules/users/accounts.service.js')).AccountsService)
      .token('acme', 'admin@acme.test');
    expect((await t.http().get('/api/v1/users/me').set(bearer(token))).status).toBe(200);
  });

  it('does not limit the probes', async () => {
    for (let i = 0; i < 8; i++) expect((await t.http().get('/health/live')).status).toBe(200);
  });
});

describe('HTTPS enforcement', () => {
  it('refuses plain HTTP when HTTPS is required, but not for the probes', async () => {
    const t = await startApp({ NODE_ENV: 'production', ALLOW_HTTP: 'false' });
    try {
      const res = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'https_required');
      expect((await t.http().get('/health/live')).status).toBe(200);
      // X-Forwarded-Proto is ignored unless the proxy is trusted.
      const spoofed = await t
        .http()
        .get('/api/v1/users/me')
        .set(bearer(t.admin.token))
        .set('X-Forwarded-Proto', 'https');
      expect(spoofed.status).toBe(403);
    } finally {
      await t.close();
    }
  });

  it('accepts X-Forwarded-Proto: https from a trusted proxy and sends HSTS', async () => {
    const t = await startApp({ NODE_ENV: 'production', ALLOW_HTTP: 'false', TRUST_PROXY: 'loopback' });
    try {
      const res = await t
        .http()
        .get('/api/v1/users/me')
        .set(bearer(t.admin.token))
        .set('X-Forwarded-Proto', 'https');
      expect(res.status).toBe(200);
      expect(res.headers['strict-transport-security']).toContain('max-age=');
    } finally {
      await t.close();
    }
  });

  it('terminates TLS itself from a certificate and key', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-'));
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const t = await startApp({
      NODE_ENV: 'production',
      ALLOW_HTTP: 'false',
      TLS_CERT_FILE: cert,
      TLS_KEY_FILE: key,
    });
    try {
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const body = await new Promise<{ status: number; json: { id: number } }>((resolve, reject) => {
        https
          .get(
            {
              host: '127.0.0.1',
              port,
              path: '/api/v1/users/me',
              headers: bearer(t.admin.token),
              rejectUnauthorized: false,
            },
            (res) => {
              let data = '';
              res.on('data', (c) => (data += c));
              res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(data) }));
            },
          )
          .on('error', reject);
      });
      expect(body.status).toBe(200);
      expect(body.json.id).toBe(t.admin.userId);
    } finally {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
