import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { createTestDatabase, dropTestDatabase, REDIS_URL } from '../support/database.js';
import { waitFor } from '../support/factories.js';
import { getJson as get, reposDirOf, startProcess, type Json, type Proc } from '../support/process.js';

const run = promisify(execFile);
const MAIN = 'dist/src/main.js';

describe('admin command line', () => {
  let db: { name: string; url: string };
  const cli = (...args: string[]) =>
    run(process.execPath, ['dist/src/cli.js', ...args], { env: { ...process.env, DATABASE_URL: db.url } });
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => dropTestDatabase(db.name));

  it('bootstrap creates the account and admin once, printing a fresh token each run', async () => {
    const first = JSON.parse(
      (await cli('bootstrap', '--account', 'acme', '--email', 'Admin@Acme.test')).stdout,
    );
    expect(first).toEqual({
      accountId: expect.any(Number),
      userId: expect.any(Number),
      token: expect.stringMatching(/^pat_/),
    });
    const again = JSON.parse(
      (await cli('bootstrap', '--account', 'acme', '--email', 'admin@acme.test')).stdout,
    );
    expect(again.accountId).toBe(first.accountId);
    expect(again.userId).toBe(first.userId);
    expect(again.token).not.toBe(first.token);
  });

  it('token prints a token for an existing user, and fails clearly otherwise', async () => {
    const out = JSON.parse((await cli('token', '--account', 'acme', '--email', 'admin@acme.test')).stdout);
    expect(out).toEqual({ userId: expect.any(Number), token: expect.stringMatching(/^pat_/) });
    await expect(cli('token', '--account', 'acme', '--email', 'nobody@acme.test')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('nobody@acme.test'),
    });
    await expect(cli('token', '--account', 'nope', '--email', 'admin@acme.test')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('No account nope'),
    });
  });

  it('rejects bad arguments with usage and exit code 2', async () => {
    await expect(cli('bootstrap', '--account', 'acme')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--email'),
    });
    await expect(cli('bootstrap', '--account', 'Bad Slug!', '--email', 'a@b.test')).rejects.toMatchObject({
      code: 2,
    });
    await expect(cli('frobnicate')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Usage'),
    });
  });
});

describe('the API process on PostgreSQL and Redis', () => {
  let db: { name: string; url: string };
  let proc: Proc;
  let port: number;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { stdout } = await run(
      process.execPath,
      ['dist/src/cli.js', 'bootstrap', '--account', 'acme', '--email', 'a@acme.test'],
      {
        env: { ...process.env, DATABASE_URL: db.url },
      },
    );
    token = JSON.parse(stdout).token;
    proc = startProcess(MAIN, {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: `p${randomBytes(4).toString('hex')}`,
      PORT: '0',
      NODE_ENV: 'development',
    });
    port = await proc.listening();
  });
  afterAll(async () => {
    if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await dropTestDatabase(db.name);
  });

  it('answers authenticated requests and writes JSON logs with request ids and no tokens', async () => {
    const me = await get(port, '/api/v1/users/me', token);
    expect(me.status).toBe(200);
    await get(port, `/api/v1/users?access_token=${token}`, token);
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json);
    const requestLine = lines.find((l) => l.req?.url === '/api/v1/users/me');
    expect(requestLine).toEqual(
      expect.objectContaining({
        level: expect.any(Number),
        req: expect.objectContaining({ id: expect.any(String) }),
      }),
    );
    expect(proc.output()).not.toContain(token);
  });

  it("keeps idle connections open longer than a load balancer does (65 s, not Node's 5 s)", async () => {
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answer = await keepAliveGet(agent, port, '/api/v1/users/me', token);
      expect(answer).toMatchObject({ status: 200, keepAlive: 'timeout=65' });
    } finally {
      agent.destroy();
    }
  });

  it('finishes in-flight requests on SIGTERM, then exits 0', async () => {
    // A request whose body is still arriving when the signal comes.
    const pending = new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/api-keys',
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/json',
            'Content-Length': 15,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.write('{"name":');
      setTimeout(() => {
        proc.child.kill('SIGTERM');
        setTimeout(() => req.end('"late"}'), 300);
      }, 200);
    });
    expect(await pending).toBe(200);
    expect(await proc.exit).toBe(0);
    expect(proc.output()).toContain('SIGTERM received');
  });
});

/** A request on `agent` (keep-alive), with the status and the `Connection` header of its answer. */
function keepAliveGet(
  agent: http.Agent,
  port: number,
  url: string,
  token: string,
): Promise<{ status: number; connection: string | undefined; keepAlive: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: url, agent, headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            connection: res.headers.connection,
            keepAlive: res.headers['keep-alive'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
  });
}

