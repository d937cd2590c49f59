import { createHmac, generateKeyPairSync } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../src/core/config/app-config.js';
import { ApiError } from '../../src/core/errors/api-error.js';
import {
  GitHubAppClient,
  parseRepositoryName,
  TOKEN_REFRESH_MARGIN_MS,
} from '../../src/modules/data-model/github/github.client.js';
import {
  issueLinkState,
  LINK_STATE_TTL_SECONDS,
  linkStateKey,
  signLinkState,
  verifyLinkState,
} from '../../src/modules/data-model/github/github-link-state.js';
import { gitHubAppLinks } from '../../src/modules/data-model/github/github-links.js';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.js';

/**
 * The GitHub App client against the loopback GitHub of test/support/github-fake.ts: the App JWT,
 * installation tokens and their cache, paging windows over GitHub's numbered pages, and how
 * GitHub's answers and failures become our errors.
 */

const configFor = (fake: GitHubFake, app: Partial<{ privateKey: string }> = {}) =>
  ({
    github: {
      apiUrl: fake.url,
      app: { id: fake.appId, slug: fake.slug, privateKey: app.privateKey ?? fake.privateKey },
    },
  }) as AppConfig;

async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; code: string; message: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return { status: err.getStatus(), code: err.code, message: err.messages };
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('GitHubAppClient', () => {
  let fake: GitHubFake;
  let client: GitHubAppClient;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    fake = await startGitHubFake();
  });
  afterAll(() => fake.close());

  beforeEach(() => {
    fake.reset();
    fake.seed({
      installations: Array.from({ length: 10 }, (_, i) => ({
        id: 11 + i,
        login: i === 1 ? 'someone' : `org-${i}`,
        type: i === 1 ? ('User' as const) : ('Organization' as const),
      })),
      repositories: [
        {
          owner: 'org-0',
          name: 'model',
          installations: [11],
          branches: ['dev', 'main'],
          defaultBranch: 'main',
        },
        { owner: 'org-0', name: 'other', installations: [11] },
        { owner: 'someone', name: 'private-model', installations: [12] },
      ],
    });
    client = new GitHubAppClient(configFor(fake));
  });

  describe('App JWT', () => {
    it('signs RS256 with iss = App id, iat a minute back and exp within 10 minutes', async () => {
      const now = Math.floor(Date.now() / 1000);
      await client.installations({ offset: 0, limit: 5 });
      expect(fake.jwts).toHaveLength(1);
      const { header, claims } = fake.jwts[0];
      expect(header.alg).toBe('RS256');
      expect(claims.iss).toBe(String(fake.appId));
      expect(claims.iat).toBeLessThanOrEqual(now - 55);
      expect(claims.iat).toBeGreaterThanOrEqual(now - 65);
      expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(600);
      expect(claims.exp).toBeGreaterThan(now + 60);
      expect(fake.requests[0]).toMatchObject({ path: '/app/installations', auth: 'jwt' });
    });

    it('reuses the JWT between calls for a few minutes', async () => {
      await client.installations({ offset: 0, limit: 1 });
      await client.installation(11);
      expect(fake.jwts).toHaveLength(2);
      expect(fake.jwts[1]).toEqual(fake.jwts[0]);
    });

    it('accepts a PKCS#8 key as well as GitHub’s PKCS#1', async () => {
      // The fake's key is PKCS#1; re-encoded as PKCS#8 it must sign the same way.
      const { createPrivateKey } = await import('node:crypto');
      const pkcs8 = createPrivateKey(fake.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString();
      const other = new GitHubAppClient(configFor(fake, { privateKey: pkcs8 }));
      expect(other.configured).toBe(true);
      await expect(other.installation(11)).resolves.toMatchObject({ id: 11, login: 'org-0' });
    });

    it('is github_unavailable when GitHub refuses the key (another App’s key)', async () => {
      const wrong = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs1', format: 'pem' })
        .toString();
      const other = new GitHubAppClient(configFor(fake, { privateKey: wrong }));
      expect(await failure(other.installations({ offset: 0, limit: 1 }))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
        message: expect.stringContaining('credentials'),
      });
    });
  });

  describe('installation tokens', () => {
    it('issues one token and reuses it while it has well over the margin left', async () => {
      const first = await client.accessToken(11);
      const again = await client.accessToken(11);
      expect(again).toBe(first);
      expect(fake.tokensIssued).toBe(1);
      expect(fake.tokenInstallation(first)).toBe(11);
    });

    it('asks once for concurrent callers', async () => {
      const tokens = await Promise.all(Array.from({ length: 5 }, () => client.accessToken(11)));
      expect(new Set(tokens).size).toBe(1);
      expect(fake.tokensIssued).toBe(1);
    });

    it('keeps one token per installation', async () => {
      const a = await client.accessToken(11);
      const b = await client.accessToken(13);
      expect(a).not.toBe(b);
      expect(fake.tokenInstallation(b)).toBe(13);
      expect(await client.accessToken(11)).toBe(a);
      expect(fake.tokensIssued).toBe(2);
    });

    it('replaces a token with less than the margin left', async () => {
      fake.settings.tokenTtlSeconds = TOKEN_REFRESH_MARGIN_MS / 1000 - 30;
      const first = await client.accessToken(11);
      const second = await client.accessToken(11);
      expect(second).not.toBe(first);
      expect(fake.tokensIssued).toBe(2);
    });

    it('gets a fresh token once when GitHub refuses a cached one (revoked)', async () => {
      await client.repositories(11, { offset: 0, limit: 10 });
      fake.revokeTokens();
      const page = await client.repositories(11, { offset: 0, limit: 10 });
      expect(page.items.map((r) => r.name)).toEqual(['model', 'other']);
      expect(fake.tokensIssued).toBe(2);
    });

    it('is 404 github_installation_not_found for an installation the App does not have', async () => {
      expect(await failure(client.accessToken(999))).toMatchObject({
        status: 404,
        code: 'github_installation_not_found',
        message: 'GitHub installation 999 was not found',
      });
    });

    it('never puts the token in an error message', async () => {
      const token = await client.accessToken(11);
      fake.settings.failWith = 403;
      const err = await failure(client.repositories(11, { offset: 0, limit: 1 }));
      expect(JSON.stringify(err)).not.toContain(token);
    });
  });

  describe('paging windows over GitHub’s numbered pages', () => {
    beforeEach(() => {
      client.pageSize = 3;
    });

    const ids = (items: Array<{ id: number }>) => items.map((i) => i.id);

    it('reads only the pages that hold the window (plus one item to know whether more follow)', async () => {
      const first = await client.installations({ offset: 0, limit: 2 });
      expect(ids(first.items)).toEqual([11, 12]);
      expect(first.hasMore).toBe(true);
      expect(fake.requests.map((r) => r.query)).toEqual([{ per_page: '3', page: '1' }]);
    });

    it('crosses page boundaries', async () => {
      const middle = await client.installations({ offset: 2, limit: 5 });
      expect(ids(middle.items)).toEqual([13, 14, 15, 16, 17]);
      expect(middle.hasMore).toBe(true);
      expect(fake.requests.map((r) => r.query.page)).toEqual(['1', '2', '3']);
    });

    it('ends on the last item', async () => {
      const last = await client.installations({ offset: 7, limit: 3 });
      expect(ids(last.items)).toEqual([18, 19, 20]);
      expect(last.hasMore).toBe(false);
      const beyond = await client.installations({ offset: 8, limit: 5 });
      expect(ids(beyond.items)).toEqual([19, 20]);
      expect(beyond.hasMore).toBe(false);
      const past = await client.installations({ offset: 40, limit: 5 });
      expect(past).toEqual({ items: [], hasMore: false });
    });

    it('stops at the last page GitHub links to', async () => {
      const all = await client.installations({ offset: 0, limit: 100 });
      expect(all.items).toHaveLength(10);
      expect(all.hasMore).toBe(false);
      expect(fake.requests.map((r) => r.query.page)).toEqual(['1', '2', '3', '4']);
    });
  });

  describe('repositories and branches', () => {
    it('maps installations', async () => {
      const { items } = await client.installations({ offset: 0, limit: 2 });
      expect(items[1]).toEqual({
        id: 12,
        accountId: 100_012,
        login: 'someone',
        avatarUrl: 'https://avatars.githubusercontent.com/u/100012?v=4',
        accountType: 'User',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    });

    it('lists an installation’s repositories with its token', async () => {
      const page = await client.repositories(11, { offset: 0, limit: 10 });
      expect(page.items).toEqual([
        {
          id: expect.any(Number),
          name: 'model',
          fullName: 'org-0/model',
          htmlUrl: 'https://github.com/org-0/model',
        },
        {
          id: expect.any(Number),
          name: 'other',
          fullName: 'org-0/other',
          htmlUrl: 'https://github.com/org-0/other',
        },
      ]);
      const listed = fake.requests.find((r) => r.path === '/installation/repositories');
      expect(listed).toMatchObject({ auth: 'token', installationId: 11 });
    });

    it('flags the default branch', async () => {
      const page = await client.branches(11, 'org-0', 'model', { offset: 0, limit: 10 });
      expect(page).toEqual({
        items: [
          { name: 'dev', isDefault: false },
          { name: 'main', isDefault: true },
        ],
        hasMore: false,
      });
      expect(fake.tokensIssued).toBe(1);
    });

    it('is 404 github_repository_not_found for a repository the installation cannot see', async () => {
      expect(await failure(client.branches(12, 'org-0', 'model', { offset: 0, limit: 10 }))).toMatchObject({
        status: 404,
        code: 'github_repository_not_found',
        message: 'GitHub repository org-0/model was not found',
      });
    });

    it('resolves a repository by owner/name or by a bare name in the installation’s account', async () => {
      const expected = {
        fullName: 'org-0/model',
        cloneUrl: `${fake.url}/org-0/model.git`,
        defaultBranch: 'main',
        htmlUrl: 'https://github.com/org-0/model',
        private: true,
      };
      expect(await client.repository(11, 'org-0/model')).toEqual(expected);
      expect(await client.repository(11, 'model')).toEqual(expected);
      fake.state.repositories[0].cloneUrl = 'file:///tmp/remote.git';
      expect((await client.repository(11, 'model')).cloneUrl).toBe('file:///tmp/remote.git');
      expect(await failure(client.repository(11, 'missing'))).toMatchObject({
        status: 404,
        code: 'github_repository_not_found',
        message: 'GitHub repository org-0/missing was not found',
      });
      expect(await failure(client.repository(11, 'a/b/c'))).toMatchObject({ status: 400 });
    });
  });

  describe('createRepository', () => {
    it('creates an empty repository in the organization, which the installation then sees', async () => {
      fake.settings.cloneUrlFor = (fullName) => `file:///tmp/${fullName.replace('/', '-')}.git`;
      const created = await client.createRepository(11, 'fresh', { private: true });
      expect(created).toEqual({
        fullName: 'org-0/fresh',
        cloneUrl: 'file:///tmp/org-0-fresh.git',
        defaultBranch: 'main',
        htmlUrl: 'https://github.com/org-0/fresh',
        private: true,
      });
      expect(await client.repository(11, 'org-0/fresh')).toEqual(created);
    });

    it('is 409 conflict when the name exists', async () => {
      expect(await failure(client.createRepository(11, 'org-0/model', { private: false }))).toMatchObject({
        status: 409,
        code: 'conflict',
      });
    });

    it('is 400 for a user-account installation, which GitHub does not let create repositories', async () => {
      expect(await failure(client.createRepository(12, 'fresh', { private: true }))).toMatchObject({
        status: 400,
        code: 'bad_request',
        message: expect.stringContaining('personal account'),
      });
    });

    it('is 400 without the Administration permission, or for another owner', async () => {
      fake.state.installations[0].permissions = { contents: 'write', metadata: 'read' };
      expect(await failure(client.createRepository(11, 'fresh', { private: true }))).toMatchObject({
        status: 400,
        code: 'bad_request',
        message: expect.stringContaining('Administration'),
      });
      expect(await failure(client.createRepository(11, 'org-5/fresh', { private: true }))).toMatchObject({
        status: 400,
        code: 'bad_request',
      });
    });
  });

  describe('failures', () => {
    it('is 409 github_not_configured without an App, or with an unreadable key', async () => {
      const none = new GitHubAppClient({ github: { apiUrl: fake.url, app: null } } as AppConfig);
      expect(none.configured).toBe(false);
      expect(() => none.links()).toThrow(ApiError);
      expect(await failure(none.installations({ offset: 0, limit: 1 }))).toMatchObject({
        status: 409,
        code: 'github_not_configured',
      });
      const garbled = new GitHubAppClient(
        configFor(fake, {
          privateKey: '-----BEGIN RSA PRIVATE KEY-----\nnope\n-----END RSA PRIVATE KEY-----',
        }),
      );
      expect(garbled.configured).toBe(false);
      expect(await failure(garbled.accessToken(11))).toMatchObject({
        status: 409,
        code: 'github_not_configured',
        message: expect.stringContaining('GITHUB_APP_PRIVATE_KEY'),
      });
      expect(fake.requests).toHaveLength(0);
    });

    it('is 502 github_unavailable when GitHub answers 5xx', async () => {
      fake.settings.failWith = 503;
      expect(await failure(client.installation(11))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
      });
    });

    it('is 502 github_unavailable when GitHub’s rate limit is spent', async () => {
      fake.settings.failWith = 429;
      expect(await failure(client.installation(11))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
        message: expect.stringContaining('rate limit'),
      });
    });

    it('is 502 github_unavailable when GitHub does not answer in time', async () => {
      client.timeoutMs = 200;
      fake.settings.delayMs = 2_000;
      expect(await failure(client.installation(11))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
        message: 'GitHub did not answer within 0.2 s',
      });
    });

    it('is 502 github_unavailable when the connection breaks', async () => {
      fake.settings.resetConnections = true;
      expect(await failure(client.installation(11))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
        message: 'GitHub could not be reached',
      });
    });

    it('is 502 github_unavailable when nothing listens', async () => {
      const gone = await startGitHubFake();
      await gone.close();
      const orphan = new GitHubAppClient({
        github: { apiUrl: gone.url, app: { id: gone.appId, slug: gone.slug, privateKey: gone.privateKey } },
      } as AppConfig);
      expect(await failure(orphan.installations({ offset: 0, limit: 1 }))).toMatchObject({
        status: 502,
        code: 'github_unavailable',
      });
    });
  });
});

