import { randomBytes } from 'node:crypto';
import { AppConfig } from '../../src/core/config/app-config.js';
import { GitHubInstallations } from '../../src/modules/data-model/github/github-installations.service.js';
import {
  linkStateKey,
  signLinkState,
  type LinkStateClaims,
} from '../../src/modules/data-model/github/github-link-state.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  testConfig,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { startGitHubFake, type FakeState, type GitHubFake } from '../support/github-fake.js';
import { newDeployment } from '../support/reports.js';

/**
 * Git host discovery (`/api/v1/github/...`) and the link of installations to accounts through
 * HTTP, against the loopback GitHub of test/support/github-fake.ts.
 */

const ORG = 11;
const USER = 12;
const BIG = 13;

const repos = (owner: string, installation: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    owner,
    name: `repo-${String(i).padStart(3, '0')}`,
    installations: [installation],
  }));

const BRANCHES = Array.from({ length: 230 }, (_, i) => `feature/b-${String(i).padStart(3, '0')}`);

const state = (): FakeState => ({
  installations: [
    { id: ORG, login: 'acme', type: 'Organization', accountId: 5001, avatarUrl: 'https://avatars.test/acme' },
    { id: USER, login: 'alice', type: 'User', accountId: 5002, avatarUrl: 'https://avatars.test/alice' },
    { id: BIG, login: 'bigco', type: 'Organization', accountId: 5003 },
    { id: 14, login: 'org-14', type: 'Organization' },
    { id: 15, login: 'org-15', type: 'Organization' },
  ],
  repositories: [
    {
      owner: 'acme',
      name: 'cube-model',
      id: 777,
      installations: [ORG],
      defaultBranch: 'main',
      branches: ['dev', 'main', 'release/2026.11'],
    },
    {
      owner: 'acme',
      name: 'big-model',
      installations: [ORG],
      defaultBranch: 'main',
      branches: [...BRANCHES, 'main'],
    },
    { owner: 'alice', name: 'sandbox', installations: [USER] },
    ...repos('bigco', BIG, 150),
  ],
});

const SETUP = '/api/v1/github/setup';

