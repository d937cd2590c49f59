// Benchmarks whether the API keeps serving while data models compile (issue 25): get-report latency
// under a modest fixed load of autocannon, idle, then while --compilers loops compile continuously,
// on real PostgreSQL and Redis, a fresh REPOS_DIR and a database of its own.
//   - get report  GET /api/v1/deployments/:d/reports/:id, a random id of the reports seeded by
//                 bench/seed.mjs (--reports, a small dataset; into this bench's own database)
//   - a compile   one loop per compiling user, each on a dev branch of its own (8 users of the same
//                 deployment, each in dev mode): write a one-line change of a cube (a tree no compile
//                 has seen, so no verdict cache answers), then GET data-model/validate?devMode=true
//                 of the generated 50-cube + 5-view model (bench/model-fixture.mjs, as data-model.mjs)
//
//   npm run build
//   node bench/compile-load.mjs [--dist dist] [--before .build/old] [--connections 8] [--duration 10]
//        [--rate <req/s>] [--warmup 3] [--settle 3] [--rounds 1] [--compilers 8] [--cubes 50]
//        [--reports 10000] [--keep-db]
//
// --dist         the build to run (default BENCH_DIST, else dist); copied to
//                bench/results/.cl-current-<pid> for the duration, as run.mjs does
// --before       an earlier build (e.g. .build/old) measured the same way in the same invocation,
//                first, on a database, REPOS_DIR and queue prefix of its own; shown side by side
// --connections  autocannon connections (default 8)
// --duration     seconds of each window, idle and loaded (default 10)
// --rate         requests per second over all connections (autocannon's overallRate); default
//                none: each connection sends its next request when the answer arrives (as run.mjs)
// --warmup       seconds of get-report before the first window, not measured (default 3)
// --settle       seconds the compile loops run before the loaded window opens (default 3), so the
//                window sees compiles in flight, not their start
// --rounds       idle then loaded windows, repeated (default 1; the figures are medians over them)
// --compilers    compile loops at once (default 8)
// --cubes        cubes of the model (default 50; one view per ten)
// --reports      reports seeded for get-report (default 10000; folders: one per hundred reports)
// --keep-db      keep the databases at the end (they are dropped by default)
//
// Env: BENCH_CL_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_cl_<pid>; the
// --before build's is the same name with `_before`; DROPPED and recreated and seeded by
// bench/seed.mjs through the build's CLI, dropped at the end), BENCH_REDIS_URL (default
// redis://127.0.0.1:6379; required: with Redis and RUN_JOBS_IN_PROCESS=false the API runs no jobs;
// the keys under the run's prefix, bench-cl-<pid> or bench-cl-<pid>-before, queues and cached
// verdicts, are deleted at the end), DATABASE_POOL_SIZE (default 10). The compiler runs with the
// service's defaults; MODEL_COMPILE_POOL_SIZE, when set, is passed to both builds (a build that
// does not know it ignores it).
//
// Per window: autocannon's requests/s (2xx), p50 and p99; the service's CPU (the API process and
// every process below it: the compile children, git) and the others' as shares of the machine
// ("others" above 10%: disturbed). Loaded: the compiles completed inside the window (answers that
// arrived in it), their median time, and the compiles per minute over the whole time the loops ran.
// Checks the target on the --dist build: get-report p99 loaded <= 2 x idle.
// Prints a Markdown table (both builds side by side with --before), the target, and one JSON line.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { changedCube, dmBase, modelFiles, upload, viewCount } from './model-fixture.mjs';
import {
  api,
  benchOptions,
  copyBuild,
  cpuBetween,
  cpuSample,
  databaseName,
  deleteQueueKeys,
  deploymentBody,
  dropDatabase,
  median,
  onInterrupt,
  positiveInt,
  processTree,
  queuedBuildsEnv,
  removeDir,
  root,
  startService,
  stepper,
  stopAllServices,
  wholeNumber,
} from './service.mjs';

