import { OAuthIntegrationsService } from '../../src/modules/oauth/oauth-integrations.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';

interface Integration {
  id: number;
  name: string;
  type: string;
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  config: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

interface OidcConfig {
  id: number;
  name: string;
  audienceType: string;
  audience: string;
  subFormat: string | null;
  targetEnvVar: string | null;
  customClaims: Record<string, unknown> | null;
  isEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

const INTEGRATIONS = '/api/v1/oauth-integrations';
const OIDC = '/api/v1/oidc-token-configs';
const BAD_IDS = ['abc', '0', '-1', '99999999999'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GCP_PROVIDER =
  '//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/analytics/providers/platform';

describe('OAuth integrations and OIDC token configs', () => {
  let t: TestApp;
  let other: Actor;
  let viewer: Actor;
  let manager: Actor;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const input = (overrides: Record<string, unknown> = {}) => ({
    name: uid('Snowflake'),
    type: 'snowflake',
    authUrl: 'https://acme.snowflakecomputing.test/oauth/authorize',
    tokenUrl: 'https://acme.snowflakecomputing.test/oauth/token-request',
    clientId: 'client-abc',
    clientSecret: 'super-secret-value',
    redirectUri: 'https://api.example.test/api/v1/oauth/callback',
    scopes: ['session:role-any', 'refresh_token'],
    config: { account: 'acme', region: 'eu-west-1' },
    ...overrides,
  });
  const create = (body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().post(INTEGRATIONS).set(bearer(actor.token)).send(body);
  const createOk = async (overrides: Record<string, unknown> = {}, actor: Actor = t.admin) => {
    const res = await create(input(overrides), actor);
    if (res.status !== 200) throw new Error(`integration: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Integration;
  };
  const update = (id: number | string, body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().put(`${INTEGRATIONS}/${id}`).set(bearer(actor.token)).send(body);
  const secretOf = async (accountId: number, id: number) =>
    (await t.app.get(OAuthIntegrationsService).credentials(accountId, id))?.clientSecret;
  const integrationCount = async () =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM oauth_integrations`))[0].n;

  const createOidc = (body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().post(OIDC).set(bearer(actor.token)).send(body);
  const createOidcOk = async (body: Record<string, unknown>, actor: Actor = t.admin) => {
    const res = await createOidc(body, actor);
    if (res.status !== 200) throw new Error(`oidc: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as OidcConfig;
  };
  const oidcCount = async () =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM oidc_token_configs`))[0].n;

  /** A user holding exactly `actions` account-wide, through a custom role. */
  const userWith = async (actions: string[]): Promise<Actor> => {
    const user = await newUser(t, t.admin, { defaultRoles: [] });
    const role = await t
      .http()
      .post('/api/v1/roles')
      .set(bearer(t.admin.token))
      .send({ name: uid('role'), policies: [{ resourceType: 'Global', actions, resources: ['All'] }] });
    if (role.status !== 200) throw new Error(`role: ${role.status} ${JSON.stringify(role.body)}`);
    const assigned = await t
      .http()
      .put(`/api/v1/roles/${role.body.id}/users/${user.userId}`)
      .set(bearer(t.admin.token));
    if (assigned.status !== 204) throw new Error(`assign: ${assigned.status}`);
    return user;
  };

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'globex');
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    manager = await userWith(['OAuthIntegrationsManage']);
  });
  afterAll(() => t.close());

  describe('POST /api/v1/oauth-integrations', () => {
    it('creates an integration (200) without ever returning the secret, which is stored sealed', async () => {
      const body = input({ scopes: ['a', 'b', 'a'] });
      const res = await create(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: body.name,
        type: 'snowflake',
        authUrl: body.authUrl,
        tokenUrl: body.tokenUrl,
        clientId: 'client-abc',
        redirectUri: body.redirectUri,
        scopes: ['a', 'b'],
        config: { account: 'acme', region: 'eu-west-1' },
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      expect(JSON.stringify(res.body)).not.toContain('super-secret-value');
      const [row] = await t.sql<{ client_secret: string; account_id: number }>(
        `SELECT client_secret, account_id FROM oauth_integrations WHERE id = $1`,
        [res.body.id],
      );
      expect(row.account_id).toBe(t.admin.accountId);
      expect(row.client_secret).not.toContain('super-secret-value');
      expect(row.client_secret).toMatch(/^v1\./);
      expect(await secretOf(t.admin.accountId, res.body.id)).toBe('super-secret-value');
    });

    it('trims the name, defaults scopes to [] and config to null', async () => {
      const { scopes: _s, config: _c, ...rest } = input({ name: '  Spaced name  ' });
      const res = await create(rest);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Spaced name', scopes: [], config: null });
    });

    it.each([
      ['http://127.0.0.1:8080/authorize'],
      ['http://localhost/authorize'],
      ['http://[::1]:9000/authorize'],
      ['https://auth.example.test:8443/oauth/authorize?audience=api'],
    ])('accepts the URL %s', async (url) => {
      const res = await create(input({ authUrl: url, tokenUrl: url, redirectUri: url }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ authUrl: url, tokenUrl: url, redirectUri: url });
    });

    it.each([
      ['http://auth.example.test/authorize', 'must use https'],
      ['http://10.0.0.1/authorize', 'must use https'],
      ['ftp://auth.example.test/authorize', 'must use https'],
      ['javascript:alert(1)', 'must use https'],
      ['/relative/path', 'must be an absolute URL'],
      ['not a url', 'must not contain spaces'],
      ['https://user:pass@auth.example.test/authorize', 'must not contain credentials'],
      ['https://auth.example.test/authorize#frag', 'must not contain a fragment'],
      [`https://auth.example.test/${'a'.repeat(2100)}`, 'at most 2048'],
    ])('rejects %j with 400 naming the field, and stores nothing', async (url, why) => {
      const before = await integrationCount();
      for (const field of ['authUrl', 'tokenUrl', 'redirectUri']) {
        const res = await create(input({ [field]: url }));
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(res.body.message).toEqual([expect.stringContaining(why)]);
        expect(res.body.message[0]).toMatch(new RegExp(`^${field} `));
      }
      expect(await integrationCount()).toBe(before);
    });

    it.each([
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ type: 'Snowflake' }, 'type'],
      [{ type: '9lives' }, 'type'],
      [{ type: 'a'.repeat(65) }, 'type'],
      [{ clientId: '' }, 'clientId'],
      [{ clientSecret: '' }, 'clientSecret'],
      [{ clientSecret: 42 }, 'clientSecret'],
      [{ scopes: ['has space'] }, 'scopes'],
      [{ scopes: 'openid' }, 'scopes'],
      [{ config: 'x' }, 'config'],
      [{ config: [1] }, 'config'],
      [{ clientSecret: undefined }, 'clientSecret'],
      [{ redirectUri: undefined }, 'redirectUri'],
      [{ extra: true }, 'extra'],
    ])('rejects %j with 400 and changes nothing', async (overrides, field) => {
      const before = await integrationCount();
      const res = await create(input(overrides));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect((res.body.message as string[]).some((m) => m.includes(field))).toBe(true);
      expect(await integrationCount()).toBe(before);
    });

    it('rejects a config over 16 KB (400 config_too_large)', async () => {
      const before = await integrationCount();
      const res = await create(input({ config: { blob: 'x'.repeat(17 * 1024) } }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'config_too_large');
      expect(await integrationCount()).toBe(before);
    });

    it('answers 409 for a name taken in the account, whatever its case; another account may use it', async () => {
      const first = await createOk({ name: 'Warehouse' });
      for (const name of ['Warehouse', 'WAREHOUSE', ' warehouse ']) {
        const res = await create(input({ name }));
        expect(res.status).toBe(409);
        expectErrorShape(res.body, 409, 'oauth_integration_name_taken');
      }
      expect(await t.sql(`SELECT 1 FROM oauth_integrations WHERE lower(name) = 'warehouse'`)).toHaveLength(1);
      const theirs = await create(input({ name: 'Warehouse' }), other);
      expect(theirs.status).toBe(200);
      expect(theirs.body.id).not.toBe(first.id);
    });

    it('creates exactly one of parallel requests with the same name', async () => {
      const name = uid('Parallel');
      const results = await Promise.all(Array.from({ length: 8 }, () => create(input({ name }))));
      expect(results.map((r) => r.status).sort()).toEqual([200, ...Array<number>(7).fill(409)]);
      expect(await t.sql(`SELECT 1 FROM oauth_integrations WHERE name = $1`, [name])).toHaveLength(1);
    });

    it('needs OAuthIntegrationsManage: 403 for a viewer, 200 for a manager; 401 without a token', async () => {
      const before = await integrationCount();
      const denied = await create(input(), viewer);
      expect(denied.status).toBe(403);
      expectErrorShape(denied.body, 403, 'forbidden');
      expect(await integrationCount()).toBe(before);
      const anonymous = await t.http().post(INTEGRATIONS).send(input());
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401);
      expect(await integrationCount()).toBe(before);
      expect((await create(input(), manager)).status).toBe(200);
    });
  });

  describe('GET /api/v1/oauth-integrations', () => {
    it('lists the account’s integrations as a plain array, by id, for any user, never with secrets', async () => {
      const a = await createOk();
      const b = await createOk();
      const theirs = await createOk({}, other);
      for (const actor of [t.admin, viewer]) {
        const res = await t.http().get(INTEGRATIONS).set(bearer(actor.token));
        expect(res.status).toBe(200);
        expect(Array.isArray(res.body)).toBe(true);
        const ids = (res.body as Integration[]).map((i) => i.id);
        expect(ids).toEqual([...ids].sort((x, y) => x - y));
        expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
        expect(ids).not.toContain(theirs.id);
        expect(res.body).toContainEqual(a);
        for (const item of res.body as Record<string, unknown>[])
          expect(item).not.toHaveProperty('clientSecret');
        expect(JSON.stringify(res.body)).not.toContain('super-secret-value');
      }
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get(INTEGRATIONS);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401);
    });
  });

