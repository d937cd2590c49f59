import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { PinnedAddress } from '../../core/net/outbound-address.js';
import { git, gitEnv, redact, text } from '../../core/git/git.js';

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
  /**
   * The address git connects to, checked by the outbound rule (core/net) just before the read;
   * null for `file://`, which reaches no network.
   */
  pin: PinnedAddress | null;
}

export interface DbtReadLimits {
  /** The transports git may use (`GIT_ALLOW_PROTOCOL`). */
  protocols: readonly string[];
  /** Longest the whole read from the remote (`ls-remote`, then the shallow `fetch`) may take, ms. */
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
 * network failure) the sync is retried. `message` is for the tenant and says nothing of the
 * remote's state beyond the kind of failure; `detail` (git's own words, credentials removed) is
 * for operators' logs only.
 */
export class DbtSourceError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly detail: string | null = null,
  ) {
    super(message);
  }
}

/** The few things a failed read from a remote is said to be. */
type FetchFailure = 'unreachable' | 'auth' | 'not-found' | 'redirect' | 'transport';

const FAILED = 'Could not fetch the dbt repository';

/**
 * The words a tenant reads for each kind of failure. A refused connection, a cut one, a TLS
 * failure, an HTTP error of the server and a remote that never answers all read `unreachable`,
 * so a sync's error cannot tell what listens at an address.
 */
function failureMessage(kind: FetchFailure, timeoutMs: number): string {
  switch (kind) {
    case 'unreachable':
      return `${FAILED}: the connection failed, was refused or did not finish within ${timeoutMs / 1000} s`;
    case 'auth':
      return `${FAILED}: authentication failed (check the integration's credentials)`;
    case 'not-found':
      return `${FAILED}: the repository was not found (check its URL, and the credentials if it is private)`;
    case 'redirect':
      return `${FAILED}: its address answers with a redirect, which is not followed (save the repository's current address)`;
    case 'transport':
      return `${FAILED}: its transport is not allowed (DBT_GIT_PROTOCOLS)`;
  }
}

/** git's (and curl's, and ssh's) words, read into one of the kinds above; anything else is `unreachable`. */
export function classifyFetchFailure(stderr: string): FetchFailure {
  if (/transport '[^']*' not allowed|unsupported protocol/i.test(stderr)) return 'transport';
  // A helper git could not start (no ssh on this machine): nothing the remote said.
  if (/cannot run |unable to fork/i.test(stderr)) return 'unreachable';
  if (
    /could not read (username|password)|authentication failed|returned error: 40[13]\b|permission denied \(|invalid username or password|access denied/i.test(
      stderr,
    )
  )
    return 'auth';
  if (/returned error: 30\d\b/i.test(stderr)) return 'redirect';
  if (
    /repository '[^']*' not found|returned error: 404\b|does not appear to be a git repository|repository not found|no such file or directory/i.test(
      stderr,
    )
  )
    return 'not-found';
  return 'unreachable';
}

/** The manifest's path in the repository for a project directory (`/analytics` -> `analytics/target/manifest.json`). */
export function manifestPath(projectRoot: string): string {
  const root = projectRoot.replace(/^\/+|\/+$/g, '');
  return `${root === '' ? '' : `${root}/`}target/manifest.json`;
}

/** What git is given for one remote: the URL it reads and configuration that pins where it connects. */
export interface RemoteTransport {
  url: string;
  env: Record<string, string>;
}

/** A host or address as it may stand in a shell word: what `normaliseHost` produces, nothing else. */
const SHELL_SAFE_HOST = /^[A-Za-z0-9_.:-]+$/;

/**
 * How git reaches the remote at the pinned address, the URL's host kept where the protocol needs
 * it (TLS's server name and certificate, HTTP's `Host`, ssh's known host):
 *
 * - `http(s)`: the URL as WHATWG writes it (so curl reads the host we checked), and
 *   `http.curloptResolve` mapping its host and port to the address; redirects are never followed
 *   (they could lead to a host not checked), and a transfer under 1 KB/s for the low-speed window
 *   is ended by curl itself.
 * - `ssh`: ssh's `HostName` set to the address (the URL's host stays the known-host key,
 *   `HostKeyAlias`), with a connect timeout.
 * - `git`: the URL with the address in place of the host (`git://` has no TLS to name the host for).
 *
 * Credentials go as an HTTP header. Everything is passed in the environment (`GIT_CONFIG_COUNT`,
 * never on the command line, where `ps` would show a credential).
 */
