import { decodeProtectedHeader, jwtVerify } from 'jose';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';

const TOKEN = '/api/v1/usage-analytics/token';
const SECRET = 'usage-analytics-test-secret-0123456789abcdef';
const ENABLED = {
  USAGE_ANALYTICS_API_URL: 'https://usage.analytics.test/cubejs-api/v1',
  USAGE_ANALYTICS_DEPLOYMENT_ID: '4242',
  USAGE_ANALYTICS_API_SECRET: SECRET,
};
const key = new TextEncoder().encode(SECRET);

describe('usage analytics token', () => {
  describe('POST /api/v1/usage-analytics/token (configured)', () => {
    let t: TestApp;
    let viewer: Actor;
    let noRole: Actor;
    let other: Actor;
    beforeAll(async () => {
      t = await startApp(ENABLED);
      viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      noRole = await newUser(t, t.admin, { defaultRoles: [] });
      other = await newAccount(t, 'globex');
    });
    afterAll(() => t.close());

    const issue = (actor: Actor) => t.http().post(TOKEN).set(bearer(actor.token));

    it('answers 401 without a token', async () => {
      const res = await t.http().post(TOKEN);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to users who are not admins', async () => {
      for (const actor of [viewer, noRole]) {
        const res = await issue(actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
    });

    it('issues a one-hour HS256 token scoped to the caller’s account', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await issue(t.admin);
      const after = Math.ceil(Date.now() / 1000);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.any(String),
        apiUrl: ENABLED.USAGE_ANALYTICS_API_URL,
        deploymentId: 4242,
        expiresAt: expect.any(String),
      });
      expect(decodeProtectedHeader(res.body.token)).toEqual({ alg: 'HS256', typ: 'JWT' });
      const { payload } = await jwtVerify(res.body.token, key, { algorithms: ['HS256'] });
      expect(Object.keys(payload).sort()).toEqual(['accountId', 'accountSlug', 'exp', 'iat', 'sub']);
      expect(payload).toMatchObject({
        sub: `user:${t.admin.userId}`,
        accountId: t.admin.accountId,
        accountSlug: 'acme',
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(payload.iat).toBeGreaterThanOrEqual(before);
      expect(payload.iat).toBeLessThanOrEqual(after);
      expect(res.body.expiresAt).toBe(new Date(payload.exp! * 1000).toISOString());
    });

    it('carries the account of the caller, never another one', async () => {
      const res = await issue(other);
      expect(res.status).toBe(200);
      const { payload } = await jwtVerify(res.body.token, key, { algorithms: ['HS256'] });
      expect(payload).toMatchObject({
        sub: `user:${other.userId}`,
        accountId: other.accountId,
        accountSlug: 'globex',
      });
      expect(payload.accountId).not.toBe(t.admin.accountId);
    });

    it('signs with the configured secret only', async () => {
      const res = await issue(t.admin);
      const wrong = new TextEncoder().encode(`${SECRET}-not-it`);
      await expect(jwtVerify(res.body.token, wrong, { algorithms: ['HS256'] })).rejects.toThrow();
    });

    it('refuses body fields with 400', async () => {
      const res = await t.http().post(TOKEN).set(bearer(t.admin.token)).send({ ttl: 86400 });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      const empty = await t.http().post(TOKEN).set(bearer(t.admin.token)).send({});
      expect(empty.status).toBe(200);
    });

    it('never returns the secret', async () => {
      const res = await issue(t.admin);
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    });
  });

  // Started only after the configured app is closed: the two would share passport's strategies.
  describe('POST /api/v1/usage-analytics/token (not configured)', () => {
    let t: TestApp;
    let viewer: Actor;
    beforeAll(async () => {
      t = await startApp();
      viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    });
    afterAll(() => t.close());

    it('answers 404 usage_analytics_disabled to admins', async () => {
      const res = await t.http().post(TOKEN).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'usage_analytics_disabled');
    });

    it('still answers 401 without a token and 403 to non-admins', async () => {
      const anon = await t.http().post(TOKEN);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().post(TOKEN).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('configuration', () => {
    const base = { NODE_ENV: 'test' };
    const configError = (env: Record<string, string>): string => {
      try {
        new AppConfig('api', { ...base, ...env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('expected a configuration error');
    };

    it('is off without the variables and on with all three', () => {
      expect(new AppConfig('api', base).usageAnalytics).toBeNull();
      expect(new AppConfig('api', { ...base, ...ENABLED }).usageAnalytics).toEqual({
        apiUrl: ENABLED.USAGE_ANALYTICS_API_URL,
        deploymentId: 4242,
        apiSecret: SECRET,
      });
    });

    it('refuses to start with only some of the variables', () => {
      for (const missing of Object.keys(ENABLED)) {
        const env: Record<string, string> = { ...ENABLED };
        delete env[missing];
        expect(configError(env)).toContain('must be set together');
      }
    });

    it('names each bad value', () => {
      expect(configError({ ...ENABLED, USAGE_ANALYTICS_API_SECRET: 'x'.repeat(31) })).toContain(
        'USAGE_ANALYTICS_API_SECRET must be at least 32 characters',
      );
      for (const id of ['0', '-1', 'abc', '1.5']) {
        expect(configError({ ...ENABLED, USAGE_ANALYTICS_DEPLOYMENT_ID: id })).toContain(
          'USAGE_ANALYTICS_DEPLOYMENT_ID must be a positive integer',
        );
      }
      for (const url of ['ftp://usage.test', 'usage.test/api', 'not a url']) {
        expect(configError({ ...ENABLED, USAGE_ANALYTICS_API_URL: url })).toContain(
          'USAGE_ANALYTICS_API_URL must be an http:// or https:// URL',
        );
      }
    });
  });
});
