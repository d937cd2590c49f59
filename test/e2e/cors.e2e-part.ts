import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';

const APP = 'https://app.example.com';
const ADDIN = 'https://addin.example.net:8443';
const STRANGER = 'https://evil.example.org';
const TOKEN = '/api/v1/embed/session/token';

const corsHeaders = (headers: Record<string, string>) =>
  Object.keys(headers).filter((h) => h.startsWith('access-control-'));

const list = (value: string | undefined) => (value ?? '').split(',').map((v) => v.trim().toLowerCase());

describe('CORS', () => {
  describe('with allowed origins', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ CORS_ORIGINS: `${APP}, ${ADDIN}` });
    });
    afterAll(() => t.close());

    const preflight = (
      path: string,
      origin: string,
      method = 'POST',
      headers = 'authorization,content-type',
    ) =>
      t
        .http()
        .options(path)
        .set('Origin', origin)
        .set('Access-Control-Request-Method', method)
        .set('Access-Control-Request-Headers', headers);

    it('answers a preflight from an allowed origin with 204, without a token', async () => {
      const res = await preflight(TOKEN, APP, 'POST', 'content-type,x-request-id');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(list(res.headers['access-control-allow-methods'])).toEqual(
        expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete']),
      );
      expect(list(res.headers['access-control-allow-headers'])).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'x-request-id', 'if-match']),
      );
      expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
      expect(list(res.headers['vary'])).toContain('origin');
      expect(res.text).toBe('');
    });

    it('answers preflights on authenticated routes too, and for each listed origin', async () => {
      const res = await preflight('/api/v1/users/me', ADDIN, 'GET', 'authorization');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ADDIN);
      const scim = await preflight('/api/scim/v2/Users/1', APP, 'PUT', 'authorization,if-match');
      expect(scim.status).toBe(204);
      expect(scim.headers['access-control-allow-origin']).toBe(APP);
    });

    it('lets a browser exchange an embed session for a token, and read the answer headers', async () => {
      const dep = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentInput());
      expect(dep.status).toBe(200);
      const session = await t
        .http()
        .post('/api/v1/embed/generate-session')
        .set(bearer(t.admin.token))
        .send({ deploymentId: dep.body.id, externalId: 'browser-user' });
      expect(session.status).toBe(200);

      const res = await t.http().post(TOKEN).set('Origin', APP).send({ sessionId: session.body.sessionId });
      expect(res.status).toBe(200);
      expect(res.body.token).toEqual(expect.any(String));
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(list(res.headers['access-control-expose-headers'])).toEqual(
        expect.arrayContaining([
          'x-request-id',
          'retry-after',
          'ratelimit',
          'ratelimit-policy',
          'etag',
          'location',
        ]),
      );
      expect(list(res.headers['vary'])).toContain('origin');
    });

    it('sends the CORS headers on error answers, so the browser can read them', async () => {
      const res = await t
        .http()
        .post(TOKEN)
        .set('Origin', APP)
        .send({ sessionId: '0'.repeat(32) });
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
    });

    it('gives another origin no CORS header at all, on preflights and on requests', async () => {
      const pre = await preflight(TOKEN, STRANGER);
      expect(pre.status).toBe(204);
      expect(corsHeaders(pre.headers)).toEqual([]);
      expect(list(pre.headers['vary'])).toContain('origin');
      // Near misses of an allowed origin are other origins.
      for (const origin of [`${APP}/`, 'http://app.example.com', 'https://app.example.com:443x', 'null']) {
        const res = await preflight(TOKEN, origin);
        expect({ origin, headers: corsHeaders(res.headers) }).toEqual({ origin, headers: [] });
      }
      const res = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token)).set('Origin', STRANGER);
      expect(res.status).toBe(200);
      expect(corsHeaders(res.headers)).toEqual([]);
    });

    it('leaves an OPTIONS that is no preflight to the router', async () => {
      const res = await t.http().options('/api/v1/users/me').set('Origin', APP);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'not_found');
    });
  });

  describe('with rate limits', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ CORS_ORIGINS: APP, RATE_LIMIT_MAX: '2', AUTH_FAILURE_LIMIT_MAX: '2' });
    });
    afterAll(() => t.close());

    it('neither counts preflights nor refuses them', async () => {
      for (let i = 0; i < 6; i++) {
        const res = await t
          .http()
          .options(TOKEN)
          .set('Origin', APP)
          .set('Access-Control-Request-Method', 'POST');
        expect(res.status).toBe(204);
      }
      // Requests without a token count per address: this is the first of its budget of 2.
      const res = await t
        .http()
        .post(TOKEN)
        .set('Origin', APP)
        .send({ sessionId: '0'.repeat(32) });
      expect(res.status).toBe(401);
      expect(res.headers['ratelimit']).toContain('r=1');
      expect(res.headers['access-control-allow-origin']).toBe(APP);
    });
  });

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp();
    });
    afterAll(() => t.close());

    it('allows no origin', async () => {
      const pre = await t
        .http()
        .options(TOKEN)
        .set('Origin', APP)
        .set('Access-Control-Request-Method', 'POST');
      expect(pre.status).toBe(204);
      expect(corsHeaders(pre.headers)).toEqual([]);
      const res = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token)).set('Origin', APP);
      expect(corsHeaders(res.headers)).toEqual([]);
    });
  });

  describe('with the wildcard', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ CORS_ORIGINS: '*' });
    });
    afterAll(() => t.close());

    it('allows every origin, never with credentials', async () => {
      const pre = await t
        .http()
        .options('/api/v1/users/me')
        .set('Origin', STRANGER)
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
      const res = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token)).set('Origin', STRANGER);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });
  });

  describe('when HTTPS is required', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({
        NODE_ENV: 'production',
        ALLOW_HTTP: 'false',
        TRUST_PROXY: 'loopback',
        CORS_ORIGINS: APP,
      });
    });
    afterAll(() => t.close());

    it('refuses a preflight over plain HTTP like any request, and answers one over HTTPS', async () => {
      const plain = await t
        .http()
        .options(TOKEN)
        .set('Origin', APP)
        .set('Access-Control-Request-Method', 'POST');
      expect(plain.status).toBe(403);
      expectErrorShape(plain.body, 403, 'https_required');
      const secure = await t
        .http()
        .options(TOKEN)
        .set('X-Forwarded-Proto', 'https')
        .set('Origin', APP)
        .set('Access-Control-Request-Method', 'POST');
      expect(secure.status).toBe(204);
      expect(secure.headers['access-control-allow-origin']).toBe(APP);
    });
  });
});
