// The harness shared by the benches that run the built service: a database of their own (created,
// migrated and bootstrapped through the service's CLI, dropped at the end), a private copy of the
// build, the service as a child process on a free loopback port, JSON requests to it, CPU
// accounting from /proc, the queue keys of a run, progress lines and the statistics of the tables.
// Each bench keeps only what it measures.
/* global fetch */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { clearInterval, clearTimeout, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import pg from 'pg';

/** The repository's root: the working directory of the service and its CLI. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// Options

/** parseArgs options of the benches with a database of their own: --dist (default BENCH_DIST, else dist), --keep-db. */
export const benchOptions = {
  dist: { type: 'string', default: process.env.BENCH_DIST ?? 'dist' },
  'keep-db': { type: 'boolean', default: false },
};

/** The option `--name` of the parsed `args` as a positive integer; throws otherwise. */
export function positiveInt(args, name) {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

/** The option `--name` of the parsed `args` as a whole number (0 included); throws otherwise. */
export function wholeNumber(args, name) {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Progress and statistics

/** A progress logger: `step(label)` prints `[<seconds since stepper()>s] label`. */
export function stepper() {
  const started = performance.now();
  return (label) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${label}`);
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);

/** The median (the mean of the two middle samples when their number is even). */
export const median = (xs) => {
  const s = sorted(xs);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Nearest rank: the smallest sample with at least the share `q` of the samples at or below it. */
export const nearestRank = (xs, q) => sorted(xs)[Math.ceil(q * xs.length) - 1];

/** The p95 by nearest rank (with 5 samples, the slowest). */
export const p95 = (xs) => nearestRank(xs, 0.95);

/** Runs, median, p95, min and max of timings (ms), then `cpu` (see cpuPerOp), then the samples. */
export const timingSummary = (samples, cpu) => ({
  runs: samples.length,
  medianMs: median(samples),
  p95Ms: p95(samples),
  minMs: Math.min(...samples),
  maxMs: Math.max(...samples),
  ...cpu,
  samplesMs: samples.map((x) => Math.round(x * 10) / 10),
});

// ---------------------------------------------------------------------------------------------
// The database, the build and its CLI

/** The database named in `databaseUrl`; throws unless it is a plain name (it goes into SQL). */
export function databaseName(databaseUrl) {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unexpected database name: ${name}`);
  return name;
}

/** Runs a statement on the maintenance database (`postgres`) of the server of `databaseUrl`. */
export async function maintenance(databaseUrl, sql) {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Drops (with its connections) and creates again the database of `databaseUrl`. */
export async function recreateDatabase(databaseUrl) {
  const name = databaseName(databaseUrl);
  await maintenance(databaseUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await maintenance(databaseUrl, `CREATE DATABASE "${name}"`);
}

/** Drops the database of `databaseUrl` at the end of a bench; warns instead of throwing. */
export async function dropDatabase(databaseUrl) {
  const name = databaseName(databaseUrl);
  await maintenance(databaseUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) =>
    console.warn(`could not drop ${name}: ${e.message}`),
  );
}

/** The environment the build's CLI runs in: `databaseUrl`, no Redis, production, errors only. */
export const cliEnv = (databaseUrl) => ({
  ...process.env,
  DATABASE_URL: databaseUrl,
  REDIS_URL: '',
  NODE_ENV: 'production',
  LOG_LEVEL: 'error',
});

/**
 * Runs the CLI of the build `dist` (relative to the root, or absolute) on `databaseUrl`, without
 * Redis, and returns its last stdout line (JSON).
 */
export function cli(dist, databaseUrl, ...argv) {
  const res = spawnSync(process.execPath, [path.resolve(root, dist, 'src/cli.js'), ...argv], {
    cwd: root,
    env: cliEnv(databaseUrl),
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`cli ${argv.join(' ')} failed:\n${res.stderr}${res.stdout}`);
  return JSON.parse(res.stdout.trim().split('\n').pop());
}

/** `cli migrate`, then `cli bootstrap` of an account and its admin; returns the latter's answer (`token`...). */
export function migrateAndBootstrap(dist, databaseUrl, { account, email }) {
  cli(dist, databaseUrl, 'migrate');
  return cli(dist, databaseUrl, 'bootstrap', '--account', account, '--email', email);
}

/**
 * Copies the build `source` to bench/results/.<name>-<pid> (gitignored; node still resolves the
 * repository's node_modules from there), so a rebuild meanwhile does not change the servers.
 * Returns the copy's path relative to the root and the build's stamp (null without one).
 */
export function copyBuild(source, name) {
  const dist = `bench/results/.${name}-${process.pid}`;
  const stampFile = path.join(root, source, '.build-stamp');
  const stamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8').trim() : null;
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.cpSync(path.join(root, source), path.join(root, dist), { recursive: true });
  return { dist, stamp };
}

/** Removes a directory (a build copy, a temporary directory) relative to the root, or absolute. */
export const removeDir = (dir) => fs.rmSync(path.resolve(root, dir), { recursive: true, force: true });

/** Deletes the Redis keys of a run's queues (`<prefix>:*`) at the end of a bench; warns instead of throwing. */
export async function deleteQueueKeys(redisUrl, prefix) {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } catch (e) {
    console.warn(`could not delete the queue keys: ${e.message}`);
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// The service

/** Every server process started here and still running: none outlives the bench. */
const running = new Set();
const isRunning = (child) => child.exitCode === null && child.signalCode === null;
// Last resort, whatever ends the bench (an uncaught error included).
process.on('exit', () => {
  for (const child of running) if (isRunning(child)) child.kill('SIGKILL');
});

/**
 * The service's environment as the benches run it: as in production, over plain HTTP on loopback,
 * silent, without rate limit, the database migrated beforehand (by the CLI).
 */
export const productionEnv = {
  NODE_ENV: 'production',
  ALLOW_HTTP: 'true',
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: '1000000',
  MIGRATIONS_RUN: 'false',
};

/**
 * The environment of a service whose builds stay queued (in Redis under `queuePrefix`; the API
 * runs no job), on its own database and `REPOS_DIR`; the compiler's settings stay the service's
 * defaults unless MODEL_COMPILE_POOL_SIZE is set for the bench.
 */
export const queuedBuildsEnv = ({ redisUrl, queuePrefix, reposDir, databaseUrl, poolSize }) => ({
  ...productionEnv,
  REDIS_URL: redisUrl,
  RUN_JOBS_IN_PROCESS: 'false',
  QUEUE_PREFIX: queuePrefix,
  SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
  REPOS_DIR: reposDir,
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: poolSize,
  ...(process.env.MODEL_COMPILE_POOL_SIZE
    ? { MODEL_COMPILE_POOL_SIZE: process.env.MODEL_COMPILE_POOL_SIZE }
    : {}),
});

/** A TCP port free on loopback at the moment of asking. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/**
 * Starts `node argv` in `cwd` (default the root) with `env` (plus PORT and HOST of a free loopback
 * port) and resolves once it answers /health/live, or kills it and rejects with its stderr when
 * it exits first or takes over 60 s. Answers { name, child, pid, port, base, command }: `command`
 * is the line to print, with the variables named in `hide` (e.g. a secret) shown as `<random>`.
 */
export async function startService({ name, argv, env, cwd = root, node = process.execPath, hide = [] }) {
  const port = await freePort();
  const fullEnv = { ...env, PORT: String(port), HOST: '127.0.0.1' };
  const child = spawn(node, argv, {
    cwd,
    env: { ...process.env, ...fullEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((_, reject) =>
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}):\n${stderr}`))),
  );
  const base = `http://127.0.0.1:${port}`;
  let waiting = true;
  const ready = (async () => {
    for (let i = 0; waiting; i++) {
      if (i === 600) throw new Error(`${name} did not answer /health/live within 60 s:\n${stderr}`);
      try {
        if ((await fetch(`${base}/health/live`)).ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await Promise.race([ready, exited]);
  } catch (e) {
    if (isRunning(child)) child.kill('SIGKILL');
    throw e;
  } finally {
    waiting = false;
    exited.catch(() => {});
    ready.catch(() => {});
  }
  const shown = Object.entries(fullEnv)
    .map(([k, v]) => (hide.includes(k) ? `${k}=<random>` : `${k}=${v}`))
    .join(' ');
  const shownNode = node === process.execPath ? 'node' : node;
  return { name, child, pid: child.pid, port, base, command: `${shown} ${shownNode} ${argv.join(' ')}` };
}

/** Stops a service (null: nothing): SIGTERM, then SIGKILL if it has not exited `graceMs` later. */
export async function stopService(server, graceMs = 5000) {
  if (!server || !isRunning(server.child)) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every service still running, all at once (as stopService). */
export const stopAllServices = (graceMs = 5000) =>
  Promise.all([...running].map((child) => stopService({ child }, graceMs)));

/** SIGKILLs every service still running (Ctrl-C). */
export const killAllServices = () => running.forEach((child) => child.kill('SIGKILL'));

/**
 * On SIGINT or SIGTERM (after which no `finally` runs): kills the services, awaits `cleanUp` and
 * exits with 130. Returns a function that removes the handlers.
 */
export function onInterrupt(cleanUp) {
  const handler = () => {
    killAllServices();
    Promise.resolve()
      .then(cleanUp)
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/**
 * One JSON request to the service at `base` (as `token`, if any; `body` sent as JSON, a string as
 * it is). Throws unless the status is `expect`; returns the parsed answer (null when empty).
 */
export async function api(base, method, p, body, { token, expect = 200 } = {}) {
  const res = await fetch(base + p, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

/** The body of a deployment ready to use (POST /build/api/v1/deployments). */
export const deploymentBody = (name) => ({
  name,
  cloudProvider: 'aws',
  isManaged: true,
  region: 'aws-us-east-1',
  targetPlatform: 'cubecloud',
  creationStep: 'ready',
});

// ---------------------------------------------------------------------------------------------
// CPU accounting: /proc/<pid>/stat of the servers, the backends of the database, /proc/stat

/** USER_HZ on Linux (`getconf CLK_TCK`). */
export const CLK_TCK = 100;

const statFields = (pid) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');

/** utime + stime of a process, in ticks; with `children`, plus those of the children it reaped. */
export function procTicks(pid, children = false) {
  const f = statFields(pid);
  return Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
}

/**
 * The CPU of a process and of every process below it, in ticks: `ticks()` answers its own and
 * reaped children's utime + stime, plus each live descendant's (with its reaped children), plus the
 * last-seen ticks of every descendant that left the tree without being reaped inside it. Those are
 * the sandboxed children: the service kills bubblewrap, and the sandbox's init and the node
 * child below it die reparented away, so no cutime in the tree ever holds them. Such a descendant
 * is charged what it had used when last seen: `start(ms)` polls meanwhile (during a timed
 * operation), so at most one period of its CPU goes uncounted; `stop()` ends the polling.
 * Descendants are told apart by pid and start time.
 */
export function processTree(pid) {
  const root = String(pid);
  let known = new Map(); // pid -> { ppid, start, ticks } of the descendants at the last look
  let orphaned = 0;
  let timer = null;
  const look = () => {
    const all = new Map();
    for (const p of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const f = statFields(p);
        all.set(p, {
          ppid: f[1],
          start: f[19],
          ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
        });
      } catch {
        /* gone */
      }
    }
    const below = new Map();
    for (const [p, x] of all) {
      if (!below.has(x.ppid)) below.set(x.ppid, []);
      below.get(x.ppid).push(p);
    }
    const tree = new Map();
    const queue = [...(below.get(root) ?? [])];
    while (queue.length > 0) {
      const p = queue.pop();
      tree.set(p, all.get(p));
      queue.push(...(below.get(p) ?? []));
    }
    const same = (map, p, x) => map.get(p)?.start === x.start;
    for (const [p, x] of known) {
      if (same(tree, p, x)) continue;
      // Gone from the tree: reaped by the root or by a parent still in the tree (its cutime holds
      // it now or will), else lost to the tree: charge what it had used when last seen.
      const reapedInside = x.ppid === root || (known.has(x.ppid) && same(tree, x.ppid, known.get(x.ppid)));
      if (!reapedInside) orphaned += x.ticks;
    }
    known = tree;
    let ticks = procTicks(pid, true) + orphaned;
    for (const x of tree.values()) ticks += x.ticks;
    return ticks;
  };
  return {
    ticks: look,
    start(everyMs = 100) {
      if (!timer) timer = setInterval(look, everyMs);
    },
    stop() {
      clearInterval(timer);
      timer = null;
    },
  };
}

/** The ticks of each PostgreSQL backend serving the database `dbName` (its title names it), by pid. */
export function pgTicks(dbName) {
  const ticks = new Map();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${dbName} `)) ticks.set(pid, procTicks(pid));
    } catch {
      /* gone */
    }
  }
  return ticks;
}

/**
 * Machine-wide busy and total ticks (/proc/stat), the servers' (`pids`; with `children` true, plus
 * the children they reaped; with `children` a processTree() of the one server, its whole process
 * tree, sandboxed children included), the database's backends' and this process's own.
 */
export function cpuSample(pids, dbName, children = false) {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  const self = process.cpuUsage();
  return {
    busy,
    total: busy + idle + iowait,
    server: children?.ticks ? children.ticks() : pids.reduce((a, pid) => a + procTicks(pid, children), 0),
    pg: pgTicks(dbName),
    self: ((self.user + self.system) / 1e6) * CLK_TCK,
  };
}

/**
 * Ticks used between two samples: the servers', the database's (a backend gone in between, a pool
 * closing an idle connection, is left out: idle, it used next to nothing), the others' and all.
 */
export function cpuBetween(before, after) {
  const server = after.server - before.server;
  let pgSum = 0;
  for (const [pid, t] of after.pg) pgSum += t - (before.pg.get(pid) ?? 0);
  const others = Math.max(0, after.busy - before.busy - server - pgSum - (after.self - before.self));
  return { server, pg: pgSum, others, total: after.total - before.total };
}

/** No ticks, to add to (addTicks). */
export const NO_TICKS = { server: 0, pg: 0, others: 0, total: 0 };
/** The sum of two cpuBetween answers. */
export const addTicks = (a, b) => ({
  server: a.server + b.server,
  pg: a.pg + b.pg,
  others: a.others + b.others,
  total: a.total + b.total,
});
/** The servers' and the database's CPU per operation (ms), and the others' share of the machine. */
export const cpuPerOp = (t, ops) => ({
  serverCpuMsPerOp: ((t.server / CLK_TCK) * 1000) / ops,
  dbCpuMsPerOp: ((t.pg / CLK_TCK) * 1000) / ops,
  othersCpuPct: (100 * t.others) / Math.max(1, t.total),
});
