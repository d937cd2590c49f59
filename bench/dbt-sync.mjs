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
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  addTicks,
  api as request,
  benchOptions,
  copyBuild,
  cpuBetween,
  cpuPerOp,
  cpuSample,
  databaseName,
  deleteQueueKeys,
  deploymentBody,
  dropDatabase,
  median,
  migrateAndBootstrap,
  NO_TICKS,
  onInterrupt,
  positiveInt,
  productionEnv,
  recreateDatabase,
  removeDir,
  root,
  startService,
  stepper,
  stopAllServices,
  timingSummary as summary,
  wholeNumber,
} from './service.mjs';

const { values: args } = parseArgs({
  options: {
    ...benchOptions,
    repeat: { type: 'string', default: '5' },
    models: { type: 'string', default: '500' },
    warmup: { type: 'string', default: '1' },
    poll: { type: 'string', default: '20' },
  },
});
const REPEAT = positiveInt(args, 'repeat');
const MODELS = positiveInt(args, 'models');
const POLL_MS = positiveInt(args, 'poll');
const WARMUP = wholeNumber(args, 'warmup');

const SOURCE_DIST = args.dist;
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/modules/dbt-sync/dbt-sync.job.js'))) {
  throw new Error(`${SOURCE_DIST} has no dbt sync: build the current sources (npm run build)`);
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL =
  process.env.BENCH_DBT_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_dbt_${process.pid}`;
const dbName = databaseName(DATABASE_URL);
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';
const QUEUE_PREFIX = `bench-dbt-${process.pid}`;

const step = stepper();

// ---------------------------------------------------------------------------------------------
// Set-up and clean-up: a private copy of the build, a database, directories

const { dist: DIST, stamp: buildStamp } = copyBuild(SOURCE_DIST, 'dbt-dist');
const REPOS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dbt-repos-'));
const DBT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dbt-project-'));

let server = null;
let db = null;

let cleaned = false;
async function cleanUp() {
  if (cleaned) return;
  cleaned = true;
  await stopAllServices();
  await db?.end().catch(() => {});
  removeDir(DIST);
  removeDir(REPOS_DIR);
  removeDir(DBT_DIR);
  await deleteQueueKeys(REDIS_URL, QUEUE_PREFIX);
  if (!args['keep-db']) await dropDatabase(DATABASE_URL);
}
onInterrupt(cleanUp);

/** The built API, running its jobs (syncs, builds) in process through Bull. */
async function startServer() {
  const env = {
    ...productionEnv,
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
    env,
    hide: ['SECRETS_KEY'],
  });
}

/** CPU: the service's (with the children it reaped: git, the compiler), the database's, the machine's. */
const sample = () => cpuSample([server.pid], dbName, true);

// ---------------------------------------------------------------------------------------------
// The API

let token = null;
const api = (method, p, body, expect = 200) => request(server.base, method, p, body, { token, expect });
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
// Main

const results = {};
const runs = {};
let exitCode = 0;
try {
  step(`recreating the database ${dbName}`);
  await recreateDatabase(DATABASE_URL);
  step('migrating (cli migrate) and bootstrapping the admin (cli bootstrap)');
  token = migrateAndBootstrap(DIST, DATABASE_URL, {
    account: 'bench-dbt',
    email: 'admin@bench-dbt.test',
  }).token;
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
  const { id: D } = await api('POST', '/build/api/v1/deployments', deploymentBody('dbt sync bench'));
  const base = `/api/v1/deployments/${D}`;
  await api('PUT', `${base}/dbt-integration`, { repositoryUrl, branch: 'main' });

  /** Waits for the latest build of `branch` to finish (not timed); answers its wall time. */
  const built = async (branch) => {
    const t0 = performance.now();
    for (;;) {
      const s = await api('GET', `${base}/build-status?branchName=${encodeURIComponent(branch)}`);
      if (s.status === 'built') return performance.now() - t0;
      if (s.status !== 'queued' && s.status !== 'building' && s.status !== 'none')
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
    const ticks = cpuBetween(before, sample());
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
        cpuPerOp(ticks, REPEAT),
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
