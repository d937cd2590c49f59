import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, GitError, text } from '../data-model/git/git.js';

/** Credentials for an HTTP(S) dbt repository: sent as a header, never in a URL or a log. */
export interface DbtRepositoryAuth {
  username: string;
  token: string;
}

export interface DbtManifestSource {
  url: string;
  /** A branch or tag name (`main`, `v1.2`), or a full ref (`refs/heads/main`). */
  ref: string;
  /** The dbt project's directory in the repository (`/`, `/analytics`). */
  projectRoot: string;
  auth: DbtRepositoryAuth | null;
}

export interface DbtReadLimits {
  /** The transports git may use (`GIT_ALLOW_PROTOCOL`). */
  protocols: readonly string[];
  /**
   * Whether git may follow an HTTP redirect (`http.followRedirects`, git's default `initial`).
   * Off where the hosts are limited (`DBT_GIT_HOSTS`): a redirect could lead elsewhere.
   */
  followRedirects: boolean;
  timeoutMs: number;
  maxBytes: number;
}

export interface FetchedManifest {
  /** The bytes of `<projectRoot>/target/manifest.json`. */
  bytes: Buffer;
  /** The full ref read and the commit it pointed at. */
  ref: string;
  commit: string;
  /** The manifest's path in the repository. */
  path: string;
}

/**
 * Why a manifest could not be read from git. `permanent`: a retry would meet the same answer (no
 * such ref, no manifest at the path, too large, refused credentials); otherwise (a timeout, a
 * network failure) the sync is retried.
 */
export class DbtSourceError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** git's own words for a failure that will not change on retry. */
const PERMANENT =
  /not found|does not appear to be a git repository|authentication failed|could not read (username|password)|access denied|permission denied|transport '[^']*' not allowed|unsupported protocol|returned error: 40[134]|invalid username or password|no such file or directory/i;

/** The manifest's path in the repository for a project directory (`/analytics` -> `analytics/target/manifest.json`). */
export function manifestPath(projectRoot: string): string {
  const root = projectRoot.replace(/^\/+|\/+$/g, '');
  return `${root === '' ? '' : `${root}/`}target/manifest.json`;
}

/**
 * Credentials as configuration in the environment (`GIT_CONFIG_COUNT`), an HTTP header that
 * never lands in the command line, the URL or git's messages.
 */
/**
 * git's configuration for one read, passed in the environment (`GIT_CONFIG_COUNT`, never on the
 * command line, where `ps` would show a credential): the credentials as a header, and redirects
 * refused when they are not allowed.
 */
function gitConfigEnv(auth: DbtRepositoryAuth | null, followRedirects: boolean): Record<string, string> {
  const entries: [string, string][] = [];
  if (auth) {
    const basic = Buffer.from(`${auth.username}:${auth.token}`).toString('base64');
    entries.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  if (!followRedirects) entries.push(['http.followRedirects', 'false']);
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return entries.length > 0 ? env : {};
}

function sourceError(err: unknown, what: string, timeoutMs: number): DbtSourceError {
  if (err instanceof GitError) {
    if (err.code === null && !err.stderr.startsWith('ENOENT'))
      return new DbtSourceError(`${what} did not finish within ${timeoutMs} ms`, false);
    return new DbtSourceError(
      `${what} failed: ${err.stderr.trim().slice(0, 500)}`,
      PERMANENT.test(err.stderr),
    );
  }
  return new DbtSourceError(`${what} failed: ${String(err)}`, false);
}

/**
 * Reads `<projectRoot>/target/manifest.json` of a dbt repository at a branch or tag: the ref is
 * looked up on the remote (`ls-remote`), its commit fetched alone (`fetch --depth 1`) into a
 * temporary bare repository, and the file read from the commit with its size checked first.
 * Only the transports in `limits.protocols` are allowed (git's `GIT_ALLOW_PROTOCOL`), every git
 * command is bounded by `limits.timeoutMs`, and the temporary repository is removed afterwards.
 */
export async function fetchManifest(
  source: DbtManifestSource,
  limits: DbtReadLimits,
): Promise<FetchedManifest> {
  const env = {
    GIT_ALLOW_PROTOCOL: limits.protocols.join(':'),
    ...gitConfigEnv(source.auth, limits.followRedirects),
  };
  const options = { env, timeoutMs: limits.timeoutMs };
  const candidates = source.ref.startsWith('refs/')
    ? [source.ref]
    : [`refs/heads/${source.ref}`, `refs/tags/${source.ref}`];

  let listed: string;
  try {
    listed = text(await git(null, ['ls-remote', source.url, ...candidates], options));
  } catch (err) {
    throw sourceError(err, 'Reading the refs of the dbt repository', limits.timeoutMs);
  }
  const found = new Set(listed.split('\n').map((line) => line.split('\t')[1]));
  const ref = candidates.find((c) => found.has(c));
  if (!ref) {
    throw new DbtSourceError(
      `The dbt repository has no branch or tag ${JSON.stringify(source.ref)} (looked for ${candidates.join(', ')})`,
      true,
    );
  }

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dbt-sync-'));
  try {
    await git(null, ['init', '--bare', '--quiet', dir]);
    try {
      await git(
        dir,
        ['fetch', '--quiet', '--no-tags', '--depth', '1', source.url, `+${ref}:refs/sync/source`],
        options,
      );
    } catch (err) {
      throw sourceError(err, `Fetching ${ref} of the dbt repository`, limits.timeoutMs);
    }
    const commit = text(await git(dir, ['rev-parse', '--verify', 'refs/sync/source^{commit}']));
    const file = manifestPath(source.projectRoot);
    const entry = text(await git(dir, ['ls-tree', '-l', commit, '--', file]));
    const [meta] = entry.split('\t');
    const [, type, oid, size] = (meta ?? '').split(/\s+/);
    if (!entry || type !== 'blob') {
      throw new DbtSourceError(
        `${file} is not in the dbt repository at ${ref} (commit ${commit.slice(0, 12)}): commit the compiled ` +
          'manifest (dbt parse or dbt compile writes it to target/), or post it with source: manifest',
        true,
      );
    }
    if (Number(size) > limits.maxBytes) {
      throw new DbtSourceError(
        `${file} at ${ref} is ${Number(size)} bytes, more than the ${limits.maxBytes} bytes a sync reads (DBT_MANIFEST_MAX_BYTES)`,
        true,
      );
    }
    const bytes = (await git(dir, ['cat-file', 'blob', oid])).stdout;
    return { bytes, ref, commit, path: file };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Whether git takes `name` as a branch name (`git check-ref-format --branch`), or, for a name
 * starting with `refs/` when `fullRefs` allows it, as a full ref name.
 */
export async function isValidRefName(name: string, fullRefs = false): Promise<boolean> {
  if (name === '' || name === '@' || name.startsWith('-') || name.length > 255) return false;
  if (fullRefs && name.startsWith('refs/')) {
    return (await git(null, ['check-ref-format', name], { okCodes: [1, 128] })).code === 0;
  }
  const asBranch = await git(null, ['check-ref-format', '--branch', name], { okCodes: [1, 128] });
  if (asBranch.code !== 0 || text(asBranch) !== name) return false;
  return (await git(null, ['check-ref-format', `refs/heads/${name}`], { okCodes: [1, 128] })).code === 0;
}