const { values: args } = parseArgs({
  options: {
    ...benchOptions,
    before: { type: 'string' },
    connections: { type: 'string', default: '8' },
    duration: { type: 'string', default: '10' },
    rate: { type: 'string' },
    warmup: { type: 'string', default: '3' },
    settle: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '1' },
    compilers: { type: 'string', default: '8' },
    cubes: { type: 'string', default: '50' },
    reports: { type: 'string', default: '10000' },
  },
});
const CONNECTIONS = positiveInt(args, 'connections');
const DURATION = positiveInt(args, 'duration');
const RATE = args.rate === undefined ? null : positiveInt(args, 'rate');
const WARMUP = wholeNumber(args, 'warmup');
const SETTLE = wholeNumber(args, 'settle');
const ROUNDS = positiveInt(args, 'rounds');
const COMPILERS = positiveInt(args, 'compilers');
const CUBES = positiveInt(args, 'cubes');
const VIEWS = viewCount(CUBES);
const REPORTS = positiveInt(args, 'reports');
const MODEL = modelFiles(CUBES);
/** Issue 25: get-report p99 while the compiles run, at most this times the idle p99. */
const P99_LIMIT = 2;

const BUILDS = [
  ...(args.before ? [{ label: 'before', source: args.before }] : []),
  { label: 'current', source: args.dist },
];
for (const { source } of BUILDS) {
  if (!fs.existsSync(path.join(root, source, 'src/main.js'))) {
    throw new Error(`${source}/src/main.js is missing: build first (npm run build, or tsc --outDir)`);
  }
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!REDIS_URL) throw new Error('BENCH_REDIS_URL is empty: the service needs Redis to run no jobs');
const DATABASE_URL =
  process.env.BENCH_CL_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_cl_${process.pid}`;
const databaseOf = (label) => {
  if (label === 'current') return DATABASE_URL;
  const url = new URL(DATABASE_URL);
  url.pathname = `${url.pathname}_${label}`;
  return url.toString();
};
for (const { label } of BUILDS) databaseName(databaseOf(label)); // a plain name, or throw now
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';

const step = stepper();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Clean-up: every build registers what it made and removes it when it ends; whatever is left (an
// error, Ctrl-C) goes here.

const cleanUps = new Set();
/** The seed and CLI processes running (the services are the harness's to stop). */
const helpers = new Set();
const cleanUpAll = async () => {
  for (const child of helpers) child.kill('SIGKILL');
  for (const c of [...cleanUps]) await c();
};
const offInterrupt = onInterrupt(cleanUpAll);

/** Runs `node argv` in the root with `env` added; resolves with its stdout, rejects with its output. */
const run = (argv, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    helpers.add(child);
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      helpers.delete(child);
      if (code === 0) resolve(out);
      else reject(new Error(`node ${argv.join(' ')} failed (${code}):\n${out}`));
    });
  });

/** The CLI of the build `dist` on `databaseUrl` (as service.mjs's cli, but not blocking). */
const cli = async (dist, databaseUrl, ...argv) => {
  const out = await run([path.join(dist, 'src/cli.js'), ...argv], {
    DATABASE_URL: databaseUrl,
    REDIS_URL: '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
  });
  return JSON.parse(out.trim().split('\n').pop());
};

/** Waits until the processes of `tree` (processTree) have used next to no CPU for 400 ms (at most 30 s). */
async function waitIdle(tree) {
  let last = tree.ticks();
  let quiet = 0;
  for (let i = 0; i < 150 && quiet < 2; i++) {
    await sleep(200);
    const now = tree.ticks();
    quiet = now - last <= 2 ? quiet + 1 : 0;
    last = now;
  }
}

// ---------------------------------------------------------------------------------------------
// One build

/**
 * Measures the build `source` (`label`: current or before) from scratch: a private copy, a fresh
 * seeded database, REPOS_DIR and queue prefix, the service started, the windows, everything removed.
 */
async function benchBuild({ label, source }) {
  const databaseUrl = databaseOf(label);
  const dbName = databaseName(databaseUrl);
  const queuePrefix = label === 'current' ? `bench-cl-${process.pid}` : `bench-cl-${process.pid}-${label}`;
  const { dist, stamp } = copyBuild(source, `cl-${label}`);
  // REPOS_DIR and the seed's state (kept apart from run.mjs's bench/.state.json).
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cl-'));
  const reposDir = path.join(work, 'repos');
  const stateFile = path.join(work, 'state.json');

  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await stopAllServices();
    removeDir(dist);
    removeDir(work);
    await deleteQueueKeys(REDIS_URL, queuePrefix);
    if (!args['keep-db']) await dropDatabase(databaseUrl);
  };
  cleanUps.add(cleanUp);

  try {
    // The reports of get-report: seed.mjs on this database (recreated, migrated, bootstrapped).
    step(`[${label}] seeding ${dbName} (bench/seed.mjs --reports ${REPORTS})`);
    await run(
      ['bench/seed.mjs', '--reports', String(REPORTS), '--folders', String(Math.ceil(REPORTS / 100))],
      {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_DIST: dist,
        BENCH_STATE_FILE: stateFile,
      },
    );
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    // One user per compile loop, in the seeded account: dev mode is per user, so each has a dev
    // branch of its own on the same deployment (bootstrap makes an Admin and issues a token).
    step(`[${label}] ${COMPILERS} compiling users (cli bootstrap)`);
    const users = [];
    for (let i = 0; i < COMPILERS; i += 4) {
      const batch = Array.from({ length: Math.min(4, COMPILERS - i) }, (_, j) =>
        cli(dist, databaseUrl, 'bootstrap', '--account', 'bench', '--email', `compile-${i + j}@bench.test`),
      );
      users.push(...(await Promise.all(batch)).map((u) => u.token));
    }

    step(`[${label}] starting the service (${source}, REPOS_DIR ${reposDir})`);
    const server = await startService({
      name: `the service (${label})`,
      argv: [`${dist}/src/main.js`],
      // The build an upload queues stays queued: no job runs in the API during the windows.
      env: queuedBuildsEnv({ redisUrl: REDIS_URL, queuePrefix, reposDir, databaseUrl, poolSize: POOL_SIZE }),
      hide: ['SECRETS_KEY'],
    });
    // The service's CPU: the API and every process below it, the sandboxed compile children too.
    const tree = processTree(server.pid);
    const admin = state.token;
    const deployment = deploymentBody('Compile load');
    const D = (await api(server.base, 'POST', '/build/api/v1/deployments', deployment, { token: admin })).id;
    step(`[${label}] committing the ${CUBES}-cube model (${MODEL.length} files) to the deploy branch`);
    await upload(server.base, admin, D, MODEL, 1);
    for (const token of users) await api(server.base, 'POST', `${dmBase(D)}/dev-mode`, {}, { token });

    // The compile loops. Each change names the run, the loop and a counter: a tree seen by no compile.
    const nonce = randomBytes(4).toString('hex');
    const compiles = []; // { loop, end, ms, ok, error? }
    let stop = false;
    const compileOnce = async (loop, k) => {
      const token = users[loop];
      const change = changedCube(`load ${nonce} ${loop} ${k}`);
      await api(server.base, 'PUT', `${dmBase(D)}/data-model/files`, { files: [change] }, { token });
      const t0 = performance.now();
      try {
        const v = await api(server.base, 'GET', `${dmBase(D)}/data-model/validate?devMode=true`, undefined, {
          token,
        });
        const ok = v.valid && v.cubesCount === CUBES + VIEWS;
        const error = ok ? undefined : JSON.stringify(v.errors ?? v).slice(0, 300);
        return { loop, end: performance.now(), ms: performance.now() - t0, ok, error };
      } catch (e) {
        return { loop, end: performance.now(), ms: performance.now() - t0, ok: false, error: e.message };
      }
    };
    const loop = async (i) => {
      try {
        for (let k = 0; !stop; k++) {
          const c = await compileOnce(i, k);
          compiles.push(c);
          if (!c.ok) await sleep(200); // a refusal (503...) does not turn into a busy loop
        }
      } catch (e) {
        stop = true; // a write failed: the bench fails, and the other loops stop too
        throw e;
      }
    };

    // One compile, alone and untimed: the path works, and the compiler is loaded (its children
    // warm, where they stay). A compile failing under load later is counted, not fatal.
    step(`[${label}] checking that a dev branch compiles (one compile, untimed)`);
    const first = await compileOnce(0, -1);
    if (!first.ok) throw new Error(`the dev-branch validate failed: ${first.error}`);

    // get report, a random id of the seeded range per request (as run.mjs's get scenario).
    const span = state.maxReportId - state.minReportId + 1;
    const reports = `/api/v1/deployments/${state.deploymentId}/reports`;
    await api(server.base, 'GET', `${reports}/${state.minReportId}`, undefined, { token: admin });
    const window = async (seconds) => {
      const before = cpuSample([server.pid], dbName, tree);
      tree.start();
      const result = await autocannon({
        url: server.base,
        connections: CONNECTIONS,
        duration: seconds,
        ...(RATE ? { overallRate: RATE } : {}),
        headers: { authorization: `Bearer ${admin}` },
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => ({
              ...req,
              path: `${reports}/${state.minReportId + Math.floor(Math.random() * span)}`,
            }),
          },
        ],
      });
      tree.stop();
      const t = cpuBetween(before, cpuSample([server.pid], dbName, tree));
      return {
        rps: result['2xx'] / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        requests: result.requests.total,
        non2xx: result.non2xx + result.errors + result.timeouts,
        serverCpuPct: (100 * t.server) / Math.max(1, t.total),
        othersCpuPct: (100 * t.others) / Math.max(1, t.total),
      };
    };

    step(`[${label}] waiting for the service to be idle, then ${WARMUP} s of get-report warm-up`);
    await waitIdle(tree);
    if (WARMUP > 0) await window(WARMUP);
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      await waitIdle(tree);
      const idle = await window(DURATION);
      console.log(
        `  [${label}] round ${r + 1} idle:   ${idle.rps.toFixed(0)} req/s, p50 ${idle.p50} ms, p99 ${idle.p99} ms, ` +
          `service CPU ${idle.serverCpuPct.toFixed(0)}%, others ${idle.othersCpuPct.toFixed(0)}%`,
      );
      // Loaded: the loops start, settle, the window, then they stop after their compile in flight.
      stop = false;
      const from = compiles.length;
      const loopsStart = performance.now();
      const loops = users.map((_, i) => loop(i));
      await sleep(SETTLE * 1000);
      const w0 = performance.now();
      const loaded = await window(DURATION);
      const w1 = performance.now();
      stop = true;
      await Promise.all(loops);
      const loopsMs = performance.now() - loopsStart;
      const all = compiles.slice(from);
      const inWindow = all.filter((c) => c.end >= w0 && c.end <= w1);
      loaded.compilesInWindow = inWindow.filter((c) => c.ok).length;
      loaded.failedInWindow = inWindow.filter((c) => !c.ok).length;
      loaded.compileMedianMs = inWindow.some((c) => c.ok)
        ? median(inWindow.filter((c) => c.ok).map((c) => c.ms))
        : null;
      loaded.compilesPerMinute = (all.filter((c) => c.ok).length / loopsMs) * 60_000;
      loaded.failed = all.filter((c) => !c.ok).length;
      loaded.firstError = all.find((c) => !c.ok)?.error ?? null;
      console.log(
        `  [${label}] round ${r + 1} loaded: ${loaded.rps.toFixed(0)} req/s, p50 ${loaded.p50} ms, p99 ${loaded.p99} ms, ` +
          `service CPU ${loaded.serverCpuPct.toFixed(0)}%, others ${loaded.othersCpuPct.toFixed(0)}%; ` +
          `${loaded.compilesInWindow} compiles in the window (median ${loaded.compileMedianMs?.toFixed(0) ?? '-'} ms), ` +
          `${loaded.compilesPerMinute.toFixed(1)}/min over ${(loopsMs / 1000).toFixed(0)} s` +
          (loaded.failed ? `; ${loaded.failed} failed: ${loaded.firstError}` : ''),
      );
      rounds.push({ idle, loaded });
    }
    const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    return {
      build: { dist: source, stamp },
      service: server.command,
      peakRssMb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024),
      dataset: state.stats,
      rounds,
    };
  } finally {
    await cleanUp();
    cleanUps.delete(cleanUp);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

let exitCode = 0;
try {
  const runs = {};
  for (const build of BUILDS) runs[build.label] = await benchBuild(build);
  const labels = BUILDS.map((b) => b.label).reverse(); // current first in the table

  // Medians over the rounds (one round: its figures).
  const figures = {};
  for (const l of labels) {
    const rs = runs[l].rounds;
    const m = (w, k) => (rs.some((r) => r[w][k] === null) ? null : median(rs.map((r) => r[w][k])));
    figures[l] = {
      idleRps: m('idle', 'rps'),
      idleP50: m('idle', 'p50'),
      idleP99: m('idle', 'p99'),
      loadedRps: m('loaded', 'rps'),
      loadedP50: m('loaded', 'p50'),
      loadedP99: m('loaded', 'p99'),
      p99Ratio: median(rs.map((r) => r.loaded.p99 / r.idle.p99)),
      compilesInWindow: m('loaded', 'compilesInWindow'),
      compileMedianMs: m('loaded', 'compileMedianMs'),
      compilesPerMinute: m('loaded', 'compilesPerMinute'),
      failedCompiles: rs.reduce((a, r) => a + r.loaded.failed, 0),
      non2xx: rs.reduce((a, r) => a + r.idle.non2xx + r.loaded.non2xx, 0),
      idleServerCpuPct: m('idle', 'serverCpuPct'),
      loadedServerCpuPct: m('loaded', 'serverCpuPct'),
      idleOthersCpuPct: m('idle', 'othersCpuPct'),
      loadedOthersCpuPct: m('loaded', 'othersCpuPct'),
    };
  }
  const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  const rows = [
    ['get report: req/s, idle', (x) => f(x.idleRps)],
    ['get report: p50 ms, idle', (x) => f(x.idleP50, 1)],
    ['get report: p99 ms, idle', (x) => f(x.idleP99, 1)],
    [`get report: req/s, ${COMPILERS} compiles running`, (x) => f(x.loadedRps)],
    [`get report: p50 ms, ${COMPILERS} compiles running`, (x) => f(x.loadedP50, 1)],
    [`get report: p99 ms, ${COMPILERS} compiles running`, (x) => f(x.loadedP99, 1)],
    ['get report: p99 loaded / idle', (x) => f(x.p99Ratio, 2)],
    ['compiles completed in the loaded window', (x) => f(x.compilesInWindow)],
    ['their median time (validate, ms)', (x) => f(x.compileMedianMs)],
    ['compiles per minute (the loops, settle to stop)', (x) => f(x.compilesPerMinute, 1)],
    ['compiles failed or refused', (x) => f(x.failedCompiles)],
    ['get report: non-2xx and errors', (x) => f(x.non2xx)],
    [
      "service's CPU, idle / loaded (share of the machine)",
      (x) => `${f(x.idleServerCpuPct)}% / ${f(x.loadedServerCpuPct)}%`,
    ],
    ["others' CPU, idle / loaded", (x) => `${f(x.idleOthersCpuPct)}% / ${f(x.loadedOthersCpuPct)}%`],
  ];
  const lines = [`| measure | ${labels.join(' | ')} |`, `|---|${labels.map(() => '---:').join('|')}|`];
  for (const [title, cell] of rows)
    lines.push(`| ${title} | ${labels.map((l) => cell(figures[l])).join(' | ')} |`);
  const cur = figures.current;
  const target = {
    name: `get-report p99 while ${COMPILERS} compiles run, against idle`,
    limit: P99_LIMIT,
    current: cur.p99Ratio,
    before: figures.before?.p99Ratio ?? null,
    pass: cur.p99Ratio <= P99_LIMIT,
  };
  lines.push(
    '',
    `| target (issue 25, current build) | limit | current${figures.before ? ' | before' : ''} | result |`,
    `|---|---:|---:|${figures.before ? '---:|' : ''}---|`,
    `| ${target.name} (${f(cur.loadedP99, 1)} ms vs ${f(cur.idleP99, 1)} ms) | <= ${P99_LIMIT.toFixed(2)} | ` +
      `${f(target.current, 2)}${figures.before ? ` | ${f(target.before, 2)}` : ''} | ${target.pass ? 'PASS' : 'FAIL'} |`,
  );
  if (labels.some((l) => Math.max(figures[l].idleOthersCpuPct, figures[l].loadedOthersCpuPct) > 10)) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some windows: figures are disturbed.',
    );
  }
  console.log(`\n${lines.join('\n')}\n`);
  for (const l of labels) console.log(`${l}: peak RSS ${runs[l].peakRssMb} MB; ${runs[l].service}`);

  const bench =
    `node bench/compile-load.mjs --dist ${args.dist}${args.before ? ` --before ${args.before}` : ''}` +
    ` --connections ${CONNECTIONS} --duration ${DURATION}${RATE ? ` --rate ${RATE}` : ''} --warmup ${WARMUP}` +
    ` --settle ${SETTLE} --rounds ${ROUNDS} --compilers ${COMPILERS} --cubes ${CUBES} --reports ${REPORTS}`;
  console.log(
    JSON.stringify({
      bench: 'compile-load',
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        memoryMb: Math.round(os.totalmem() / 2 ** 20),
        loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
        node: process.version,
      },
      options: {
        connections: CONNECTIONS,
        duration: DURATION,
        rate: RATE,
        warmup: WARMUP,
        settle: SETTLE,
        rounds: ROUNDS,
        compilers: COMPILERS,
        cubes: CUBES,
        views: VIEWS,
        reports: REPORTS,
        poolSize: Number(POOL_SIZE),
        compilePoolSize: process.env.MODEL_COMPILE_POOL_SIZE ?? null,
        before: args.before ?? null,
      },
      commands: { bench },
      builds: Object.fromEntries(labels.map((l) => [l, { ...runs[l], figures: figures[l] }])),
      target,
    }),
  );
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  offInterrupt();
  await cleanUpAll();
}
process.exit(exitCode);
