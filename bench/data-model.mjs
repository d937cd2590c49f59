// Benchmarks the data model on git (issue 13) through the HTTP API of a running service, on real
// PostgreSQL and Redis, a fresh REPOS_DIR and a database of its own:
//   (1) validate, changed tree    GET data-model/validate?devMode=true of the caller's dev branch
//                                 holding the generated model (50 cubes with sql_table, a primary
//                                 key and a few dimensions, a count and a sum measure, joins to the
//                                 cube before; one view per ten cubes; bench/model-fixture.mjs),
//                                 each after an untimed one-line change of a cube: a tree no
//                                 compile has seen, so no verdict cache can answer (issue 25)
//   (2) validate, unchanged tree  the same request again right after (1), same tree: what a verdict
//                                 cache serves (a build without one compiles again)
//   (3) write                     one PUT data-model/files of one ~2 KB YAML cube on the dev branch
//   (4) commit                    one POST commit of the dev branch, after writing one file (the
//                                 write is not timed)
//   (5) validate                  GET data-model/validate of the deploy branch holding the model,
//                                 committed there by an upload, the same commit every time (a
//                                 build with a verdict cache serves all but the first from it)
//   (6) upload                    the command-line client's upload of 500 new files: upload/start,
//                                 500 parts of upload/file (sequential, as the reference CLI sends
//                                 them, and --upload-concurrency at once), upload/finish; timed as
//                                 one total (fresh content every time: every file is new), on a
//                                 deployment of its own
//
//   npx tsc -p tsconfig.build.json --outDir .build/bench-dm    # or npm run build (dist/)
//   node bench/data-model.mjs [--dist .build/bench-dm] [--before .build/old] [--repeat 20]
//        [--validate-repeat 5] [--upload-repeat 3] [--upload-files 500] [--upload-concurrency 8]
//        [--cubes 50] [--warmup 2] [--keep-db]
//
// --dist                the build to run (default BENCH_DIST, else dist); copied to
//                       bench/results/.dm-current-<pid> for the duration, as run.mjs does
// --before              an earlier build (e.g. .build/old) measured the same way in the same
//                       invocation, first, on a database, REPOS_DIR and queue prefix of its own;
//                       the table then shows both builds side by side
// --repeat              timed writes and commits (default 20)
// --validate-gap        seconds of pause before each changed-tree validate (default 8), as a person
//                       edits between validates: a warm compile child replaces the used one meanwhile
// --validate-repeat     timed validates of each kind (default 5; every changed-tree validate, and
//                       in a build without a verdict cache every validate, compiles the model)
// --upload-repeat       timed uploads of each kind, sequential and concurrent (default 3)
// --upload-concurrency  file parts in flight in the concurrent upload (default 8)
// --warmup              untimed writes and commits before the timed ones (default 2; each validate
//                       kind 1, and a 20-file upload before the uploads)
// --keep-db             keep the databases at the end (they are dropped by default)
//
// Env: BENCH_DM_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_dm_<pid>; the
// --before build's is the same name with `_before`; each database is DROPPED and recreated,
// migrated and bootstrapped through its build's CLI as seed.mjs does, then dropped at the end),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379; required: with Redis and RUN_JOBS_IN_PROCESS=false
// the API runs no jobs, so the builds that commits and uploads queue never run during the timing;
// the keys under the run's prefix, bench-dm-<pid> or bench-dm-<pid>-before, queues and cached
// verdicts, are deleted at the end), DATABASE_POOL_SIZE (default 10). Any other variable of the
// service set in the environment (MODEL_COMPILE_POOL_SIZE...) reaches both builds.
//
// Times are wall clock at the client (fetch, keep-alive, body read), one request at a time; median
// and p95 by nearest rank (with 5 runs the p95 is the slowest). Per measure it also shows the
// server's CPU per operation (utime + stime of the API process and of every process below it,
// live or reaped: git, the compile children, warm or not), PostgreSQL's (the backends of this
// database) and the share of the machine used by anything else meanwhile ("others"; above 10% the
// figures are disturbed). It checks issue 25's targets on the --dist build (validate of a changed
// tree <= 1.5 s, of an unchanged one <= 50 ms, a write <= 20 ms; medians).
// Prints a Markdown table (both builds side by side with --before), the targets, and one JSON line.
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { changedCube, cubeYaml, dmBase as base, modelFiles, upload, viewCount } from './model-fixture.mjs';
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
  processTree,
  queuedBuildsEnv,
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
    before: { type: 'string' },
    repeat: { type: 'string', default: '20' },
    'validate-repeat': { type: 'string', default: '5' },
    'validate-gap': { type: 'string', default: '8' },
    'upload-repeat': { type: 'string', default: '3' },
    'upload-files': { type: 'string', default: '500' },
    'upload-concurrency': { type: 'string', default: '8' },
    cubes: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
  },
});
const REPEAT = positiveInt(args, 'repeat');
const VALIDATE_REPEAT = positiveInt(args, 'validate-repeat');
const VALIDATE_GAP_S = Number(args['validate-gap']);
const UPLOAD_REPEAT = positiveInt(args, 'upload-repeat');
const UPLOAD_FILES = positiveInt(args, 'upload-files');
const UPLOAD_CONCURRENCY = positiveInt(args, 'upload-concurrency');
const CUBES = positiveInt(args, 'cubes');
const VIEWS = viewCount(CUBES);
const WARMUP = wholeNumber(args, 'warmup');
const MODEL = modelFiles(CUBES);

