import { runCommand } from '../process/command-runner.js';

/** What one git command printed, and how it ended. */
export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export interface GitOptions {
  /** Bytes written to the command's standard input. */
  input?: Buffer | string;
  /** Extra environment (GIT_INDEX_FILE, author identity); the rest is a fixed minimal set. */
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (`merge-tree` exits 1 on a conflict). */
  okCodes?: number[];
  /** Longest the command may run, ms. */
  timeoutMs?: number;
}

/** A git command that failed; `stderr` is git's own words, with any credentials removed. */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (${code ?? 'killed'}): ${stderr.trim().slice(0, 500)}`);
  }
}

/** The id git uses for "no object" (`update-ref <ref> <new> <zero>`: the ref must not exist). */
export const ZERO_OID = '0000000000000000000000000000000000000000';

/** Who commits what the service writes; each commit names its author besides. */
export const COMMITTER = { name: 'Platform API', email: 'platform-api@localhost' };

/**
 * The environment every git command runs with: nothing of the service's own (no secrets), no
 * user or system configuration, no prompts, and a fixed identity for the commits plumbing makes
 * (each commit names its author explicitly on top of this).
 */
function baseEnv(extra: Record<string, string> | undefined): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new',
    GIT_COMMITTER_NAME: COMMITTER.name,
    GIT_COMMITTER_EMAIL: COMMITTER.email,
    GIT_AUTHOR_NAME: 'Platform API',
    GIT_AUTHOR_EMAIL: 'platform-api@localhost',
    ...extra,
  };
}

/** The environment of a git command started elsewhere (a long-lived one): the same fixed set. */
export const gitEnv = (): Record<string, string> => baseEnv(undefined);

/** Removes anything that looks like a credential from git's messages before they go anywhere. */
export function redact(text: string): string {
  return text.replace(/(https?:\/\/)[^/@\s]+@/g, '$1***@').replace(/(authorization:\s*\w+\s+)\S+/gi, '$1***');
}

/**
 * Runs `git --git-dir=<dir> <args>` (no shell), started by the command runner (a spawn from the
 * API process costs in proportion to its memory; see core/process). Plumbing is run this way, not
 * through a wrapper library: exit codes are answers here (`merge-tree` 1 = conflict, `update-ref`
 * failing = a lost compare-and-swap), and wrappers hide them.
 */
export async function git(
  gitDir: string | null,
  args: string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const full = [...(gitDir ? [`--git-dir=${gitDir}`] : []), ...args];
  const result = await runCommand({
    file: 'git',
    args: full,
    env: baseEnv(options.env),
    input: options.input === undefined ? undefined : Buffer.from(options.input),
    timeoutMs: options.timeoutMs ?? 120_000,
    maxBuffer: 512 * 1024 * 1024,
  });
  const { code, stdout } = result;
  const err = result.stderr.toString('utf8');
  if (code !== null && (code === 0 || options.okCodes?.includes(code))) return { code, stdout, stderr: err };
  // ENOENT: git is not installed; the caller turns it into a 503.
  if (result.errorCode) throw new GitError(args, null, `${result.errorCode}: ${result.errorMessage}`);
  // `push --porcelain` reports why a ref was refused on standard output.
  const out = stdout.toString('utf8').slice(0, 2000).trim();
  throw new GitError(args, code, redact(out ? `${err}\n${out}` : err));
}

/** The trimmed text of a command's output. */
export const text = (result: GitResult): string => result.stdout.toString('utf8').trim();