export function remoteTransport(source: DbtManifestSource, timeoutMs: number): RemoteTransport {
  const entries: [string, string][] = [];
  const env: Record<string, string> = {};
  let url = source.url;
  const window = Math.max(1, Math.min(30, Math.floor(timeoutMs / 2000)));
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase() ?? '';
  const pin = source.pin;
  if (scheme === 'http' || scheme === 'https') {
    url = new URL(url).href;
    if (pin && pin.host !== pin.address) {
      const address = pin.family === 6 ? `[${pin.address}]` : pin.address;
      entries.push(['http.curloptResolve', `${pin.host}:${pin.port}:${address}`]);
    }
    entries.push(['http.followRedirects', 'false']);
    entries.push(['http.lowSpeedLimit', '1000']);
    entries.push(['http.lowSpeedTime', String(window)]);
  } else if (scheme === 'ssh' && pin) {
    if (!SHELL_SAFE_HOST.test(pin.host) || !SHELL_SAFE_HOST.test(pin.address)) {
      throw new DbtSourceError(failureMessage('unreachable', timeoutMs), true, `unsafe host ${pin.host}`);
    }
    env.GIT_SSH_COMMAND =
      'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new ' +
      `-o HostName=${pin.address} -o HostKeyAlias=${pin.host} -o ConnectTimeout=${window}`;
  } else if (scheme === 'git' && pin) {
    const literal = pin.family === 6 ? `[${pin.address}]` : pin.address;
    url = url.replace(/^git:\/\/[^/?#]*/i, `git://${literal}:${pin.port}`);
  }
  if (source.auth) {
    const basic = Buffer.from(`${source.auth.username}:${source.auth.token}`).toString('base64');
    entries.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  env.GIT_CONFIG_COUNT = String(entries.length);
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { url, env };
}

const REMOTE_STDOUT_MAX = 4 * 1024 * 1024;
const REMOTE_STDERR_MAX = 64 * 1024;
/** After its group is killed, how long a command may take to close its pipes before they are dropped. */
const KILL_GRACE_MS = 2_000;

interface RemoteRun {
  code: number | null;
  timedOut: boolean;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs a git command that talks to a remote, in a process group of its own, killed whole
 * (SIGKILL to the group) when `timeoutMs` runs out: git hands the network to a helper
 * (`git-remote-https`, `ssh`) that killing git alone would leave behind, still connected and
 * holding the command's pipes. Started directly (the worker runs syncs; one spawn per command).
 */
function runRemoteGit(
  gitDir: string | null,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<RemoteRun> {
  return new Promise((resolve) => {
    const child = spawn('git', [...(gitDir ? [`--git-dir=${gitDir}`] : []), ...args], {
      env: { ...gitEnv(), ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let done = false;
    let grace: NodeJS.Timeout | undefined;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const finish = (code: number | null, extra = '') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(grace);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        code,
        timedOut,
        stdout: Buffer.concat(out),
        stderr: redact(Buffer.concat(err).toString('utf8') + extra),
      });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
      grace = setTimeout(() => finish(null), KILL_GRACE_MS);
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > REMOTE_STDOUT_MAX) killGroup();
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes < REMOTE_STDERR_MAX) err.push(chunk);
      errBytes += chunk.length;
    });
    child.on('error', (e) => finish(null, `\n${e.message}`));
    child.on('close', (code) => finish(outBytes > REMOTE_STDOUT_MAX ? null : code));
  });
}

/**
 * Reads `<projectRoot>/target/manifest.json` of a dbt repository at a branch or tag: the ref is
 * looked up on the remote (`ls-remote`), its commit fetched alone (`fetch --depth 1`) into a
 * temporary bare repository, and the file read from the commit with its size checked first.
 * Only the transports in `limits.protocols` are allowed (git's `GIT_ALLOW_PROTOCOL`), git
 * connects only to `source.pin`, the two commands that talk to the remote share one deadline
 * (`limits.timeoutMs`, their process groups killed when it passes), and the temporary repository
 * is removed afterwards.
 */
export async function fetchManifest(
  source: DbtManifestSource,
  limits: DbtReadLimits,
): Promise<FetchedManifest> {
  const transport = remoteTransport(source, limits.timeoutMs);
  const env = { GIT_ALLOW_PROTOCOL: limits.protocols.join(':'), ...transport.env };
  const deadline = Date.now() + limits.timeoutMs;
  const remote = async (gitDir: string | null, args: string[]): Promise<Buffer> => {
    const left = deadline - Date.now();
    const run =
      left > 0
        ? await runRemoteGit(gitDir, args, env, left)
        : { code: null, timedOut: true, stdout: Buffer.alloc(0), stderr: '' };
    if (run.code === 0) return run.stdout;
    const kind = run.timedOut ? 'unreachable' : classifyFetchFailure(run.stderr);
    throw new DbtSourceError(
      failureMessage(kind, limits.timeoutMs),
      kind !== 'unreachable',
      `git ${args[0]} ${run.timedOut ? `killed after ${limits.timeoutMs} ms` : `exited ${run.code}`}: ${run.stderr.trim().slice(0, 2000)}`,
    );
  };
  const candidates = source.ref.startsWith('refs/')
    ? [source.ref]
    : [`refs/heads/${source.ref}`, `refs/tags/${source.ref}`];

  const listed = (await remote(null, ['ls-remote', transport.url, ...candidates])).toString('utf8').trim();
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
    await remote(dir, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--depth',
      '1',
      transport.url,
      `+${ref}:refs/sync/source`,
    ]);
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
