import { createHash } from 'node:crypto';
import { SecretBoxService } from '../../src/core/crypto/secret-box.service.js';
import { parseOutboundAllowList } from '../../src/core/net/outbound-address.js';
import {
  FetchOAuthTokenClient,
  OAuthTokenExchangeError,
} from '../../src/modules/oauth/oauth-token-client.js';
import { UserOAuthTokensService } from '../../src/modules/oauth/user-oauth-tokens.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { closedPort, OAuthTestServer } from '../support/oauth-server.js';

interface UserToken {
  id: number;
  userId: number;
  integrationId: number;
  status: 'active' | 'expired' | 'error';
  lastError: { error: string; errorDescription: string | null } | null;
  accessTokenExpiresAt: string | null;
  refreshTokenExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Initiated {
  authorizationUrl: string;
  state: string;
  expiresAt: string;
}

const TOKENS = '/api/v1/user-oauth-tokens';
const CALLBACK = '/api/v1/oauth/callback';
const REDIRECT_URI = 'https://api.example.test/api/v1/oauth/callback';
/** Characters RFC 6749 2.3.1 makes the client form-encode before HTTP Basic. */
const CLIENT = { clientId: 'analytics:client', clientSecret: 's3cr:et +%/&=ü', redirectUri: REDIRECT_URI };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BAD_IDS = ['abc', '0', '-1', '99999999999'];

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('per-user OAuth tokens and the authorization-code flow', () => {
  let t: TestApp;
  let server: OAuthTestServer;
  let other: Actor;
  let alice: Actor;
  let bob: Actor;
  let viewer: Actor;
  let integrationId: number;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const createIntegration = async (overrides: Record<string, unknown> = {}, actor: Actor = t.admin) => {
    const res = await t
      .http()
      .post('/api/v1/oauth-integrations')
      .set(bearer(actor.token))
      .send({
        name: uid('Provider'),
        type: 'custom',
        authUrl: server.authorizeUrl,
        tokenUrl: server.tokenUrl,
        clientId: CLIENT.clientId,
        clientSecret: CLIENT.clientSecret,
        redirectUri: REDIRECT_URI,
        scopes: ['read:data', 'offline_access'],
        ...overrides,
      });
    if (res.status !== 200) throw new Error(`integration: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  /** A user holding exactly `actions` account-wide, through a custom role. */
  const userWith = async (admin: Actor, actions: string[]): Promise<Actor> => {
    const user = await newUser(t, admin, { defaultRoles: [] });
    const role = await t
      .http()
      .post('/api/v1/roles')
      .set(bearer(admin.token))
      .send({ name: uid('role'), policies: [{ resourceType: 'Global', actions, resources: ['All'] }] });
    if (role.status !== 200) throw new Error(`role: ${role.status} ${JSON.stringify(role.body)}`);
    await t.http().put(`/api/v1/roles/${role.body.id}/users/${user.userId}`).set(bearer(admin.token));
    return user;
  };

  const initiate = (id: number | string, actor: Actor) =>
    t.http().post(`${TOKENS}/${id}/initiate`).set(bearer(actor.token));
  const initiateOk = async (actor: Actor, id = integrationId): Promise<Initiated> => {
    const res = await initiate(id, actor);
    if (res.status !== 200) throw new Error(`initiate: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Initiated;
  };

  /** The user agent at the provider: GET the authorization URL, do not follow the redirect. */
  const authorize = async (authorizationUrl: string): Promise<URL> => {
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  };
  const callback = (query: Record<string, string | string[]>) => t.http().get(CALLBACK).query(query);
  /** initiate, authorize at the provider, and hand the redirect's query to our callback. */
  const connect = async (actor: Actor, id = integrationId) => {
    const started = await initiateOk(actor, id);
    const location = await authorize(started.authorizationUrl);
    return { started, location, res: await callback(Object.fromEntries(location.searchParams)) };
  };
  const tokenRow = async (userId: number, id = integrationId) =>
    (
      await t.sql<{
        id: number;
        access_token: string | null;
        refresh_token: string | null;
        status: string;
        last_error: unknown;
        token_type: string | null;
        scope: string | null;
      }>(
        `SELECT id, access_token, refresh_token, status, last_error, token_type, scope
         FROM user_oauth_tokens WHERE user_id = $1 AND integration_id = $2`,
        [userId, id],
      )
    )[0];
  const stateCount = async (userId: number) =>
    (
      await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM oauth_states WHERE user_id = $1`, [userId])
    )[0].n;
  const getToken = (actor: Actor, id: number | string = integrationId) =>
    t.http().get(`${TOKENS}/${id}`).set(bearer(actor.token));

  beforeAll(async () => {
    // The provider is a loopback server: opened to the outbound rule for this app alone.
    t = await startApp({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' });
    server = await OAuthTestServer.start(CLIENT);
    other = await newAccount(t, 'globex');
    alice = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
    bob = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    integrationId = await createIntegration();
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  beforeEach(() => server.reset());

  describe('the test authorization server', () => {
    it('refuses an unknown client or a redirect URI other than the registered one, without redirecting', async () => {
      const started = await initiateOk(alice);
      for (const [name, value] of [
        ['client_id', 'someone-else'],
        ['redirect_uri', 'https://evil.example.test/callback'],
      ]) {
        const url = new URL(started.authorizationUrl);
        url.searchParams.set(name, value);
        const res = await fetch(url, { redirect: 'manual' });
        expect(res.status).toBe(400);
      }
    });

    it('insists on PKCE with S256', async () => {
      const started = await initiateOk(alice);
      const url = new URL(started.authorizationUrl);
      url.searchParams.set('code_challenge_method', 'plain');
      const location = await authorize(url.toString());
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('state')).toBe(started.state);
    });
  });

  describe('POST /api/v1/user-oauth-tokens/{integrationId}/initiate', () => {
    it('returns the authorization URL with PKCE (S256) and a state, and stores only hashes and sealed values', async () => {
      const res = await initiate(integrationId, alice);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        authorizationUrl: expect.any(String),
        state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresAt: expect.stringMatching(ISO),
      });
      const ttl = Date.parse(res.body.expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan(9 * 60_000);
      expect(ttl).toBeLessThanOrEqual(10 * 60_000);
      const url = new URL(res.body.authorizationUrl);
      expect(`${url.origin}${url.pathname}`).toBe(server.authorizeUrl);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: 'code',
        client_id: CLIENT.clientId,
        redirect_uri: REDIRECT_URI,
        scope: 'read:data offline_access',
        state: res.body.state,
        code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        code_challenge_method: 'S256',
      });
      const rows = await t.sql<Record<string, unknown>>(
        `SELECT account_id, user_id, integration_id, state_hash, code_verifier, redirect_uri,
           expires_at > now() + interval '9 minutes' AS fresh
         FROM oauth_states WHERE state_hash = $1`,
        [sha256(res.body.state)],
      );
      expect(rows).toEqual([
        {
          account_id: t.admin.accountId,
          user_id: alice.userId,
          integration_id: integrationId,
          state_hash: sha256(res.body.state),
          code_verifier: expect.stringMatching(/^v1\./),
          redirect_uri: REDIRECT_URI,
          fresh: true,
        },
      ]);
      const all = JSON.stringify(await t.sql(`SELECT * FROM oauth_states`));
      expect(all).not.toContain(res.body.state);
    });

    it('keeps the authorization URL’s own parameters and leaves scope out when there are none', async () => {
      const id = await createIntegration({
        authUrl: `${server.authorizeUrl}?audience=warehouse`,
        scopes: [],
      });
      const { authorizationUrl } = await initiateOk(alice, id);
      const params = new URL(authorizationUrl).searchParams;
      expect(params.get('audience')).toBe('warehouse');
      expect(params.has('scope')).toBe(false);
      expect(params.get('response_type')).toBe('code');
    });

    it('keeps at most 20 pending authorizations per user and drops expired ones', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      await Promise.all(Array.from({ length: 5 }, () => initiateOk(user)));
      await t.sql(`UPDATE oauth_states SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
        user.userId,
      ]);
      await initiateOk(user);
      expect(await stateCount(user.userId)).toBe(1);
      for (let i = 0; i < 24; i++) await initiateOk(user);
      expect(await stateCount(user.userId)).toBe(20);
    });

