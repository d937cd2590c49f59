import { createPrivateKey, type KeyObject } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { SignJWT } from 'jose';
import { AppConfig } from '../../../core/config/app-config.js';
import { ApiError } from '../../../core/errors/api-error.js';
import { notFound } from '../../../core/errors/not-found.js';
import { gitHubAppLinks, type GitHubAppLinks } from './github-links.js';
import { gitHubError } from './github.errors.js';
import { readBoundedText } from '../../../core/http/bounded-body.js';

export type { GitHubAppLinks };

/** An installation of the App on a user or organization account. */
export interface GitHubInstallation {
  /** The installation id (what every installation route and token is about). */
  id: number;
  /** The account the App is installed on. */
  accountId: number;
  login: string;
  avatarUrl: string;
  /** `Organization` or `User` (GitHub's `account.type`). */
  accountType: string;
  /** When GitHub created the installation (ISO 8601), null when GitHub did not say. */
  createdAt: string | null;
  /** When GitHub last changed it: its repositories, permissions or suspension (ISO 8601), or null. */
  updatedAt: string | null;
}

/** A repository as the discovery lists show it. */
export interface GitHubRepositorySummary {
  id: number;
  name: string;
  /** `owner/name`. */
  fullName: string;
  htmlUrl: string;
}

/** A repository as connecting and pushing need it. */
export interface GitHubRepository {
  /** `owner/name`. */
  fullName: string;
  /** The HTTPS clone URL; push to it with an {@link GitHost.accessToken} as `x-access-token`. */
  cloneUrl: string;
  defaultBranch: string;
  htmlUrl: string;
  private: boolean;
}

export interface GitHubBranch {
  name: string;
  /** Whether it is the repository's default branch. */
  isDefault: boolean;
}

/** A window of a list GitHub pages by number: `limit` items from position `offset` (0-based). */
export interface GitHubWindow {
  offset: number;
  limit: number;
}

export interface GitHubSlice<T> {
  items: T[];
  /** Whether GitHub holds items after this window. */
  hasMore: boolean;
}

/**
 * The git host, as the data model uses it (the port; {@link GitHubAppClient} is the adapter).
 * Every method throws API errors ready for the filter: `github_not_configured` (409) without an
 * App, `notFound('GitHubInstallation' | 'GitHubRepository', …)` (404), `github_unavailable` (502)
 * when GitHub fails, refuses the App, or does not answer in time.
 */
export abstract class GitHost {
  /** Whether a GitHub App is configured (`GITHUB_APP_*`). */
  abstract get configured(): boolean;

  /** Throws `github_not_configured` (409) unless a usable GitHub App is configured. */
  abstract requireConfigured(): void;

  /** Install and settings pages of the App; `github_not_configured` without one. */
  abstract links(): GitHubAppLinks;

  /** Installations of the App (App JWT), in GitHub's order. */
  abstract installations(window: GitHubWindow): Promise<GitHubSlice<GitHubInstallation>>;

  /** One installation; 404 `github_installation_not_found` when the App has no such installation. */
  abstract installation(installationId: number): Promise<GitHubInstallation>;

  /** Repositories the installation may access. */
  abstract repositories(
    installationId: number,
    window: GitHubWindow,
  ): Promise<GitHubSlice<GitHubRepositorySummary>>;

  /** Branches of `owner/repo`, flagged with the repository's default branch. */
  abstract branches(
    installationId: number,
    owner: string,
    repo: string,
    window: GitHubWindow,
  ): Promise<GitHubSlice<GitHubBranch>>;

  /**
   * A repository the installation may access. `name` is `owner/repo`, or a bare `repo` of the
   * installation's own account. 404 `github_repository_not_found` when it cannot see it.
   */
  abstract repository(installationId: number, name: string): Promise<GitHubRepository>;

  /**
   * Creates an empty repository (no initial commit) in the installation's organization. GitHub
   * lets an installation token create repositories only in an organization, and only with the
   * Administration (write) permission: a user-account installation is a 400 `bad_request`, and
   * so is an App without that permission; an existing name is a 409 `conflict`.
   */
  abstract createRepository(
    installationId: number,
    name: string,
    options: { private: boolean },
  ): Promise<GitHubRepository>;

