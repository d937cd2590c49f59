import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SECCOMP_FD } from './protocol.js';
import { seccompFilter } from './seccomp.js';

/**
 * How a sandboxed child is started: `nice` (a lower priority) execs `prlimit` (its rlimits), which
 * execs `bwrap` (the sandbox), which execs Node on the child script. Everything here runs in the API or worker process, with trusted
 * inputs. What differs between kinds of children (the script, the npm packages it loads, Node's
 * flags, the limits) comes in as arguments; the sandbox itself is the same for all.
 */

/** Where the system tools are looked for: they come from the system's packages, not from PATH. */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Inside the sandbox. */
export const SANDBOX_DIR = '/sandbox';
/** The build's files (child scripts, the channel) inside the sandbox, at their paths in the build. */
export const SANDBOX_APP = `${SANDBOX_DIR}/app`;
/** npm packages inside the sandbox, at their paths below node_modules. */
export const SANDBOX_NODE_MODULES = `${SANDBOX_DIR}/node_modules`;
/** nobody: the code's user inside the sandbox (its own user namespace maps it to ours). */
const SANDBOX_UID = 65534;
const PROBE_TIMEOUT_MS = 20_000;

/** What every sandbox is made of, found once at start. */
export interface SandboxLayout {
  nice: string;
  /** The children's niceness (SANDBOX_NICENESS). */
  niceness: number;
  bwrap: string;
  prlimit: string;
  /** This process's Node, bound at the same path. */
  node: string;
  /** Node's shared libraries, as the dynamic loader finds them (bound at the same paths). */
  libraries: string[];
  seccomp: Buffer;
}

/** A read-only bind: a host file or directory (real path) at a path inside the sandbox. */
export interface Bind {
  source: string;
  target: string;
}

export interface SandboxLimits {
  /** RLIMIT_DATA: the child's private writable memory (JS heap, Buffers, wasm memory, malloc). */
  memoryMb: number;
  /** The V8 isolates the child runs (its main thread and worker threads); default 1. */
  isolates?: number;
}

/** The Node that runs the children (this process's own): flags and limits differ by its version. */
export const NODE_VERSION = (([major, minor]) => ({ major, minor }))(
  process.versions.node.split('.').map(Number),
);

/** The child's RLIMIT_DATA: its memory and the reserve of each of its isolates. */
export function dataLimitBytes(limits: SandboxLimits): number {
  return Math.floor((limits.memoryMb + ISOLATE_RESERVE_MB * (limits.isolates ?? 1)) * 1024 * 1024);
}

/**
 * What V8 reserves per isolate (the child's main thread and each worker thread) beyond the memory
 * a kind is given, counted in RLIMIT_DATA because it is mapped writable when the isolate starts.
 * Node 24's V8 maps a whole 512 MB code range so for every isolate, and an isolate cannot start
 * below it ("Failed to reserve virtual memory for CodeRange"); with its other fixed tables an idle
 * Node 24 isolate holds about 50 MB more than Node 20's, hence 544 MB. Node 20 maps what it uses,
 * inside the kind's memory. The JS heap stays bounded by `--max-old-space-size` either way, but
 * on Node 24 Buffers may use the reserve while it is untouched (docs/operations.md).
 */
