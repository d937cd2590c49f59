// Measures fair shares under a flood (issue 26, item 1): with one account (A, the flooder) flooding
// one kind of expensive work, another account's (B, the victim) single request or job should finish
// within 2 times its time alone. Five kinds, each on the built service started for it alone (a
// database, REPOS_DIR and Redis queue prefix of its own, all removed when the kind ends), two
// accounts bootstrapped through the CLI (`bootstrap` with two slugs):
//
//   compiles       A: --compilers (8) dev-mode users each validate at once a model of their own
//                  that loops (`for (;;) {}` in a .js cube file) until MODEL_COMPILE_TIMEOUT_MS;
//                  B: GET data-model/validate?devMode=true of the 50-cube + 5-view model
//                  (bench/model-fixture.mjs) after a one-line change no compile has seen
//   python         A: its embed user fires --python-runs (8) runs of `while True: pass` at once (the
//                  run timeout kills them); B: its embed user's run of ordinary code over 100 rows
//                  (a new SQL each time, so no cached answer); PYTHON_POOL_SIZE as in production
//   dbt            A: --syncs (4) syncs from git on deployments of its own, against a loopback TCP
//                  server that accepts connections and never answers (https://127.0.0.2, opened
//                  by OUTBOUND_ALLOWED_HOSTS); B: a sync of a 20-model manifest from a local
//                  file:// repository (DBT_GIT_PROTOCOLS=https,file), POST to COMPLETED; the build
//                  it queues is waited for after each, untimed
//   builds         A: --builds (4) deployments, each a commit of a looping model on A's dev branch,
//                  then again once its build ended; B: a commit of a one-line change of the
//                  50-cube model, from the POST to build-status `built`
//   notifications  A: --notifications (6) notifications fired at once (their schedule's
//                  next_run_at set to now, again as each run ends); B: one notification's firing
//                  to its one delivery accepted by an SMTP server on loopback: the run rendered
//                  (Chromium, a data API on loopback), the email sent. Timed on PostgreSQL's clock,
//                  from the run's record (the firing) to the delivery's sent_at
//
// Per kind: B's operation once untimed (warm), then --samples (5) timed alone, each after --gap (8)
// seconds (as data-model.mjs's validate gap: a used compile child is replaced by a warm one
// meanwhile); then A's flood starts, --settle (3) seconds pass, and B's --samples are timed again
// while A floods; the flood then stops with the service. For the jobs, each sample also shows how
// long B's job was queued and how long it ran (its job run), and how many of A's were running and
// queued when it started. A's loops never wait for Retry-After: a
// refused request (429) is sent again --retry-ms (250) later, as a hostile client would. The figure
// of each is the median; the ratio is flood / alone, against the bound 2.
//
//   npx tsc -p tsconfig.build.json            # refreshes dist/ in place
//   node bench/fairness.mjs [--dist dist] [--kinds compiles,python,dbt,builds,notifications]
//        [--samples 5] [--gap 8] [--settle 3] [--retry-ms 250] [--compilers 8] [--python-runs 8]
//        [--syncs 4] [--builds 4] [--notifications 6] [--cubes 50] [--no-check] [--keep-db]
//
// Env: BENCH_FAIR_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_fair_<pid>; each
// kind's database is that name with `_<kind>`, DROPPED and recreated, migrated and bootstrapped
// through the build's CLI, dropped at the end), BENCH_REDIS_URL (default redis://127.0.0.1:6379;
// required: the queues and the caches; the keys of each kind's prefix bench-fair-<pid>-<kind> are
// deleted at the end), CHROMIUM_PATH, MODEL_COMPILE_POOL_SIZE and any other setting of the service
// (passed through from this environment). The build is copied to bench/results/ for the run.
//
// Prints a Markdown table (kind, B's operation, alone, under flood, ratio, the bound 2x), what A's
// flood did, and one JSON line. Exits 1 when a ratio exceeds 2 (unless --no-check) or on failure.
/* global fetch */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { changedCube, dmBase, modelFiles, upload, viewCount } from './model-fixture.mjs';
import {
  api as request,
  benchOptions,
  cliEnv,
  copyBuild,
  cpuBetween,
  cpuSample,
  databaseName,
  deleteQueueKeys,
  deploymentBody,
  dropDatabase,
  killAllServices,
  median,
  migrateAndBootstrap,
  onInterrupt,
  positiveInt,
  processTree,
  productionEnv,
  recreateDatabase,
  removeDir,
  root,
  startService,
  stepper,
  stopService,
  wholeNumber,
} from './service.mjs';

const ALL_KINDS = ['compiles', 'python', 'dbt', 'builds', 'notifications'];
const { values: args } = parseArgs({
  options: {
    ...benchOptions,
    kinds: { type: 'string', default: ALL_KINDS.join(',') },
    samples: { type: 'string', default: '5' },
    gap: { type: 'string', default: '8' },
    settle: { type: 'string', default: '3' },
    'retry-ms': { type: 'string', default: '250' },
    compilers: { type: 'string', default: '8' },
    'python-runs': { type: 'string', default: '8' },
    syncs: { type: 'string', default: '4' },
    builds: { type: 'string', default: '4' },
    notifications: { type: 'string', default: '6' },
    cubes: { type: 'string', default: '50' },
    'no-check': { type: 'boolean', default: false },
  },
});
const KINDS = args.kinds.split(',').map((k) => k.trim());
for (const k of KINDS) if (!ALL_KINDS.includes(k)) throw new Error(`--kinds: unknown kind ${k}`);
const SAMPLES = positiveInt(args, 'samples');
const GAP_MS = wholeNumber(args, 'gap') * 1000;
const SETTLE_MS = wholeNumber(args, 'settle') * 1000;
const RETRY_MS = wholeNumber(args, 'retry-ms');
const FLOOD = {
  compiles: positiveInt(args, 'compilers'),
  python: positiveInt(args, 'python-runs'),
  dbt: positiveInt(args, 'syncs'),
  builds: positiveInt(args, 'builds'),
  notifications: positiveInt(args, 'notifications'),
};
const CUBES = positiveInt(args, 'cubes');
const VIEWS = viewCount(CUBES);
const MODEL = modelFiles(CUBES);
/** Issue 26: B's time under A's flood at most this times its time alone. */
const BOUND = 2;

