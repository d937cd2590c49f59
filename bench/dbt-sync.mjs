// Benchmarks dbt syncs (issue 15) through the HTTP API of a running service, on real PostgreSQL
// and Redis, a fresh REPOS_DIR and a database of its own: the time to sync a manifest of N dbt
// models (default 500, over 1 MB of JSON) into N cube files committed on a new branch.
//   (1) manifest  POST .../dbt-sync {source: manifest, manifest} with the manifest in the body,
//                 then GET .../dbt-sync/{id} until COMPLETED
//   (2) git       POST .../dbt-sync {} reading target/manifest.json from a local bare repository
//                 (file://, DBT_GIT_PROTOCOLS=file): ls-remote, a shallow fetch, the read
// Each is timed at the client from the POST to the first status read saying COMPLETED (the status
// is polled every --poll ms), and by the run itself (`durationMs` of the history, PostgreSQL's
// clock, start to finish) with its phases (the worker's monotonic clock). After each sync, the
// build it queued (Cube's compiler over the whole branch) is waited for, untimed for the sync but
// reported apart, so no build runs during the next sync.
//
//   npm run build
//   node bench/dbt-sync.mjs [--dist dist] [--repeat 5] [--models 500] [--warmup 1] [--poll 20]
//        [--keep-db]
//
// Env: BENCH_DBT_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_dbt_<pid>; DROPPED
// and recreated, migrated and bootstrapped through the service's CLI, dropped at the end),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379; the API runs its jobs in process through
// Bull, under a queue prefix of this run whose keys are deleted at the end), DATABASE_POOL_SIZE
// (default 10).
//
// Prints a Markdown table and one JSON line.
/* global fetch */
import { Buffer } from 'node:buffer';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import pg from 'pg';
import { startService } from './service.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: process.env.BENCH_DIST ?? 'dist' },
    repeat: { type: 'string', default: '5' },
    models: { type: 'string', default: '500' },
    warmup: { type: 'string', default: '1' },
    poll: { type: 'string', default: '20' },
    'keep-db': { type: 'boolean', default: false },
  },
});
const positiveInt = (name) => {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
};
const REPEAT = positiveInt('repeat');
const MODELS = positiveInt('models');
const POLL_MS = positiveInt('poll');
const WARMUP = Number(args.warmup);
if (!Number.isInteger(WARMUP) || WARMUP < 0) throw new Error('--warmup must be a whole number');

const SOURCE_DIST = args.dist;
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/modules/dbt-sync/dbt-sync.job.js'))) {
  throw new Error(`${SOURCE_DIST} has no dbt sync: build the current sources (npm run build)`);
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL =
  process.env.BENCH_DBT_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_dbt_${process.pid}`;
const dbName = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
if (!/^[A-Za-z0-9_]+$/.test(dbName)) throw new Error(`unexpected database name: ${dbName}`);
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';
const QUEUE_PREFIX = `bench-dbt-${process.pid}`;
const CLK_TCK = 100; // USER_HZ on Linux (`getconf CLK_TCK`)

const started = performance.now();
const step = (label) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${label}`);

// ---------------------------------------------------------------------------------------------
// Set-up and clean-up: a private copy of the build, a database, directories

const DIST = `bench/results/.dbt-dist-${process.pid}`;
const buildStamp = fs.existsSync(path.join(root, SOURCE_DIST, '.build-stamp'))
  ? fs.readFileSync(path.join(root, SOURCE_DIST, '.build-stamp'), 'utf8').trim()
  : null;
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.cpSync(path.join(root, SOURCE_DIST), path.join(root, DIST), { recursive: true });
const REPOS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dbt-repos-'));
const DBT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dbt-project-'));

let server = null;
let db = null;