describe('gitHubAppLinks', () => {
  it('points at github.com for api.github.com', () => {
    expect(gitHubAppLinks('https://api.github.com', 'my-app')).toEqual({
      linkUrl: 'https://github.com/apps/my-app/installations/new',
      settingsUrl: 'https://github.com/settings/installations',
    });
  });

  it('points at the tenant’s site for GitHub Enterprise Cloud with data residency', () => {
    expect(gitHubAppLinks('https://api.octocorp.ghe.com', 'my-app')).toEqual({
      linkUrl: 'https://octocorp.ghe.com/apps/my-app/installations/new',
      settingsUrl: 'https://octocorp.ghe.com/settings/installations',
    });
  });

  it('uses /github-apps/ on GitHub Enterprise Server', () => {
    expect(gitHubAppLinks('https://git.example.com/api/v3', 'my-app')).toEqual({
      linkUrl: 'https://git.example.com/github-apps/my-app/installations/new',
      settingsUrl: 'https://git.example.com/settings/installations',
    });
  });
});

describe('parseRepositoryName', () => {
  it('takes owner/repo or a bare repo', () => {
    expect(parseRepositoryName('acme/model.v2')).toEqual({ owner: 'acme', repo: 'model.v2' });
    expect(parseRepositoryName('model_x-1')).toEqual({ owner: null, repo: 'model_x-1' });
  });

  it('refuses anything else', () => {
    for (const bad of [
      '',
      '/',
      'a/',
      '/b',
      'a/b/c',
      '..',
      'a/..',
      '-acme/x',
      'a b',
      'a%2Fb',
      'x'.repeat(101),
    ]) {
      expect({ bad, parsed: parseRepositoryName(bad) }).toEqual({ bad, parsed: null });
    }
  });
});