const SOURCE_DIST = args.dist;
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/core/limits/fair-share.js'))) {
  throw new Error(
    `${SOURCE_DIST} has no fair shares: build the current sources (npx tsc -p tsconfig.build.json)`,
  );
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!REDIS_URL) throw new Error('BENCH_REDIS_URL is empty: the service needs Redis here');
const DATABASE_URL =
  process.env.BENCH_FAIR_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_fair_${process.pid}`;
const databaseOf = (kind) => {
  const url = new URL(DATABASE_URL);
  url.pathname = `${url.pathname}_${kind}`;
  return url.toString();
};
for (const k of KINDS) databaseName(databaseOf(k)); // a plain name, or throw now
const SECRETS_KEY = process.env.SECRETS_KEY ?? randomBytes(32).toString('base64');
const SECRET = randomBytes(24).toString('hex');
/** The loopback address of the git remote that never answers (the outbound rule opens it alone). */
const HUNG_HOST = '127.0.0.2';

const step = stepper();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nonce = randomBytes(4).toString('hex');

/** Polls `fn` every `everyMs` until `done(value)`; throws after `timeoutMs` naming `what`. */
async function waitFor(what, fn, done, timeoutMs = 120_000, everyMs = 100) {
  const t0 = performance.now();
  for (;;) {
    const value = await fn();
    if (done(value)) return value;
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Set-up and clean-up: a private copy of the build, the fakes, and what each kind made

const { dist: DIST, stamp: buildStamp } = copyBuild(SOURCE_DIST, 'fairness-dist');
/** The checkout the build was presumably made from: its commit, and whether src/ or migrations/ differ from it. */
const checkout = (() => {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      sourcesChanged: git('status', '--porcelain', '--', 'src', 'migrations') !== '',
    };
  } catch {
    return null;
  }
})();
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fair-'));

/** The clean-ups of what is still there (a kind's, the fakes'), run once each, newest first. */
const cleanUps = [];
let cleaning = null;
const cleanUpAll = () =>
  (cleaning ??= (async () => {
    while (cleanUps.length > 0)
      await cleanUps
        .pop()()
        .catch((e) => console.warn(`clean-up: ${e.message}`));
    removeDir(DIST);
    removeDir(WORK);
  })());
/** Ctrl-C or an uncaught error: the services were killed at once, not stopped. */
let aborting = false;
const offInterrupt = onInterrupt(() => {
  aborting = true;
  return cleanUpAll();
});
// An error thrown outside the main flow (a timer's) ends the bench the same way, cleaned up.
process.once('uncaughtException', (error) => {
  console.error(error);
  aborting = true;
  killAllServices();
  cleanUpAll().finally(() => process.exit(1));
});

/** CLI processes running (bootstrap of more users), killed by the clean-up. */
const helpers = new Set();
cleanUps.push(async () => helpers.forEach((c) => c.kill('SIGKILL')));

/** The build's CLI, asynchronously (several at once); its last stdout line, parsed. */
const cliAsync = (databaseUrl, ...argv) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, DIST, 'src/cli.js'), ...argv], {
      cwd: root,
      env: cliEnv(databaseUrl),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    helpers.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => {
      helpers.delete(child);
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').pop()));
      else reject(new Error(`cli ${argv.join(' ')} failed (${code}):\n${err}${out}`));
    });
  });

/**
 * The processes below `pid` (pid and start time), for the clean-up: a sandboxed child whose
 * service was killed may be reparented away from it, out of the service's reach.
 */
function descendants(pid) {
  const all = new Map();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      all.set(p, { ppid: f[1], start: f[19] });
    } catch {
      /* gone */
    }
  }
  const found = [];
  const queue = [String(pid)];
  while (queue.length > 0) {
    const parent = queue.pop();
    for (const [p, x] of all) {
      if (x.ppid === parent) {
        found.push({ pid: Number(p), start: x.start });
        queue.push(p);
      }
    }
  }
  return found;
}
/** SIGKILLs those of `procs` still running (the same pid and start time; not zombies); answers their commands. */
function killLeftovers(procs) {
  const killed = [];
  for (const { pid, start } of procs) {
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      if (f[19] !== start || f[0] === 'Z') continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      process.kill(pid, 'SIGKILL');
      killed.push(`${pid} ${cmd.slice(0, 100)}`);
    } catch {
      /* gone */
    }
  }
  return killed;
}

// A data API on loopback: the SQL API's NDJSON for Python runs (100 rows), the REST load API's
// JSON for the dashboards of notifications (20 rows). Tokens are not checked.
const dataApi = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url.endsWith('/cubejs-api/v1/cubesql')) {
      const schema = [
        { name: 'id', column_type: 'Int64' },
        { name: 'city', column_type: 'Utf8' },
        { name: 'amount', column_type: 'Float64' },
      ];
      const data = Array.from({ length: 100 }, (_, i) => [i, `city-${i % 7}`, i * 1.5]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ schema })}\n${JSON.stringify({ data })}\n`);
      return;
    }
    const rows = Array.from({ length: 20 }, (_, i) => ({
      'Orders.status': `status-${i}`,
      'Orders.count': `${i * 7}`,
    }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: rows }));
  });
});

// An SMTP server on loopback that accepts every message.
let mailed = 0;
const smtp = new SMTPServer({
  logger: false,
  disabledCommands: ['STARTTLS'],
  authOptional: true,
  closeTimeout: 500,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      mailed += 1;
      callback();
    });
  },
});

