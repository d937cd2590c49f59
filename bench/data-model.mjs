// Benchmarks the data model on git (issue 13) through the HTTP API of a running service, on real
// PostgreSQL and Redis, a fresh REPOS_DIR and a database of its own:
//   (1) write     one PUT data-model/files of one ~2 KB YAML cube on the caller's dev branch
//   (2) commit    one POST commit of the dev branch, after writing one file (the write is not timed)
//   (3) validate  GET data-model/validate of the deploy branch holding a generated model (50 cubes
//                 with sql_table, a primary key and a few dimensions, a count and a sum measure,
//                 joins to the cube before; one view per ten cubes), committed there by an upload
//   (4) upload    the command-line client's upload of 500 new files: upload/start, 500 parts of
//                 upload/file (sequential, as the reference CLI sends them, and --upload-concurrency
//                 at once), upload/finish; timed as one total (fresh content every time: every file
//                 is new), on a deployment of its own
//
//   npx tsc -p tsconfig.build.json --outDir .build/bench-dm    # or npm run build (dist/)
//   node bench/data-model.mjs [--dist .build/bench-dm] [--repeat 20] [--validate-repeat 5]
//        [--upload-repeat 3] [--upload-files 500] [--upload-concurrency 8] [--cubes 50] [--warmup 2]
//        [--keep-db]
//
// --dist                the build to run (default BENCH_DIST, else dist); copied to
//                       bench/results/.dm-dist-<pid> for the duration, as run.mjs does
// --repeat              timed writes and commits (default 20)
// --validate-repeat     timed validates (default 5; each compiles the model in a child process)
// --upload-repeat       timed uploads of each kind, sequential and concurrent (default 3)
// --upload-concurrency  file parts in flight in the concurrent upload (default 8)
// --warmup              untimed writes and commits before the timed ones (default 2; validate 1,
//                       and a 20-file upload before the uploads)
// --keep-db             keep the database at the end (it is dropped by default)
//
// Env: BENCH_DM_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_dm_<pid>; the
// database is DROPPED and recreated, migrated and bootstrapped through the service's CLI as
// seed.mjs does, then dropped at the end), BENCH_REDIS_URL (default redis://127.0.0.1:6379; required:
// with Redis and RUN_JOBS_IN_PROCESS=false the API runs no jobs, so the builds that commits and
// uploads queue never run during the timing; its queue keys, prefix bench-dm-<pid>, are deleted
// at the end), DATABASE_POOL_SIZE (default 10).
//
// Times are wall clock at the client (fetch, keep-alive, body read), one request at a time; median
// and p95 by nearest rank (with 5 runs the p95 is the slowest). Per measure it also shows the
// server's CPU per operation (utime + stime of the API process and of the children it has reaped:
// git and the compiler), PostgreSQL's (the backends of this database) and the share of the machine
// used by anything else meanwhile ("others"; above 10% the figures are disturbed).
// Prints a Markdown table and one JSON line.
/* global fetch, FormData, Blob */
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
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
    repeat: { type: 'string', default: '20' },
    'validate-repeat': { type: 'string', default: '5' },
    'upload-repeat': { type: 'string', default: '3' },
    'upload-files': { type: 'string', default: '500' },
    'upload-concurrency': { type: 'string', default: '8' },
    cubes: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
  },
});
const REPEAT = positiveInt(args, 'repeat');
const VALIDATE_REPEAT = positiveInt(args, 'validate-repeat');
const UPLOAD_REPEAT = positiveInt(args, 'upload-repeat');
const UPLOAD_FILES = positiveInt(args, 'upload-files');
const UPLOAD_CONCURRENCY = positiveInt(args, 'upload-concurrency');
const CUBES = positiveInt(args, 'cubes');
const VIEWS = Math.max(1, Math.floor(CUBES / 10));
const WARMUP = wholeNumber(args, 'warmup');
if (CUBES < 2) throw new Error('--cubes must be at least 2 (the views join two cubes)');