  /**
   * An installation access token for git over HTTPS (user `x-access-token`). Reused until a few
   * minutes before it expires, so a token handed out has at least {@link TOKEN_REFRESH_MARGIN_MS}
   * of life left. A secret: never log it or put it in a URL.
   */
  abstract accessToken(installationId: number): Promise<string>;
}

/** How long one call to GitHub may take, body included. */
export const GITHUB_REQUEST_TIMEOUT_MS = 10_000;
/** GitHub's largest `per_page`. */
export const GITHUB_PAGE_SIZE = 100;
/** A cached installation token is replaced when it has less than this left (tokens live one hour). */
export const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;
/** The most of one response that is read (a page of 100 repositories is well under 1 MB). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The App JWT is reused this long; it is valid for 10 minutes from `iat`. */
const JWT_REUSE_MS = 4 * 60_000;

/** A GitHub login (users, organizations; managed users carry an `_shortcode` suffix). */
const OWNER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
/** A repository name as GitHub accepts it. */
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

export const isGitHubOwner = (s: string): boolean => OWNER.test(s);
export const isGitHubRepoName = (s: string): boolean => REPO.test(s) && s !== '.' && s !== '..';

/** `owner/repo` or a bare `repo` (owner null); null when it is neither. */
export function parseRepositoryName(name: string): { owner: string | null; repo: string } | null {
  const parts = name.split('/');
  if (parts.length === 1) return isGitHubRepoName(parts[0]) ? { owner: null, repo: parts[0] } : null;
  if (parts.length === 2 && isGitHubOwner(parts[0]) && isGitHubRepoName(parts[1])) {
    return { owner: parts[0], repo: parts[1] };
  }
  return null;
}

type Auth = { kind: 'app' } | { kind: 'installation'; id: number };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

type Json = Record<string, unknown>;

const asObject = (v: unknown): Json => (v !== null && typeof v === 'object' ? (v as Json) : {});
const asString = (v: unknown): string => (typeof v === 'string' ? v : '');
const asNumber = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * {@link GitHost} on GitHub's REST API (github.com, GitHub Enterprise, or any server at
 * `GITHUB_API_URL`) as a GitHub App: an RS256 JWT signed with the App's key (`iss` = App id) for
 * the `/app` routes, installation access tokens for the rest. Node's fetch, a deadline on every
 * call, a bounded body.
 */
@Injectable()
export class GitHubAppClient extends GitHost {
  /** Public so a test can shorten them. */
  timeoutMs = GITHUB_REQUEST_TIMEOUT_MS;
  pageSize = GITHUB_PAGE_SIZE;

  private readonly logger = new Logger('GitHub');
  private readonly apiUrl: string;
  private readonly app: { id: number; slug: string } | null;
  private readonly key: KeyObject | null;
  private readonly keyProblem: string | null;
  private jwt: { value: string; reuseUntil: number } | null = null;
  private readonly tokens = new Map<number, CachedToken>();
  private readonly pendingTokens = new Map<number, Promise<CachedToken>>();

  constructor(config: AppConfig) {
    super();
    this.apiUrl = config.github.apiUrl;
    const app = config.github.app;
    this.app = app ? { id: app.id, slug: app.slug } : null;
    let key: KeyObject | null = null;
    let problem: string | null = null;
    if (app) {
      try {
        // PKCS#1 (what GitHub hands out) and PKCS#8 both parse.
        key = createPrivateKey(app.privateKey);
        if (key.asymmetricKeyType !== 'rsa') problem = 'GITHUB_APP_PRIVATE_KEY is not an RSA key';
      } catch {
        problem = 'GITHUB_APP_PRIVATE_KEY is not a readable PEM private key';
      }
      if (problem) this.logger.error(`${problem}: GitHub routes answer github_not_configured`);
    }
    this.key = problem ? null : key;
    this.keyProblem = problem;
  }

  get configured(): boolean {
    return this.app !== null && this.key !== null;
  }

  requireConfigured(): void {
    if (!this.app || !this.key) throw notConfigured(this.keyProblem);
  }