describe('GitHub discovery', () => {
  let fake: GitHubFake;
  let t: TestApp;
  let viewer: Actor;
  let developer: Actor;

  const get = (path: string, actor: Actor = t.admin) => t.http().get(path).set(bearer(actor.token));
  /** GitHub's redirect to the Setup URL: the person's browser, no token. */
  const setup = (query: Record<string, string>) => t.http().get(SETUP).query(query);

  /** The state of the caller's install link, as GitHub would hand it back. */
  async function stateFor(actor: Actor): Promise<string> {
    const res = await get('/api/v1/github/status', actor);
    expect(res.status).toBe(200);
    const url = new URL(res.body.linkUrl as string);
    expect([...url.searchParams.keys()]).toEqual(['state']);
    return url.searchParams.get('state')!;
  }

  /** The whole link flow: the install link's state, then GitHub's redirect after installing. */
  async function link(actor: Actor, installationId: number, action = 'install') {
    const state = await stateFor(actor);
    const res = await setup({ installation_id: String(installationId), setup_action: action, state });
    expect({ installationId, status: res.status }).toEqual({ installationId, status: 200 });
    return res;
  }

  const logins = async (actor: Actor) => {
    const res = await get('/api/v1/github/installations', actor);
    expect(res.status).toBe(200);
    return (res.body.items as Array<{ login: string }>).map((i) => i.login);
  };

  beforeAll(async () => {
    fake = await startGitHubFake();
    t = await startApp(fake.env());
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    // The account `acme` links every installation; the other accounts of the tests link their own.
    fake.seed(state());
    for (const i of state().installations) await link(t.admin, i.id);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.seed(state());
  });

  /** Every item of a list, `first` at a time, following `endCursor`; checks pageInfo on the way. */
  async function walk(path: string, first: number): Promise<{ items: unknown[]; pages: number }> {
    const items: unknown[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const res = await get(`${path}${sep}first=${first}${after ? `&after=${after}` : ''}`);
      expect(res.status).toBe(200);
      pages += 1;
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.pageInfo.hasPreviousPage).toBe(after !== null);
      items.push(...(res.body.items as unknown[]));
      if (!res.body.pageInfo.hasNextPage) {
        expect(res.body.items.length).toBeLessThanOrEqual(first);
        return { items, pages };
      }
      expect(res.body.items).toHaveLength(first);
      after = res.body.pageInfo.endCursor as string;
      if (pages > 50) throw new Error('paging does not end');
    }
  }

  describe('access', () => {
    const ROUTES = [
      '/api/v1/github/status',
      '/api/v1/github/installations',
      `/api/v1/github/installations/${ORG}/repositories`,
      `/api/v1/github/repositories/acme/cube-model/branches?installationId=${ORG}`,
    ];

    it('answers 401 without a token', async () => {
      for (const path of ROUTES) {
        const res = await t.http().get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
        expectErrorShape(res.body, 401, 'unauthorized');
      }
    });

    it('answers 403 to a user who may not change data models', async () => {
      for (const path of ROUTES) {
        const res = await get(path, viewer);
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(fake.requests).toEqual([]);
    });

    it('lets a Developer (SchemaUpdate) in', async () => {
      for (const path of ROUTES) {
        const res = await get(path, developer);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
    });
  });

  describe('GET /api/v1/github/status', () => {
    it('is connected, with the install link signed for the caller and the settings page', async () => {
      const res = await get('/api/v1/github/status');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        connected: true,
        linkUrl: expect.stringMatching(
          new RegExp(
            `^${fake.url}/github-apps/${fake.slug}/installations/new\\?state=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`,
          ),
        ),
        settingsUrl: `${fake.url}/settings/installations`,
      });
      // Read from the account's links: GitHub is not asked.
      expect(fake.requests).toEqual([]);
    });

    it('is not connected for an account that has linked nothing, whatever GitHub has', async () => {
      const other = await newAccount(t, 'umbrella');
      const res = await get('/api/v1/github/status', other);
      expect(res.status).toBe(200);
      expect(res.body.connected).toBe(false);
      expect(res.body.linkUrl).toContain('/installations/new?state=');
    });

    it('refuses query parameters', async () => {
      const res = await get('/api/v1/github/status?verbose=true');
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  describe('GET /api/v1/github/installations', () => {
    it('lists installations in the reference shape', async () => {
      const res = await get('/api/v1/github/installations');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'items', 'pageInfo']);
      expect(res.body.items).toHaveLength(5);
      expect(res.body.items[0]).toEqual({
        id: '5001',
        installationId: String(ORG),
        login: 'acme',
        avatarUrl: 'https://avatars.test/acme',
      });
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      // Each linked installation was read with the App JWT (several at once: in any order).
      expect(fake.requests.map((r) => [r.method, r.path, r.auth]).sort()).toEqual(
        [ORG, USER, BIG, 14, 15].map((id) => ['GET', `/app/installations/${id}`, 'jwt']),
      );
    });

    it('pages with first and after', async () => {
      const { items, pages } = await walk('/api/v1/github/installations', 2);
      expect(pages).toBe(3);
      expect(items.map((i) => (i as { login: string }).login)).toEqual([
        'acme',
        'alice',
        'bigco',
        'org-14',
        'org-15',
      ]);
    });

    it('answers an empty page past the end', async () => {
      const first = await get('/api/v1/github/installations?first=5');
      const res = await get(`/api/v1/github/installations?after=${first.body.pageInfo.endCursor}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        items: [],
        data: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      });
    });

    it('answers 400 for a bad first, a foreign cursor or an unknown parameter', async () => {
      for (const query of ['first=0', 'first=1001', 'first=abc', 'limit=5', 'installationId=11']) {
        const res = await get(`/api/v1/github/installations?${query}`);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      for (const after of [
        'nope',
        Buffer.from('["x"]').toString('base64url'),
        Buffer.from('[-5]').toString('base64url'),
      ]) {
        const res = await get(`/api/v1/github/installations?after=${after}`);
        expect({ after, status: res.status }).toEqual({ after, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_cursor');
      }
    });
  });

  describe('GET /api/v1/github/installations/{installationId}/repositories', () => {
    it('lists the repositories the installation may access', async () => {
      const res = await get(`/api/v1/github/installations/${ORG}/repositories`);
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        {
          id: 777,
          name: 'cube-model',
          fullName: 'acme/cube-model',
          htmlUrl: 'https://github.com/acme/cube-model',
        },
        {
          id: expect.any(Number),
          name: 'big-model',
          fullName: 'acme/big-model',
          htmlUrl: 'https://github.com/acme/big-model',
        },
      ]);
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.pageInfo.hasNextPage).toBe(false);
      const listed = fake.requests.find((r) => r.path === '/installation/repositories');
      expect(listed).toMatchObject({ auth: 'token', installationId: ORG });
    });

    it('pages across GitHub’s pages of 100', async () => {
      const { items, pages } = await walk(`/api/v1/github/installations/${BIG}/repositories`, 60);
      expect(pages).toBe(3);
      expect(items.map((r) => (r as { name: string }).name)).toEqual(
        Array.from({ length: 150 }, (_, i) => `repo-${String(i).padStart(3, '0')}`),
      );
      // One installation token served every page.
      expect(fake.tokensIssued).toBe(1);
    });

    it('answers 404 for an installation the App does not have', async () => {
      const res = await get('/api/v1/github/installations/999/repositories');
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'github_installation_not_found');
      expect(res.body.message).toBe('GitHub installation 999 was not found');
      expect(fake.requests).toEqual([]);
    });

    it('answers 400 for an installationId that is not a positive integer', async () => {
      for (const id of ['abc', '0', '-1', '1e3', '1.5', '99999999999999999']) {
        const res = await get(`/api/v1/github/installations/${id}/repositories`);
        expect({ id, status: res.status }).toEqual({ id, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });
  });

  describe('GET /api/v1/github/repositories/{owner}/{repo}/branches', () => {
    const branches = (owner: string, repo: string, query: string) =>
      get(`/api/v1/github/repositories/${owner}/${repo}/branches?${query}`);

    it('lists branches and marks the default one', async () => {
      const res = await branches('acme', 'cube-model', `installationId=${ORG}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        items: [
          { name: 'dev', isDefault: false },
          { name: 'main', isDefault: true },
          { name: 'release/2026.11', isDefault: false },
        ],
        data: res.body.items,
        pageInfo: {
          hasNextPage: false,
          hasPreviousPage: false,
          startCursor: expect.any(String),
          endCursor: expect.any(String),
        },
      });
    });

    it('pages through many branches', async () => {
      const { items, pages } = await walk(
        `/api/v1/github/repositories/acme/big-model/branches?installationId=${ORG}`,
        100,
      );
      expect(pages).toBe(3);
      expect(items).toHaveLength(231);
      expect(items.filter((b) => (b as { isDefault: boolean }).isDefault)).toEqual([
        { name: 'main', isDefault: true },
      ]);
    });

    it('answers 400 without installationId, with a bad one, or with an unknown parameter', async () => {
      for (const query of [
        '',
        'installationId=',
        'installationId=abc',
        'installationId=0',
        `installationId=${ORG}&x=1`,
      ]) {
        const res = await branches('acme', 'cube-model', query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('answers 400 for names GitHub would not accept', async () => {
      for (const [owner, repo] of [
        ['-acme', 'cube-model'],
        ['acme', '..'],
        ['acme', 'a%20b'],
      ]) {
        const res = await branches(owner, repo, `installationId=${ORG}`);
        expect({ owner, repo, status: res.status }).toEqual({ owner, repo, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('answers 404 for an unknown installation or a repository it cannot see', async () => {
      const unknown = await branches('acme', 'cube-model', 'installationId=999');
      expect(unknown.status).toBe(404);
      expectErrorShape(unknown.body, 404, 'github_installation_not_found');

      for (const [owner, repo, id] of [
        ['acme', 'missing', ORG],
        ['alice', 'sandbox', ORG],
        ['acme', 'cube-model', USER],
      ] as const) {
        const res = await branches(owner, repo, `installationId=${id}`);
        expect({ owner, repo, status: res.status }).toEqual({ owner, repo, status: 404 });
        expectErrorShape(res.body, 404, 'github_repository_not_found');
        expect(res.body.message).toBe(`GitHub repository ${owner}/${repo} was not found`);
      }
    });
  });

  describe('when GitHub fails', () => {
    const paths = [
      '/api/v1/github/installations',
      `/api/v1/github/installations/${ORG}/repositories`,
      `/api/v1/github/repositories/acme/cube-model/branches?installationId=${ORG}`,
    ];

    it('answers 502 github_unavailable when GitHub answers 500', async () => {
      fake.settings.failWith = 500;
      for (const path of paths) {
        const res = await get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 502 });
        expectErrorShape(res.body, 502, 'github_unavailable');
      }
    });

    it('answers 502 github_unavailable when GitHub cannot be reached', async () => {
      fake.settings.resetConnections = true;
      for (const path of paths) {
        const res = await get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 502 });
        expectErrorShape(res.body, 502, 'github_unavailable');
      }
    });

    it('answers 502 github_unavailable when GitHub refuses the App', async () => {
      fake.settings.failWith = 401;
      const res = await get('/api/v1/github/installations');
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'github_unavailable');
    });

    it('still answers the status, which GitHub has no part in', async () => {
      fake.settings.failWith = 500;
      const res = await get('/api/v1/github/status');
      expect(res.status).toBe(200);
      expect(res.body.connected).toBe(true);
    });

    it('answers 502 at the Setup URL, linking nothing', async () => {
      const other = await newAccount(t, 'cyberdyne');
      const state = await stateFor(other);
      fake.settings.failWith = 500;
      const res = await setup({ installation_id: String(ORG), setup_action: 'install', state });
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'github_unavailable');
      fake.settings.failWith = null;
      expect(await logins(other)).toEqual([]);
    });
  });

  describe('linking installations to accounts', () => {
    const rows = (accountId: number) =>
      t.sql(
        `SELECT installation_id::int AS "installationId", linked_by_user_id AS "linkedByUserId"
         FROM github_installations WHERE account_id = $1 ORDER BY installation_id`,
        [accountId],
      );

    it('links an installation through the Setup URL to the account of the state', async () => {
      const initech = await newAccount(t, 'initech');
      expect((await get('/api/v1/github/status', initech)).body.connected).toBe(false);
      expect(await logins(initech)).toEqual([]);

      const state = await stateFor(initech);
      fake.reset();
      const res = await setup({ installation_id: String(ORG), setup_action: 'install', state });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ installationId: String(ORG), accountLogin: 'acme', linked: true });
      // GitHub was asked, with the App JWT, whether the installation exists.
      expect(fake.requests.map((r) => [r.method, r.path, r.auth])).toEqual([
        ['GET', `/app/installations/${ORG}`, 'jwt'],
      ]);
      expect(await rows(initech.accountId)).toEqual([
        { installationId: ORG, linkedByUserId: initech.userId },
      ]);

      expect((await get('/api/v1/github/status', initech)).body.connected).toBe(true);
      expect(await logins(initech)).toEqual(['acme']);
      const repos = await get(`/api/v1/github/installations/${ORG}/repositories`, initech);
      expect(repos.status).toBe(200);
      expect(repos.body.items.map((r: { name: string }) => r.name)).toEqual(['cube-model', 'big-model']);
      const branches = await get(
        `/api/v1/github/repositories/acme/cube-model/branches?installationId=${ORG}`,
        initech,
      );
      expect(branches.status).toBe(200);
      // Only what it linked.
      const other = await get(`/api/v1/github/installations/${USER}/repositories`, initech);
      expect(other.status).toBe(404);
      expectErrorShape(other.body, 404, 'github_installation_not_found');
    });

    it('is idempotent: the same redirect again, or a later update, answers the same', async () => {
      const hooli = await newAccount(t, 'hooli');
      const state = await stateFor(hooli);
      const query = { installation_id: String(USER), setup_action: 'install', state };
      const first = await setup(query);
      const again = await Promise.all([setup(query), setup(query)]);
      const update = await link(hooli, USER, 'update');
      for (const res of [first, ...again, update]) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ installationId: String(USER), accountLogin: 'alice', linked: true });
      }
      expect(await rows(hooli.accountId)).toEqual([{ installationId: USER, linkedByUserId: hooli.userId }]);
      expect(await logins(hooli)).toEqual(['alice']);
    });

    it('keeps another account out of an installation until it links it itself', async () => {
      const globex = await newAccount(t, 'globex');
      expect((await get('/api/v1/github/status', globex)).body.connected).toBe(false);
      expect(await logins(globex)).toEqual([]);
      for (const path of [
        `/api/v1/github/installations/${ORG}/repositories`,
        `/api/v1/github/repositories/acme/cube-model/branches?installationId=${ORG}`,
      ]) {
        const res = await get(path, globex);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expectErrorShape(res.body, 404, 'github_installation_not_found');
        expect(res.body.message).toBe(`GitHub installation ${ORG} was not found`);
      }
      await expect(t.app.get(GitHubInstallations).requireLinked(globex.accountId, ORG)).rejects.toMatchObject(
        {
          code: 'github_installation_not_found',
        },
      );
      // GitHub was never asked on globex's behalf.
      expect(fake.requests).toEqual([]);

      // The same GitHub organization, linked by globex too: someone at globex configures the
      // installation from globex's link (GitHub records the change), and GitHub redirects.
      const state = await stateFor(globex);
      fake.touchInstallation(ORG);
      const res = await setup({ installation_id: String(ORG), setup_action: 'update', state });
      expect(res.status).toBe(200);
      expect(await logins(globex)).toEqual(['acme']);
      await expect(
        t.app.get(GitHubInstallations).requireLinked(globex.accountId, ORG),
      ).resolves.toBeUndefined();
      // acme keeps it, and globex still sees nothing else of acme's.
      expect(await logins(t.admin)).toContain('acme');
      expect((await get(`/api/v1/github/installations/${BIG}/repositories`, globex)).status).toBe(404);
    });

    it('refuses a redirect naming an installation GitHub reports unchanged since the state was issued', async () => {
      const day = new Date(Date.now() - 24 * 3600_000).toISOString();
      fake.seed({
        installations: [
          ...state().installations,
          { id: 16, login: 'soylent', type: 'Organization', createdAt: day, updatedAt: day },
        ],
      });
      const soylentUser = await newAccount(t, 'stark');
      const state16 = await stateFor(soylentUser);
      // Anyone may type another tenant's installation id into the redirect.
      for (const action of ['install', 'update']) {
        const res = await setup({ installation_id: '16', setup_action: action, state: state16 });
        expect({ action, status: res.status }).toEqual({ action, status: 400 });
        expectErrorShape(res.body, 400, 'github_link_unverified');
      }
      expect(await rows(soylentUser.accountId)).toEqual([]);
      // Once GitHub records a change made from the link (repositories added), the redirect links it.
      fake.touchInstallation(16);
      const res = await setup({ installation_id: '16', setup_action: 'update', state: state16 });
      expect(res.status).toBe(200);
      expect(res.body.accountLogin).toBe('soylent');
    });

    it('refuses a missing, altered, foreign or expired state with 400 invalid_github_state', async () => {
      const wayne = await newAccount(t, 'wayne');
      const valid = await stateFor(wayne);
      const [payload, mac] = valid.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as LinkStateClaims;
      expect(claims).toEqual({
        accountId: wayne.accountId,
        userId: wayne.userId,
        iat: expect.any(Number),
        exp: claims.iat + 3600,
      });
      const reencode = (c: LinkStateClaims) => Buffer.from(JSON.stringify(c)).toString('base64url');
      const key = linkStateKey(t.app.get(AppConfig).secretsKey);
      const now = Math.floor(Date.now() / 1000);
      const cases: Array<[string, string | undefined]> = [
        ['missing', undefined],
        ['empty', ''],
        ['garbage', 'not-a-state'],
        ['three parts', `${valid}.x`],
        ['bad signature', `${payload}.${Buffer.alloc(32).toString('base64url')}`],
        ['another account', `${reencode({ ...claims, accountId: t.admin.accountId })}.${mac}`],
        ['longer life', `${reencode({ ...claims, exp: claims.exp + 86_400 })}.${mac}`],
        ['another key', signLinkState(linkStateKey(randomBytes(32)), claims)],
        ['expired', signLinkState(key, { ...claims, iat: now - 7200, exp: now - 3600 })],
      ];
      fake.reset();
      for (const [name, state] of cases) {
        const query: Record<string, string> = { installation_id: String(ORG), setup_action: 'install' };
        if (state !== undefined) query.state = state;
        const res = await setup(query);
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_github_state');
        if (name === 'expired') expect(res.body.message).toMatch(/expired/);
      }
      // Nothing was linked, and GitHub was not asked.
      expect(fake.requests).toEqual([]);
      expect(await rows(wayne.accountId)).toEqual([]);
      expect(await rows(t.admin.accountId)).toHaveLength(5);
      // A state this service signed is accepted: the checks above are the state's, not the flow's.
      expect((await setup({ installation_id: String(ORG), state: valid })).status).toBe(200);
    });

    it('refuses the state of a user deleted since it was issued', async () => {
      const tyrell = await newAccount(t, 'tyrell');
      const dev = await newUser(t, tyrell, { defaultRoles: ['Developer'] });
      const state = await stateFor(dev);
      const del = await t.http().delete(`/api/v1/users/${dev.userId}`).set(bearer(tyrell.token));
      expect(del.status).toBe(200);
      const res = await setup({ installation_id: String(ORG), setup_action: 'install', state });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_github_state');
      expect(await rows(tyrell.accountId)).toEqual([]);
    });

    it('answers 404 for an installation GitHub does not know', async () => {
      const state = await stateFor(developer);
      const res = await setup({ installation_id: '999', setup_action: 'install', state });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'github_installation_not_found');
    });

    it('answers 400 for an installation request, a missing or bad installation_id, or other parameters', async () => {
      const state = await stateFor(developer);
      const request = await setup({ setup_action: 'request', state });
      expect(request.status).toBe(400);
      expectErrorShape(request.body, 400, 'bad_request');
      const queries: Array<Record<string, string>> = [
        { state },
        { installation_id: 'abc', state },
        { installation_id: '0', state },
        { installation_id: String(ORG), setup_action: 'delete', state },
        { installation_id: String(ORG), state, code: 'abc' },
        { installation_id: String(ORG), state: 'x'.repeat(513) },
      ];
      for (const query of queries) {
        const res = await setup(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('forgets an installation GitHub no longer has, and lists the rest', async () => {
      const acmeCorp = await newAccount(t, 'oscorp');
      await link(acmeCorp, ORG);
      await link(acmeCorp, USER);
      fake.seed({ installations: state().installations.filter((i) => i.id !== ORG) });
      const res = await get('/api/v1/github/installations', acmeCorp);
      expect(res.status).toBe(200);
      expect(res.body.items.map((i: { login: string }) => i.login)).toEqual(['alice']);
      expect(await rows(acmeCorp.accountId)).toEqual([
        { installationId: USER, linkedByUserId: acmeCorp.userId },
      ]);
      fake.seed({ installations: [] });
      const none = await get('/api/v1/github/installations', acmeCorp);
      expect(none.body).toEqual({
        items: [],
        data: [],
        pageInfo: {
          hasNextPage: false,
          hasPreviousPage: false,
          startCursor: expect.any(String),
          endCursor: expect.any(String),
        },
      });
      expect((await get('/api/v1/github/status', acmeCorp)).body.connected).toBe(false);
    });
  });
});

describe('GitHub discovery without a GitHub App', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers 409 github_not_configured on every route, naming the settings to make', async () => {
    for (const path of [
      '/api/v1/github/status',
      '/api/v1/github/installations',
      '/api/v1/github/installations/11/repositories',
      '/api/v1/github/repositories/acme/cube-model/branches?installationId=11',
      '/api/v1/github/setup?installation_id=11&setup_action=install&state=x.y',
    ]) {
      const res = await t.http().get(path).set(bearer(t.admin.token));
      // Not a 5xx: nothing failed and no retry helps until the operator sets the App up.
      expect({ path, status: res.status }).toEqual({ path, status: 409 });
      expectErrorShape(res.body, 409, 'github_not_configured');
      expect(res.body.message).toBe(
        'No GitHub App is configured: set GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_SLUG',
      );
    }
    // Connecting a deployment to GitHub too.
    const dep = await newDeployment(t, t.admin, 'No GitHub here');
    const connect = await t
      .http()
      .post(`/build/api/v1/deployments/${dep}/github/connect`)
      .set(bearer(t.admin.token))
      .send({ installationId: 11, name: 'acme/cube-model' });
    expect({ status: connect.status, code: connect.body.code }).toEqual({
      status: 409,
      code: 'github_not_configured',
    });
  });

  it('still checks access and input first', async () => {
    expect((await t.http().get('/api/v1/github/status')).status).toBe(401);
    const res = await t
      .http()
      .get('/api/v1/github/installations/abc/repositories')
      .set(bearer(t.admin.token));
    expect(res.status).toBe(400);
  });
});