    it('accepts an empty JSON body but rejects unknown fields (400), storing nothing', async () => {
      const before = await stateCount(alice.userId);
      const empty = await t
        .http()
        .post(`${TOKENS}/${integrationId}/initiate`)
        .set(bearer(alice.token))
        .send({});
      expect(empty.status).toBe(200);
      const extra = await t
        .http()
        .post(`${TOKENS}/${integrationId}/initiate`)
        .set(bearer(alice.token))
        .send({ redirectUri: 'https://evil.example.test' });
      expect(extra.status).toBe(400);
      expectErrorShape(extra.body, 400, 'validation_failed');
      expect(extra.body.message).toEqual(['property redirectUri should not exist']);
      expect(await stateCount(alice.userId)).toBe(before + 1);
    });

    it('answers 404 for another account’s or an unknown integration, 400 for bad ids', async () => {
      const theirs = await createIntegration({}, other);
      const before = await stateCount(alice.userId);
      for (const id of [theirs, 2_000_000_000]) {
        const res = await initiate(id, alice);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'oauth_integration_not_found');
      }
      for (const id of BAD_IDS) {
        const res = await initiate(id, alice);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(await stateCount(alice.userId)).toBe(before);
    });

    it('needs OAuthIntegrationsIssueTokens: 403 for a viewer and a manager; 401 without a token', async () => {
      const manager = await userWith(t.admin, ['OAuthIntegrationsManage']);
      for (const actor of [viewer, manager]) {
        const res = await initiate(integrationId, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
        expect(await stateCount(actor.userId)).toBe(0);
      }
      const anonymous = await t.http().post(`${TOKENS}/${integrationId}/initiate`);
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401);
      expect((await initiate(integrationId, t.admin)).status).toBe(200);
    });
  });

  describe('GET /api/v1/oauth/callback', () => {
    it('completes the whole flow: code exchanged with PKCE and Basic auth, tokens stored sealed, status active', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      server.settings.refreshTokenExpiresIn = 86_400;
      const started = await initiateOk(user);
      const location = await authorize(started.authorizationUrl);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get('state')).toBe(started.state);
      expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const res = await callback(Object.fromEntries(location.searchParams));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        userId: user.userId,
        integrationId,
        status: 'active',
        lastError: null,
        accessTokenExpiresAt: expect.stringMatching(ISO),
        refreshTokenExpiresAt: expect.stringMatching(ISO),
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      expect(Math.abs(Date.parse(res.body.accessTokenExpiresAt) - (Date.now() + 3600_000))).toBeLessThan(
        60_000,
      );
      expect(Math.abs(Date.parse(res.body.refreshTokenExpiresAt) - (Date.now() + 86_400_000))).toBeLessThan(
        60_000,
      );
      const issued = server.issued.at(-1)!;
      expect(issued.scope).toBe('read:data offline_access');

      const list = await t.http().get(TOKENS).set(bearer(user.token));
      expect(list.status).toBe(200);
      expect(list.body).toEqual([res.body]);
      expect((await getToken(user)).body).toEqual(res.body);

      const row = await tokenRow(user.userId);
      expect(row).toMatchObject({
        status: 'active',
        last_error: null,
        token_type: 'Bearer',
        scope: 'read:data offline_access',
      });
      expect(row.access_token).toMatch(/^v1\./);
      expect(row.refresh_token).toMatch(/^v1\./);
      const everything = JSON.stringify(await t.sql(`SELECT * FROM user_oauth_tokens`));
      expect(everything).not.toContain(issued.accessToken);
      expect(everything).not.toContain(issued.refreshToken!);
      expect(JSON.stringify(res.body)).not.toContain(issued.accessToken);
      const opened = await t.app
        .get(UserOAuthTokensService)
        .accessToken({ accountId: t.admin.accountId, userId: user.userId, integrationId });
      expect(opened).toBe(issued.accessToken);
      expect(await stateCount(user.userId)).toBe(0);
    });

    it('answers 400 invalid_oauth_state to a replayed state, without a second token request', async () => {
      const { location, res } = await connect(alice);
      expect(res.status).toBe(200);
      const requests = server.tokenRequests;
      const replay = await callback(Object.fromEntries(location.searchParams));
      expect(replay.status).toBe(400);
      expectErrorShape(replay.body, 400, 'invalid_oauth_state');
      expect(server.tokenRequests).toBe(requests);
      expect((await getToken(alice)).body.status).toBe('active');
    });

    it('answers 400 invalid_oauth_state to an expired state, and consumes it', async () => {
      const started = await initiateOk(bob);
      const location = await authorize(started.authorizationUrl);
      await t.sql(`UPDATE oauth_states SET expires_at = now() - interval '1 second' WHERE state_hash = $1`, [
        sha256(started.state),
      ]);
      const requests = server.tokenRequests;
      const res = await callback(Object.fromEntries(location.searchParams));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_oauth_state');
      expect(server.tokenRequests).toBe(requests);
      expect(
        await t.sql(`SELECT 1 FROM oauth_states WHERE state_hash = $1`, [sha256(started.state)]),
      ).toEqual([]);
    });

    it.each([
      ['an unknown state', { state: 'A'.repeat(43), code: 'x' }],
      ['a malformed state', { state: 'not-a-state', code: 'x' }],
    ])('answers 400 invalid_oauth_state to %s', async (_label, query) => {
      const res = await callback(query);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_oauth_state');
    });

    it('validates the query (400) before it consumes the state', async () => {
      const started = await initiateOk(alice);
      const location = await authorize(started.authorizationUrl);
      const code = location.searchParams.get('code')!;
      const bad: Array<Record<string, string | string[]>> = [
        { code },
        { state: started.state },
        { state: started.state, code: [code, code] },
        { state: [started.state, started.state], code },
        { state: started.state, code: 'x'.repeat(5000) },
      ];
      for (const query of bad) {
        const res = await callback(query);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const ok = await callback({ state: started.state, code, iss: server.url, session_state: 'ignored' });
      expect(ok.status).toBe(200);
      expect(ok.body.status).toBe('active');
    });

    it('records a provider denial (400 oauth_authorization_denied, status error) and drops the old tokens', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const first = await connect(user);
      expect(first.res.status).toBe(200);
      server.settings.deny = true;
      const { location, res } = await connect(user);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'oauth_authorization_denied');
      expect(res.body.message).toContain('access_denied');
      const token = await getToken(user);
      expect(token.body).toMatchObject({
        id: first.res.body.id,
        status: 'error',
        lastError: { error: 'access_denied', errorDescription: 'The user declined the request' },
        accessTokenExpiresAt: null,
      });
      const row = await tokenRow(user.userId);
      expect(row).toMatchObject({ access_token: null, refresh_token: null, status: 'error' });
      const replay = await callback(Object.fromEntries(location.searchParams));
      expect(replay.status).toBe(400);
      expectErrorShape(replay.body, 400, 'invalid_oauth_state');

      server.settings.deny = false;
      const again = await connect(user);
      expect(again.res.status).toBe(200);
      expect(again.res.body).toMatchObject({ id: first.res.body.id, status: 'active', lastError: null });
    });

    it('records a refusal by the token endpoint (wrong PKCE verifier): 502, status error', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const started = await initiateOk(user);
      const hash = sha256(started.state);
      // The stored verifier no longer matches the challenge the provider holds.
      const forged = t.app.get(SecretBoxService).seal('f'.repeat(43), `oauth-state:${hash}:code-verifier`);
      await t.sql(`UPDATE oauth_states SET code_verifier = $1 WHERE state_hash = $2`, [forged, hash]);
      const location = await authorize(started.authorizationUrl);
      const res = await callback(Object.fromEntries(location.searchParams));
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'oauth_token_exchange_failed');
      expect(res.body.message).toContain('invalid_grant');
      expect(res.body.message).not.toContain(CLIENT.clientSecret);
      const token = await getToken(user);
      expect(token.body).toMatchObject({
        status: 'error',
        lastError: { error: 'invalid_grant', errorDescription: 'PKCE verification failed' },
      });
      expect(await tokenRow(user.userId)).toMatchObject({ access_token: null, status: 'error' });
    });

    it('records a wrong client secret (invalid_client, 502)', async () => {
      const id = await createIntegration({ clientSecret: 'not-the-secret' });
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const { res } = await connect(user, id);
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'oauth_token_exchange_failed');
      expect(res.body.message).not.toContain('not-the-secret');
      expect((await getToken(user, id)).body).toMatchObject({
        status: 'error',
        lastError: { error: 'invalid_client' },
      });
    });

    it.each([
      [
        'non-JSON',
        { status: 200, body: '<html>ok</html>', contentType: 'text/html' },
        'invalid_token_response',
      ],
      [
        'JSON without access_token',
        { status: 200, body: '{"token_type":"Bearer"}' },
        'invalid_token_response',
      ],
      ['an array', { status: 200, body: '[]' }, 'invalid_token_response'],
      [
        'a body over 64 KB',
        { status: 200, body: JSON.stringify({ access_token: 'x'.repeat(70_000) }) },
        'invalid_token_response',
      ],
      [
        'a 500 without JSON',
        { status: 500, body: 'oops', contentType: 'text/plain' },
        'token_request_failed',
      ],
      ['a 302', { status: 302, body: '' }, 'token_request_failed'],
    ])(
      'answers 502 and records the error when the token endpoint sends %s',
      async (_label, response, error) => {
        const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
        const started = await initiateOk(user);
        const location = await authorize(started.authorizationUrl);
        server.settings.tokenResponse = response;
        const res = await callback(Object.fromEntries(location.searchParams));
        expect(res.status).toBe(502);
        expectErrorShape(res.body, 502, 'oauth_token_exchange_failed');
        expect((await getToken(user)).body).toMatchObject({ status: 'error', lastError: { error } });
      },
    );

    it('answers 502 when the token endpoint is down, and records it', async () => {
      const id = await createIntegration({ tokenUrl: `http://127.0.0.1:${await closedPort()}/token` });
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const { res } = await connect(user, id);
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'oauth_token_exchange_failed');
      expect((await getToken(user, id)).body).toMatchObject({
        status: 'error',
        lastError: { error: 'token_endpoint_unreachable' },
      });
    });

    it('gives up on a token endpoint that does not answer in time', async () => {
      server.settings.tokenDelayMs = 2_000;
      const client = Object.assign(new FetchOAuthTokenClient(), {
        timeoutMs: 200,
        allow: parseOutboundAllowList('127.0.0.1'),
      });
      // Had the client waited for the endpoint, the exchange would have succeeded after 2 s.
      const attempt = client.exchangeCode({
        tokenUrl: server.tokenUrl,
        clientId: CLIENT.clientId,
        clientSecret: CLIENT.clientSecret,
        code: 'code',
        redirectUri: REDIRECT_URI,
        codeVerifier: 'v'.repeat(43),
      });
      await expect(attempt).rejects.toBeInstanceOf(OAuthTokenExchangeError);
      await expect(attempt).rejects.toMatchObject({ error: 'token_endpoint_timeout' });
    });

    it('lets exactly one of parallel callbacks with the same state through', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const started = await initiateOk(user);
      const query = Object.fromEntries((await authorize(started.authorizationUrl)).searchParams);
      const requests = server.tokenRequests;
      const results = await Promise.all(Array.from({ length: 10 }, () => callback(query)));
      expect(results.map((r) => r.status).sort()).toEqual([200, ...Array<number>(9).fill(400)]);
      for (const r of results.filter((x) => x.status === 400))
        expectErrorShape(r.body, 400, 'invalid_oauth_state');
      expect(server.tokenRequests).toBe(requests + 1);
      expect(await t.sql(`SELECT 1 FROM user_oauth_tokens WHERE user_id = $1`, [user.userId])).toHaveLength(
        1,
      );
    });

    it('keeps one row per user and integration when two authorizations complete together', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const queries = await Promise.all(
        [1, 2, 3].map(async () =>
          Object.fromEntries((await authorize((await initiateOk(user)).authorizationUrl)).searchParams),
        ),
      );
      const results = await Promise.all(queries.map((q) => callback(q)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(await t.sql(`SELECT 1 FROM user_oauth_tokens WHERE user_id = $1`, [user.userId])).toHaveLength(
        1,
      );
    });
  });

  describe('GET /api/v1/user-oauth-tokens', () => {
    it('lists only the caller’s own tokens, as a plain array', async () => {
      const carol = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const dave = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      const second = await createIntegration();
      expect((await connect(carol)).res.status).toBe(200);
      expect((await connect(carol, second)).res.status).toBe(200);
      expect((await connect(dave)).res.status).toBe(200);
      const mine = await t.http().get(TOKENS).set(bearer(carol.token));
      expect(mine.status).toBe(200);
      expect((mine.body as UserToken[]).map((x) => [x.userId, x.integrationId])).toEqual([
        [carol.userId, integrationId],
        [carol.userId, second],
      ]);
      const none = await t.http().get(TOKENS).set(bearer(viewer.token));
      expect(none.body).toEqual([]);
      const admin = await t.http().get(TOKENS).set(bearer(t.admin.token));
      expect((admin.body as UserToken[]).every((x) => x.userId === t.admin.userId)).toBe(true);
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get(TOKENS);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401);
    });
  });

  describe('GET /api/v1/user-oauth-tokens/{integrationId}', () => {
    it('computes expired: access token past its expiry and no usable refresh token', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      expect((await connect(user)).res.status).toBe(200);
      const set = (sql: string) =>
        t.sql(`UPDATE user_oauth_tokens SET ${sql} WHERE user_id = $1`, [user.userId]);
      await set(`access_token_expires_at = now() - interval '1 minute'`);
      expect((await getToken(user)).body.status).toBe('active');
      await set(`refresh_token_expires_at = now() - interval '1 minute'`);
      expect((await getToken(user)).body.status).toBe('expired');
      await set(`refresh_token = NULL, refresh_token_expires_at = NULL`);
      expect((await getToken(user)).body.status).toBe('expired');
      expect((await t.http().get(TOKENS).set(bearer(user.token))).body[0].status).toBe('expired');
      await set(`access_token_expires_at = NULL`);
      expect((await getToken(user)).body.status).toBe('active');
    });

    it('answers 404 for another user’s token, another account’s integration, or no token; 400 bad ids', async () => {
      expect((await connect(alice)).res.status).toBe(200);
      const theirs = await createIntegration({}, other);
      for (const [actor, id] of [
        [bob, integrationId],
        [viewer, integrationId],
        [alice, theirs],
        [alice, 2_000_000_000],
      ] as Array<[Actor, number]>) {
        const res = await getToken(actor, id);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'oauth_token_not_found');
      }
      for (const id of BAD_IDS) {
        const res = await getToken(alice, id);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect((await t.http().get(`${TOKENS}/${integrationId}`)).status).toBe(401);
    });
  });

  describe('DELETE /api/v1/user-oauth-tokens/{integrationId}', () => {
    it('forgets the caller’s token and pending authorizations (200), then 404', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      expect((await connect(user)).res.status).toBe(200);
      const pending = await initiateOk(user);
      const res = await t.http().delete(`${TOKENS}/${integrationId}`).set(bearer(user.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await tokenRow(user.userId)).toBeUndefined();
      expect(await stateCount(user.userId)).toBe(0);
      const location = await authorize(pending.authorizationUrl);
      const late = await callback(Object.fromEntries(location.searchParams));
      expect(late.status).toBe(400);
      expectErrorShape(late.body, 400, 'invalid_oauth_state');
      const again = await t.http().delete(`${TOKENS}/${integrationId}`).set(bearer(user.token));
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'oauth_token_not_found');
    });

    it('never touches another user’s token: 404, and the token stays', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      expect((await connect(user)).res.status).toBe(200);
      for (const actor of [bob, t.admin, other]) {
        const res = await t.http().delete(`${TOKENS}/${integrationId}`).set(bearer(actor.token));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'oauth_token_not_found');
      }
      expect((await getToken(user)).body.status).toBe('active');
      for (const id of BAD_IDS) {
        expect((await t.http().delete(`${TOKENS}/${id}`).set(bearer(user.token))).status).toBe(400);
      }
      expect((await t.http().delete(`${TOKENS}/${integrationId}`)).status).toBe(401);
      expect((await getToken(user)).body.status).toBe('active');
    });
  });

  describe('deleting a user', () => {
    it('deletes the user’s tokens and pending authorizations', async () => {
      const user = await userWith(t.admin, ['OAuthIntegrationsIssueTokens']);
      expect((await connect(user)).res.status).toBe(200);
      await initiateOk(user);
      const res = await t.http().delete(`/api/v1/users/${user.userId}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(await t.sql(`SELECT 1 FROM user_oauth_tokens WHERE user_id = $1`, [user.userId])).toEqual([]);
      expect(await stateCount(user.userId)).toBe(0);
    });
  });
});