  describe('GET /api/v1/oauth-integrations/{id}', () => {
    it('reads one integration for any user of the account', async () => {
      const a = await createOk();
      for (const actor of [t.admin, viewer]) {
        const res = await t.http().get(`${INTEGRATIONS}/${a.id}`).set(bearer(actor.token));
        expect(res.status).toBe(200);
        expect(res.body).toEqual(a);
      }
    });

    it('answers 404 for another account’s integration and an unknown id; 400 for bad ids; 401 anonymous', async () => {
      const theirs = await createOk({}, other);
      for (const id of [theirs.id, 2_000_000_000]) {
        const res = await t.http().get(`${INTEGRATIONS}/${id}`).set(bearer(t.admin.token));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'oauth_integration_not_found');
      }
      for (const id of BAD_IDS) {
        const res = await t.http().get(`${INTEGRATIONS}/${id}`).set(bearer(t.admin.token));
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect((await t.http().get(`${INTEGRATIONS}/${theirs.id}`)).status).toBe(401);
    });
  });

  describe('PUT /api/v1/oauth-integrations/{id}', () => {
    it('replaces the required fields and keeps an omitted or null secret, scopes and config', async () => {
      const a = await createOk();
      const next = {
        name: uid('Renamed'),
        type: 'custom',
        authUrl: 'https://idp.example.test/authorize',
        tokenUrl: 'https://idp.example.test/token',
        clientId: 'client-2',
        redirectUri: 'https://api.example.test/api/v1/oauth/callback?x=1',
      };
      const res = await update(a.id, next);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...a,
        ...next,
        updatedAt: expect.stringMatching(ISO),
      });
      expect(await secretOf(t.admin.accountId, a.id)).toBe('super-secret-value');
      const withNull = await update(a.id, { ...next, clientSecret: null });
      expect(withNull.status).toBe(200);
      expect(await secretOf(t.admin.accountId, a.id)).toBe('super-secret-value');
      const get = await t.http().get(`${INTEGRATIONS}/${a.id}`).set(bearer(t.admin.token));
      expect(get.body).toEqual(withNull.body);
    });