  links(): GitHubAppLinks {
    if (!this.app) throw notConfigured();
    return gitHubAppLinks(this.apiUrl, this.app.slug);
  }

  installations(window: GitHubWindow): Promise<GitHubSlice<GitHubInstallation>> {
    return this.window('/app/installations', { kind: 'app' }, window, null, (body) =>
      Array.isArray(body) ? body.map(toInstallation) : [],
    );
  }

  async installation(installationId: number): Promise<GitHubInstallation> {
    const res = await this.call('GET', `/app/installations/${installationId}`, { kind: 'app' });
    this.expect(res, [200], () => notFound('GitHubInstallation', installationId));
    return toInstallation(res.body);
  }

  repositories(installationId: number, window: GitHubWindow): Promise<GitHubSlice<GitHubRepositorySummary>> {
    return this.window(
      '/installation/repositories',
      { kind: 'installation', id: installationId },
      window,
      () => notFound('GitHubInstallation', installationId),
      (body) => {
        const list = asObject(body).repositories;
        return Array.isArray(list) ? list.map(toRepositorySummary) : [];
      },
    );
  }

  async branches(
    installationId: number,
    owner: string,
    repo: string,
    window: GitHubWindow,
  ): Promise<GitHubSlice<GitHubBranch>> {
    const fullName = `${owner}/${repo}`;
    if (!isGitHubOwner(owner) || !isGitHubRepoName(repo)) throw notFound('GitHubRepository', fullName);
    const auth: Auth = { kind: 'installation', id: installationId };
    const missing = () => notFound('GitHubRepository', fullName);
    // The token first, so the two calls share it instead of racing for one each.
    await this.accessToken(installationId);
    const [repository, page] = await Promise.all([
      this.call('GET', repoPath(owner, repo), auth),
      this.window(`${repoPath(owner, repo)}/branches`, auth, window, missing, (body) =>
        Array.isArray(body) ? body.map((b) => asString(asObject(b).name)) : [],
      ),
    ]);
    this.expect(repository, [200], missing);
    const defaultBranch = asString(asObject(repository.body).default_branch);
    return {
      items: page.items.map((name) => ({ name, isDefault: name === defaultBranch })),
      hasMore: page.hasMore,
    };
  }

  async repository(installationId: number, name: string): Promise<GitHubRepository> {
    const parsed = parseRepositoryName(name);
    if (!parsed) throw badName(name);
    const owner = parsed.owner ?? (await this.installation(installationId)).login;
    const res = await this.call('GET', repoPath(owner, parsed.repo), {
      kind: 'installation',
      id: installationId,
    });
    this.expect(res, [200], () => notFound('GitHubRepository', `${owner}/${parsed.repo}`));
    return toRepository(res.body);
  }

  async createRepository(
    installationId: number,
    name: string,
    options: { private: boolean },
  ): Promise<GitHubRepository> {
    const parsed = parseRepositoryName(name);
    if (!parsed) throw badName(name);
    const installation = await this.installation(installationId);
    if (installation.accountType !== 'Organization') {
      throw gitHubError(
        'bad_request',
        `GitHub Apps cannot create repositories in a personal account (${installation.login}): ` +
          'create the repository on GitHub, give the App access to it, and connect it as an existing repository',
      );
    }
    if (parsed.owner !== null && parsed.owner.toLowerCase() !== installation.login.toLowerCase()) {
      throw gitHubError(
        'bad_request',
        `Installation ${installationId} belongs to ${installation.login}; it cannot create repositories in ${parsed.owner}`,
      );
    }
    const res = await this.call(
      'POST',
      `/orgs/${encodeURIComponent(installation.login)}/repos`,
      { kind: 'installation', id: installationId },
      { name: parsed.repo, private: options.private, auto_init: false },
    );
    if (res.status === 422 && /already exists/i.test(JSON.stringify(res.body))) {
      throw gitHubError('conflict', `Repository ${installation.login}/${parsed.repo} exists already`);
    }
    if (res.status === 403 || res.status === 422) {
      throw gitHubError(
        'bad_request',
        `GitHub refused to create ${installation.login}/${parsed.repo}: ${gitHubMessage(res.body)}` +
          (res.status === 403 ? ' (the App needs the Administration write permission)' : ''),
      );
    }
    this.expect(res, [201], () => notFound('GitHubInstallation', installationId));
    return toRepository(res.body);
  }