// A git remote that accepts connections and never answers; its connections are cut at the end,
// so no git process of a killed service waits on one.
const hungSockets = new Set();
let hungConnections = 0;
const hung = net.createServer((socket) => {
  hungConnections += 1;
  hungSockets.add(socket);
  socket.resume();
  socket.on('error', () => undefined);
  socket.on('close', () => hungSockets.delete(socket));
});
let HUNG_URL = null;

/** Starts the fakes on loopback (closed by the clean-up). */
async function startFakes() {
  await new Promise((r) => dataApi.listen(0, '127.0.0.1', r));
  cleanUps.push(() => new Promise((r) => dataApi.close(r)));
  await new Promise((r) => smtp.listen(0, '127.0.0.1', r));
  cleanUps.push(() => new Promise((r) => smtp.close(r)));
  await new Promise((r) => hung.listen(0, HUNG_HOST, r));
  cleanUps.push(() => {
    for (const s of hungSockets) s.destroy();
    return new Promise((r) => hung.close(r));
  });
  HUNG_URL = `https://${HUNG_HOST}:${hung.address().port}/acme/dbt.git`;
}

// ---------------------------------------------------------------------------------------------
// A small dbt project in a local bare repository (B's syncs)

function dbtManifest(n) {
  const nodes = {};
  const columns = ['id', 'customer_id', 'status', 'amount'];
  for (let i = 0; i < n; i++) {
    const name = `model_${String(i).padStart(3, '0')}`;
    const uniqueId = `model.shop.${name}`;
    nodes[uniqueId] = {
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
      description: `Model ${i} of the project`,
      columns: Object.fromEntries(
        columns.map((c) => [
          c,
          {
            name: c,
            description: `The ${c}`,
            meta: {},
            data_type: null,
            constraints: [],
            quote: null,
            tags: [],
          },
        ]),
      ),
      meta: {},
      constraints: [],
      relation_name: `"analytics"."public"."${name}"`,
      raw_code: 'select 1',
      language: 'sql',
      depends_on: { macros: [], nodes: [] },
    };
    for (const test of ['unique', 'not_null']) {
      const testName = `${test}_${name}_id`;
      nodes[`test.shop.${testName}`] = {
        database: 'analytics',
        schema: 'public_dbt_test__audit',
        name: testName,
        resource_type: 'test',
        package_name: 'shop',
        path: `${testName}.sql`,
        original_file_path: 'models/marts/schema.yml',
        unique_id: `test.shop.${testName}`,
        fqn: ['shop', 'marts', testName],
        alias: testName,
        checksum: { name: 'none', checksum: '' },
        config: { enabled: true, materialized: 'test' },
        test_metadata: {
          name: test,
          kwargs: { column_name: 'id', model: "{{ get_where_subquery(ref('x')) }}" },
        },
        attached_node: uniqueId,
        column_name: 'id',
        depends_on: { macros: [`macro.dbt.test_${test}`], nodes: [uniqueId] },
      };
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

const SYNC_MODELS = 20;
/** The file:// URL of a bare repository whose `main` holds a dbt project with its manifest. */
function dbtRepository() {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.test',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.test',
  };
  const run = (cwd, ...a) => execFileSync('git', a, { cwd, env, encoding: 'utf8' });
  const bare = path.join(WORK, 'dbt.git');
  const work = path.join(WORK, 'dbt-work');
  run(WORK, 'init', '--bare', '--quiet', bare);
  fs.mkdirSync(path.join(work, 'target'), { recursive: true });
  run(work, 'init', '--quiet');
  fs.writeFileSync(path.join(work, 'dbt_project.yml'), 'name: shop\n');
  fs.writeFileSync(path.join(work, 'target/manifest.json'), JSON.stringify(dbtManifest(SYNC_MODELS)));
  run(work, 'add', '-A');
  run(work, 'commit', '--quiet', '-m', 'dbt project');
  run(work, 'push', '--quiet', bare, 'HEAD:refs/heads/main');
  return `file://${bare}`;
}

// ---------------------------------------------------------------------------------------------
// One kind: its service, accounts, B's operation and A's flood

/** The service's settings of each kind, beyond the shared ones. */
function kindEnv(kind) {
  switch (kind) {
    case 'compiles':
    case 'python':
      // No job runs in the API: the builds that uploads and new deployments queue stay queued.
      return { RUN_JOBS_IN_PROCESS: 'false' };
    case 'dbt':
      return {
        RUN_JOBS_IN_PROCESS: 'true',
        DBT_GIT_PROTOCOLS: 'https,file',
        OUTBOUND_ALLOWED_HOSTS: HUNG_HOST,
      };
    case 'builds':
      return { RUN_JOBS_IN_PROCESS: 'true' };
    case 'notifications':
      return {
        RUN_JOBS_IN_PROCESS: 'true',
        // The schedules' tick, so a forced firing starts within 0.2 s (the time is taken from it).
        OUTBOX_RELAY_INTERVAL_MS: '200',
        SMTP_URL: `smtp://127.0.0.1:${smtp.server.address().port}`,
        SMTP_FROM: 'Reports <reports@bench.test>',
        DASHBOARD_URL_TEMPLATE: 'https://console.bench.test/d/{publicId}',
        // Each firing is forced, whatever the cron says: no minimum interval between two.
        NOTIFICATION_MIN_INTERVAL_MINUTES: '1',
      };
  }
  throw new Error(kind);
}

/**
 * Runs one kind from scratch: database, service, accounts, B alone, B under A's flood; removes
 * everything it made. Answers the kind's figures.
 */
async function runKind(kind) {
  const databaseUrl = databaseOf(kind);
  const dbName = databaseName(databaseUrl);
  const queuePrefix = `bench-fair-${process.pid}-${kind}`;
  const reposDir = fs.mkdtempSync(path.join(WORK, `repos-${kind}-`));
  let server = null;
  let db = null;
  /** The service's descendants seen (pid:start), for the clean-up. */
  const leftovers = new Map();
  const remember = (procs) => {
    for (const x of procs) leftovers.set(`${x.pid}:${x.start}`, x);
    while (leftovers.size > 1000) leftovers.delete(leftovers.keys().next().value);
  };
  let watch = null;
  /** The service's CPU (processTree), polled during the timed windows. */
  let tree = null;
  let flood = null;
  let done = false;
  const cleanUp = async () => {
    if (done) return;
    done = true;
    clearInterval(watch);
    // Its polling reads the service's /proc entry, gone once the service is (Ctrl-C kills it first).
    tree?.stop();
    if (flood) flood.stop = true;
    const stopping = server !== null && server.child.exitCode === null && server.child.signalCode === null;
    if (server) remember(descendants(server.pid));
    await stopService(server, 15_000);
    if (stopping && !aborting && server.child.signalCode === 'SIGKILL') {
      console.log(`  [${kind}] the service did not end within 15 s of SIGTERM: killed`);
    }
    // Anything of the service left running (a sandboxed child reparented away from it).
    await sleep(500);
    const killed = killLeftovers(leftovers.values());
    if (killed.length > 0) {
      console.log(
        `  [${kind}] killed ${killed.length} process(es) the service left:\n    ${killed.join('\n    ')}`,
      );
    }
    await flood?.settled;
    await db?.end().catch(() => {});
    removeDir(reposDir);
    await deleteQueueKeys(REDIS_URL, queuePrefix);
    if (!args['keep-db']) await dropDatabase(databaseUrl);
  };
  cleanUps.push(cleanUp);

  try {
    step(`[${kind}] database ${dbName}: migrate, bootstrap accounts A and B (cli)`);
    await recreateDatabase(databaseUrl);
    const a = migrateAndBootstrap(DIST, databaseUrl, { account: 'fair-a', email: 'admin@fair-a.test' });
    const b = await cliAsync(databaseUrl, 'bootstrap', '--account', 'fair-b', '--email', 'admin@fair-b.test');
    // Dev mode is per user: each of A's looping compiles has a user (and a dev branch) of its own.
    const aUsers = [a.token];
    if (kind === 'compiles') {
      for (let i = 1; i < FLOOD.compiles; i += 4) {
        const batch = [];
        for (let j = i; j < Math.min(i + 4, FLOOD.compiles); j++) {
          batch.push(
            cliAsync(databaseUrl, 'bootstrap', '--account', 'fair-a', '--email', `flood-${j}@fair-a.test`),
          );
        }
        aUsers.push(...(await Promise.all(batch)).map((u) => u.token));
      }
    }
    // A pool: A's flood loops and B's sample query it at once.
    db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    db.on('error', (e) => console.warn(`database connection lost: ${e.message}`));

    step(`[${kind}] starting the service`);
    server = await startService({
      name: `the service (${kind})`,
      argv: [`${DIST}/src/main.js`],
      env: {
        ...productionEnv,
        REDIS_URL,
        QUEUE_PREFIX: queuePrefix,
        SECRETS_KEY,
        REPOS_DIR: reposDir,
        DATABASE_URL: databaseUrl,
        DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '10',
        DATA_API_URL_TEMPLATE: `http://127.0.0.1:${dataApi.address().port}`,
        ...kindEnv(kind),
      },
      hide: ['SECRETS_KEY'],
    });
    const pid = server.pid;
    watch = setInterval(() => remember(descendants(pid)), 1000);
    tree = processTree(pid);
    const ctx = { kind, server, db, a, b, aUsers };
    const plan = await SETUPS[kind](ctx);

    const window = async (label) => {
      const samples = [];
      const extra = [];
      const before = cpuSample([pid], dbName, tree);
      tree.start();
      for (let k = 0; k < SAMPLES; k++) {
        const index = `${label}-${k}`;
        await plan.prepare?.(index);
        await sleep(GAP_MS);
        const aRunning = plan.aBusy ? await plan.aBusy() : null;
        const ms = await plan.run(index);
        const detail = plan.detail ? await plan.detail() : null;
        await plan.after?.(index);
        samples.push(ms);
        extra.push({ a: aRunning, b: detail });
        console.log(
          `  [${kind}] ${label} ${k + 1}/${SAMPLES}: ${ms.toFixed(0)} ms` +
            (detail === null ? '' : ` (B's job ${detail})`) +
            (aRunning === null ? '' : ` (A's jobs at its start: ${aRunning})`),
        );
      }
      tree.stop();
      const t = cpuBetween(before, cpuSample([pid], dbName, tree));
      return {
        medianMs: median(samples),
        samplesMs: samples.map((x) => Math.round(x)),
        jobs: extra,
        serverCpuPct: (100 * t.server) / Math.max(1, t.total),
        othersCpuPct: (100 * t.others) / Math.max(1, t.total),
        loadAvg1m: Math.round(os.loadavg()[0] * 100) / 100,
      };
    };

    step(`[${kind}] B alone: 1 untimed, ${SAMPLES} timed (${GAP_MS / 1000} s before each)`);
    await plan.prepare?.('warm');
    await plan.run('warm');
    await plan.after?.('warm');
    const alone = await window('alone');

    step(`[${kind}] A floods (${plan.floodLabel}); ${SETTLE_MS / 1000} s, then B again`);
    flood = { stop: false, stats: {} };
    const count = (key) => (flood.stats[key] = (flood.stats[key] ?? 0) + 1);
    const loops = Array.from({ length: FLOOD[kind] }, async (_, i) => {
      for (let k = 0; !flood.stop; k++) {
        try {
          const outcome = await plan.floodOnce(i, k, flood);
          count(outcome);
          if (outcome.startsWith('429') || outcome.startsWith('503')) await sleep(RETRY_MS);
        } catch (e) {
          if (flood.stop) return;
          count(`error: ${e.message.slice(0, 120)}`);
          await sleep(500);
        }
      }
    });
    flood.settled = Promise.allSettled(loops);
    await sleep(SETTLE_MS);
    const underFlood = await window('flood');
    const floodStats = { ...flood.stats };
    const floodExtra = plan.floodSummary ? await plan.floodSummary() : null;
    flood.stop = true;
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      operation: plan.operation,
      flood: plan.floodLabel,
      alone,
      underFlood,
      ratio: underFlood.medianMs / alone.medianMs,
      floodAnswers: floodStats,
      floodExtra,
      service: server.command,
      peakRssMb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024),
    };
  } finally {
    await cleanUp();
    cleanUps.splice(cleanUps.indexOf(cleanUp), 1);
  }
}

