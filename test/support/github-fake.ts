import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A loopback stand-in for GitHub's REST API, the subset the GitHub App client uses, with GitHub's
 * semantics: App JWTs (RS256, `iss` = App id, at most 10 minutes) on `/app/...`, installation
 * tokens on the rest, `per_page`/`page` paging with a `Link` header, 404s where GitHub answers
 * 404 (also for what a token may not see), and GitHub's error bodies.
 *
 * ```ts
 * const fake = await startGitHubFake();
 * fake.seed({
 *   installations: [{ id: 11, login: 'acme', type: 'Organization' }],
 *   repositories: [{ owner: 'acme', name: 'model', installations: [11], branches: ['main', 'dev'],
 *                    cloneUrl: 'file:///tmp/remote.git' }],
 * });
 * const t = await startApp(fake.env());
 * ```
 */

export interface FakeInstallation {
  id: number;
  /** The account the App is installed on. */
  login: string;
  type?: 'Organization' | 'User';
  accountId?: number;
  avatarUrl?: string;
  /** The installation's permissions; `administration: 'write'` lets it create organization repositories. */
  permissions?: Record<string, 'read' | 'write'>;
  suspended?: boolean;
  /** GitHub's `created_at` (ISO 8601); stamped when seeded, if not given. */
  createdAt?: string;
  /** GitHub's `updated_at`: when its repositories, permissions or suspension last changed. */
  updatedAt?: string;
}

export interface FakeRepository {
  owner: string;
  name: string;
  id?: number;
  private?: boolean;
  /** Defaults to the first branch, else `main`. */
  defaultBranch?: string;
  branches?: string[];
  /** Defaults to `<fake url>/<owner>/<name>.git`; point it at a local bare repository. */
  cloneUrl?: string;
  /** Installations that may see it. */
  installations: number[];
}

export interface FakeState {
  installations: FakeInstallation[];
  repositories: FakeRepository[];
}

/** Knobs a test turns to make GitHub misbehave. */
export interface FakeSettings {
  /** Answer every request with this status (and GitHub's error body) instead of serving it. */
  failWith: number | null;
  /** Destroy every connection without an answer (a network failure). */
  resetConnections: boolean;
  /** Wait this long before answering. */
  delayMs: number;
  /** Lifetime of issued installation tokens. */
  tokenTtlSeconds: number;
  /** The clone URL of repositories created through the API (default `<fake url>/<owner>/<name>.git`). */
  cloneUrlFor: ((fullName: string) => string) | null;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  auth: 'jwt' | 'token' | 'none';
  /** The installation whose token authenticated the request. */
  installationId: number | null;
}

/** The claims of an accepted App JWT, and its header. */
export interface FakeJwt {
  header: { alg: string; typ?: string };
  claims: { iss?: unknown; iat?: number; exp?: number };
}

