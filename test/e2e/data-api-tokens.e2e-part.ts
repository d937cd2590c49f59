import { createHmac } from 'node:crypto';
import { jwtVerify, type JWTPayload } from 'jose';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { postDeployment } from '../support/factories.js';

interface Environment {
  id: string;
  type: string;
  branch: string | null;
}

interface IssuedToken {
  token: string;
  security_context: Record<string, unknown>;
  created_at: string;
  expires_at: string;
}

/**
 * Data API tokens (issue 29): a deployment's token, tokens per environment and for metadata sync,
 * and their list. Each token is verified here with the secret (signature, claims, expiry) and
 * sent to the loopback data API fake, which accepts it for its environment only.
 */
describe('data API tokens', () => {
  const SECRET = 'cube-api-secret-'.padEnd(40, 'x');
  const MAX_TOKENS = 12;
  let t: TestApp;
  let fake: DataApiFake;
  let developer: Actor;
  let colleague: Actor;
  let aibiUser: Actor;
  let reader: Actor;
  let other: Actor;
  let otherDeployment: number;
  let id: number;
  let production: number;
  let staging: number;
  let devEnvironment: number;
  let devBranch: string;

  const build = (deploymentId: number) => `/build/api/v1/deployments/${deploymentId}`;
  const envBase = (deploymentId: number, environmentId: number | string) =>
    `/api/v1/deployments/${deploymentId}/environments/${environmentId}`;
  const issue = (environmentId: number | string, body: unknown, actor = t.admin, deploymentId = id) =>
    t
      .http()
      .post(`${envBase(deploymentId, environmentId)}/tokens`)
      .set(bearer(actor.token))
      .send(body as object);
  const list = (
    environmentId: number | string,
    query: Record<string, string | number> = {},
    actor = t.admin,
  ) =>
    t
      .http()
      .get(`${envBase(id, environmentId)}/tokens`)
      .query(query)
      .set(bearer(actor.token));
  const environments = async (deploymentId: number, actor = t.admin): Promise<Environment[]> => {
    const res = await t
      .http()
      .get(`/api/v1/deployments/${deploymentId}/environments`)
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body.items as Environment[];
  };
  const setSecret = async (deploymentId: number, actor = t.admin) => {
    const res = await t
      .http()
      .put(`/api/v1/deployments/${deploymentId}/env-vars`)
      .set(bearer(actor.token))
      .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] });
    expect(res.status).toBe(200);
  };
  /** The environment's own secret, as docs/querying.md gives it. */
  const environmentSecret = (environmentId: number) =>
    createHmac('sha256', SECRET).update(`environment:${environmentId}`).digest('hex');
  const verify = async (token: string, secret: string): Promise<JWTPayload> =>
    (await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'] })).payload;
  /** Sends `token` to the data API of production (`branch` null) or of a dev-mode branch. */
  const query = async (token: string, branch: string | null, path = 'meta') => {
    const at = branch === null ? '' : `/dev-mode/${encodeURIComponent(branch)}`;
    const res = await fetch(`${fake.url}/deployments/${id}${at}/cubejs-api/v1/${path}`, {
      method: path === 'meta' ? 'GET' : 'POST',
      headers: { Authorization: token, 'Content-Type': 'application/json' },
      body: path === 'meta' ? undefined : JSON.stringify({ query: { measures: ['Orders.count'] } }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** Turns a branch's staging environment on or off (a new branch first when `create`). */
  const stage = async (name: string, enabled: boolean, create = false) => {
    if (create) {
      const branch = await t
        .http()
        .post(`${build(id)}/branches`)
        .set(bearer(t.admin.token))
        .send({ name });
      expect(branch.status).toBe(200);
    }
    const toggle = await t
      .http()
      .put(`${build(id)}/branches/staging-environment`)
      .set(bearer(t.admin.token))
      .send({ branchName: name, enabled });
    expect(toggle.status).toBe(200);
    return enabled ? Number((await environments(id)).find((e) => e.branch === name)!.id) : null;
  };
  const tokenRows = async () =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM environment_tokens`))[0].n;

  beforeAll(async () => {
    fake = await startDataApiFake({ secret: SECRET });
    t = await startApp({ ...fake.env(), ENVIRONMENT_TOKENS_MAX: String(MAX_TOKENS) });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    colleague = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    aibiUser = await newUser(t, t.admin, { defaultRoles: ['AIBIUser'] });
    reader = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    other = await newAccount(t, 'globex');
    otherDeployment = (await postDeployment(t, other)).id;
    await setSecret(otherDeployment, other);
    id = (await postDeployment(t, t.admin)).id;
    await setSecret(id);
    await stage('qa', true, true);
    const dev = await t
      .http()
      .post(`${build(id)}/dev-mode`)
      .set(bearer(developer.token))
      .send({});
    expect(dev.status).toBe(200);
    devBranch = dev.body.branchName as string;
    const all = await environments(id);
    production = Number(all.find((e) => e.type === 'production')!.id);
    staging = Number(all.find((e) => e.type === 'staging')!.id);
    devEnvironment = Number(all.find((e) => e.type === 'development')!.id);
    fake.serveEnvironment(id, 'qa', staging);
    fake.serveEnvironment(id, devBranch, devEnvironment);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  describe('POST /deployments/{id}/token', () => {
    it('answers a production token for a body-less POST, as the command-line tool sends it: 24 hours, no context', async () => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${id}/token`)
        .set({
          Authorization: `Api-Key ${t.admin.token}`,
          'User-Agent': 'cube-cli/1.0.0',
          'Content-Length': '0',
        });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['cubeApiToken']);
      const claims = await verify(res.body.cubeApiToken as string, SECRET);
      expect(Object.keys(claims).sort()).toEqual(['exp', 'iat']);
      expect(claims.exp! - claims.iat!).toBe(86_400);
      expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(120);
      const answer = await query(res.body.cubeApiToken as string, null);
      expect(answer.status).toBe(200);
      expect(fake.requests.at(-1)).toMatchObject({ auth: 'ok', deploymentId: id, branch: null });
    });

    it('takes expiresIn from 60 to 86400 seconds', async () => {
      for (const expiresIn of [60, 86_400]) {
        const res = await t
          .http()
          .post(`/api/v1/deployments/${id}/token`)
          .set(bearer(t.admin.token))
          .send({ expiresIn });
        expect(res.status).toBe(200);
        const claims = await verify(res.body.cubeApiToken as string, SECRET);
        expect(claims.exp! - claims.iat!).toBe(expiresIn);
      }
    });

    it.each([
      [{ expiresIn: 59 }],
      [{ expiresIn: 86_401 }],
      [{ expiresIn: 'soon' }],
      [{ expiresIn: 1.5 }],
      [{ ttl: 60 }],
    ])('answers 400 to %j', async (body) => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${id}/token`)
        .set(bearer(t.admin.token))
        .send(body);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('answers 401 without a token, 403 to roles that read or explore but may not change the model', async () => {
      const anonymous = await t.http().post(`/api/v1/deployments/${id}/token`).send({});
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401);
      for (const actor of [aibiUser, reader]) {
        const res = await t.http().post(`/api/v1/deployments/${id}/token`).set(bearer(actor.token)).send({});
        expectErrorShape(res.body, 403, 'forbidden');
      }
      const ok = await t.http().post(`/api/v1/deployments/${id}/token`).set(bearer(developer.token)).send({});
      expect(ok.status).toBe(200);
    });

    it("answers 404 for another account's deployment", async () => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${otherDeployment}/token`)
        .set(bearer(t.admin.token))
        .send({});
      expectErrorShape(res.body, 404, 'deployment_not_found');
    });

    it('answers 409 data_api_not_configured, naming CUBEJS_API_SECRET, for a deployment without it', async () => {
      const bare = (await postDeployment(t, t.admin)).id;
      const res = await t
        .http()
        .post(`/api/v1/deployments/${bare}/token`)
        .set(bearer(t.admin.token))
        .send({});
      expectErrorShape(res.body, 409, 'data_api_not_configured');
      expect(res.body.message).toContain('CUBEJS_API_SECRET');
      const [envId] = (await environments(bare)).map((e) => e.id);
      const env = await issue(envId, { security_context: {} }, t.admin, bare);
      expectErrorShape(env.body, 409, 'data_api_not_configured');
    });
  });

  describe('POST /deployments/{id}/environments/{environmentId}/tokens', () => {
    it('signs exactly the security context, iat, exp and the scopes, for production', async () => {
      const before = Date.now();
      const res = await issue(production, {
        security_context: { tenant: 'acme', roles: ['analyst'], nested: { region: 'eu' } },
        expires_in: 600,
        scopes: ['data', 'meta'],
      });
      expect(res.status).toBe(200);
      const data = res.body.data as IssuedToken;
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(data.security_context).toEqual({ tenant: 'acme', roles: ['analyst'], nested: { region: 'eu' } });
      const claims = await verify(data.token, SECRET);
      expect(claims).toEqual({
        tenant: 'acme',
        roles: ['analyst'],
        nested: { region: 'eu' },
        scopes: ['data', 'meta'],
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
      expect(claims.exp! - claims.iat!).toBe(600);
      expect(Date.parse(data.created_at)).toBe(claims.iat! * 1000);
      expect(Date.parse(data.expires_at)).toBe(claims.exp! * 1000);
      expect(claims.iat! * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      const answer = await query(data.token, null, 'load');
      expect(answer.status).toBe(200);
      expect(fake.requests.at(-1)).toMatchObject({ auth: 'ok', securityContext: data.security_context });
    });

    it('defaults to an hour and no scopes claim', async () => {
      const res = await issue(production, { security_context: { tenant: 'initech' } });
      expect(res.status).toBe(200);
      const claims = await verify((res.body.data as IssuedToken).token, SECRET);
      expect(claims.exp! - claims.iat!).toBe(3_600);
      expect(claims).not.toHaveProperty('scopes');
      for (const body of [
        { security_context: {}, expires_in: null, scopes: null },
        { security_context: {}, expires_in: 1 },
      ]) {
        expect((await issue(production, body)).status).toBe(200);
      }
    });

    it("signs a staging token with the environment's own secret: staging takes it, production and development refuse it", async () => {
      const res = await issue(staging, { security_context: { tenant: 'acme' } });
      expect(res.status).toBe(200);
      const token = (res.body.data as IssuedToken).token;
      await expect(verify(token, SECRET)).rejects.toThrow();
      expect((await verify(token, environmentSecret(staging))).tenant).toBe('acme');
      expect((await query(token, 'qa')).status).toBe(200);
      expect(fake.requests.at(-1)).toMatchObject({ auth: 'ok', branch: 'qa' });
      const atProduction = await query(token, null);
      expect(atProduction).toEqual({ status: 403, body: { error: 'Invalid token' } });
      expect((await query(token, devBranch)).status).toBe(403);
      // And a production token is refused by staging.
      const prod = (await issue(production, { security_context: { tenant: 'acme' } })).body
        .data as IssuedToken;
      expect((await query(prod.token, 'qa')).status).toBe(403);
    });

    it("issues a development environment's tokens to its owner only", async () => {
      const mine = await issue(devEnvironment, { security_context: { me: true } }, developer);
      expect(mine.status).toBe(200);
      const token = (mine.body.data as IssuedToken).token;
      expect((await query(token, devBranch)).status).toBe(200);
      expect((await query(token, null)).status).toBe(403);
      const before = await tokenRows();
      const theirs = await issue(devEnvironment, { security_context: {} }, colleague);
      expectErrorShape(theirs.body, 403, 'forbidden');
      const admin = await issue(devEnvironment, { security_context: {} });
      expectErrorShape(admin.body, 403, 'forbidden');
      expectErrorShape((await list(devEnvironment, {}, colleague)).body, 403, 'forbidden');
      expect(await tokenRows()).toBe(before);
    });

    it('lets a holder of SchemaUpdateDevBranches alone issue for their own development environment, not for production', async () => {
      const role = await t
        .http()
        .post('/api/v1/roles')
        .set(bearer(t.admin.token))
        .send({
          name: 'dev-branches-only',
          policies: [
            {
              resourceType: 'Global',
              actions: ['DeploymentRead', 'SchemaUpdateDevBranches'],
              resources: ['All'],
            },
          ],
        });
      expect(role.status).toBe(200);
      const modeller = await newUser(t, t.admin, {});
      const assign = await t
        .http()
        .put(`/api/v1/roles/${role.body.id}/users/${modeller.userId}`)
        .set(bearer(t.admin.token))
        .send({});
      expect(assign.status).toBe(204);
      const dev = await t
        .http()
        .post(`${build(id)}/dev-mode`)
        .set(bearer(modeller.token))
        .send({});
      expect(dev.status).toBe(200);
      const own = (await environments(id)).find((e) => e.branch === dev.body.branchName)!;
      const mine = await issue(own.id, { security_context: { mine: 1 } }, modeller);
      expect(mine.status).toBe(200);
      expect((await list(own.id, {}, modeller)).body.count).toBe(1);
      expectErrorShape((await issue(production, { security_context: {} }, modeller)).body, 403, 'forbidden');
      expectErrorShape((await list(production, {}, modeller)).body, 403, 'forbidden');
    });

    it.each([
      ['no body', undefined],
      ['no security_context', { expires_in: 60 }],
      ['a null security_context', { security_context: null }],
      ['an array security_context', { security_context: [1] }],
      ['a string security_context', { security_context: 'tenant=acme' }],
      ['expires_in 0', { security_context: {}, expires_in: 0 }],
      ['expires_in 3601', { security_context: {}, expires_in: 3_601 }],
      ['expires_in as text', { security_context: {}, expires_in: '60' }],
      ['an unknown scope', { security_context: {}, scopes: ['everything'] }],
      ['scopes as text', { security_context: {}, scopes: 'meta' }],
      ['a security context setting exp', { security_context: { exp: 9_999_999_999 } }],
      ['a security context setting iat', { security_context: { iat: 1 } }],
      ['a security context setting scopes', { security_context: { scopes: ['data'] } }],
      ['a security context over 8 KiB', { security_context: { blob: 'x'.repeat(9_000) } }],
      ['an unknown field', { security_context: {}, expiresIn: 60 }],
    ])('answers 400 to %s, storing nothing', async (_, body) => {
      const before = await tokenRows();
      const res = await issue(production, body);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(await tokenRows()).toBe(before);
    });

    it('answers 400 to an environment id that is not one', async () => {
      for (const bad of ['abc', '0', '-1', '99999999999']) {
        expectErrorShape((await issue(bad, { security_context: {} })).body, 400, 'validation_failed');
      }
    });

    it('answers 401 without a token, 403 without SchemaUpdate, 404 for unknown or foreign environments', async () => {
      const anonymous = await t
        .http()
        .post(`${envBase(id, production)}/tokens`)
        .send({ security_context: {} });
      expectErrorShape(anonymous.body, 401);
      for (const actor of [aibiUser, reader]) {
        expectErrorShape((await issue(production, { security_context: {} }, actor)).body, 403, 'forbidden');
      }
      const nobody = await newUser(t, t.admin, { defaultRoles: [] });
      // A user with no action at all is refused before the deployment is looked up.
      expectErrorShape((await issue(production, { security_context: {} }, nobody)).body, 403, 'forbidden');
      const [foreign] = await environments(otherDeployment, other);
      expectErrorShape(
        (await issue(production, { security_context: {} }, t.admin, otherDeployment)).body,
        404,
        'deployment_not_found',
      );
      // Another deployment's environment, through this deployment's address.
      expectErrorShape(
        (await issue(foreign.id, { security_context: {} })).body,
        404,
        'environment_not_found',
      );
      expectErrorShape(
        (await issue(2_000_000_000, { security_context: {} })).body,
        404,
        'environment_not_found',
      );
    });

    it('issues at most ENVIRONMENT_TOKENS_MAX live tokens per environment, under parallel requests', async () => {
      const env = (await stage('load', true, true))!;
      const answers = await Promise.all(
        Array.from({ length: MAX_TOKENS + 4 }, (_, i) => issue(env, { security_context: { i } })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(MAX_TOKENS).fill(200), ...Array(4).fill(429)]);
      const refused = answers.find((r) => r.status === 429)!;
      expectErrorShape(refused.body, 429, 'token_limit_reached');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3_600);
      expect((await list(env)).body.count).toBe(MAX_TOKENS);
      // An expired token no longer counts: the next issuance drops it and succeeds.
      await t.sql(
        `UPDATE environment_tokens SET expires_at = now() - interval '1 second'
          WHERE id = (SELECT min(id) FROM environment_tokens WHERE environment_id = $1)`,
        [env],
      );
      expect((await issue(env, { security_context: {} })).status).toBe(200);
    });

    it('records each issuance in the audit log without the token, and never stores it in clear', async () => {
      const on = await t
        .http()
        .put('/api/v1/tenant/settings')
        .set(bearer(t.admin.token))
        .send({ auditLogEnabled: true });
      expect(on.status).toBe(200);
      const res = await issue(production, { security_context: { audited: 'yes' } });
      const token = (res.body.data as IssuedToken).token;
      const rows = await t.sql<{ target_type: string; target_id: string; row: string }>(
        `SELECT target_type, target_id, a::text AS row FROM audit_events a WHERE action = 'createDeploymentEnvironmentToken'`,
      );
      expect(rows.length).toBe(1);
      expect(rows[0]).toMatchObject({ target_type: 'environments', target_id: String(production) });
      expect(rows.every((r) => !r.row.includes(token))).toBe(true);
      const stored = await t.sql<{ row: string }>(`SELECT t::text AS row FROM environment_tokens t`);
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.some((r) => r.row.includes(token) || r.row.includes(token.split('.')[2]))).toBe(false);
    });
  });

  describe('POST .../tokens-for-meta-sync', () => {
    it('issues a token scoped to metadata: the data API answers /meta and refuses data', async () => {
      const res = await t
        .http()
        .post(`${envBase(id, production)}/tokens-for-meta-sync`)
        .set(bearer(t.admin.token))
        .send({ security_context: { tool: 'bi' }, expires_in: 900, scopes: ['data', 'sql'] });
      expect(res.status).toBe(200);
      const data = res.body.data as IssuedToken;
      const claims = await verify(data.token, SECRET);
      expect(claims.scopes).toEqual(['meta']);
      expect(claims.exp! - claims.iat!).toBe(900);
      expect(data.security_context).toEqual({ tool: 'bi' });
      expect((await query(data.token, null, 'meta')).status).toBe(200);
      expect(await query(data.token, null, 'load')).toEqual({
        status: 403,
        body: { error: 'API scope is missing: data' },
      });
    });

    it('answers 400, 401, 403 and 404 as the token route does', async () => {
      const meta = (environmentId: number | string, body: unknown, actor?: Actor, deploymentId = id) => {
        const req = t.http().post(`${envBase(deploymentId, environmentId)}/tokens-for-meta-sync`);
        return (actor ? req.set(bearer(actor.token)) : req).send(body as object);
      };
      expectErrorShape((await meta(production, {}, t.admin)).body, 400, 'validation_failed');
      expectErrorShape((await meta(production, { security_context: {} })).body, 401);
      expectErrorShape((await meta(production, { security_context: {} }, aibiUser)).body, 403, 'forbidden');
      expectErrorShape(
        (await meta(production, { security_context: {} }, t.admin, otherDeployment)).body,
        404,
        'deployment_not_found',
      );
    });
  });

  describe('GET .../tokens', () => {
    it("lists the environment's live tokens oldest first, by cursor and by offset, with the deprecated fields", async () => {
      const env = (await stage('listed', true, true))!;
      const issued: IssuedToken[] = [];
      for (let i = 0; i < 3; i += 1) {
        issued.push((await issue(env, { security_context: { i } })).body.data as IssuedToken);
      }
      const all = await list(env);
      expect(all.status).toBe(200);
      expect(all.body.items).toEqual(issued);
      expect(all.body.data).toEqual(issued);
      expect(all.body.count).toBe(3);
      expect(all.body.pagination).toEqual({ total: 3, offset: 0, limit: 100 });
      const first = await list(env, { first: 2 });
      expect(first.body.items).toEqual(issued.slice(0, 2));
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const next = await list(env, { first: 2, after: first.body.pageInfo.endCursor as string });
      expect(next.body.items).toEqual(issued.slice(2));
      expect(next.body.pageInfo.hasNextPage).toBe(false);
      const legacy = await list(env, { limit: 1, offset: 1 });
      expect(legacy.body.items).toEqual(issued.slice(1, 2));
      expect(legacy.body.pagination).toEqual({ total: 3, offset: 1, limit: 1 });
      // An expired token is not listed.
      await t.sql(
        `UPDATE environment_tokens SET expires_at = now() - interval '1 second' WHERE environment_id = $1
                    AND security_context = '{"i": 0}'::jsonb`,
        [env],
      );
      expect((await list(env)).body.items).toEqual(issued.slice(1));
      // Turning the toggle off takes the environment and its tokens away.
      await stage('listed', false);
      expectErrorShape((await list(env)).body, 404, 'environment_not_found');
      expect(await t.sql(`SELECT id FROM environment_tokens WHERE environment_id = $1`, [env])).toEqual([]);
    });

    it('answers 400, 401, 403 and 404', async () => {
      expectErrorShape((await list(production, { first: 0 })).body, 400, 'validation_failed');
      expectErrorShape((await list(production, { after: 'garbage' })).body, 400, 'invalid_cursor');
      expectErrorShape((await list(production, { first: 1, offset: 0 })).body, 400, 'pagination_conflict');
      expectErrorShape((await list(production, { type: 'staging' })).body, 400, 'validation_failed');
      expectErrorShape((await t.http().get(`${envBase(id, production)}/tokens`)).body, 401);
      expectErrorShape((await list(production, {}, aibiUser)).body, 403, 'forbidden');
      expectErrorShape((await list(2_000_000_000)).body, 404, 'environment_not_found');
      const foreign = await t
        .http()
        .get(`${envBase(otherDeployment, production)}/tokens`)
        .set(bearer(t.admin.token));
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
    });
  });

  describe('as the command-line tool calls them', () => {
    it('lists environments, creates a token and a meta-sync token, and lists the tokens', async () => {
      // Cube's CLI (rust/cube-cli): `Api-Key <key>` for an opaque key, JSON bodies with snake_case
      // keys, ids read from the list's string `id` and sent as integers; it reads `items`,
      // `data.token` and each token's `token`, `created_at` and `expires_at`.
      const headers = { Authorization: `Api-Key ${developer.token}`, 'User-Agent': 'cube-cli/1.2.0' };
      const envs = await t
        .http()
        .get(`/api/v1/deployments/${id}/environments`)
        .query({ type: 'production', first: 10 })
        .set(headers);
      expect(envs.status).toBe(200);
      const environmentId = Number.parseInt((envs.body.items as Environment[])[0].id, 10);
      const created = await t
        .http()
        .post(`/api/v1/deployments/${id}/environments/${environmentId}/tokens`)
        .set(headers)
        .send({ security_context: { tenant_id: 'acme' }, expires_in: 1800, scopes: ['meta', 'data'] });
      expect(created.status).toBe(200);
      const token = created.body.data.token as string;
      expect((await verify(token, SECRET)).tenant_id).toBe('acme');
      const meta = await t
        .http()
        .post(`/api/v1/deployments/${id}/environments/${environmentId}/tokens-for-meta-sync`)
        .set(headers)
        .send({ security_context: { tenant_id: 'acme' } });
      expect(meta.status).toBe(200);
      expect((await verify(meta.body.data.token as string, SECRET)).scopes).toEqual(['meta']);
      const listed = await t
        .http()
        .get(`/api/v1/deployments/${id}/environments/${environmentId}/tokens`)
        .query({ first: 100 })
        .set(headers);
      expect(listed.status).toBe(200);
      const rows = listed.body.items as IssuedToken[];
      expect(rows.map((r) => r.token)).toEqual(
        expect.arrayContaining([token, meta.body.data.token as string]),
      );
      for (const row of rows) {
        expect(Object.keys(row).sort()).toEqual(['created_at', 'expires_at', 'security_context', 'token']);
      }
    });
  });
});