  async accessToken(installationId: number): Promise<string> {
    const cached = this.tokens.get(installationId);
    if (cached && cached.expiresAt - Date.now() > TOKEN_REFRESH_MARGIN_MS) return cached.token;
    let pending = this.pendingTokens.get(installationId);
    if (!pending) {
      pending = this.issueToken(installationId).finally(() => this.pendingTokens.delete(installationId));
      this.pendingTokens.set(installationId, pending);
    }
    return (await pending).token;
  }

  private async issueToken(installationId: number): Promise<CachedToken> {
    const res = await this.call('POST', `/app/installations/${installationId}/access_tokens`, {
      kind: 'app',
    });
    this.expect(res, [201], () => notFound('GitHubInstallation', installationId));
    const body = asObject(res.body);
    const token = asString(body.token);
    if (!token) throw unavailable('GitHub answered an installation token request without a token');
    const expiresAt = Date.parse(asString(body.expires_at));
    // Without a readable expiry the token is used for a few minutes only.
    const entry = {
      token,
      expiresAt: Number.isNaN(expiresAt) ? Date.now() + TOKEN_REFRESH_MARGIN_MS + 60_000 : expiresAt,
    };
    const now = Date.now();
    for (const [id, t] of this.tokens) if (t.expiresAt <= now) this.tokens.delete(id);
    this.tokens.set(installationId, entry);
    return entry;
  }

  /**
   * A window of a list GitHub pages with `per_page`/`page`: the GitHub pages that hold positions
   * `offset` to `offset + limit` (one more than asked, to learn whether more follow), read in
   * turn until the window is full or GitHub has no `rel="next"` page.
   */
  private async window<T>(
    path: string,
    auth: Auth,
    window: GitHubWindow,
    notFoundAs: (() => ApiError) | null,
    pick: (body: unknown) => T[],
  ): Promise<GitHubSlice<T>> {
    const size = this.pageSize;
    const firstPage = Math.floor(window.offset / size) + 1;
    const lastPage = Math.floor((window.offset + window.limit) / size) + 1;
    const got: T[] = [];
    for (let page = firstPage; page <= lastPage; page++) {
      const res = await this.call('GET', path, auth, undefined, { per_page: size, page });
      this.expect(res, [200], notFoundAs);
      const items = pick(res.body);
      got.push(...items);
      const link = res.headers.get('link');
      if (items.length < size || (link !== null && !/rel="next"/.test(link))) break;
    }
    const skip = window.offset - (firstPage - 1) * size;
    const slice = got.slice(skip, skip + window.limit + 1);
    return { items: slice.slice(0, window.limit), hasMore: slice.length > window.limit };
  }

  /** Throws for any status but `ok`: 404 as `notFoundAs` says, the rest as GitHub failing. */
  private expect(res: Answer, ok: number[], notFoundAs: (() => ApiError) | null): void {
    if (ok.includes(res.status)) return;
    if (res.status === 404 && notFoundAs) throw notFoundAs();
    throw this.refusal(res);
  }

  private refusal(res: Answer): ApiError {
    const limited =
      res.status === 429 || (res.status === 403 && res.headers.get('x-ratelimit-remaining') === '0');
    if (limited) {
      const retry = res.headers.get('retry-after');
      return unavailable(
        `GitHub's rate limit for the App is spent${retry ? `; retry after ${retry} s` : '; retry later'}`,
      );
    }
    if (res.status === 401) {
      return unavailable(
        'GitHub refused the App’s credentials (check GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and the server clock)',
      );
    }
    return unavailable(`GitHub answered HTTP ${res.status}: ${gitHubMessage(res.body)}`);
  }