    it('replaces the secret (sealed again), the scopes and the config when given', async () => {
      const a = await createOk();
      const [before] = await t.sql<{ client_secret: string }>(
        `SELECT client_secret FROM oauth_integrations WHERE id = $1`,
        [a.id],
      );
      const res = await update(a.id, {
        ...input({ name: a.name }),
        clientSecret: 'rotated-secret',
        scopes: [],
        config: { v: 2 },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ scopes: [], config: { v: 2 } });
      expect(JSON.stringify(res.body)).not.toContain('rotated-secret');
      const [after] = await t.sql<{ client_secret: string }>(
        `SELECT client_secret FROM oauth_integrations WHERE id = $1`,
        [a.id],
      );
      expect(after.client_secret).not.toBe(before.client_secret);
      expect(after.client_secret).not.toContain('rotated-secret');
      expect(await secretOf(t.admin.accountId, a.id)).toBe('rotated-secret');
    });

    it('lets an integration change the case of its own name, but not take another’s (409)', async () => {
      const a = await createOk({ name: 'Case Test' });
      const b = await createOk();
      const own = await update(a.id, input({ name: 'CASE TEST' }));
      expect(own.status).toBe(200);
      expect(own.body.name).toBe('CASE TEST');
      const taken = await update(b.id, input({ name: 'case test' }));
      expect(taken.status).toBe(409);
      expectErrorShape(taken.body, 409, 'oauth_integration_name_taken');
      const get = await t.http().get(`${INTEGRATIONS}/${b.id}`).set(bearer(t.admin.token));
      expect(get.body.name).toBe(b.name);
    });