describe('the link state', () => {
  const key = linkStateKey(Buffer.alloc(32, 7));
  const now = Date.UTC(2026, 0, 1, 12);
  const claims = { accountId: 3, userId: 9, iat: now / 1000, exp: now / 1000 + LINK_STATE_TTL_SECONDS };

  it('derives a key of its own from the secrets key', () => {
    expect(key).toHaveLength(32);
    expect(key.equals(Buffer.alloc(32, 7))).toBe(false);
    expect(linkStateKey(Buffer.alloc(32, 7)).equals(key)).toBe(true);
    expect(linkStateKey(Buffer.alloc(32, 8)).equals(key)).toBe(false);
  });

  it('round-trips, and is valid for an hour', () => {
    const state = issueLinkState(key, 3, 9, now);
    expect(state).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyLinkState(key, state, now)).toEqual({ ok: true, claims });
    expect(verifyLinkState(key, state, now + 3599_000)).toEqual({ ok: true, claims });
    expect(verifyLinkState(key, state, now + 3600_000)).toEqual({ ok: false, problem: 'expired' });
  });

  it('refuses another key, altered claims, and what is not a state', () => {
    const state = signLinkState(key, claims);
    const [payload, mac] = state.split('.');
    const altered = Buffer.from(JSON.stringify({ ...claims, accountId: 4 })).toString('base64url');
    expect(verifyLinkState(linkStateKey(Buffer.alloc(32, 8)), state, now)).toEqual({
      ok: false,
      problem: 'signature',
    });
    expect(verifyLinkState(key, `${altered}.${mac}`, now)).toEqual({ ok: false, problem: 'signature' });
    expect(verifyLinkState(key, `${payload}.${mac.slice(0, -2)}`, now)).toEqual({
      ok: false,
      problem: 'signature',
    });
    for (const bad of ['', 'x', `${state}.x`, `${payload}.`, `${payload}.${mac}=`, 'a'.repeat(600)]) {
      expect({ bad, check: verifyLinkState(key, bad, now) }).toEqual({
        bad,
        check: { ok: false, problem: 'malformed' },
      });
    }
  });

  it('refuses signed claims that are not well formed', () => {
    for (const c of [
      { ...claims, accountId: 0 },
      { ...claims, userId: '9' },
      { ...claims, exp: claims.iat },
      { accountId: 3, userId: 9, exp: claims.exp },
    ]) {
      const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
      const mac = createHmac('sha256', key).update(payload).digest('base64url');
      expect(verifyLinkState(key, `${payload}.${mac}`, now)).toEqual({ ok: false, problem: 'malformed' });
    }
  });
});