/** Resolves once nothing accepts connections on `port`. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('graceful shutdown with keep-alive clients', () => {
  let db: { name: string; url: string };
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const { stdout } = await run(
      process.execPath,
      ['dist/src/cli.js', 'bootstrap', '--account', 'acme', '--email', 'a@acme.test'],
      { env: { ...process.env, DATABASE_URL: db.url } },
    );
    token = JSON.parse(stdout).token;
  });
  afterAll(() => dropTestDatabase(db.name));

  it('on SIGTERM closes kept-alive connections, answers in-flight requests with Connection: close, exits 0', async () => {
    const proc = startProcess(MAIN, {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: `k${randomBytes(4).toString('hex')}`,
      PORT: '0',
      NODE_ENV: 'development',
      SHUTDOWN_TIMEOUT_MS: '30000',
    });
    try {
      const port = await proc.listening();
      const idle = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const busy = new http.Agent({ keepAlive: true, maxSockets: 1 });
      // Two kept-alive connections: one stays idle, the other carries a request in flight.
      expect((await keepAliveGet(idle, port, '/api/v1/users/me', token)).connection).toBe('keep-alive');
      expect((await keepAliveGet(busy, port, '/api/v1/users/me', token)).connection).toBe('keep-alive');
      const busySockets = new Set<object>(Object.values(busy.freeSockets).flatMap((l) => l ?? []));
      const reused = (socket: object) => busySockets.has(socket);
      let idleClosed = false;
      for (const sockets of Object.values(idle.freeSockets)) {
        for (const socket of sockets ?? []) socket.once('close', () => (idleClosed = true));
      }

      // On the busy client's kept-alive connection, a request whose body is still arriving when
      // the signal comes.
      let sent!: () => void;
      let onKeptAlive = false;
      const written = new Promise<void>((resolve) => (sent = resolve));
      const inFlight = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/api-keys',
            agent: busy,
            headers: {
              Authorization: `Bearer ${token}`,
              'Content-Type': 'application/json',
              'Content-Length': 15,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                connection: res.headers.connection,
              }),
            );
          },
        );
        req.on('error', reject);
        req.on('socket', (socket) => (onKeptAlive = reused(socket)));
        req.write('{"name":', () => sent());
        void proc.waitFor(/SIGTERM received/).then(() => req.end('"late"}'));
      });
      await written;
      // A full round trip on another connection after the partial request went out: the server
      // has it.
      expect((await keepAliveGet(new http.Agent(), port, '/api/v1/users/me', token)).status).toBe(200);
      proc.child.kill('SIGTERM');
      await proc.waitFor(/SIGTERM received/);

      expect(await inFlight).toEqual({ status: 200, connection: 'close' });
      expect(onKeptAlive).toBe(true);
      // 0, not the 1 of a drain cut off by SHUTDOWN_TIMEOUT_MS: no connection kept it waiting.
      expect(await proc.exit).toBe(0);
      expect(idleClosed).toBe(true);
      expect(await portIsFree(port)).toBe(true);
      // The busy client's next request finds nothing listening.
      await expect(keepAliveGet(busy, port, '/api/v1/users/me', token)).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
      idle.destroy();
      busy.destroy();
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  }, 90_000);

  it('`npm start` is stopped by SIGTERM to the npm process: the server exits and frees its port', async () => {
    const treeBefore = await gitStatus();
    const child = spawn('npm', ['start', '--silent'], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        REPOS_DIR: reposDirOf({ DATABASE_URL: db.url }),
        REDIS_URL,
        QUEUE_PREFIX: `n${randomBytes(4).toString('hex')}`,
        PORT: '0',
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, so a failed test can still kill whatever npm started.
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const listening = await waitFor(
        () => Promise.resolve(out),
        (o) => /listening on/.test(o) || child.exitCode !== null,
        120_000,
        100,
      );
      expect(listening).toMatch(/listening on/);
      const port = Number(/listening on \w+:\/\/[^\s]+:(\d+) /.exec(listening)![1]);
      expect(await portIsFree(port)).toBe(false);

      child.kill('SIGTERM');
      await exited;
      expect(out).toContain('SIGTERM received');
      // The server went with npm: nothing holds the port any more.
      expect(await portIsFree(port)).toBe(true);
      // Installing, building and running left the working tree as it was.
      expect(await gitStatus()).toEqual(treeBefore);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone: npm and the server exited, as they should.
      }
    }
  }, 150_000);

  it("the README's worker line (`npm run start:worker` beside `npm start`) starts in the same mode, with the same key", async () => {
    // The README gives both processes only DATABASE_URL and REDIS_URL: no NODE_ENV, no SECRETS_KEY.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      REPOS_DIR: reposDirOf({ DATABASE_URL: db.url }),
      REDIS_URL,
      QUEUE_PREFIX: `w${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: 'info',
    };
    delete env.NODE_ENV;
    delete env.SECRETS_KEY;
    const child = spawn('npm', ['run', 'start:worker', '--silent'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const started = await waitFor(
        () => Promise.resolve(out),
        (o) => /worker started/.test(o) || child.exitCode !== null,
        120_000,
        100,
      );
      expect(started).toMatch(/worker started/);
      // `npm start`'s mode: development, on the development key, as the API started by
      // `npm start` with the same lines (a production worker would have exited 1 here).
      expect(started).not.toContain('SECRETS_KEY is required in production');
      expect(started).toContain('SECRETS_KEY is not set: secrets use the development key');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is gone.
      }
    }
  }, 150_000);
});

/** `git status --porcelain` of the checkout the tests run in. */
async function gitStatus(): Promise<string> {
  const { stdout } = await run('git', ['status', '--porcelain', '--untracked-files=all']);
  return stdout;
}