    it('rejects bad input with 400 and changes nothing', async () => {
      const a = await createOk();
      const cases: Record<string, unknown>[] = [
        { ...input({ name: a.name }), tokenUrl: 'http://evil.example.test/token' },
        { ...input({ name: a.name }), clientSecret: '' },
        { ...input({ name: a.name }), type: 'UPPER' },
        { name: a.name },
        { ...input({ name: a.name }), id: 5 },
      ];
      for (const body of cases) {
        const res = await update(a.id, body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const get = await t.http().get(`${INTEGRATIONS}/${a.id}`).set(bearer(t.admin.token));
      expect(get.body).toEqual(a);
      expect(await secretOf(t.admin.accountId, a.id)).toBe('super-secret-value');
    });

    it('answers 404 for another account’s integration (unchanged), 400 for bad ids, 403 and 401', async () => {
      const theirs = await createOk({}, other);
      const res = await update(theirs.id, input());
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'oauth_integration_not_found');
      const still = await t.http().get(`${INTEGRATIONS}/${theirs.id}`).set(bearer(other.token));
      expect(still.body).toEqual(theirs);
      for (const id of BAD_IDS) expect((await update(id, input())).status).toBe(400);
      const mine = await createOk();
      const denied = await update(mine.id, input(), viewer);
      expect(denied.status).toBe(403);
      expectErrorShape(denied.body, 403, 'forbidden');
      expect((await t.http().put(`${INTEGRATIONS}/${mine.id}`).send(input())).status).toBe(401);
      const byManager = await update(mine.id, input({ name: uid('ByManager') }), manager);
      expect(byManager.status).toBe(200);
    });
  });