  /**
   * One call, authenticated. An installation call refused with 401 is tried once more with a
   * fresh token (the cached one may have been revoked).
   */
  private async call(
    method: 'GET' | 'POST',
    path: string,
    auth: Auth,
    body?: unknown,
    query?: Record<string, number>,
  ): Promise<Answer> {
    const key = this.key;
    if (!this.app || !key) throw notConfigured(this.keyProblem);
    const url = new URL(this.apiUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
    if (auth.kind === 'app') return this.exchange(method, url, await this.appJwt(this.app.id, key), body);
    const token = await this.accessToken(auth.id);
    const res = await this.exchange(method, url, token, body);
    if (res.status !== 401) return res;
    if (this.tokens.get(auth.id)?.token === token) this.tokens.delete(auth.id);
    return this.exchange(method, url, await this.accessToken(auth.id), body);
  }

  /** GitHub's advice: `iat` a minute in the past against clock drift, `exp` within 10 minutes. */
  private async appJwt(appId: number, key: KeyObject): Promise<string> {
    const now = Date.now();
    if (this.jwt && this.jwt.reuseUntil > now) return this.jwt.value;
    const seconds = Math.floor(now / 1000);
    const value = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(String(appId))
      .setIssuedAt(seconds - 60)
      .setExpirationTime(seconds + 9 * 60)
      .sign(key);
    this.jwt = { value, reuseUntil: now + JWT_REUSE_MS };
    return value;
  }

  private async exchange(method: string, url: URL, credential: string, body: unknown): Promise<Answer> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const where = `${method} ${url.pathname}`;
    let answer: Answer;
    try {
      const res = await fetch(url, {
        method,
        headers: {
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': '2022-11-28',
          'User-Agent': this.app?.slug ?? 'github-app',
          Authorization: `Bearer ${credential}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      answer = { status: res.status, headers: res.headers, body: parseJson(await readBounded(res)) };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const reason = signal.aborted
        ? `GitHub did not answer within ${this.timeoutMs / 1000} s`
        : 'GitHub could not be reached';
      this.logger.warn(`${where}: ${reason} (${(err as Error).message})`);
      throw unavailable(reason);
    }
    if (answer.status >= 500) {
      this.logger.warn(`${where}: HTTP ${answer.status}`);
      throw unavailable(`GitHub answered HTTP ${answer.status}; retry shortly`);
    }
    return answer;
  }
}

const repoPath = (owner: string, repo: string) =>
  `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;

function toInstallation(raw: unknown): GitHubInstallation {
  const o = asObject(raw);
  const account = asObject(o.account);
  return {
    id: asNumber(o.id),
    accountId: asNumber(account.id),
    login: asString(account.login),
    avatarUrl: asString(account.avatar_url),
    accountType: asString(account.type) || asString(o.target_type),
    createdAt: asString(o.created_at) || null,
    updatedAt: asString(o.updated_at) || null,
  };
}

function toRepositorySummary(raw: unknown): GitHubRepositorySummary {
  const o = asObject(raw);
  return {
    id: asNumber(o.id),
    name: asString(o.name),
    fullName: asString(o.full_name),
    htmlUrl: asString(o.html_url),
  };
}

function toRepository(raw: unknown): GitHubRepository {
  const o = asObject(raw);
  return {
    fullName: asString(o.full_name),
    cloneUrl: asString(o.clone_url),
    defaultBranch: asString(o.default_branch),
    htmlUrl: asString(o.html_url),
    private: o.private === true,
  };
}

/** GitHub's error text (`message`), cut short; never a credential of ours. */
function gitHubMessage(body: unknown): string {
  const message = asString(asObject(body).message).replace(/\s+/g, ' ').trim();
  return message ? message.slice(0, 300) : 'no message';
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function readBounded(res: Response): Promise<string> {
  return readBoundedText(res, MAX_RESPONSE_BYTES, () =>
    unavailable(`GitHub's answer was larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB`),
  );
}

const unavailable = (message: string) => gitHubError('github_unavailable', message);

const notConfigured = (problem: string | null = null) =>
  gitHubError(
    'github_not_configured',
    problem ?? 'No GitHub App is configured: set GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_SLUG',
  );

const badName = (name: string) =>
  gitHubError('validation_failed', [
    `name must be a GitHub repository name, or owner/name (got ${JSON.stringify(name.slice(0, 200))})`,
  ]);
