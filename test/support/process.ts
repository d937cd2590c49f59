import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  /**
   * Waits for an API process's `listening on` line and answers the port it names: start it with
   * `PORT: '0'` so the system picks a free port as it binds (a port picked beforehand by
   * {@link freePort} can be taken by another process before the server binds it).
   */
  listening: (timeoutMs?: number) => Promise<number>;
  exit: Promise<number | null>;
}

/**
 * The REPOS_DIR of a started process not given one: a directory per database, since an
 * installation is a database and its REPOS_DIR (processes on one database share it, as replicas
 * do; a process on another database would refuse a directory marked by this one).
 * `dropTestDatabase` removes it with the database.
 */
export function reposDirOf(env: Record<string, string | undefined>): string | undefined {
  if (env.REPOS_DIR !== undefined || !env.DATABASE_URL) return env.REPOS_DIR;
  const name = new URL(env.DATABASE_URL).pathname.slice(1) || 'postgres';
  const dir = path.join(os.tmpdir(), 'platform-test-repos', name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs a built entry point (`dist/src/...`) as its own process, collecting stdout and stderr. */
export function startProcess(
  script: string,
  env: Record<string, string | undefined>,
  args: string[] = [],
): Proc {
  const child = spawn(process.execPath, [script, ...args], {
    // As every test app (test/support/app.ts): no warm sandboxed children unless a test asks for
    // them (each costs seconds of CPU), and those it starts at the test runner's priority; writers
    // of one branch queue on its lock longer than on a busy machine's 5 s default.
    env: {
      PATH: process.env.PATH,
      PYTHON_POOL_SIZE: '0',
      MODEL_COMPILE_POOL_SIZE: '0',
      SANDBOX_NICENESS: '0',
      DATABASE_LOCK_TIMEOUT_MS: '30000',
      ...env,
      REPOS_DIR: reposDirOf(env),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = out.match(pattern);
        if (m) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`));
      }, timeoutMs);
      listeners.add(check);
      void exit.then(() => {
        if (!out.match(pattern)) {
          clearTimeout(timer);
          reject(new Error(`process exited before ${pattern}; output:\n${out}`));
        }
      });
      check();
    });
  return {
    child,
    output: () => out,
    exit,
    waitFor,
    listening: async (timeoutMs = 30_000) =>
      Number((await waitFor(/listening on \w+:\/\/[^\s]+:(\d+) /, timeoutMs))[1]),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON of any shape
export type Json = Record<string, any>;

/** GET of a started process's route on loopback, with an optional bearer token; the body parsed. */
export async function getJson(
  port: number,
  url: string,
  token?: string,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, body: (await res.json()) as Json };
}