/** Issue 25's targets, checked on the --dist build (medians, ms). */
const TARGETS = [
  { key: 'validate-changed', name: 'validate, changed tree: median', limitMs: 1500 },
  { key: 'validate-unchanged', name: 'validate, unchanged tree: median', limitMs: 50 },
  { key: 'write', name: 'dev-mode file write: median', limitMs: 20 },
];

// The builds, in the order they run: the earlier one first, each on its own database, REPOS_DIR
// and queue prefix, one after the other (never at once: they would compete for the cores).
const BUILDS = [
  ...(args.before ? [{ label: 'before', source: args.before }] : []),
  { label: 'current', source: args.dist },
];
for (const { source } of BUILDS) {
  if (!fs.existsSync(path.join(root, source, 'src/main.js'))) {
    throw new Error(`${source}/src/main.js is missing: build first (npm run build, or tsc --outDir)`);
  }
  // Issue 13's compiler in child processes (whatever the files are called since).
  if (!fs.existsSync(path.join(root, source, 'src/modules/data-model/compiler'))) {
    throw new Error(`${source} has no data-model compiler: build the current sources`);
  }
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!REDIS_URL) {
  throw new Error(
    'BENCH_REDIS_URL is empty: without Redis the API runs the builds in process during the timing',
  );
}
const DATABASE_URL =
  process.env.BENCH_DM_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_dm_${process.pid}`;
/** The database of a build: the earlier one's name ends in `_before`. */
const databaseOf = (label) => {
  if (label === 'current') return DATABASE_URL;
  const url = new URL(DATABASE_URL);
  url.pathname = `${url.pathname}_${label}`;
  return url.toString();
};
for (const { label } of BUILDS) databaseName(databaseOf(label)); // a plain name, or throw now
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';

const step = stepper();

// ---------------------------------------------------------------------------------------------
// Clean-up: every build registers what it made (server, database, REPOS_DIR, build copy, Redis
// keys) and removes it when it ends; whatever is left (an error, Ctrl-C) goes here.

const cleanUps = new Set();
const cleanUpAll = async () => {
  for (const c of [...cleanUps]) await c();
};
// Ctrl-C or a kill: stop the server and clean up before leaving (no finally runs then).
const offInterrupt = onInterrupt(cleanUpAll);

const bytes = (s) => Buffer.byteLength(s, 'utf8');
const writeFile = (n) => ({
  path: 'model/cubes/bench_write.yml',
  content: cubeYaml('bench_write', 'bench_write', { note: `write ${n}` }),
});
const commitFile = (n) => ({
  path: 'model/cubes/bench_commit.yml',
  content: cubeYaml('bench_commit', 'bench_commit', { note: `commit ${n}` }),
});
/** The files of one upload, all new: the run's nonce in every one. */
const uploadFiles = (count, nonce) =>
  Array.from({ length: count }, (_, i) => ({
    path: `model/cubes/group_${i % 10}/upload_${i}.yml`,
    content: cubeYaml(`upload_${i}`, `upload_table_${i}`, { note: `upload ${nonce}` }),
  }));

// ---------------------------------------------------------------------------------------------
// One build

/**
 * Measures the build `source` (`label`: current or before) from scratch: a private copy, a fresh
 * database, REPOS_DIR and queue prefix, the service started, every measure, everything removed.
 * Answers its results, upload phases, memory and command lines.
 */
async function benchBuild({ label, source }) {
  const databaseUrl = databaseOf(label);
  const dbName = databaseName(databaseUrl);
  const queuePrefix = label === 'current' ? `bench-dm-${process.pid}` : `bench-dm-${process.pid}-${label}`;
  // A private copy of the build, so a rebuild meanwhile does not change the server (as run.mjs).
  const { dist, stamp } = copyBuild(source, `dm-${label}`);
  const reposDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dm-repos-'));
  let server = null;
  let db = null;

  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await stopAllServices();
    await db?.end().catch(() => {});
    removeDir(dist);
    removeDir(reposDir);
    // This run's keys: the builds queued by commits and uploads, which nothing runs, and the
    // verdicts a build with a verdict cache stored.
    await deleteQueueKeys(REDIS_URL, queuePrefix);
    if (!args['keep-db']) await dropDatabase(databaseUrl);
  };
  cleanUps.add(cleanUp);

  /**
   * CPU: the server's (utime + stime of the API process and of every process below it: git, the
   * compile children, sandboxed or not, whether they exit after each compile or stay warm; polled
   * during each timed operation, see processTree), the database's backends', the machine's
   * (bench/service.mjs).
   */
  let tree = null;
  const sample = () => cpuSample([server.pid], dbName, tree);

  let token = null;
  /** One JSON request; throws unless the answer is `expect`. Returns the parsed body. */
  const api = (method, p, body, expect = 200) => request(server.base, method, p, body, { token, expect });

  /**
   * Runs `once(i, timed)` `runs` times; `once` does any untimed preparation, then passes the
   * request to `timed`, which answers its wall time (ms) and counts the CPU used meanwhile (only
   * then).
   */
  const measure = async (key, runs, once) => {
    const samples = [];
    let ticks = NO_TICKS;
    const timed = async (req) => {
      const before = sample();
      tree.start();
      const t0 = performance.now();
      await req();
      const ms = performance.now() - t0;
      tree.stop();
      ticks = addTicks(ticks, cpuBetween(before, sample()));
      return ms;
    };
    for (let i = 0; i < runs; i++) {
      const ms = await once(i, timed);
      samples.push(ms);
      process.stdout.write(`  [${label}] ${key} ${i + 1}/${runs}: ${ms.toFixed(1)} ms\n`);
    }
    return summary(samples, cpuPerOp(ticks, runs));
  };
  const untimed = (req) => req();

  try {
    const results = {};
    const uploadPhases = {};
    step(`[${label}] recreating the database ${dbName}`);
    await recreateDatabase(databaseUrl);
    step(`[${label}] migrating (cli migrate) and bootstrapping the admin (cli bootstrap)`);
    token = migrateAndBootstrap(dist, databaseUrl, {
      account: 'bench-dm',
      email: 'admin@bench-dm.test',
    }).token;
    db = new pg.Client({ connectionString: databaseUrl });
    db.on('error', (e) => console.warn(`database connection lost: ${e.message}`));
    await db.connect();

    step(`[${label}] starting the service (${source}, REPOS_DIR ${reposDir})`);
    server = await startService({
      name: `the service (${label})`,
      argv: [`${dist}/src/main.js`],
      // Builds are queued in Redis under a prefix of this run's own, and this process runs none.
      env: queuedBuildsEnv({ redisUrl: REDIS_URL, queuePrefix, reposDir, databaseUrl, poolSize: POOL_SIZE }),
      hide: ['SECRETS_KEY'],
    });
    tree = processTree(server.pid);
    const deployment = (name) => api('POST', '/build/api/v1/deployments', deploymentBody(name));
    const M = (await deployment('Data model bench')).id;
    const U = (await deployment('Upload bench')).id;

    step(`[${label}] committing the ${CUBES}-cube model (${MODEL.length} files) to the deploy branch`);
    await upload(server.base, token, M, MODEL, 1);
    /** One validate (`query`: '' or '?devMode=true'), checked: the whole model, valid. */
    const validate = async (query) => {
      const v = await api('GET', `${base(M)}/data-model/validate${query}`);
      if (!v.valid || v.cubesCount !== CUBES + VIEWS) {
        throw new Error(`validate${query}: not the expected model: ${JSON.stringify(v).slice(0, 1000)}`);
      }
      return v;
    };
    step(`[${label}] checking that it compiles`);
    await validate('');

    step(`[${label}] entering dev mode (the dev branch forks from the deploy branch with the model)`);
    const dev = await api('POST', `${base(M)}/dev-mode`, {});
    const headOf = async () =>
      (await api('GET', `${base(M)}/branches?first=100`)).items.find((b) => b.name === dev.branchName)
        ?.lastHash;

    // (1) and (2): first, while the dev branch holds exactly the model (the writes and commits
    // below add files to it). Each changed-tree validate follows an untimed one-line change no
    // compile has seen (the run's nonce and a counter), so it compiles even where verdicts are
    // cached by tree; the unchanged-tree validate asks again for the tree just compiled.
    step(
      `[${label}] validate (dev branch, ${CUBES} cubes + ${VIEWS} views): 1 warm-up, then ` +
        `${VALIDATE_REPEAT} x (untimed one-line change, changed-tree validate, unchanged-tree validate)`,
    );
    const nonce = randomBytes(4).toString('hex');
    let changes = 0;
    const change = () =>
      api('PUT', `${base(M)}/data-model/files`, { files: [changedCube(`validate ${nonce} ${changes++}`)] });
    await change();
    await validate('?devMode=true'); // warm-up: the compiler loaded, its children warm
    const changed = [];
    const unchanged = [];
    let changedTicks = NO_TICKS;
    let unchangedTicks = NO_TICKS;
    const timedValidate = async () => {
      const before = sample();
      tree.start();
      const t0 = performance.now();
      await validate('?devMode=true');
      const ms = performance.now() - t0;
      tree.stop();
      return { ms, ticks: cpuBetween(before, sample()) };
    };
    for (let i = 0; i < VALIDATE_REPEAT; i++) {
      await change();
      // As a person edits between validates: the compile child used by the last validate is
      // replaced by a warm one meanwhile (MODEL_COMPILE_POOL_SIZE), as the target's "warm" asks.
      await new Promise((resolve) => setTimeout(resolve, VALIDATE_GAP_S * 1000));
      const c = await timedValidate();
      const u = await timedValidate();
      changed.push(c.ms);
      unchanged.push(u.ms);
      changedTicks = addTicks(changedTicks, c.ticks);
      unchangedTicks = addTicks(unchangedTicks, u.ticks);
      console.log(
        `  [${label}] validate ${i + 1}/${VALIDATE_REPEAT}: changed tree ${c.ms.toFixed(1)} ms, ` +
          `unchanged ${u.ms.toFixed(1)} ms`,
      );
    }
    results['validate-changed'] = summary(changed, cpuPerOp(changedTicks, VALIDATE_REPEAT));
    results['validate-unchanged'] = summary(unchanged, cpuPerOp(unchangedTicks, VALIDATE_REPEAT));

    // (3) write
    step(`[${label}] write: ${WARMUP} warm-up, ${REPEAT} timed (${bytes(writeFile(0).content)} B)`);
    let n = 0;
    for (let i = 0; i < WARMUP; i++)
      await api('PUT', `${base(M)}/data-model/files`, { files: [writeFile(n++)] });
    results.write = await measure('write', REPEAT, (_, timed) => {
      const body = { files: [writeFile(n++)] };
      return timed(() => api('PUT', `${base(M)}/data-model/files`, body));
    });

    // (4) commit
    step(`[${label}] commit: ${WARMUP} warm-up, ${REPEAT} timed (each after an untimed write of one file)`);
    const headBefore = await headOf();
    const commitOnce = async (i, timed) => {
      await api('PUT', `${base(M)}/data-model/files`, { files: [commitFile(n++)] });
      return timed(() => api('POST', `${base(M)}/commit`, { message: `Bench commit ${i}` }));
    };
    for (let i = 0; i < WARMUP; i++) await commitOnce(-1 - i, untimed);
    results.commit = await measure('commit', REPEAT, commitOnce);
    if ((await headOf()) === headBefore) throw new Error('the commits did not move the dev branch');

    // (5) validate of the deploy branch, the same commit every time
    step(`[${label}] validate (deploy branch): 1 warm-up, ${VALIDATE_REPEAT} timed`);
    const validateOnce = (_, timed) => timed(() => validate(''));
    await validateOnce(0, untimed);
    results.validate = await measure('validate', VALIDATE_REPEAT, validateOnce);

    // (6) upload: sequential and concurrent, alternately
    step(
      `[${label}] upload: a 20-file warm-up, then ${UPLOAD_REPEAT} x (sequential, ${UPLOAD_CONCURRENCY} at once) of ${UPLOAD_FILES} new files`,
    );
    await upload(server.base, token, U, uploadFiles(20, `${nonce}-warmup`), 1);
    const kinds = [
      ['upload', 1],
      [`upload-c${UPLOAD_CONCURRENCY}`, UPLOAD_CONCURRENCY],
    ];
    const samples = Object.fromEntries(kinds.map(([k]) => [k, []]));
    const ticks = Object.fromEntries(kinds.map(([k]) => [k, NO_TICKS]));
    for (let r = 0; r < UPLOAD_REPEAT; r++) {
      for (const [kind, concurrency] of kinds) {
        const files = uploadFiles(UPLOAD_FILES, `${nonce}-${kind}-${r}`);
        const before = sample();
        tree.start();
        const t = await upload(server.base, token, U, files, concurrency);
        tree.stop();
        ticks[kind] = addTicks(ticks[kind], cpuBetween(before, sample()));
        samples[kind].push(t);
        console.log(
          `  [${label}] ${kind} ${r + 1}/${UPLOAD_REPEAT}: ${t.totalMs.toFixed(0)} ms (start ${t.startMs.toFixed(1)}, ` +
            `${UPLOAD_FILES} parts ${t.filesMs.toFixed(0)}, finish ${t.finishMs.toFixed(0)})`,
        );
      }
    }
    for (const [kind] of kinds) {
      results[kind] = summary(
        samples[kind].map((t) => t.totalMs),
        cpuPerOp(ticks[kind], UPLOAD_REPEAT),
      );
      uploadPhases[kind] = {
        startMs: median(samples[kind].map((t) => t.startMs)),
        filesMs: median(samples[kind].map((t) => t.filesMs)),
        perFileMs: median(samples[kind].map((t) => t.filesMs / UPLOAD_FILES)),
        finishMs: median(samples[kind].map((t) => t.finishMs)),
      };
    }

    const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    const memory = {
      rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024),
      peakRssMb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024),
    };
    const {
      rows: [pgVersion],
    } = await db.query(`SELECT current_setting('server_version') AS v`);
    return {
      build: { dist: source, stamp },
      database: dbName,
      queuePrefix,
      results,
      uploadPhases,
      serverMemory: memory,
      service: server.command,
      postgres: pgVersion.v,
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
  const current = runs.current;
  const before = runs.before;

  // Report: one row per measure, each build's figures side by side.
  const f = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(d));
  const ms = (x) => f(x, x < 100 ? 1 : 0);
  const titles = {
    'validate-changed': `validate, changed tree: GET data-model/validate?devMode=true after a one-line change, ${CUBES} cubes + ${VIEWS} views`,
    'validate-unchanged': 'validate, unchanged tree: the same again, same tree',
    write: `write: PUT data-model/files, 1 file of ${bytes(writeFile(0).content)} B (dev branch)`,
    commit: 'commit: POST commit of 1 written file (dev branch)',
    validate: `validate: GET data-model/validate, ${CUBES} cubes + ${VIEWS} views (deploy branch, same commit each time)`,
    upload: `upload of ${UPLOAD_FILES} new files, sequential parts (start + parts + finish)`,
    [`upload-c${UPLOAD_CONCURRENCY}`]: `upload of ${UPLOAD_FILES} new files, ${UPLOAD_CONCURRENCY} parts at once`,
  };
  const perBuild = ['median ms', 'p95 ms', 'server CPU ms/op', 'DB CPU ms/op', "others' CPU"];
  const lines = [
    `| measure | runs | ${labels.flatMap((l) => perBuild.map((h) => `${l}: ${h}`)).join(' | ')}${before ? ' | median current / before' : ''} |`,
    `|---|---:|${labels.flatMap(() => perBuild.map(() => '---:')).join('|')}|${before ? '---:|' : ''}`,
  ];
  for (const key of Object.keys(titles)) {
    const cells = labels.flatMap((l) => {
      const r = runs[l].results[key];
      return [
        ms(r.medianMs),
        ms(r.p95Ms),
        f(r.serverCpuMsPerOp, 1),
        f(r.dbCpuMsPerOp, 1),
        `${f(r.othersCpuPct)}%`,
      ];
    });
    const ratio = before ? [f(current.results[key].medianMs / before.results[key].medianMs, 2)] : [];
    lines.push(`| ${titles[key]} | ${current.results[key].runs} | ${[...cells, ...ratio].join(' | ')} |`);
  }
  lines.push(
    '',
    '| upload phases (medians) | build | start ms | parts ms | per part ms | finish ms |',
    '|---|---|---:|---:|---:|---:|',
  );
  for (const kind of Object.keys(current.uploadPhases)) {
    for (const l of labels) {
      const p = runs[l].uploadPhases[kind];
      lines.push(
        `| ${kind} | ${l} | ${f(p.startMs, 1)} | ${f(p.filesMs)} | ${f(p.perFileMs, 2)} | ${f(p.finishMs)} |`,
      );
    }
  }
  // Issue 25's targets, on the current build; the earlier build's figure beside it.
  const targets = TARGETS.map((t) => ({
    name: t.name,
    limitMs: t.limitMs,
    currentMs: current.results[t.key].medianMs,
    beforeMs: before?.results[t.key].medianMs ?? null,
    pass: current.results[t.key].medianMs <= t.limitMs,
  }));
  lines.push(
    '',
    `| target (issue 25, current build) | limit | current${before ? ' | before' : ''} | result |`,
    `|---|---:|---:|${before ? '---:|' : ''}---|`,
  );
  for (const t of targets) {
    lines.push(
      `| ${t.name} | <= ${t.limitMs} ms | ${ms(t.currentMs)} ms${before ? ` | ${ms(t.beforeMs)} ms` : ''} | ${t.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  if (labels.some((l) => Object.values(runs[l].results).some((r) => r.othersCpuPct > 10))) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some measures: figures are disturbed.',
    );
  }
  console.log(`\n${lines.join('\n')}\n`);
  for (const l of labels) {
    const m = runs[l].serverMemory;
    console.log(`${l}: RSS ${m.rssMb} MB at the end, peak ${m.peakRssMb} MB; ${runs[l].service}`);
  }

  const bench =
    `node bench/data-model.mjs --dist ${args.dist}${before ? ` --before ${args.before}` : ''}` +
    ` --repeat ${REPEAT} --validate-repeat ${VALIDATE_REPEAT}` +
    ` --upload-repeat ${UPLOAD_REPEAT} --upload-files ${UPLOAD_FILES} --upload-concurrency ${UPLOAD_CONCURRENCY}` +
    ` --cubes ${CUBES} --warmup ${WARMUP}`;
  const buildFigures = (r) => ({
    build: r.build,
    serverMemory: r.serverMemory,
    results: r.results,
    uploadPhases: r.uploadPhases,
  });
  console.log(
    JSON.stringify({
      bench: 'data-model',
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        memoryMb: Math.round(os.totalmem() / 2 ** 20),
        loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
        node: process.version,
        postgres: current.postgres,
        git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(),
      },
      options: {
        repeat: REPEAT,
        validateRepeat: VALIDATE_REPEAT,
        uploadRepeat: UPLOAD_REPEAT,
        uploadFiles: UPLOAD_FILES,
        uploadConcurrency: UPLOAD_CONCURRENCY,
        cubes: CUBES,
        views: VIEWS,
        warmup: WARMUP,
        poolSize: Number(POOL_SIZE),
        before: args.before ?? null,
      },
      model: {
        files: MODEL.length,
        bytes: MODEL.reduce((s, x) => s + bytes(x.content), 0),
        writeFileBytes: bytes(writeFile(0).content),
        uploadBytes: uploadFiles(UPLOAD_FILES, 'x').reduce((s, x) => s + bytes(x.content), 0),
      },
      commands: { bench, service: current.service },
      // The current build's figures at the top level, as before --before existed.
      ...buildFigures(current),
      before: before ? { ...buildFigures(before), commands: { service: before.service } } : null,
      targets,
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