const SOURCE_DIST = args.dist;
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/main.js'))) {
  throw new Error(`${SOURCE_DIST}/src/main.js is missing: build first (npm run build, or tsc --outDir)`);
}
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/modules/data-model/compiler/compile-child.js'))) {
  throw new Error(`${SOURCE_DIST} has no data-model compiler child: build the current sources`);
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!REDIS_URL) {
  throw new Error(
    'BENCH_REDIS_URL is empty: without Redis the API runs the builds in process during the timing',
  );
}
const DATABASE_URL =
  process.env.BENCH_DM_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_dm_${process.pid}`;
const dbName = databaseName(DATABASE_URL);
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';
const QUEUE_PREFIX = `bench-dm-${process.pid}`;

const step = stepper();

// ---------------------------------------------------------------------------------------------
// Set-up and clean-up: a private copy of the build, a database, a repositories directory

// A private copy of the build, so a rebuild meanwhile does not change the server (as run.mjs).
const { dist: DIST, stamp: buildStamp } = copyBuild(SOURCE_DIST, 'dm-dist');
const REPOS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dm-repos-'));

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
  // This run's Bull keys: the builds queued by commits and uploads, which nothing runs.
  await deleteQueueKeys(REDIS_URL, QUEUE_PREFIX);
  if (!args['keep-db']) await dropDatabase(DATABASE_URL);
}

// Ctrl-C or a kill: stop the server and clean up before leaving (the finally below does not run).
const offInterrupt = onInterrupt(cleanUp);

/** Starts the built API on a free port and waits for /health/live (bench/service.mjs). */
async function startServer() {
  const env = {
    ...productionEnv,
    REDIS_URL,
    // Builds are queued in Redis under a prefix of this run's own, and this process runs none.
    RUN_JOBS_IN_PROCESS: 'false',
    QUEUE_PREFIX,
    SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
    REPOS_DIR,
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

/**
 * CPU: the server's (utime + stime of the process and of its reaped children, git and the compile
 * child), the database's backends', the machine's (bench/service.mjs).
 */
const sample = () => cpuSample([server.pid], dbName, true);

// ---------------------------------------------------------------------------------------------
// The API

let token = null;
const auth = () => ({ authorization: `Bearer ${token}` });

/** One JSON request; throws unless the answer is `expect`. Returns the parsed body. */
const api = (method, p, body, expect = 200) => request(server.base, method, p, body, { token, expect });

const sha1 = (s) => createHash('sha1').update(s).digest('hex');
const base = (d) => `/build/api/v1/deployments/${d}`;

/** One part of an upload, as the command-line client sends it (transaction as JSON `{"id"}`). */
async function uploadPart(d, transaction, fileName, content) {
  const form = new FormData();
  form.append('transaction', JSON.stringify(transaction));
  form.append('fileName', fileName);
  form.append('file', new Blob([content]), path.posix.basename(fileName));
  const res = await fetch(`${server.base}${base(d)}/data-model/upload/file`, {
    method: 'POST',
    headers: auth(),
    body: form,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`upload/file ${fileName}: ${res.status} ${text.slice(0, 500)}`);
  if (JSON.parse(text).hash !== sha1(content)) throw new Error(`upload/file ${fileName}: unexpected hash`);
}

/**
 * A whole upload: start, the parts (`concurrency` in flight), finish with every file's hash.
 * Answers the time of each phase and the total (ms).
 */
async function upload(d, files, concurrency) {
  const t0 = performance.now();
  const { transaction } = await api('POST', `${base(d)}/data-model/upload/start`, {});
  const t1 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const f = files[next++];
      await uploadPart(d, transaction, f.path, f.content);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  const t2 = performance.now();
  const hashes = Object.fromEntries(files.map((f) => [f.path, { hash: sha1(f.content) }]));
  const done = await api('POST', `${base(d)}/data-model/upload/finish`, { transaction, files: hashes });
  const t3 = performance.now();
  if (!/^[0-9a-f]{40}$/.test(done.lastHash ?? '')) throw new Error(`upload/finish: ${JSON.stringify(done)}`);
  return { totalMs: t3 - t0, startMs: t1 - t0, filesMs: t2 - t1, finishMs: t3 - t2 };
}

// ---------------------------------------------------------------------------------------------
// Generated model

const DIMENSIONS = [
  ['status', 'string', 'Lifecycle state of the row as recorded by the source system'],
  ['region', 'string', 'Sales region of the customer at the time of the event'],
  ['channel', 'string', 'Acquisition channel (web, partner, direct or marketplace)'],
  ['customer_id', 'number', 'Identifier of the customer in the CRM'],
  ['parent_id', 'number', 'The row of the parent entity this one belongs to'],
  ['product_category', 'string', 'Category of the product sold, from the product catalogue'],
  ['is_test', 'boolean', 'Whether the row comes from a test account (excluded from reports)'],
];

/**
 * A YAML cube of ~2 KB: sql_table, a primary key and seven dimensions, a time dimension, a count
 * and a sum measure; with `join`, a many-to-one join to that cube. `note` varies the content.
 */
function cubeYaml(name, table, { join = null, note = '' } = {}) {
  const joins = join
    ? `    joins:\n      - name: ${join}\n        sql: "{CUBE}.parent_id = {${join}}.id"\n        relationship: many_to_one\n`
    : '';
  const dims = DIMENSIONS.map(
    ([dim, type, description]) =>
      `      - name: ${dim}\n        sql: ${dim}\n        type: ${type}\n        title: ${dim.replace(/_/g, ' ')}\n` +
      `        description: ${description}\n`,
  ).join('');
  return `cubes:
  - name: ${name}
    sql_table: analytics.${table}
    title: ${name.replace(/_/g, ' ')}
    description: Generated cube over analytics.${table}${note ? ` (${note})` : ''}; one row per business event
