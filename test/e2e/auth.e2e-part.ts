import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import { hashToken } from '../../src/core/auth/token.js';
import { bearer, expectErrorShape, newAccount, newUser, startApp, type TestApp } from '../support/app.js';
import { operations } from '../support/routes.js';

describe('authentication', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers 401 on every non-public route without a token', async () => {
    const ops = operations(t.app.get(OpenApiDocument).get()).filter((o) => !o.public);
    expect(ops.length).toBeGreaterThan(15);
    for (const op of ops) {
      const res = await t.http()[op.method](op.concrete('1')).send({});
      expect({ route: `${op.method} ${op.path}`, status: res.status }).toEqual({
        route: `${op.method} ${op.path}`,
        status: 401,
      });
      // The challenge of RFC 9110 section 11.6.1 (and RFC 7644 section 2), on the Platform API and SCIM alike.
      expect({ route: `${op.method} ${op.path}`, challenge: res.headers['www-authenticate'] }).toEqual({
        route: `${op.method} ${op.path}`,
        challenge: 'Bearer realm="api"',
      });
      // SCIM answers in its own error schema (RFC 7644 section 3.12).
      if (op.path.startsWith('/api/scim/v2/')) expect(res.body).toMatchObject({ status: '401' });
      else expectErrorShape(res.body, 401, 'unauthorized');
    }
  });

  it('serves only the probes, the credential exchanges and redirects, and the Swagger UI without a token', async () => {
    const publicOps = operations(t.app.get(OpenApiDocument).get()).filter((o) => o.public);
    expect(publicOps.map((o) => o.path).sort()).toEqual([
      '/api/v1/embed/session/token',
      '/api/v1/github/setup',
      '/api/v1/oauth/callback',
      '/health/live',
      '/health/ready',
    ]);
    expect((await t.http().get('/docs')).status).toBe(200);
  });

  // RFC 6750 section 3.1: `error="invalid_token"` only when a token was sent and refused.
  const BARE = 'Bearer realm="api"';
  const INVALID = 'Bearer realm="api", error="invalid_token"';
  it.each([
    ['no scheme', (tok: string) => tok, BARE],
    ['unknown scheme', (tok: string) => `Token ${tok}`, BARE],
    ['basic', () => 'Basic dXNlcjpwYXNz', BARE],
    ['empty bearer', () => 'Bearer ', BARE],
    ['unknown token', () => 'Bearer pat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', INVALID],
    ['unknown token as Api-Key', () => 'Api-Key pat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', INVALID],
    ['garbage token', () => 'Bearer ../../etc/passwd', INVALID],
  ])(
    'rejects a malformed or unknown credential (%s) with 401 and a challenge',
    async (_, header, challenge) => {
      const res = await t.http().get('/api/v1/users/me').set('Authorization', header(t.admin.token));
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe(challenge);
    },
  );

  it('sends no challenge with answers other than 401', async () => {
    const ok = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token));
    expect(ok.status).toBe(200);
    expect(ok.headers['www-authenticate']).toBeUndefined();
    const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    const forbidden = await t.http().get('/api/v1/roles').set(bearer(viewer.token));
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBeUndefined();
  });

  it('accepts the same token as Bearer and as Api-Key, on every prefix', async () => {
    expect((await t.http().get('/api/v1/users/me').set(bearer(t.admin.token))).status).toBe(200);
    const viaApiKey = await t.http().get('/api/v1/users/me').set('Authorization', `Api-Key ${t.admin.token}`);
    expect(viaApiKey.status).toBe(200);
    expect(viaApiKey.body.id).toBe(t.admin.userId);
    const build = await t
      .http()
      .post('/build/api/v1/deployments')
      .set('Authorization', `api-key ${t.admin.token}`)
      .send({});
    expect(build.status).toBe(400); // authenticated, then validated
  });

  it('does not take a token from the query string', async () => {
    const res = await t.http().get(`/api/v1/users/me?access_token=${t.admin.token}`);
    expect(res.status).toBe(401);
  });

  it('stores only the SHA-256 of a token', async () => {
    const rows = await t.sql<{ token_hash: string }>(`SELECT token_hash FROM api_keys WHERE user_id = $1`, [
      t.admin.userId,
    ]);
    expect(rows.map((r) => r.token_hash)).toContain(hashToken(t.admin.token));
    const all = await t.sql<Record<string, unknown>>(`SELECT * FROM api_keys`);
    expect(JSON.stringify(all)).not.toContain(t.admin.token);
  });

  it("stops a deactivated user's tokens", async () => {
    const user = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    expect((await t.http().get('/api/v1/users/me').set(bearer(user.token))).status).toBe(200);
    const res = await t
      .http()
      .put(`/api/v1/users/${user.userId}`)
      .set(bearer(t.admin.token))
      .send({ isDeactivated: true });
    expect(res.status).toBe(200);
    expect((await t.http().get('/api/v1/users/me').set(bearer(user.token))).status).toBe(401);
  });

  it('answers 403 with the missing action when the token is valid but not allowed', async () => {
    const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    const res = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(viewer.token))
      .send({ email: 'x@acme.test', username: 'x' });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'forbidden');
    expect(res.body.message).toContain('All');
  });

  it("scopes every query to the caller's account: another account's user is 404", async () => {
    const other = await newAccount(t, 'globex');
    const res = await t.http().get(`/api/v1/users/${other.userId}`).set(bearer(t.admin.token));
    expect(res.status).toBe(404);
    const list = await t.http().get('/api/v1/users').set(bearer(t.admin.token));
    expect(list.body.items.map((u: { id: number }) => u.id)).not.toContain(other.userId);
  });
});