export interface GitHubFake {
  /** The API base URL (GITHUB_API_URL). */
  url: string;
  appId: number;
  slug: string;
  /** The App's private key, PKCS#1 PEM as GitHub hands it out (GITHUB_APP_PRIVATE_KEY). */
  privateKey: string;
  settings: FakeSettings;
  /** Every request received, oldest first. */
  requests: FakeRequest[];
  /** Every App JWT accepted, oldest first. */
  jwts: FakeJwt[];
  /** How many installation tokens were issued. */
  tokensIssued: number;
  state: FakeState;
  /** GITHUB_API_URL, GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_SLUG for `startApp`. */
  env(): Record<string, string>;
  /**
   * Replaces the installations and repositories. Installations without `createdAt` are stamped
   * as created now (as if just installed), `updatedAt` defaulting to `createdAt`.
   */
  seed(state: Partial<FakeState>): void;
  /** Marks an installation changed now (`updated_at`), as GitHub does when its repositories change. */
  touchInstallation(id: number): void;
  /** The installation a token was issued to, while it is valid; null otherwise. */
  tokenInstallation(token: string): number | null;
  /** Revokes every installation token issued so far (as uninstalling and reinstalling would). */
  revokeTokens(): void;
  /** Clears the request log and counters and restores the default settings (state and tokens stay). */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_SETTINGS: FakeSettings = {
  failWith: null,
  resetConnections: false,
  delayMs: 0,
  tokenTtlSeconds: 3600,
  cloneUrlFor: null,
};

const DEFAULT_PERMISSIONS = { contents: 'write', metadata: 'read', administration: 'write' } as const;
const DOCS = 'https://docs.github.com/rest';

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export async function startGitHubFake(options: { appId?: number; slug?: string } = {}): Promise<GitHubFake> {
  const appId = options.appId ?? 4242;
  const slug = options.slug ?? 'analytics-platform-test';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokens = new Map<string, { installationId: number; expiresAt: number }>();
  let nextId = 900_000;

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: GitHubFake = {
    url,
    appId,
    slug,
    privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    settings: { ...DEFAULT_SETTINGS },
    requests: [],
    jwts: [],
    tokensIssued: 0,
    state: { installations: [], repositories: [] },
    env: () => ({
      GITHUB_API_URL: url,
      GITHUB_APP_ID: String(appId),
      GITHUB_APP_PRIVATE_KEY: fake.privateKey,
      GITHUB_APP_SLUG: slug,
    }),
    seed(state) {
      const now = new Date().toISOString();
      fake.state = {
        installations: (state.installations ?? fake.state.installations).map((i) => {
          const createdAt = i.createdAt ?? now;
          return { ...i, createdAt, updatedAt: i.updatedAt ?? createdAt };
        }),
        repositories: state.repositories ?? fake.state.repositories,
      };
    },
    touchInstallation(id) {
      const found = fake.state.installations.find((i) => i.id === id);
      if (!found) throw new Error(`no installation ${id}`);
      found.updatedAt = new Date().toISOString();
    },
    tokenInstallation(token) {
      const t = tokens.get(token);
      return t && t.expiresAt > Date.now() ? t.installationId : null;
    },
    revokeTokens() {
      tokens.clear();
    },
    reset() {
      fake.settings = { ...DEFAULT_SETTINGS };
      fake.requests.length = 0;
      fake.jwts.length = 0;
      fake.tokensIssued = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpFailure ? err.status : 500;
      const message = err instanceof Error ? err.message : 'Server Error';
      const extra = err instanceof HttpFailure ? err.extra : {};
      if (!res.headersSent) {
        res
          .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' })
          .end(JSON.stringify({ message, documentation_url: DOCS, status: String(status), ...extra }));
      } else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const target = new URL(req.url ?? '/', url);
    const path = target.pathname.replace(/\/+$/, '') || '/';
    const query = Object.fromEntries(target.searchParams);
    const method = req.method ?? 'GET';
    const entry: FakeRequest = { method, path, query, auth: 'none', installationId: null };
    fake.requests.push(entry);
    if (fake.settings.delayMs > 0) {
      // Waits, unless the client hangs up first (a timeout): no timer outlives the test.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, fake.settings.delayMs);
        res.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed) return;
    }
    if (fake.settings.resetConnections) {
      req.socket.destroy();
      return;
    }
    if (fake.settings.failWith !== null) {
      throw new HttpFailure(
        fake.settings.failWith,
        fake.settings.failWith >= 500 ? 'Server Error' : 'Failure',
      );
    }
    if (!req.headers['user-agent']) {
      throw new HttpFailure(
        403,
        'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
      );
    }
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) =>
      void res
        .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers })
        .end(JSON.stringify(payload));

    let m: RegExpExecArray | null;
    // App routes: the App JWT.
    if (path === '/app/installations' && method === 'GET') {
      await requireJwt(req, entry);
      const { items, headers } = paginate(fake.state.installations, target);
      return send(200, items.map(installationJson), headers);
    }
    if ((m = /^\/app\/installations\/(\d+)$/.exec(path)) && method === 'GET') {
      await requireJwt(req, entry);
      return send(200, installationJson(installation(Number(m[1]))));
    }
    if ((m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path)) && method === 'POST') {
      await requireJwt(req, entry);
      const inst = installation(Number(m[1]));
      if (inst.suspended) throw new HttpFailure(403, 'This installation has been suspended');
      const token = `ghs_${randomBytes(18).toString('base64url')}`;
      const expiresAt = Date.now() + fake.settings.tokenTtlSeconds * 1000;
      tokens.set(token, { installationId: inst.id, expiresAt });
      fake.tokensIssued += 1;
      return send(201, {
        token,
        expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        permissions: inst.permissions ?? DEFAULT_PERMISSIONS,
        repository_selection: 'selected',
      });
    }
    // Installation routes: an installation token.
    if (path === '/installation/repositories' && method === 'GET') {
      const inst = requireToken(req, entry);
      const visible = fake.state.repositories.filter((r) => r.installations.includes(inst.id));
      const { items, headers } = paginate(visible, target);
      return send(
        200,
        { total_count: visible.length, repository_selection: 'selected', repositories: items.map(repoJson) },
        headers,
      );
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)$/.exec(path)) && method === 'GET') {
      const inst = requireToken(req, entry);
      return send(200, repoJson(repository(inst, m[1], m[2])));
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/branches$/.exec(path)) && method === 'GET') {
      const inst = requireToken(req, entry);
      const repo = repository(inst, m[1], m[2]);
      const { items, headers } = paginate(repo.branches ?? [], target);
      return send(
        200,
        items.map((name) => ({
          name,
          commit: { sha: '0'.repeat(40), url: `${url}/repos/${repo.owner}/${repo.name}/commits/${name}` },
          protected: false,
        })),
        headers,
      );
    }
    if ((m = /^\/orgs\/([^/]+)\/repos$/.exec(path)) && method === 'POST') {
      const inst = requireToken(req, entry);
      const org = decodeURIComponent(m[1]);
      const permissions = inst.permissions ?? DEFAULT_PERMISSIONS;
      if (
        (inst.type ?? 'Organization') !== 'Organization' ||
        !same(inst.login, org) ||
        permissions.administration !== 'write'
      ) {
        throw new HttpFailure(403, 'Resource not accessible by integration');
      }
      const name = typeof body?.name === 'string' ? body.name : '';
      if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
        throw new HttpFailure(422, 'Repository creation failed.', {
          errors: [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name is invalid' }],
        });
      }
      if (fake.state.repositories.some((r) => same(r.owner, org) && same(r.name, name))) {
        throw new HttpFailure(422, 'Repository creation failed.', {
          errors: [
            {
              resource: 'Repository',
              code: 'custom',
              field: 'name',
              message: 'name already exists on this account',
            },
          ],
        });
      }
      const fullName = `${inst.login}/${name}`;
      const created: FakeRepository = {
        owner: inst.login,
        name,
        private: body?.private === true,
        // An empty repository: GitHub names the default branch but holds no branch yet.
        defaultBranch: 'main',
        branches: [],
        cloneUrl: fake.settings.cloneUrlFor?.(fullName),
        // GitHub: an App may access the repositories it creates.
        installations: [inst.id],
      };
      fake.state.repositories.push(created);
      return send(201, repoJson(created));
    }
    if (path === '/user/repos' && method === 'POST') {
      requireToken(req, entry);
      throw new HttpFailure(403, 'Resource not accessible by integration');
    }
    throw new HttpFailure(404, 'Not Found');
  }

  function installation(id: number): FakeInstallation {
    const found = fake.state.installations.find((i) => i.id === id);
    if (!found) throw new HttpFailure(404, 'Not Found');
    return found;
  }

  /** What a token may see; anything else is a 404, as on GitHub. */
  function repository(inst: FakeInstallation, owner: string, name: string): FakeRepository {
    const found = fake.state.repositories.find(
      (r) => same(r.owner, decodeURIComponent(owner)) && same(r.name, decodeURIComponent(name)),
    );
    if (!found || !found.installations.includes(inst.id)) throw new HttpFailure(404, 'Not Found');
    return found;
  }

  function installationJson(i: FakeInstallation) {
    const accountId = i.accountId ?? 100_000 + i.id;
    const type = i.type ?? 'Organization';
    return {
      id: i.id,
      app_id: appId,
      app_slug: slug,
      target_id: accountId,
      target_type: type,
      account: {
        login: i.login,
        id: accountId,
        type,
        avatar_url: i.avatarUrl ?? `https://avatars.githubusercontent.com/u/${accountId}?v=4`,
        html_url: `https://github.com/${i.login}`,
      },
      repository_selection: 'selected',
      permissions: i.permissions ?? DEFAULT_PERMISSIONS,
      html_url: `https://github.com/settings/installations/${i.id}`,
      created_at: i.createdAt ?? null,
      updated_at: i.updatedAt ?? i.createdAt ?? null,
      suspended_at: i.suspended ? new Date().toISOString() : null,
    };
  }

  function repoJson(r: FakeRepository) {
    r.id ??= nextId++;
    const fullName = `${r.owner}/${r.name}`;
    return {
      id: r.id,
      node_id: `R_${r.id}`,
      name: r.name,
      full_name: fullName,
      private: r.private ?? true,
      owner: { login: r.owner },
      html_url: `https://github.com/${fullName}`,
      clone_url: r.cloneUrl ?? `${url}/${fullName}.git`,
      default_branch: r.defaultBranch ?? r.branches?.[0] ?? 'main',
    };
  }

  /** GitHub's App authentication: `Authorization: Bearer <JWT>` signed with the App's key. */
  async function requireJwt(req: IncomingMessage, entry: FakeRequest): Promise<void> {
    const jwt = bearer(req);
    if (!jwt || jwt.split('.').length !== 3) {
      throw new HttpFailure(401, 'A JSON web token could not be decoded');
    }
    let verified: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      verified = await jwtVerify(jwt, publicKey, { algorithms: ['RS256'] });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new HttpFailure(
        401,
        code === 'ERR_JWT_EXPIRED'
          ? "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
          : 'A JSON web token could not be decoded',
      );
    }
    const { payload, protectedHeader } = verified;
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.iat !== 'number' || payload.iat > now + 1) {
      throw new HttpFailure(
        401,
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      );
    }
    if (typeof payload.exp !== 'number' || payload.exp - payload.iat > 600 || payload.exp > now + 600) {
      throw new HttpFailure(401, "'Expiration time' claim ('exp') is too far in the future");
    }
    if (String(payload.iss) !== String(appId)) {
      throw new HttpFailure(401, "'Issuer' claim ('iss') must be an Integer");
    }
    entry.auth = 'jwt';
    fake.jwts.push({ header: protectedHeader, claims: payload });
  }

  /** An installation token (`Bearer` or `token` scheme); an App JWT is refused here, as on GitHub. */
  function requireToken(req: IncomingMessage, entry: FakeRequest): FakeInstallation {
    const token = bearer(req);
    const issued = token ? tokens.get(token) : undefined;
    if (!issued || issued.expiresAt <= Date.now()) throw new HttpFailure(401, 'Bad credentials');
    const inst = fake.state.installations.find((i) => i.id === issued.installationId);
    if (!inst) throw new HttpFailure(401, 'Bad credentials');
    entry.auth = 'token';
    entry.installationId = inst.id;
    return inst;
  }

  return fake;
}

function bearer(req: IncomingMessage): string | null {
  const m = /^(?:Bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return m ? m[1] : null;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** GitHub's paging: `per_page` (default 30, at most 100) and `page` (from 1), with a `Link` header. */
function paginate<T>(all: T[], target: URL): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Math.max(Number(target.searchParams.get('per_page')) || 30, 1), 100);
  const page = Math.max(Number(target.searchParams.get('page')) || 1, 1);
  const items = all.slice((page - 1) * perPage, page * perPage);
  const last = Math.max(Math.ceil(all.length / perPage), 1);
  const link = (p: number, rel: string) => {
    const u = new URL(target);
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(p));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  return { items, headers: links.length ? { Link: links.join(', ') } : {} };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    throw new HttpFailure(400, 'Problems parsing JSON');
  }
}
