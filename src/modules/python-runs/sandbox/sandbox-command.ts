import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { SECCOMP_FD } from './protocol.js';
import { seccompFilter } from './seccomp.js';

/**
 * How a Python child is started: `prlimit` (its rlimits) execs `bwrap` (the sandbox), which execs
 * Node on the child script. Everything here runs in the API process, with trusted inputs.
 */

/** Where the system tools are looked for: they come from the system's packages, not from PATH. */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Inside the sandbox. */
export const SANDBOX_DIR = '/sandbox';
const SANDBOX_CHILD = `${SANDBOX_DIR}/python-child.mjs`;
const SANDBOX_PYODIDE = `${SANDBOX_DIR}/node_modules/pyodide`;
/** Pyodide's Node loader imports `ws` (a bare import, found beside it in node_modules). */
const SANDBOX_WS = `${SANDBOX_DIR}/node_modules/ws`;
/** nobody: the code's user inside the sandbox (its own user namespace maps it to ours). */
const SANDBOX_UID = 65534;
const PROBE_TIMEOUT_MS = 20_000;

/** What the sandbox is made of, found once at start. */
export interface SandboxLayout {
  bwrap: string;
  prlimit: string;
  /** This process's Node, bound at the same path. */
  node: string;
  /** Node's shared libraries, as the dynamic loader finds them (bound at the same paths). */
  libraries: string[];
  childScript: string;
  pyodideDir: string;
  wsDir: string;
  seccomp: Buffer;
}

export interface SandboxLimits {
  /** RLIMIT_DATA: the child's private writable memory (JS heap, wasm memory, malloc). */
  memoryMb: number;
}

/** A reason the sandbox cannot be built, for `available()` and the log. */
export class SandboxSetupError extends Error {}