  describe('DELETE /api/v1/oauth-integrations/{id}', () => {
    it('deletes (200) with its users’ tokens and pending authorizations', async () => {
      const a = await createOk();
      const user = await userWith(['OAuthIntegrationsIssueTokens']);
      const initiated = await t
        .http()
        .post(`/api/v1/user-oauth-tokens/${a.id}/initiate`)
        .set(bearer(user.token));
      expect(initiated.status).toBe(200);
      await t.sql(
        `INSERT INTO user_oauth_tokens (account_id, user_id, integration_id, status) VALUES ($1, $2, $3, 'active')`,
        [t.admin.accountId, user.userId, a.id],
      );
      const res = await t.http().delete(`${INTEGRATIONS}/${a.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await t.sql(`SELECT 1 FROM oauth_integrations WHERE id = $1`, [a.id])).toHaveLength(0);
      expect(await t.sql(`SELECT 1 FROM user_oauth_tokens WHERE integration_id = $1`, [a.id])).toHaveLength(
        0,
      );
      expect(await t.sql(`SELECT 1 FROM oauth_states WHERE integration_id = $1`, [a.id])).toHaveLength(0);
      const again = await t.http().delete(`${INTEGRATIONS}/${a.id}`).set(bearer(t.admin.token));
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'oauth_integration_not_found');
    });

    it('answers 404 for another account’s integration (kept), 400 for bad ids, 403 and 401', async () => {
      const theirs = await createOk({}, other);
      const res = await t.http().delete(`${INTEGRATIONS}/${theirs.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'oauth_integration_not_found');
      expect(await t.sql(`SELECT 1 FROM oauth_integrations WHERE id = $1`, [theirs.id])).toHaveLength(1);
      for (const id of BAD_IDS) {
        expect((await t.http().delete(`${INTEGRATIONS}/${id}`).set(bearer(t.admin.token))).status).toBe(400);
      }
      const mine = await createOk();
      const denied = await t.http().delete(`${INTEGRATIONS}/${mine.id}`).set(bearer(viewer.token));
      expect(denied.status).toBe(403);
      expectErrorShape(denied.body, 403, 'forbidden');
      expect((await t.http().delete(`${INTEGRATIONS}/${mine.id}`)).status).toBe(401);
      expect(await t.sql(`SELECT 1 FROM oauth_integrations WHERE id = $1`, [mine.id])).toHaveLength(1);
      const byManager = await t.http().delete(`${INTEGRATIONS}/${mine.id}`).set(bearer(manager.token));
      expect(byManager.status).toBe(200);
    });
  });

  describe('POST /api/v1/oidc-token-configs', () => {
    it('derives the audience of aws and azure, names them after the type, enables them by default', async () => {
      const aws = await createOidc({ audienceType: 'AWS' });
      expect(aws.status).toBe(200);
      expect(aws.body).toEqual({
        id: expect.any(Number),
        name: 'aws',
        audienceType: 'aws',
        audience: 'sts.amazonaws.com',
        subFormat: null,
        targetEnvVar: null,
        customClaims: null,
        isEnabled: true,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      const azure = await createOidc({ audienceType: 'azure', name: 'entra', isEnabled: false });
      expect(azure.status).toBe(200);
      expect(azure.body).toMatchObject({
        name: 'entra',
        audienceType: 'azure',
        audience: 'api://AzureADTokenExchange',
        isEnabled: false,
      });
      const [row] = await t.sql<{ account_id: number; audience: string }>(
        `SELECT account_id, audience FROM oidc_token_configs WHERE id = $1`,
        [aws.body.id],
      );
      expect(row).toEqual({ account_id: t.admin.accountId, audience: 'sts.amazonaws.com' });
    });

    it('takes the audience of gcp from customAudience, which must be a Workload Identity provider', async () => {
      const before = await oidcCount();
      const missing = await createOidc({ audienceType: 'gcp', customAudience: null }, other);
      expect(missing.status).toBe(400);
      expectErrorShape(missing.body, 400, 'custom_audience_required');
      const wrong = await createOidc(
        { audienceType: 'gcp', customAudience: 'https://bigquery.example.test' },
        other,
      );
      expect(wrong.status).toBe(400);
      expectErrorShape(wrong.body, 400, 'invalid_custom_audience');
      expect(await oidcCount()).toBe(before);
      const ok = await createOidc({ audienceType: 'gcp', customAudience: GCP_PROVIDER }, other);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ name: 'gcp', audienceType: 'gcp', audience: GCP_PROVIDER });
    });

    it('creates custom configs with their audience, name, subject format, env var and claims', async () => {
      const body = {
        audienceType: 'custom',
        name: 'snowflake-prod',
        customAudience: 'https://acme.snowflakecomputing.test',
        subFormat: 'deployment:{deployment_id}:component:{component}:region:{region}',
        targetEnvVar: 'SNOWFLAKE_OAUTH_TOKEN_PATH',
        customClaims: { scp: 'session:role-any', groups: ['a', 'b'] },
      };
      const res = await createOidc(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'snowflake-prod',
        audienceType: 'custom',
        audience: 'https://acme.snowflakecomputing.test',
        subFormat: body.subFormat,
        targetEnvVar: 'SNOWFLAKE_OAUTH_TOKEN_PATH',
        customClaims: body.customClaims,
        isEnabled: true,
      });
      const second = await createOidc({ ...body, name: 'snowflake-dev', targetEnvVar: null });
      expect(second.status).toBe(200);
    });

    it.each([
      [{ audienceType: 'custom', customAudience: 'https://x.test' }, 'name_required'],
      [{ audienceType: 'custom', name: 'nothing' }, 'custom_audience_required'],
      [{ audienceType: 'custom', name: 'blank', customAudience: '   ' }, 'invalid_custom_audience'],
      [
        { audienceType: 'aws', name: 'aws-x', customAudience: 'sts.amazonaws.com' },
        'custom_audience_not_allowed',
      ],
      [{ audienceType: 'azure', name: 'az-x', targetEnvVar: 'AZURE_TOKEN' }, 'target_env_var_not_allowed'],
      [
        { audienceType: 'custom', name: 'c-sub', customAudience: 'x', customClaims: { sub: 'me' } },
        'invalid_custom_claims',
      ],
      [
        { audienceType: 'custom', name: 'c-obj', customAudience: 'x', customClaims: { a: { b: 1 } } },
        'invalid_custom_claims',
      ],
      [
        { audienceType: 'custom', name: 'c-num', customAudience: 'x', customClaims: { a: [1] } },
        'invalid_custom_claims',
      ],
      [
        { audienceType: 'custom', name: 'c-key', customAudience: 'x', customClaims: { 'bad key': 'v' } },
        'invalid_custom_claims',
      ],
      [{ audienceType: 'gcs' }, 'validation_failed'],
      [{}, 'validation_failed'],
      [{ audienceType: 'custom', name: 'Bad_Name', customAudience: 'x' }, 'validation_failed'],
      [{ audienceType: 'custom', name: '-edge', customAudience: 'x' }, 'validation_failed'],
      [
        { audienceType: 'custom', name: 'sub', customAudience: 'x', subFormat: 'id:{user}' },
        'validation_failed',
      ],
      [{ audienceType: 'custom', name: 'sub2', customAudience: 'x', subFormat: 'a b' }, 'validation_failed'],
      [
        { audienceType: 'custom', name: 'sub3', customAudience: 'x', subFormat: 'a'.repeat(201) },
        'validation_failed',
      ],
      [
        { audienceType: 'custom', name: 'env', customAudience: 'x', targetEnvVar: 'lower_case' },
        'validation_failed',
      ],
      [
        { audienceType: 'custom', name: 'env2', customAudience: 'x', targetEnvVar: '1ABC' },
        'validation_failed',
      ],
      [
        { audienceType: 'custom', name: 'env3', customAudience: 'x', targetEnvVar: 'A'.repeat(129) },
        'validation_failed',
      ],
      [{ audienceType: 'custom', name: 'cl', customAudience: 'x', customClaims: 'scp' }, 'validation_failed'],
      [{ audienceType: 'custom', name: 'en', customAudience: 'x', isEnabled: 'yes' }, 'validation_failed'],
      [{ audienceType: 'custom', name: 'au', audience: 'x' }, 'validation_failed'],
    ])('rejects %j (400 %s) and stores nothing', async (body, code) => {
      const before = await oidcCount();
      const res = await createOidc(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
      expect(await oidcCount()).toBe(before);
    });

    it('allows one config per well-known type (409), any number of custom ones, unique names (409)', async () => {
      const account = await newAccount(t, 'initech');
      expect((await createOidc({ audienceType: 'aws' }, account)).status).toBe(200);
      const twice = await createOidc({ audienceType: 'aws', name: 'aws-second' }, account);
      expect(twice.status).toBe(409);
      expectErrorShape(twice.body, 409, 'oidc_audience_type_taken');
      const sameName = await createOidc(
        { audienceType: 'custom', name: 'aws', customAudience: 'x' },
        account,
      );
      expect(sameName.status).toBe(409);
      expectErrorShape(sameName.body, 409, 'oidc_token_config_name_taken');
      for (const name of ['one', 'two', 'three']) {
        expect(
          (await createOidc({ audienceType: 'custom', name, customAudience: 'x' }, account)).status,
        ).toBe(200);
      }
      const rows = await t.sql(`SELECT 1 FROM oidc_token_configs WHERE account_id = $1`, [account.accountId]);
      expect(rows).toHaveLength(4);
    });

    it('creates exactly one of parallel requests with the same name', async () => {
      const name = uid('parallel');
      const results = await Promise.all(
        Array.from({ length: 8 }, () => createOidc({ audienceType: 'custom', name, customAudience: 'x' })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, ...Array<number>(7).fill(409)]);
      expect(await t.sql(`SELECT 1 FROM oidc_token_configs WHERE name = $1`, [name])).toHaveLength(1);
    });

    it('is admin only: 403 even with OAuthIntegrationsManage; 401 without a token', async () => {
      const before = await oidcCount();
      for (const actor of [viewer, manager]) {
        const res = await createOidc(
          { audienceType: 'custom', name: uid('nope'), customAudience: 'x' },
          actor,
        );
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      const anonymous = await t.http().post(OIDC).send({ audienceType: 'aws' });
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401);
      expect(await oidcCount()).toBe(before);
    });
  });

  describe('GET /api/v1/oidc-token-configs and /{id}', () => {
    it('lists the account’s configs as a plain array and reads one', async () => {
      const mine = await createOidcOk({ audienceType: 'custom', name: uid('list'), customAudience: 'aud' });
      const theirs = await createOidcOk(
        { audienceType: 'custom', name: uid('list'), customAudience: 'aud' },
        other,
      );
      const list = await t.http().get(OIDC).set(bearer(t.admin.token));
      expect(list.status).toBe(200);
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body).toContainEqual(mine);
      expect((list.body as OidcConfig[]).map((c) => c.id)).not.toContain(theirs.id);
      const get = await t.http().get(`${OIDC}/${mine.id}`).set(bearer(t.admin.token));
      expect(get.status).toBe(200);
      expect(get.body).toEqual(mine);
    });

    it('answers 404 for another account’s config, 400 for bad ids, 403 for non-admins, 401 anonymous', async () => {
      const theirs = await createOidcOk(
        { audienceType: 'custom', name: uid('x'), customAudience: 'aud' },
        other,
      );
      const res = await t.http().get(`${OIDC}/${theirs.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'oidc_token_config_not_found');
      for (const id of BAD_IDS) {
        expect((await t.http().get(`${OIDC}/${id}`).set(bearer(t.admin.token))).status).toBe(400);
      }
      for (const path of [OIDC, `${OIDC}/${theirs.id}`]) {
        const denied = await t.http().get(path).set(bearer(manager.token));
        expect(denied.status).toBe(403);
        expectErrorShape(denied.body, 403, 'forbidden');
        expect((await t.http().get(path)).status).toBe(401);
      }
    });
  });

  describe('PUT /api/v1/oidc-token-configs/{id}', () => {
    const put = (id: number | string, body: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().put(`${OIDC}/${id}`).set(bearer(actor.token)).send(body);

    it('changes only what is sent; null clears subFormat, targetEnvVar and customClaims, keeps the rest', async () => {
      const c = await createOidcOk({
        audienceType: 'custom',
        name: uid('upd'),
        customAudience: 'https://one.test',
        subFormat: 'deployment:{deployment_id}',
        targetEnvVar: 'TOKEN_PATH',
        customClaims: { scp: 'x' },
      });
      const renamed = await put(c.id, { name: `${c.name}-b`, isEnabled: false });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({
        ...c,
        name: `${c.name}-b`,
        isEnabled: false,
        updatedAt: expect.stringMatching(ISO),
      });
      const cleared = await put(c.id, {
        name: null,
        isEnabled: null,
        subFormat: null,
        targetEnvVar: null,
        customClaims: null,
        customAudience: 'https://two.test',
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({
        name: `${c.name}-b`,
        isEnabled: false,
        audience: 'https://two.test',
        subFormat: null,
        targetEnvVar: null,
        customClaims: null,
      });
      const get = await t.http().get(`${OIDC}/${c.id}`).set(bearer(t.admin.token));
      expect(get.body).toEqual(cleared.body);
    });

    it('keeps the derived audience of fixed types and applies the type’s rules', async () => {
      const account = await newAccount(t, 'umbrella');
      const aws = await createOidcOk({ audienceType: 'aws' }, account);
      const ok = await put(aws.id, { subFormat: 'deployment:{deployment_id}:region:{region}' }, account);
      expect(ok.status).toBe(200);
      expect(ok.body.audience).toBe('sts.amazonaws.com');
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ customAudience: 'elsewhere' }, 'custom_audience_not_allowed'],
        [{ targetEnvVar: 'AWS_TOKEN' }, 'target_env_var_not_allowed'],
        [{ audienceType: 'custom' }, 'validation_failed'],
        [{ name: 'UPPER' }, 'validation_failed'],
        [{ customClaims: { aud: 'x' } }, 'invalid_custom_claims'],
      ];
      for (const [body, code] of cases) {
        const res = await put(aws.id, body, account);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, code);
      }
      const custom = await createOidcOk({ audienceType: 'custom', name: 'c', customAudience: 'x' }, account);
      const unset = await put(custom.id, { customAudience: null }, account);
      expect(unset.status).toBe(400);
      expectErrorShape(unset.body, 400, 'custom_audience_required');
      const taken = await put(custom.id, { name: 'aws' }, account);
      expect(taken.status).toBe(409);
      expectErrorShape(taken.body, 409, 'oidc_token_config_name_taken');
      const after = await t.http().get(`${OIDC}/${aws.id}`).set(bearer(account.token));
      expect(after.body).toEqual(ok.body);
      expect((await t.http().get(`${OIDC}/${custom.id}`).set(bearer(account.token))).body).toEqual(custom);
    });

    it('answers 404 for another account’s config (unchanged), 400 for bad ids, 403 and 401', async () => {
      const theirs = await createOidcOk(
        { audienceType: 'custom', name: uid('t'), customAudience: 'aud' },
        other,
      );
      const res = await put(theirs.id, { isEnabled: false });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'oidc_token_config_not_found');
      expect((await t.http().get(`${OIDC}/${theirs.id}`).set(bearer(other.token))).body).toEqual(theirs);
      for (const id of BAD_IDS) expect((await put(id, {})).status).toBe(400);
      const mine = await createOidcOk({ audienceType: 'custom', name: uid('m'), customAudience: 'aud' });
      const denied = await put(mine.id, { isEnabled: false }, manager);
      expect(denied.status).toBe(403);
      expect((await t.http().put(`${OIDC}/${mine.id}`).send({ isEnabled: false })).status).toBe(401);
      expect((await t.http().get(`${OIDC}/${mine.id}`).set(bearer(t.admin.token))).body).toEqual(mine);
    });
  });

  describe('DELETE /api/v1/oidc-token-configs/{id}', () => {
    it('deletes (200), then 404; frees the well-known type', async () => {
      const account = await newAccount(t, 'hooli');
      const aws = await createOidcOk({ audienceType: 'aws' }, account);
      const res = await t.http().delete(`${OIDC}/${aws.id}`).set(bearer(account.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      const again = await t.http().delete(`${OIDC}/${aws.id}`).set(bearer(account.token));
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'oidc_token_config_not_found');
      expect((await createOidc({ audienceType: 'aws' }, account)).status).toBe(200);
    });

    it('answers 404 for another account’s config (kept), 400 for bad ids, 403 and 401', async () => {
      const theirs = await createOidcOk(
        { audienceType: 'custom', name: uid('d'), customAudience: 'aud' },
        other,
      );
      const res = await t.http().delete(`${OIDC}/${theirs.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'oidc_token_config_not_found');
      for (const id of BAD_IDS) {
        expect((await t.http().delete(`${OIDC}/${id}`).set(bearer(t.admin.token))).status).toBe(400);
      }
      const denied = await t.http().delete(`${OIDC}/${theirs.id}`).set(bearer(viewer.token));
      expect(denied.status).toBe(403);
      expect((await t.http().delete(`${OIDC}/${theirs.id}`)).status).toBe(401);
      expect(await t.sql(`SELECT 1 FROM oidc_token_configs WHERE id = $1`, [theirs.id])).toHaveLength(1);
    });
  });
});