describe('GitHub discovery with GITHUB_INSTALLATION_LINKING=off', () => {
  let fake: GitHubFake;
  let t: TestApp;
  beforeAll(async () => {
    fake = await startGitHubFake();
    fake.seed(state());
    t = await startApp({ ...fake.env(), GITHUB_INSTALLATION_LINKING: 'off' });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('serves every installation of the App to every account, without linking', async () => {
    const other = await newAccount(t, 'globex');
    for (const actor of [t.admin, other]) {
      const status = await t.http().get('/api/v1/github/status').set(bearer(actor.token));
      expect(status.body.connected).toBe(true);
      const list = await t.http().get('/api/v1/github/installations').set(bearer(actor.token));
      expect(list.status).toBe(200);
      expect(list.body.items.map((i: { login: string }) => i.login)).toEqual(
        state().installations.map((i) => i.login),
      );
      const repositories = await t
        .http()
        .get(`/api/v1/github/installations/${ORG}/repositories?first=1`)
        .set(bearer(actor.token));
      expect(repositories.status).toBe(200);
      expect(repositories.body.items).toHaveLength(1);
    }
  });

  it('refuses a value other than required or off at start-up', () => {
    expect(() => testConfig('postgres://x/y', { GITHUB_INSTALLATION_LINKING: 'sometimes' })).toThrow(
      /GITHUB_INSTALLATION_LINKING/,
    );
  });
});
