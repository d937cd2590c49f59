import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApplicationConfig } from '@nestjs/core';
import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';

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
  it('puts reads through no interceptor: the global enhancers are our two guards only', () => {
    const config = t.app.get(ApplicationConfig);
    expect(config.getGlobalInterceptors()).toEqual([]);
    expect(config.getGlobalGuards().map((g) => g.constructor.name)).toEqual([
      'AccessGuard',
      'QueryParamsGuard',
    ]);
  });
});

describe('HTTPS enforcement', () => {
  it('refuses plain HTTP when HTTPS is required, but not for the probes', async () => {
    // The trusted proxy is not the client: the client's requests count as plain HTTP.
    const t = await startApp({ NODE_ENV: 'production', ALLOW_HTTP: 'false', TRUST_PROXY: '192.0.2.1' });
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