${joins}    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
        public: true
${dims}      - name: created_at
        sql: created_at
        type: time
        title: created at
        description: When the event happened, in UTC

    measures:
      - name: count
        type: count
        title: Number of rows
        description: Rows of analytics.${table} after the filters of the query
      - name: total_amount
        sql: amount
        type: sum
        format: currency
        title: Total amount
        description: Sum of the amount column, in the account currency
`;
}

/** A view over a cube and the one it joins to (prefixed). */
function viewYaml(v) {
  const a = `cube_${v * 10 + 1}`;
  const b = `cube_${v * 10}`;
  return `views:
  - name: view_${v}
    description: Cube ${a} with its parent ${b}
    cubes:
      - join_path: ${a}
        includes: [count, total_amount, status, region, created_at]
      - join_path: ${a}.${b}
        prefix: true
        includes: [count, status]
`;
}

const MODEL = [
  ...Array.from({ length: CUBES }, (_, i) => ({
    path: `model/cubes/cube_${i}.yml`,
    content: cubeYaml(`cube_${i}`, `table_${i}`, { join: i > 0 ? `cube_${i - 1}` : null }),
  })),
  ...Array.from({ length: VIEWS }, (_, v) => ({ path: `model/views/view_${v}.yml`, content: viewYaml(v) })),
];
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
// Statistics

/**
 * Runs `once(i, timed)` `runs` times; `once` does any untimed preparation, then passes the request
 * to `timed`, which answers its wall time (ms) and counts the CPU used meanwhile (only then).
 */
async function measure(label, runs, once) {
  const samples = [];
  let ticks = NO_TICKS;
  const timed = async (request) => {
    const before = sample();
    const t0 = performance.now();
    await request();
    const ms = performance.now() - t0;
    ticks = addTicks(ticks, cpuBetween(before, sample()));
    return ms;
  };
  for (let i = 0; i < runs; i++) {
    const ms = await once(i, timed);
    samples.push(ms);
    process.stdout.write(`  ${label} ${i + 1}/${runs}: ${ms.toFixed(1)} ms\n`);
  }
  return summary(samples, cpuPerOp(ticks, runs));
}

// ---------------------------------------------------------------------------------------------
// Main

const results = {};
const uploadPhases = {};
let exitCode = 0;
try {
  step(`recreating the database ${dbName}`);
  await recreateDatabase(DATABASE_URL);
  step('migrating (cli migrate) and bootstrapping the admin (cli bootstrap)');
  token = migrateAndBootstrap(DIST, DATABASE_URL, {
    account: 'bench-dm',
    email: 'admin@bench-dm.test',
  }).token;
  db = new pg.Client({ connectionString: DATABASE_URL });
  db.on('error', (e) => console.warn(`database connection lost: ${e.message}`));
  await db.connect();

  step(`starting the service (${SOURCE_DIST}, REPOS_DIR ${REPOS_DIR})`);
  await startServer();
  const deployment = (name) => api('POST', '/build/api/v1/deployments', deploymentBody(name));
  const model = await deployment('Data model bench');
  const uploads = await deployment('Upload bench');
  const M = model.id;
  const U = uploads.id;

  step(`committing the ${CUBES}-cube model (${MODEL.length} files) to the deploy branch by an upload`);
  await upload(M, MODEL, 1);
  step('checking that it compiles');
  const check = await api('GET', `${base(M)}/data-model/validate`);
  if (!check.valid || check.cubesCount !== CUBES + VIEWS) {
    throw new Error(
      `the generated model does not validate as expected: ${JSON.stringify(check).slice(0, 2000)}`,
    );
  }

  step('entering dev mode (the dev branch forks from the deploy branch with the model)');
  const dev = await api('POST', `${base(M)}/dev-mode`, {});
  const headOf = async () =>
    (await api('GET', `${base(M)}/branches?first=100`)).items.find((b) => b.name === dev.branchName)
      ?.lastHash;

  // (1) write
  step(`write: ${WARMUP} warm-up, ${REPEAT} timed (${bytes(writeFile(0).content)} B)`);
  let n = 0;
  for (let i = 0; i < WARMUP; i++)
    await api('PUT', `${base(M)}/data-model/files`, { files: [writeFile(n++)] });
  results.write = await measure('write', REPEAT, (_, timed) => {
    const body = { files: [writeFile(n++)] };
    return timed(() => api('PUT', `${base(M)}/data-model/files`, body));
  });

  // (2) commit
  step(`commit: ${WARMUP} warm-up, ${REPEAT} timed (each after an untimed write of one file)`);
  const headBefore = await headOf();
  const commitOnce = async (i, timed) => {
    await api('PUT', `${base(M)}/data-model/files`, { files: [commitFile(n++)] });
    return timed(() => api('POST', `${base(M)}/commit`, { message: `Bench commit ${i}` }));
  };
  const untimed = (request) => request();
  for (let i = 0; i < WARMUP; i++) await commitOnce(-1 - i, untimed);
  results.commit = await measure('commit', REPEAT, commitOnce);
  if ((await headOf()) === headBefore) throw new Error('the commits did not move the dev branch');

  // (3) validate
  step(
    `validate: 1 warm-up, ${VALIDATE_REPEAT} timed (${CUBES} cubes + ${VIEWS} views on the deploy branch)`,
  );
  const validateOnce = async (_, timed) => {
    let v = null;
    const ms = await timed(async () => (v = await api('GET', `${base(M)}/data-model/validate`)));
    if (!v.valid || v.cubesCount !== CUBES + VIEWS)
      throw new Error(`validate: ${JSON.stringify(v).slice(0, 500)}`);
    return ms;
  };
  await validateOnce(0, untimed);
  results.validate = await measure('validate', VALIDATE_REPEAT, validateOnce);

  // (4) upload: sequential and concurrent, alternately
  step(
    `upload: a 20-file warm-up, then ${UPLOAD_REPEAT} x (sequential, ${UPLOAD_CONCURRENCY} at once) of ${UPLOAD_FILES} new files`,
  );
  const nonce = randomBytes(4).toString('hex');
  await upload(U, uploadFiles(20, `${nonce}-warmup`), 1);
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
      const t = await upload(U, files, concurrency);
      ticks[kind] = addTicks(ticks[kind], cpuBetween(before, sample()));
      samples[kind].push(t);
      console.log(
        `  ${kind} ${r + 1}/${UPLOAD_REPEAT}: ${t.totalMs.toFixed(0)} ms (start ${t.startMs.toFixed(1)}, ` +
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

  // Report
  const f = (x, d = 0) => x.toFixed(d);
  const titles = {
    write: `write: PUT data-model/files, 1 file of ${bytes(writeFile(0).content)} B (dev branch)`,
    commit: 'commit: POST commit of 1 written file (dev branch)',
    validate: `validate: GET data-model/validate, ${CUBES} cubes + ${VIEWS} views (deploy branch)`,
    upload: `upload of ${UPLOAD_FILES} new files, sequential parts (start + parts + finish)`,
    [`upload-c${UPLOAD_CONCURRENCY}`]: `upload of ${UPLOAD_FILES} new files, ${UPLOAD_CONCURRENCY} parts at once`,
  };
  const lines = [
    "| measure | runs | median ms | p95 ms | min ms | max ms | server CPU ms/op | DB CPU ms/op | others' CPU |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [key, r] of Object.entries(results)) {
    const d = r.medianMs < 100 ? 1 : 0;
    lines.push(
      `| ${titles[key]} | ${r.runs} | ${f(r.medianMs, d)} | ${f(r.p95Ms, d)} | ${f(r.minMs, d)} | ${f(r.maxMs, d)} | ` +
        `${f(r.serverCpuMsPerOp, 1)} | ${f(r.dbCpuMsPerOp, 1)} | ${f(r.othersCpuPct)}% |`,
    );
  }
  lines.push(
    '',
    '| upload phases (medians) | start ms | parts ms | per part ms | finish ms |',
    '|---|---:|---:|---:|---:|',
  );
  for (const [kind, p] of Object.entries(uploadPhases)) {
    lines.push(
      `| ${kind} | ${f(p.startMs, 1)} | ${f(p.filesMs)} | ${f(p.perFileMs, 2)} | ${f(p.finishMs)} |`,
    );
  }
  if (Object.values(results).some((r) => r.othersCpuPct > 10)) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some measures: figures are disturbed.',
    );
  }
  const table = lines.join('\n');
  console.log(`\n${table}\n`);
  const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const memory = {
    rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024),
    peakRssMb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024),
  };
  console.log(`service: RSS ${memory.rssMb} MB at the end, peak ${memory.peakRssMb} MB; ${server.command}`);

  const {
    rows: [pgVersion],
  } = await db.query(`SELECT current_setting('server_version') AS v`);
  const bench =
    `node bench/data-model.mjs --dist ${SOURCE_DIST} --repeat ${REPEAT} --validate-repeat ${VALIDATE_REPEAT}` +
    ` --upload-repeat ${UPLOAD_REPEAT} --upload-files ${UPLOAD_FILES} --upload-concurrency ${UPLOAD_CONCURRENCY}` +
    ` --cubes ${CUBES} --warmup ${WARMUP}`;
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
        postgres: pgVersion.v,
        git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(),
      },
      build: { dist: SOURCE_DIST, stamp: buildStamp },
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
      },
      model: {
        files: MODEL.length,
        bytes: MODEL.reduce((s, x) => s + bytes(x.content), 0),
        writeFileBytes: bytes(writeFile(0).content),
        uploadBytes: uploadFiles(UPLOAD_FILES, 'x').reduce((s, x) => s + bytes(x.content), 0),
      },
      commands: { bench, service: server.command },
      serverMemory: memory,
      results,
      uploadPhases,
    }),
  );
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  offInterrupt();
  await cleanUp();
}
process.exit(exitCode);