export function findSystemTool(name: string): string | null {
  if (name.includes('/')) return fs.existsSync(name) ? name : null;
  for (const dir of SYSTEM_DIRS) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** The directory of an installed package (real path), resolved from this module. */
function packageDir(name: string, from: string): string {
  let manifest: string;
  try {
    manifest = createRequire(from).resolve(`${name}/package.json`);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    throw new SandboxSetupError(`the npm package ${name} is not installed: ${reason}`);
  }
  return fs.realpathSync(path.dirname(manifest));
}

/**
 * Node's shared libraries, from `ldd`: the lines `name => /path (0x...)` and the loader's own
 * `/path (0x...)`; the vDSO has no path. A static Node has none.
 */
export function parseLdd(output: string): string[] {
  const libraries = new Set<string>();
  for (const line of output.split('\n')) {
    if (/=>\s*not found/.test(line))
      throw new SandboxSetupError(`a library of Node is missing: ${line.trim()}`);
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/i.exec(line);
    if (match) libraries.add(match[1]);
  }
  return [...libraries];
}

async function nodeLibraries(node: string): Promise<string[]> {
  const ldd = findSystemTool('ldd');
  if (!ldd) throw new SandboxSetupError('ldd (Debian package libc-bin) is not installed');
  try {
    const { stdout } = await promisify(execFile)(ldd, [node], { env: {}, timeout: PROBE_TIMEOUT_MS });
    return parseLdd(stdout);
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    if (/not a dynamic executable/.test(stdout + stderr)) return [];
    if (error instanceof SandboxSetupError) throw error;
    throw new SandboxSetupError(`ldd failed on ${node}: ${(error as Error).message.split('\n')[0]}`);
  }
}

export interface LayoutOptions {
  bwrapPath: string;
  prlimitPath: string;
  childScript: string;
  /** A module of this project, where npm packages are resolved from (import.meta.url). */
  resolveFrom: string;
}

/** Finds every part of the sandbox; throws a {@link SandboxSetupError} naming the first missing. */
export async function resolveLayout(options: LayoutOptions): Promise<SandboxLayout> {
  if (process.platform !== 'linux')
    throw new SandboxSetupError(`bubblewrap needs Linux, not ${process.platform}`);
  const seccomp = seccompFor(process.arch);
  const bwrap = findSystemTool(options.bwrapPath);
  if (!bwrap) throw new SandboxSetupError('bubblewrap (bwrap, Debian package bubblewrap) is not installed');
  const prlimit = findSystemTool(options.prlimitPath);
  if (!prlimit) throw new SandboxSetupError('prlimit (Debian package util-linux) is not installed');
  if (!fs.existsSync(options.childScript)) {
    throw new SandboxSetupError(`the Python child is not built (${options.childScript} is missing)`);
  }
  const pyodideDir = packageDir('pyodide', options.resolveFrom);
  const wsDir = packageDir('ws', path.join(pyodideDir, 'package.json'));
  const node = fs.realpathSync(process.execPath);
  return {
    bwrap,
    prlimit,
    node,
    libraries: await nodeLibraries(node),
    childScript: fs.realpathSync(options.childScript),
    pyodideDir,
    wsDir,
    seccomp,
  };
}

function seccompFor(arch: string): Buffer {
  const filter = seccompFilter(arch);
  if (!filter) throw new SandboxSetupError(`no seccomp filter for the CPU architecture ${arch}`);
  return filter;
}

/**
 * The command line of one child: `prlimit <limits> -- bwrap <sandbox> -- node <child>`.
 *
 * The sandbox: every namespace new (no network but its own loopback, its own process tree, no
 * further user namespaces), the user nobody, no capabilities, an empty environment, a root that
 * is an empty read-only tmpfs holding only read-only binds of Node, its libraries, the child
 * script and the two npm packages it loads, no /proc, /dev or /tmp, its own session (no terminal
 * to inject into), killed with its parent, and the seccomp filter read from {@link SECCOMP_FD}.
 */
export function childCommand(
  layout: SandboxLayout,
  limits: SandboxLimits,
  nodeArgs: string[],
): { file: string; args: string[] } {
  const bind = (source: string, target: string): string[] => ['--ro-bind', source, target];
  const memoryBytes = Math.floor(limits.memoryMb * 1024 * 1024);
  const args = [
    `--data=${memoryBytes}`,
    // A crash writes no core file (a core pattern may hand it to a program on the host).
    '--core=0',
    '--nofile=256',
    '--',
    layout.bwrap,
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--hostname',
    'sandbox',
    '--cap-drop',
    'ALL',
    ...layout.libraries.flatMap((library) => bind(fs.realpathSync(library), library)),
    ...bind(layout.node, layout.node),
    ...bind(layout.pyodideDir, SANDBOX_PYODIDE),
    ...bind(layout.wsDir, SANDBOX_WS),
    ...bind(layout.childScript, SANDBOX_CHILD),
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_DIR,
    '--seccomp',
    String(SECCOMP_FD),
    '--',
    layout.node,
    ...nodeArgs,
  ];
  return { file: layout.prlimit, args };
}

/** The child script and its arguments inside the sandbox. */
export function childScriptArgs(tag: string): string[] {
  return [SANDBOX_CHILD, `${SANDBOX_PYODIDE}/`, `--pool=${tag}`];
}

/**
 * Starts Node in the sandbox once, to run nothing: proves that user namespaces are allowed, that
 * the binds and the filter are right, and that Node starts with the memory cap. Resolves, or
 * throws a {@link SandboxSetupError} with bubblewrap's own words.
 */
export async function probeSandbox(layout: SandboxLayout, limits: SandboxLimits): Promise<void> {
  const { file, args } = childCommand(layout, limits, [
    '-e',
    // A spawn must be refused: the filter is in place.
    "try { require('child_process').spawnSync(process.execPath, ['-e', '0']).error.code === 'EPERM' || process.exit(3) } catch { process.exit(4) }",
  ]);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(file, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe', 'ignore', 'pipe'] });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    const seccompPipe = child.stdio[SECCOMP_FD] as NodeJS.WritableStream | null;
    seccompPipe?.on('error', () => undefined);
    seccompPipe?.end(layout.seccomp);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new SandboxSetupError(`the sandbox could not be started: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const said = stderr.trim().split('\n')[0] ?? '';
      const why =
        code === 3 || code === 4
          ? 'the seccomp filter did not refuse a new process'
          : said || (signal ? `it was stopped by ${signal}` : `exit code ${code}`);
      reject(new SandboxSetupError(`bubblewrap cannot create the sandbox here: ${why}`));
    });
  });
}