export const ISOLATE_RESERVE_MB = NODE_VERSION.major >= 24 ? 544 : 0;

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
export function packageDir(name: string, from: string): string {
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

export interface ToolPaths {
  bwrapPath: string;
  prlimitPath: string;
  /**
   * The children's niceness: untrusted work runs on the CPU the service leaves, so requests keep
   * their latency while compiles and Python runs are busy (a nice-10 thread weighs a tenth of a
   * nice-0 one), yet a busy service does not starve them into their kill timers.
   */
  niceness: number;
}

/** Finds the tools and Node's libraries; throws a {@link SandboxSetupError} naming the first missing. */
export async function resolveLayout(options: ToolPaths): Promise<SandboxLayout> {
  if (process.platform !== 'linux')
    throw new SandboxSetupError(`bubblewrap needs Linux, not ${process.platform}`);
  const seccomp = seccompFor(process.arch);
  const bwrap = findSystemTool(options.bwrapPath);
  if (!bwrap) throw new SandboxSetupError('bubblewrap (bwrap, Debian package bubblewrap) is not installed');
  const prlimit = findSystemTool(options.prlimitPath);
  if (!prlimit) throw new SandboxSetupError('prlimit (Debian package util-linux) is not installed');
  const nice = findSystemTool('nice');
  if (!nice) throw new SandboxSetupError('nice (Debian package coreutils) is not installed');
  const node = fs.realpathSync(process.execPath);
  return {
    nice,
    niceness: options.niceness,
    bwrap,
    prlimit,
    node,
    libraries: await nodeLibraries(node),
    seccomp,
  };
}

/**
 * The build this process runs from: `dist/` when it runs the build (this module is
 * `dist/src/core/sandbox/sandbox-command.js`). Under Jest this module is the TypeScript source
 * with no build beside it: the children are then those of the build the test run uses
 * (TEST_DIST_DIR, default `dist`), which the tests' global setup checks is fresh.
 */
export function buildRoot(): string {
  const here = fileURLToPath(import.meta.url);
  const root = path.resolve(path.dirname(here), '../../..');
  if (here.endsWith('.js')) return root;
  return path.resolve(root, process.env.TEST_DIST_DIR ?? 'dist');
}

/**
 * Binds of built files (`src/modules/python-runs/sandbox/python-child.mjs`, relative to the build)
 * at the same relative paths under {@link SANDBOX_APP}, so their relative imports hold. Throws when
 * one is not built.
 */
export function appBinds(files: string[], what: string): Bind[] {
  const root = buildRoot();
  return files.map((file) => {
    const source = path.join(root, file);
    if (!fs.existsSync(source)) throw new SandboxSetupError(`${what} is not built (${source} is missing)`);
    return { source: fs.realpathSync(source), target: path.posix.join(SANDBOX_APP, file) };
  });
}

/** Where a built file is inside the sandbox. */
export function sandboxAppPath(file: string): string {
  return path.posix.join(SANDBOX_APP, file);
}

/**
 * The npm package `name` (resolved from `from`, a file of this project) and every package it
 * depends on, transitively, each found as Node finds it (the nearest node_modules up the tree),
 * as binds under {@link SANDBOX_NODE_MODULES} at their paths below the top node_modules. Only
 * that closure is in the sandbox, not the whole of node_modules. Optional dependencies that are
 * not installed are left out; a missing required one is an error.
 */
export function packageClosureBinds(name: string, from: string): Bind[] {
  const start = packageDir(name, from);
  const modules = nodeModulesOf(start);
  const found = new Set<string>();
  const visit = (dir: string): void => {
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    const required = Object.keys(manifest.dependencies ?? {});
    const optional = [
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ];
    for (const dep of required) {
      const at = findPackage(dep, dir, modules);
      if (!at)
        throw new SandboxSetupError(`the npm package ${dep} (a dependency of ${dir}) is not installed`);
      visit(at);
    }
    for (const dep of optional) {
      const at = findPackage(dep, dir, modules);
      if (at) visit(at);
    }
  };
  visit(start);
  // A package nested in another's node_modules comes with that package's bind.
  const dirs = [...found].sort();
  const outer = dirs.filter(
    (dir) => !dirs.some((other) => other !== dir && dir.startsWith(other + path.sep)),
  );
  return outer.map((dir) => ({
    source: fs.realpathSync(dir),
    target: path.posix.join(SANDBOX_NODE_MODULES, path.relative(modules, dir).split(path.sep).join('/')),
  }));
}

/** The top node_modules directory holding a package directory. */
function nodeModulesOf(dir: string): string {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = dir.indexOf(marker);
  if (at < 0) throw new SandboxSetupError(`${dir} is not in a node_modules directory`);
  return dir.slice(0, at + marker.length - 1);
}

/** Node's lookup of package `name` from directory `dir`: each node_modules up to (and with) `top`. */
function findPackage(name: string, dir: string, top: string): string | null {
  let current = dir;
  for (;;) {
    const candidate =
      path.basename(current) === 'node_modules' ? null : path.join(current, 'node_modules', name);
    if (candidate && fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (current === path.dirname(top) || current === path.dirname(current)) return null;
    current = path.dirname(current);
  }
}

function seccompFor(arch: string): Buffer {
  const filter = seccompFilter(arch);
  if (!filter) throw new SandboxSetupError(`no seccomp filter for the CPU architecture ${arch}`);
  return filter;
}

/**
 * The command line of one child: `nice -n <niceness> prlimit <limits> -- bwrap <sandbox> -- node <child>`.
 *
 * The sandbox: every namespace new (no network but its own loopback, its own process tree, no
 * further user namespaces), the user nobody, no capabilities, an empty environment, a root that
 * is an empty read-only tmpfs holding only read-only binds of Node, its libraries and the kind's
 * `binds` (its child script, the channel, the npm packages it loads), no /proc, /dev or /tmp,
 * killed with its parent, and the seccomp filter read from {@link SECCOMP_FD} (which also refuses
 * terminal input injection). It stays in the service's session: bubblewrap's `--new-session`
 * would make it a scheduler autogroup of its own, as heavy as the whole service whatever its
 * niceness.
 */
export function childCommand(
  layout: SandboxLayout,
  limits: SandboxLimits,
  binds: Bind[],
  nodeArgs: string[],
): { file: string; args: string[] } {
  const bind = (source: string, target: string): string[] => ['--ro-bind', source, target];
  const args = [
    '-n',
    String(layout.niceness),
    layout.prlimit,
    `--data=${dataLimitBytes(limits)}`,
    // A crash writes no core file (a core pattern may hand it to a program on the host).
    '--core=0',
    '--nofile=256',
    '--',
    layout.bwrap,
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--clearenv',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--hostname',
    'sandbox',
    '--cap-drop',
    'ALL',
    '--dir',
    SANDBOX_DIR,
    ...layout.libraries.flatMap((library) => bind(fs.realpathSync(library), library)),
    ...bind(layout.node, layout.node),
    ...binds.flatMap((b) => bind(b.source, b.target)),
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
  return { file: layout.nice, args };
}

/**
 * Starts Node in the sandbox once, to run nothing: proves that user namespaces are allowed, that
 * the binds and the filter are right, and that Node starts with the memory cap. Resolves, or
 * throws a {@link SandboxSetupError} with bubblewrap's own words.
 */
export async function probeSandbox(layout: SandboxLayout, limits: SandboxLimits): Promise<void> {
  const { file, args } = childCommand(
    layout,
    limits,
    [],
    [
      '-e',
      // A spawn must be refused: the filter is in place.
      "try { require('child_process').spawnSync(process.execPath, ['-e', '0']).error.code === 'EPERM' || process.exit(3) } catch { process.exit(4) }",
    ],
  );
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