async function maintenance(sql) {
  const url = new URL(DATABASE_URL);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

function cli(...argv) {
  const res = spawnSync(process.execPath, [path.join(root, DIST, 'src/cli.js'), ...argv], {
    cwd: root,
    env: { ...process.env, DATABASE_URL, REDIS_URL: '', NODE_ENV: 'production', LOG_LEVEL: 'error' },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`cli ${argv.join(' ')} failed:\n${res.stderr}${res.stdout}`);
  return JSON.parse(res.stdout.trim().split('\n').pop());
}

async function deleteQueueKeys() {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${QUEUE_PREFIX}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function stopServer() {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

let cleaned = false;
async function cleanUp() {
  if (cleaned) return;
  cleaned = true;
  await stopServer();
  await db?.end().catch(() => {});
  fs.rmSync(path.join(root, DIST), { recursive: true, force: true });
  fs.rmSync(REPOS_DIR, { recursive: true, force: true });
  fs.rmSync(DBT_DIR, { recursive: true, force: true });
  await deleteQueueKeys().catch((e) => console.warn(`could not delete the queue keys: ${e.message}`));
  if (!args['keep-db']) {
    await maintenance(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch((e) =>
      console.warn(`could not drop ${dbName}: ${e.message}`),
    );
  }
}

const onSignal = () => {
  server?.child.kill('SIGKILL');
  cleanUp().finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
process.on('exit', () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null)
    server.child.kill('SIGKILL');
});

/** The built API, running its jobs (syncs, builds) in process through Bull. */
async function startServer() {
  const env = {
    NODE_ENV: 'production',
    ALLOW_HTTP: 'true',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    MIGRATIONS_RUN: 'false',
    REDIS_URL,
    RUN_JOBS_IN_PROCESS: 'true',
    QUEUE_PREFIX,
    SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
    REPOS_DIR,
    DBT_GIT_PROTOCOLS: 'file',
    // Room for the builds of 500-cube branches on a busy machine.
    MODEL_COMPILE_TIMEOUT_MS: '300000',
    DATABASE_URL,
    DATABASE_POOL_SIZE: POOL_SIZE,
  };
  server = await startService({
    name: 'the service',
    argv: [`${DIST}/src/main.js`],
    cwd: root,
    env,
    hide: ['SECRETS_KEY'],
    onSpawn: (child) => (server = { child, pid: child.pid }),
  });
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (as data-model.mjs)

const procStat = (pid) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
const serverTicks = (pid) => {
  const f = procStat(pid);
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
};
function pgTicks() {
  const ticks = new Map();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${dbName} `)) {
        const f = procStat(pid);
        ticks.set(pid, Number(f[11]) + Number(f[12]));
      }
    } catch {
      /* gone */
    }
  }
  return ticks;
}
function sample() {
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
    server: serverTicks(server.pid),
    pg: pgTicks(),
    self: ((self.user + self.system) / 1e6) * CLK_TCK,
  };
}
function ticksBetween(before, after) {
  const serverT = after.server - before.server;
  let pgSum = 0;
  for (const [pid, t] of after.pg) pgSum += t - (before.pg.get(pid) ?? 0);
  const others = Math.max(0, after.busy - before.busy - serverT - pgSum - (after.self - before.self));
  return { server: serverT, pg: pgSum, others, total: after.total - before.total };
}
const addTicks = (a, b) => ({
  server: a.server + b.server,
  pg: a.pg + b.pg,
  others: a.others + b.others,
  total: a.total + b.total,
});
const NO_TICKS = { server: 0, pg: 0, others: 0, total: 0 };
const cpuOf = (t, ops) => ({
  serverCpuMsPerOp: ((t.server / CLK_TCK) * 1000) / ops,
  dbCpuMsPerOp: ((t.pg / CLK_TCK) * 1000) / ops,
  othersCpuPct: (100 * t.others) / Math.max(1, t.total),
});

// ---------------------------------------------------------------------------------------------
// The API

let token = null;
const auth = () => ({ authorization: `Bearer ${token}` });

async function api(method, p, body, expect = 200) {
  const res = await fetch(server.base + p, {
    method,
    headers: { ...auth(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// A dbt manifest (schema v12) of MODELS documented models, as dbt writes them

const COLUMNS = [
  ['id', 'bigint', 'Primary key of the row'],
  ['customer_id', 'bigint', 'The customer the row belongs to, from the CRM'],
  ['status', 'varchar', 'Lifecycle state of the row as recorded by the source system'],
  ['amount', 'numeric(38,2)', 'Amount of the row in the account currency'],
  ['created_at', 'timestamp', 'When the row was created, in UTC'],
  ['updated_at', 'timestamp', 'When the row last changed, in UTC'],
  ['notes', 'text', 'Free-text notes of the operator'],
  ['is_active', 'boolean', 'Whether the row is still active'],
];

function modelNode(i) {
  const name = `model_${String(i).padStart(4, '0')}`;
  const uniqueId = `model.shop.${name}`;
  return {
    database: 'analytics',
    schema: 'public',
    name,
    resource_type: 'model',
    package_name: 'shop',
    path: `marts/${name}.sql`,
    original_file_path: `models/marts/${name}.sql`,
    unique_id: uniqueId,
    fqn: ['shop', 'marts', name],
    alias: name,
    checksum: { name: 'sha256', checksum: randomBytes(32).toString('hex') },
    config: { enabled: true, materialized: 'table', tags: [], meta: {} },
    tags: [],
    description: `Model ${i} of the project: one row per business event of its domain, cleaned and typed.`,
    columns: Object.fromEntries(
      COLUMNS.map(([c, type, description]) => [
        c,
        { name: c, description, meta: {}, data_type: type, constraints: [], quote: null, tags: [] },
      ]),
    ),
    meta: {},
    constraints: [],
    relation_name: `"analytics"."public"."${name}"`,
    raw_code: `select * from {{ ref('stg_${name}') }}`,
    language: 'sql',
    depends_on: { macros: [], nodes: [] },
  };
}

function testNode(test, modelId, col) {
  const name = `${test}_${modelId.split('.')[2]}_${col}`;
  return {
    database: 'analytics',
    schema: 'public_dbt_test__audit',
    name,
    resource_type: 'test',
    package_name: 'shop',
    path: `${name}.sql`,
    original_file_path: 'models/marts/schema.yml',
    unique_id: `test.shop.${name}.${randomBytes(5).toString('hex')}`,
    fqn: ['shop', 'marts', name],
    alias: name,
    checksum: { name: 'none', checksum: '' },
    config: { enabled: true, materialized: 'test' },
    test_metadata: { name: test, kwargs: { column_name: col, model: "{{ get_where_subquery(ref('x')) }}" } },
    attached_node: modelId,
    column_name: col,
    depends_on: { macros: [`macro.dbt.test_${test}`], nodes: [modelId] },
  };
}

function dbtManifest(n) {
  const nodes = {};
  for (let i = 0; i < n; i++) {
    const model = modelNode(i);
    nodes[model.unique_id] = model;
    for (const t of ['unique', 'not_null']) {
      const node = testNode(t, model.unique_id, 'id');
      nodes[node.unique_id] = node;
    }
  }
  return {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json',
      dbt_version: '1.8.0',
      generated_at: new Date().toISOString(),
    },
    nodes,
    sources: {},
    macros: {},
    docs: {},
    exposures: {},
    metrics: {},
    groups: {},
    selectors: {},
    disabled: {},
    parent_map: {},
    child_map: {},
    group_map: {},
    saved_queries: {},
    semantic_models: {},
    unit_tests: {},
  };
}

/** A bare repository whose `main` holds the dbt project with its compiled manifest; its file:// URL. */
function dbtRepository(manifestText) {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.test',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.test',
  };
  const run = (cwd, ...a) => execFileSync('git', a, { cwd, env, encoding: 'utf8' });
  const bare = path.join(DBT_DIR, 'dbt.git');
  const work = path.join(DBT_DIR, 'work');
  run(DBT_DIR, 'init', '--bare', '--quiet', bare);
  fs.mkdirSync(path.join(work, 'target'), { recursive: true });
  run(work, 'init', '--quiet');
  fs.writeFileSync(path.join(work, 'dbt_project.yml'), 'name: shop\n');
  fs.writeFileSync(path.join(work, 'target/manifest.json'), manifestText);
  run(work, 'add', '-A');
  run(work, 'commit', '--quiet', '-m', 'dbt project');
  run(work, 'push', '--quiet', bare, 'HEAD:refs/heads/main');
  return `file://${bare}`;
}

// ---------------------------------------------------------------------------------------------
// Statistics

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const p95 = (xs) => sorted(xs)[Math.ceil(0.95 * xs.length) - 1];
const summary = (samples, cpu) => ({
  runs: samples.length,
  medianMs: median(samples),
  p95Ms: p95(samples),
  minMs: Math.min(...samples),
  maxMs: Math.max(...samples),
  ...cpu,
  samplesMs: samples.map((x) => Math.round(x * 10) / 10),
});

// ---------------------------------------------------------------------------------------------
// Main

const results = {};
const runs = {};
let exitCode = 0;
try {
  step(`recreating the database ${dbName}`);
  await maintenance(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await maintenance(`CREATE DATABASE "${dbName}"`);
  step('migrating (cli migrate) and bootstrapping the admin (cli bootstrap)');
  cli('migrate');
  token = cli('bootstrap', '--account', 'bench-dbt', '--email', 'admin@bench-dbt.test').token;
  db = new pg.Client({ connectionString: DATABASE_URL });
  db.on('error', (e) => console.warn(`database connection lost: ${e.message}`));
  await db.connect();

  const manifest = dbtManifest(MODELS);
  const manifestText = JSON.stringify(manifest);
  const manifestBody = JSON.stringify({ source: 'manifest', manifest });
  step(`a ${MODELS}-model manifest: ${manifestText.length} bytes (the POST body: ${manifestBody.length})`);
  const repositoryUrl = dbtRepository(manifestText);

  step(`starting the service (${SOURCE_DIST}, REPOS_DIR ${REPOS_DIR})`);
  await startServer();
  const { id: D } = await api('POST', '/build/api/v1/deployments', {
    name: 'dbt sync bench',
    cloudProvider: 'aws',
    isManaged: true,
    region: 'aws-us-east-1',
    targetPlatform: 'cubecloud',
    creationStep: 'ready',
  });
  const base = `/api/v1/deployments/${D}`;
  await api('PUT', `${base}/dbt-integration`, { repositoryUrl, branch: 'main' });

  /** Waits for the latest build of `branch` to finish (not timed); answers its wall time. */
  const built = async (branch) => {
    const t0 = performance.now();
    for (;;) {
      const s = await api('GET', `${base}/build-status?branchName=${encodeURIComponent(branch)}`);
      if (s.status === 'built') return performance.now() - t0;
      if (s.status !== 'building' && s.status !== 'none')
        throw new Error(`the build of ${branch} ended ${s.status}: ${s.errorText}`);
      await sleep(100);
    }
  };
  step('waiting for the deployment’s first build');
  await built('master');

  /** One sync: the POST, then polls until COMPLETED. Answers the wall times and the run's record. */
  const syncOnce = async (body) => {
    const before = sample();
    const t0 = performance.now();
    const started = await api('POST', `${base}/dbt-sync`, body);
    const postMs = performance.now() - t0;
    for (;;) {
      const s = await api('GET', `${base}/dbt-sync/${started.syncJobId}`);
      if (s.status === 'COMPLETED') break;
      if (s.status === 'FAILED') throw new Error(`sync ${started.syncJobId} failed: ${s.error}`);
      await sleep(POLL_MS);
    }
    const totalMs = performance.now() - t0;
    const ticks = ticksBetween(before, sample());
    const { items } = await api('GET', `${base}/dbt-sync?first=1`);
    const run = items[0];
    if (run.syncJobId !== started.syncJobId || run.stats.cubeCount !== MODELS)
      throw new Error(`unexpected history item: ${JSON.stringify(run).slice(0, 500)}`);
    const buildMs = await built(started.branchName);
    return { postMs, totalMs, ticks, run, buildMs };
  };

  const kinds = [
    ['manifest', () => manifestBody],
    ['git', () => ({})],
  ];
  for (const [kind, body] of kinds) {
    step(`${kind}: ${WARMUP} warm-up, ${REPEAT} timed`);
    for (let i = 0; i < WARMUP; i++) await syncOnce(body());
    const samples = [];
    let ticks = NO_TICKS;
    runs[kind] = [];
    for (let i = 0; i < REPEAT; i++) {
      const r = await syncOnce(body());
      samples.push(r);
      ticks = addTicks(ticks, r.ticks);
      runs[kind].push({ durationMs: r.run.durationMs, phases: r.run.phases, buildMs: Math.round(r.buildMs) });
      console.log(
        `  ${kind} ${i + 1}/${REPEAT}: ${r.totalMs.toFixed(0)} ms to COMPLETED (POST ${r.postMs.toFixed(0)} ms, ` +
          `run ${r.run.durationMs} ms: ${r.run.phases.map((p) => `${p.phase} ${p.durationMs}`).join(', ')}); ` +
          `build after it ${(r.buildMs / 1000).toFixed(1)} s`,
      );
    }
    results[kind] = {
      total: summary(
        samples.map((s) => s.totalMs),
        cpuOf(ticks, REPEAT),
      ),
      post: summary(samples.map((s) => s.postMs)),
      run: summary(samples.map((s) => s.run.durationMs)),
      build: summary(samples.map((s) => s.buildMs)),
      phases: Object.fromEntries(
        samples[0].run.phases.map((p, k) => [
          p.phase,
          median(samples.map((s) => s.run.phases[k].durationMs)),
        ]),
      ),
    };
  }

  // Report
  const f = (x, d = 0) => x.toFixed(d);
  const lines = [
    `| ${MODELS}-model sync | runs | median ms | p95 ms | min ms | max ms | server CPU ms/op | DB CPU ms/op | others' CPU |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [kind, r] of Object.entries(results)) {
    const t = r.total;
    lines.push(
      `| ${kind}: POST to COMPLETED (client) | ${t.runs} | ${f(t.medianMs)} | ${f(t.p95Ms)} | ${f(t.minMs)} | ${f(t.maxMs)} | ` +
        `${f(t.serverCpuMsPerOp)} | ${f(t.dbCpuMsPerOp)} | ${f(t.othersCpuPct)}% |`,
      `| ${kind}: the POST alone | ${r.post.runs} | ${f(r.post.medianMs)} | ${f(r.post.p95Ms)} | ${f(r.post.minMs)} | ${f(r.post.maxMs)} | | | |`,
      `| ${kind}: the run (durationMs) | ${r.run.runs} | ${f(r.run.medianMs)} | ${f(r.run.p95Ms)} | ${f(r.run.minMs)} | ${f(r.run.maxMs)} | | | |`,
      `| ${kind}: the build it queued (after) | ${r.build.runs} | ${f(r.build.medianMs)} | ${f(r.build.p95Ms)} | ${f(r.build.minMs)} | ${f(r.build.maxMs)} | | | |`,
    );
  }
  lines.push('', '| phase medians (ms) | ' + Object.keys(results).join(' | ') + ' |', '|---|---:|---:|');
  const phaseNames = [...new Set(Object.values(results).flatMap((r) => Object.keys(r.phases)))];
  for (const phase of phaseNames) {
    lines.push(
      `| ${phase} | ${Object.values(results)
        .map((r) => (r.phases[phase] === undefined ? '' : f(r.phases[phase])))
        .join(' | ')} |`,
    );
  }
  if (Object.values(results).some((r) => r.total.othersCpuPct > 10)) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some syncs: figures are disturbed.',
    );
  }
  console.log(`\n${lines.join('\n')}\n`);
  const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const memory = {
    rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024),
    peakRssMb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024),
  };
  console.log(`service: RSS ${memory.rssMb} MB at the end, peak ${memory.peakRssMb} MB; ${server.command}`);
  const {
    rows: [pgVersion],
  } = await db.query(`SELECT current_setting('server_version') AS v`);
  console.log(
    JSON.stringify({
      bench: 'dbt-sync',
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        memoryMb: Math.round(os.totalmem() / 2 ** 20),
        loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
        node: process.version,
        postgres: pgVersion.v,
        git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(),
      },
      build: { dist: SOURCE_DIST, stamp: buildStamp },
      options: {
        repeat: REPEAT,
        models: MODELS,
        warmup: WARMUP,
        pollMs: POLL_MS,
        poolSize: Number(POOL_SIZE),
      },
      manifest: { bytes: Buffer.byteLength(manifestText), postBodyBytes: Buffer.byteLength(manifestBody) },
      results,
      runs,
      memory,
      command: `node bench/dbt-sync.mjs --dist ${SOURCE_DIST} --repeat ${REPEAT} --models ${MODELS} --warmup ${WARMUP} --poll ${POLL_MS}`,
    }),
  );
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