// ---------------------------------------------------------------------------------------------
// The kinds

/** A JSON request answering { status, body } whatever the status (A's flood). */
async function call(base, method, p, body, token) {
  const res = await fetch(base + p, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

/** `<status>` or `<status> <code>` of an answer, to count A's outcomes. */
const outcomeOf = (res, ok) =>
  res.status === 200 ? ok : `${res.status}${res.body?.code ? ` ${res.body.code}` : ''}`;

/** A deployment of `token`'s account (its first build queued). */
const newDeployment = async (server, token, name) =>
  (await request(server.base, 'POST', '/build/api/v1/deployments', deploymentBody(name), { token })).id;

/** The latest build of a branch (default: the caller's dev branch, else the deploy branch). */
const buildStatus = (server, token, d, branch) =>
  request(
    server.base,
    'GET',
    `/api/v1/deployments/${d}/build-status${branch ? `?branchName=${encodeURIComponent(branch)}` : ''}`,
    undefined,
    { token },
  );

/** Waits until the latest build of the branch is not `buildJobId` `prev` and has ended; answers it. */
const buildEnded = (server, token, d, { branch, prev = null, timeoutMs = 600_000, everyMs = 100 } = {}) =>
  waitFor(
    `the build of ${branch ?? 'the dev branch'} of deployment ${d}`,
    () => buildStatus(server, token, d, branch),
    (s) => s.buildJobId != null && s.buildJobId !== prev && s.status !== 'queued' && s.status !== 'building',
    timeoutMs,
    everyMs,
  );

/** Jobs of account `accountId` running and queued (job_runs), as "r running, q queued". */
const jobsOf = async (db, accountId, job) => {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'running')::int AS running,
       count(*) FILTER (WHERE status = 'queued')::int AS queued
     FROM job_runs WHERE account_id = $1 AND job = $2`,
    [accountId, job],
  );
  return `${rows[0].running} running, ${rows[0].queued} queued`;
};

/** The latest job run of `job` of account `accountId`: how long it was queued and how long it ran. */
const jobTimes = async (db, accountId, job) => {
  const { rows } = await db.query(
    `SELECT extract(epoch FROM (started_at - created_at)) * 1000 AS queued,
       extract(epoch FROM (finished_at - started_at)) * 1000 AS ran
     FROM job_runs WHERE account_id = $1 AND job = $2 ORDER BY id DESC LIMIT 1`,
    [accountId, job],
  );
  const r = rows[0];
  return r ? `queued ${Math.round(Number(r.queued))} ms, ran ${Math.round(Number(r.ran))} ms` : 'none';
};

const LOOP_JS = (note) => `// ${note}\nfor (;;) {}\n`;

const SETUPS = {
  /** Compiles: A's looping validates on dev branches of its own; B's validate of a changed tree. */
  async compiles({ server, a, b, aUsers }) {
    const dA = await newDeployment(server, a.token, 'Flooder');
    for (const [i, token] of aUsers.entries()) {
      await request(server.base, 'POST', `${dmBase(dA)}/dev-mode`, {}, { token });
      await request(
        server.base,
        'PUT',
        `${dmBase(dA)}/data-model/files`,
        { files: [{ path: 'model/cubes/forever.js', content: LOOP_JS(`flood ${nonce} user ${i}`) }] },
        { token },
      );
    }
    const dB = await newDeployment(server, b.token, 'Victim');
    step(`[compiles] B's ${CUBES}-cube model (${MODEL.length} files) uploaded, B in dev mode`);
    await upload(server.base, b.token, dB, MODEL, 4);
    await request(server.base, 'POST', `${dmBase(dB)}/dev-mode`, {}, { token: b.token });
    return {
      operation: `validate of a changed ${CUBES}-cube + ${VIEWS}-view model (dev branch)`,
      floodLabel: `${FLOOD.compiles} validates at once of looping models, each on a dev branch of its own`,
      prepare: (index) =>
        request(
          server.base,
          'PUT',
          `${dmBase(dB)}/data-model/files`,
          { files: [changedCube(`fair ${nonce} ${index}`)] },
          { token: b.token },
        ),
      run: async () => {
        const t0 = performance.now();
        const v = await request(
          server.base,
          'GET',
          `${dmBase(dB)}/data-model/validate?devMode=true`,
          undefined,
          {
            token: b.token,
          },
        );
        const ms = performance.now() - t0;
        if (!v.valid || v.cubesCount !== CUBES + VIEWS)
          throw new Error(`B's validate: ${JSON.stringify(v).slice(0, 300)}`);
        return ms;
      },
      floodOnce: async (i) => {
        const res = await call(
          server.base,
          'GET',
          `${dmBase(dA)}/data-model/validate?devMode=true`,
          undefined,
          aUsers[i],
        );
        return outcomeOf(res, res.body?.valid === false ? '200 valid:false (stopped)' : '200');
      },
    };
  },

  /** Python runs: A's endless loops; B's ordinary run, a new SQL each time. */
  async python({ server, a, b }) {
    const CODE = [
      'total = sum(r["amount"] for r in rows)',
      'by_city = {}',
      'for r in rows:',
      '    by_city[r["city"]] = by_city.get(r["city"], 0) + r["amount"]',
      'output = {"total": total, "byCity": by_city}',
    ].join('\n');
    const target = async (token, name, pythonCode) => {
      const api = (method, p, body) => request(server.base, method, p, body, { token });
      const dep = await newDeployment(server, token, name);
      await api('PUT', `/api/v1/deployments/${dep}/env-vars`, {
        env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }],
      });
      await api('PUT', '/api/v1/tenant/settings', { pythonAnalysisEnabled: true });
      const { id: wb } = await api('POST', `/api/v1/deployments/${dep}/workbooks`, { name });
      const report = await api('POST', `/api/v1/deployments/${dep}/reports`, {
        name,
        workbookId: wb,
        sqlQuery: 'SELECT id, city, amount FROM orders',
        pythonCode,
      });
      const dashboard = await api('POST', `/api/v1/deployments/${dep}/workbooks/${wb}/publish`, {
        workbookId: wb,
        config: {},
      });
      await api('PUT', `/api/v1/deployments/${dep}/workbooks/${wb}/embed-access`, {
        allEmbedUsers: true,
        action: 'read',
      });
      const { sessionId } = await api('POST', '/api/v1/embed/generate-session', {
        deploymentId: dep,
        externalId: `viewer-${name}`,
        securityContext: { tenant: name },
      });
      const res = await fetch(`${server.base}/api/v1/embed/session/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId }),
      });
      const snapshot = dashboard.reportSnapshots.find((s) => s.reportId === report.id);
      return {
        path: `/api/v1/embed/dashboard/${dashboard.publicId}/python-run`,
        body: (sqlQuery) => ({ reportId: report.id, reportVersionId: snapshot.id, sqlQuery }),
        token: (await res.json()).token,
      };
    };
    const tA = await target(a.token, 'flooder', 'while True:\n    pass\n');
    const tB = await target(b.token, 'victim', CODE);
    return {
      operation: 'Python run over 100 rows (embed user)',
      floodLabel: `${FLOOD.python} endless-loop runs at once from A's embed user`,
      run: async (index) => {
        const t0 = performance.now();
        const answer = await request(
          server.base,
          'POST',
          tB.path,
          tB.body(`SELECT id, city, amount FROM orders -- fair ${nonce} ${index}`),
          { token: tB.token },
        );
        const ms = performance.now() - t0;
        if (
          answer.inputRowCount !== 100 ||
          answer.executionError ||
          typeof answer.outputData?.total !== 'number'
        )
          throw new Error(`B's run: ${JSON.stringify(answer).slice(0, 300)}`);
        return ms;
      },
      floodOnce: async (i, k) => {
        const res = await call(
          server.base,
          'POST',
          tA.path,
          tA.body(`SELECT id, city, amount FROM orders -- flood ${nonce} ${i} ${k}`),
          tA.token,
        );
        return outcomeOf(res, res.body?.executionError ? '200 stopped (executionError)' : '200');
      },
    };
  },

  /** dbt syncs: A's syncs from a remote that never answers; B's sync from a local repository. */
  async dbt({ server, db, a, b }) {
    const aDeps = [];
    for (let i = 0; i < FLOOD.dbt; i++) {
      const d = await newDeployment(server, a.token, `Flooder ${i}`);
      aDeps.push(d);
    }
    const dB = await newDeployment(server, b.token, 'Victim');
    step(`[dbt] the deployments' first builds`);
    for (const d of aDeps) await buildEnded(server, a.token, d, { branch: 'master' });
    await buildEnded(server, b.token, dB, { branch: 'master' });
    for (const d of aDeps) {
      await request(
        server.base,
        'PUT',
        `/api/v1/deployments/${d}/dbt-integration`,
        { repositoryUrl: HUNG_URL, branch: 'main' },
        { token: a.token },
      );
    }
    await request(
      server.base,
      'PUT',
      `/api/v1/deployments/${dB}/dbt-integration`,
      { repositoryUrl: dbtRepository(), branch: 'main' },
      { token: b.token },
    );
    const terminal = (s) => ['COMPLETED', 'FAILED', 'CANCELLED'].includes(String(s.status).toUpperCase());
    let branch = null;
    return {
      operation: `dbt sync of a ${SYNC_MODELS}-model manifest from a file:// repository, POST to COMPLETED`,
      floodLabel: `${FLOOD.dbt} syncs at once from a remote that accepts connections and never answers`,
      aBusy: () => jobsOf(db, a.accountId, 'dbt-sync.run'),
      detail: () => jobTimes(db, b.accountId, 'dbt-sync.run'),
      run: async (index) => {
        const t0 = performance.now();
        const started = await request(
          server.base,
          'POST',
          `/api/v1/deployments/${dB}/dbt-sync`,
          { branchName: `dbt-fair-${nonce}-${index}` },
          { token: b.token },
        );
        const s = await waitFor(
          `B's sync ${started.syncJobId}`,
          () =>
            request(
              server.base,
              'GET',
              `/api/v1/deployments/${dB}/dbt-sync/${started.syncJobId}`,
              undefined,
              { token: b.token },
            ),
          terminal,
          600_000,
          20,
        );
        const ms = performance.now() - t0;
        if (s.status !== 'COMPLETED') throw new Error(`B's sync: ${JSON.stringify(s).slice(0, 300)}`);
        branch = started.branchName;
        return ms;
      },
      // The build the sync queued, untimed, so none runs during the next sample.
      after: async () => {
        const s = await buildEnded(server, b.token, dB, { branch });
        if (s.status !== 'built') throw new Error(`the build after B's sync: ${s.status} ${s.errorText}`);
      },
      floodOnce: async (i, k, flood) => {
        const d = aDeps[i];
        const res = await call(
          server.base,
          'POST',
          `/api/v1/deployments/${d}/dbt-sync`,
          { branchName: `dbt-flood-${nonce}-${i}-${k}` },
          a.token,
        );
        if (res.status !== 200) return outcomeOf(res, '200');
        const s = await waitFor(
          `A's sync ${res.body.syncJobId}`,
          () =>
            request(
              server.base,
              'GET',
              `/api/v1/deployments/${d}/dbt-sync/${res.body.syncJobId}`,
              undefined,
              { token: a.token },
            ),
          (x) => flood.stop || terminal(x),
          30 * 60_000,
          500,
        );
        return `sync ${String(s.status).toUpperCase()}`;
      },
      floodSummary: async () => ({
        aJobs: await jobsOf(db, a.accountId, 'dbt-sync.run'),
        hungConnections,
      }),
    };
  },

  /** Builds: A's commits of looping models on several deployments; B's commit's build. */
  async builds({ server, db, a, b }) {
    const aDeps = [];
    for (let i = 0; i < FLOOD.builds; i++) aDeps.push(await newDeployment(server, a.token, `Flooder ${i}`));
    const dB = await newDeployment(server, b.token, 'Victim');
    step(`[builds] the deployments' first builds; B's ${CUBES}-cube model uploaded and built`);
    for (const d of aDeps) await buildEnded(server, a.token, d, { branch: 'master' });
    await buildEnded(server, b.token, dB, { branch: 'master' });
    const first = await buildStatus(server, b.token, dB, 'master');
    await upload(server.base, b.token, dB, MODEL, 4);
    const built = await buildEnded(server, b.token, dB, { branch: 'master', prev: first.buildJobId });
    if (built.status !== 'built') throw new Error(`B's model did not build: ${built.errorText}`);
    for (const d of aDeps)
      await request(server.base, 'POST', `${dmBase(d)}/dev-mode`, {}, { token: a.token });
    await request(server.base, 'POST', `${dmBase(dB)}/dev-mode`, {}, { token: b.token });
    let prev = null;
    return {
      operation: `build of a commit of a changed ${CUBES}-cube model, POST commit to \`built\``,
      floodLabel: `commits of looping models on ${FLOOD.builds} deployments, each again once its build ended`,
      aBusy: () => jobsOf(db, a.accountId, 'deployment.build'),
      detail: () => jobTimes(db, b.accountId, 'deployment.build'),
      prepare: async (index) => {
        await request(
          server.base,
          'PUT',
          `${dmBase(dB)}/data-model/files`,
          { files: [changedCube(`fair ${nonce} ${index}`)] },
          { token: b.token },
        );
        prev = (await buildStatus(server, b.token, dB)).buildJobId ?? null;
      },
      run: async () => {
        const t0 = performance.now();
        await request(server.base, 'POST', `${dmBase(dB)}/commit`, {}, { token: b.token });
        const s = await buildEnded(server, b.token, dB, { prev, everyMs: 50 });
        const ms = performance.now() - t0;
        if (s.status !== 'built') throw new Error(`B's build: ${s.status} ${s.errorText}`);
        return ms;
      },
      floodOnce: async (i, k, flood) => {
        const d = aDeps[i];
        const before = (await buildStatus(server, a.token, d)).buildJobId ?? null;
        const write = await call(
          server.base,
          'PUT',
          `${dmBase(d)}/data-model/files`,
          { files: [{ path: 'model/cubes/forever.js', content: LOOP_JS(`flood ${nonce} ${i} ${k}`) }] },
          a.token,
        );
        if (write.status !== 200) return `write ${outcomeOf(write, '200')}`;
        const commit = await call(server.base, 'POST', `${dmBase(d)}/commit`, {}, a.token);
        if (commit.status !== 200) return `commit ${outcomeOf(commit, '200')}`;
        const s = await waitFor(
          `A's build on deployment ${d}`,
          async () => (flood.stop ? { status: 'stopped', buildJobId: -1 } : buildStatus(server, a.token, d)),
          (x) =>
            x.buildJobId != null &&
            x.buildJobId !== before &&
            x.status !== 'queued' &&
            x.status !== 'building',
          30 * 60_000,
          500,
        );
        return `build ${s.status}`;
      },
      floodSummary: async () => ({ aJobs: await jobsOf(db, a.accountId, 'deployment.build') }),
    };
  },

  /** Notifications: A's notifications fired at once, again as each run ends; B's one firing. */
  async notifications({ server, db, a, b }) {
    const setUp = async (token, name, count) => {
      const api = (method, p, body) => request(server.base, method, p, body, { token });
      const dep = await newDeployment(server, token, name);
      await api('PUT', `/api/v1/deployments/${dep}/env-vars`, {
        env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }],
      });
      const wb = (await api('POST', `/api/v1/deployments/${dep}/workbooks`, { name })).id;
      const report = await api('POST', `/api/v1/deployments/${dep}/reports`, {
        name: 'Orders by status',
        workbookId: wb,
        jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
      });
      const dashboard = await api('POST', `/api/v1/deployments/${dep}/workbooks/${wb}/publish`, {
        workbookId: wb,
        title: `${name} dashboard`,
        config: {
          widgets: [
            { id: 'w', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { reportId: report.id } },
          ],
        },
      });
      const owners = [];
      for (let i = 0; i < count; i++) {
        const n = await api('POST', `/api/v1/deployments/${dep}/notifications`, {
          dashboardId: dashboard.id,
          scheduleType: 'DAILY',
          hour: 3,
        });
        await api('POST', `/api/v1/deployments/${dep}/notifications/${n.id}/recipients`, {
          recipients: [{ type: 'EMBED_USER', embedTenantName: name, externalId: `reader${i}@${name}.test` }],
        });
        owners.push(`notification:${n.id}`);
      }
      return owners;
    };
    const aOwners = await setUp(a.token, 'flooder', FLOOD.notifications);
    const [bOwner] = await setUp(b.token, 'victim', 1);
    const lastRun = async (owner) =>
      (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM job_runs WHERE owner = $1`, [owner]))
        .rows[0].id;
    const fire = (owner) =>
      db.query(`UPDATE job_schedules SET next_run_at = now() - interval '1 second' WHERE owner = $1`, [
        owner,
      ]);
    let before = null;
    return {
      operation: 'notification run (render, PDF, one email), firing to sent (PostgreSQL clock)',
      floodLabel: `${FLOOD.notifications} notifications fired at once, each again once its run ended`,
      aBusy: () => jobsOf(db, a.accountId, 'notification.run'),
      detail: () => jobTimes(db, b.accountId, 'notification.run'),
      prepare: async () => {
        before = await lastRun(bOwner);
      },
      run: async () => {
        await fire(bOwner);
        const row = await waitFor(
          "B's notification run",
          async () =>
            (
              await db.query(
                `SELECT jr.id, jr.status, min(r.status) AS "runStatus", count(d.id)::int AS total,
                   count(d.id) FILTER (WHERE d.status = 'sent')::int AS sent,
                   count(d.id) FILTER (WHERE d.status IN ('failed', 'unknown'))::int AS bad,
                   extract(epoch FROM (max(d.sent_at) - jr.created_at)) * 1000 AS ms
                 FROM job_runs jr LEFT JOIN notification_runs r ON r.job_run_id = jr.id
                   LEFT JOIN notification_deliveries d ON d.run_id = r.id
                 WHERE jr.owner = $1 AND jr.id > $2::bigint GROUP BY jr.id ORDER BY jr.id DESC LIMIT 1`,
                [bOwner, before],
              )
            ).rows[0],
          (r) =>
            r !== undefined &&
            (r.status === 'failed' ||
              r.runStatus === 'skipped' ||
              r.bad > 0 ||
              (r.total > 0 && r.sent === r.total)),
          600_000,
          50,
        );
        if (row.status === 'failed' || row.runStatus === 'skipped' || row.bad > 0)
          throw new Error(`B's run: ${JSON.stringify(row)}`);
        return Number(row.ms);
      },
      floodOnce: async (i, _k, flood) => {
        const owner = aOwners[i];
        const last = await lastRun(owner);
        await fire(owner);
        const row = await waitFor(
          `A's notification run (${owner})`,
          async () =>
            flood.stop
              ? { status: 'stopped' }
              : (
                  await db.query(
                    `SELECT status FROM job_runs WHERE owner = $1 AND id > $2::bigint ORDER BY id DESC LIMIT 1`,
                    [owner, last],
                  )
                ).rows[0],
          (r) => r !== undefined && !['queued', 'running'].includes(r.status),
          30 * 60_000,
          200,
        );
        return `run ${row.status}`;
      },
      floodSummary: async () => ({
        aJobs: await jobsOf(db, a.accountId, 'notification.run'),
        mailed,
      }),
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Main

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
let exitCode = 0;
try {
  step(
    `build ${SOURCE_DIST} (stamp ${buildStamp ?? 'none'}; checkout ${checkout?.commit ?? '?'}` +
      `${checkout?.sourcesChanged ? ', sources changed since' : ''}) copied to ${DIST}`,
  );
  await startFakes();
  const results = {};
  for (const kind of KINDS) results[kind] = await runKind(kind);

  const lines = [
    '| kind | B\u2019s request or job | alone (median) | under A\u2019s flood (median) | ratio | bound | result |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const [kind, r] of Object.entries(results)) {
    r.pass = r.ratio <= BOUND;
    lines.push(
      `| ${kind} | ${r.operation} | ${fmt(r.alone.medianMs)} | ${fmt(r.underFlood.medianMs)} | ` +
        `${r.ratio.toFixed(2)} | ${BOUND.toFixed(0)}\u00d7 | ${r.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  lines.push(
    '',
    '| kind | A\u2019s flood | its outcomes meanwhile | samples alone / under flood (ms) | others\u2019 CPU (load, 1 min) alone / flood |',
    '|---|---|---|---|---|',
  );
  for (const [kind, r] of Object.entries(results)) {
    const outcomes = Object.entries(r.floodAnswers)
      .map(([k, n]) => `${k}: ${n}`)
      .join('; ');
    lines.push(
      `| ${kind} | ${r.flood} | ${outcomes || '-'}${r.floodExtra ? `; at the end: ${JSON.stringify(r.floodExtra)}` : ''} | ` +
        `${r.alone.samplesMs.join(', ')} / ${r.underFlood.samplesMs.join(', ')} | ` +
        `${r.alone.othersCpuPct.toFixed(0)}% (${r.alone.loadAvg1m}) / ${r.underFlood.othersCpuPct.toFixed(0)}% (${r.underFlood.loadAvg1m}) |`,
    );
  }
  if (Object.values(results).some((r) => Math.max(r.alone.othersCpuPct, r.underFlood.othersCpuPct) > 10)) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some windows: figures are disturbed.',
    );
  }
  console.log(`\n${lines.join('\n')}\n`);
  for (const [kind, r] of Object.entries(results))
    console.log(`${kind}: peak RSS ${r.peakRssMb} MB; ${r.service}`);

  const failed = Object.entries(results).filter(([, r]) => !r.pass);
  const command =
    `node bench/fairness.mjs --dist ${SOURCE_DIST} --kinds ${KINDS.join(',')} --samples ${SAMPLES}` +
    ` --gap ${GAP_MS / 1000} --settle ${SETTLE_MS / 1000} --retry-ms ${RETRY_MS} --compilers ${FLOOD.compiles}` +
    ` --python-runs ${FLOOD.python} --syncs ${FLOOD.dbt} --builds ${FLOOD.builds}` +
    ` --notifications ${FLOOD.notifications} --cubes ${CUBES}${args['no-check'] ? ' --no-check' : ''}`;
  console.log(
    JSON.stringify({
      bench: 'fairness',
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        memoryMb: Math.round(os.totalmem() / 2 ** 20),
        loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
        node: process.version,
      },
      build: { dist: SOURCE_DIST, stamp: buildStamp, checkout },
      command,
      bound: BOUND,
      kinds: results,
      pass: failed.length === 0,
    }),
  );
  if (failed.length > 0) {
    console.log(`over the bound: ${failed.map(([k, r]) => `${k} (${r.ratio.toFixed(2)})`).join(', ')}`);
    if (!args['no-check']) exitCode = 1;
  }
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  offInterrupt();
  await cleanUpAll();
}
process.exit(exitCode);
