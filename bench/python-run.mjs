// Measures python runs through HTTP (issue 16): POST /api/v1/embed/dashboard/{publicId}/python-run
// on the built service (real PostgreSQL, Redis for the result cache when reachable), its rows from
// a loopback data API (an NDJSON answer of --rows rows), its code in the real sandbox. Timed at the
// client, from the request to the answer:
//   cold    PYTHON_POOL_SIZE=0: each run starts its own sandboxed child (Pyodide's start included);
//   warm    PYTHON_POOL_SIZE=1: a run on a warm child; before each, --settle seconds for the pool to
//           refill (a distinct SQL each time, so no cached answer);
//   cached  the last warm request again: the answer from the cache (PYTHON_RUN_CACHE_SECONDS=60).
//
//   npm run build
//   node bench/python-run.mjs [--dist dist] [--cold 3] [--warm 5] [--rows 100] [--settle 12]
//
// Env: BENCH_PY_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_py_<pid>; DROPPED and
// recreated, migrated and bootstrapped through the service's CLI, dropped at the end),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379; '' for none: the cache is then in-process).
// Prints a Markdown table and one JSON line.
/* global fetch */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  api as request,
  benchOptions,
  databaseName,
  deploymentBody,
  dropDatabase,
  migrateAndBootstrap,
  nearestRank,
  productionEnv,
  recreateDatabase,
  root,
  startService,
  stepper,
  stopAllServices,
  stopService,
} from './service.mjs';

const { values: args } = parseArgs({
  options: {
    dist: benchOptions.dist,
    cold: { type: 'string', default: '3' },
    warm: { type: 'string', default: '5' },
    rows: { type: 'string', default: '100' },
    settle: { type: 'string', default: '12' },
  },
});
const COLD = Number(args.cold);
const WARM = Number(args.warm);
const ROWS = Number(args.rows);
const SETTLE_MS = Number(args.settle) * 1000;
const DIST = path.resolve(root, args.dist);
if (!fs.existsSync(path.join(DIST, 'src/modules/python-runs/python-runs.module.js'))) {
  throw new Error(`${args.dist} has no python runs: build the current sources (npm run build)`);
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL =
  process.env.BENCH_PY_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_py_${process.pid}`;
const dbName = databaseName(DATABASE_URL);
const SECRET = randomBytes(24).toString('hex');
// One key for both starts of the service: the embed key and the env vars are sealed with it.
const SECRETS_KEY = process.env.SECRETS_KEY ?? randomBytes(32).toString('base64');
const CODE = [
  'total = sum(r["amount"] for r in rows)',
  'by_city = {}',
  'for r in rows:',
  '    by_city[r["city"]] = by_city.get(r["city"], 0) + r["amount"]',
  'print(len(rows), "rows")',
  'output = {"total": total, "byCity": by_city}',
].join('\n');

const step = stepper();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// A loopback data API: the cubesql answer of Cube's SQL API (NDJSON), --rows rows

let sqlRequests = 0;
const dataApi = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/cubejs-api/v1/cubesql')) {
      res.writeHead(404).end('{"error":"not found"}');
      return;
    }
    sqlRequests += 1;
    const schema = [
      { name: 'id', column_type: 'Int64' },
      { name: 'city', column_type: 'Utf8' },
      { name: 'amount', column_type: 'Float64' },
    ];
    const data = Array.from({ length: ROWS }, (_, i) => [i, `city-${i % 7}`, i * 1.5]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ schema })}\n${JSON.stringify({ data })}\n`);
  });
});
await new Promise((r) => dataApi.listen(0, '127.0.0.1', r));
const DATA_API_URL = `http://127.0.0.1:${dataApi.address().port}`;

// ---------------------------------------------------------------------------------------------
// Set-up and clean-up

let server = null;
async function startServer(poolSize) {
  server = await startService({
    name: `the service (PYTHON_POOL_SIZE=${poolSize})`,
    argv: [path.join(DIST, 'src/main.js')],
    env: {
      ...productionEnv,
      LOG_LEVEL: 'warn',
      DATABASE_URL,
      REDIS_URL,
      QUEUE_PREFIX: `bench-py-${process.pid}-${poolSize}`,
      SECRETS_KEY,
      DATA_API_URL_TEMPLATE: DATA_API_URL,
      PYTHON_POOL_SIZE: String(poolSize),
      PYTHON_RUN_CACHE_SECONDS: '60',
    },
    hide: ['SECRETS_KEY'],
  });
}
const stopServer = () => stopService(server, 10_000);

// ---------------------------------------------------------------------------------------------
// The API

let adminToken = null;
const api = (method, p, body, token = adminToken) => request(server.base, method, p, body, { token });

/** The account's data: a deployment on the loopback data API, a published Python report, a token. */
async function setUp() {
  const { id: dep } = await api('POST', '/build/api/v1/deployments', deploymentBody('python bench'));
  await api('PUT', `/api/v1/deployments/${dep}/env-vars`, {
    env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }],
  });
  await api('PUT', '/api/v1/tenant/settings', { pythonAnalysisEnabled: true });
  const { id: wb } = await api('POST', `/api/v1/deployments/${dep}/workbooks`, { name: 'bench' });
  const report = await api('POST', `/api/v1/deployments/${dep}/reports`, {
    name: 'Totals',
    workbookId: wb,
    sqlQuery: 'SELECT id, city, amount FROM orders',
    pythonCode: CODE,
  });
  const dashboard = await api('POST', `/api/v1/deployments/${dep}/workbooks/${wb}/publish`, {
    workbookId: wb,
    config: {},
  });
  await api('PUT', `/api/v1/deployments/${dep}/workbooks/${wb}/embed-access`, {
    allEmbedUsers: true,
    action: 'read',
  });
  const snapshot = dashboard.reportSnapshots.find((s) => s.reportId === report.id);
  return { dep, publicId: dashboard.publicId, reportId: report.id, reportVersionId: snapshot.id };
}

async function embedToken(dep) {
  const { sessionId } = await api('POST', '/api/v1/embed/generate-session', {
    deploymentId: dep,
    externalId: `viewer-${randomBytes(4).toString('hex')}`,
    securityContext: { tenant: 'bench' },
  });
  const res = await fetch(`${server.base}/api/v1/embed/session/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId }),
  });
  return (await res.json()).token;
}

/** One python run; answers its client-side time, checking the answer. */
async function timedRun(target, token, sqlQuery) {
  const t0 = performance.now();
  const answer = await api(
    'POST',
    `/api/v1/embed/dashboard/${target.publicId}/python-run`,
    { reportId: target.reportId, reportVersionId: target.reportVersionId, sqlQuery },
    token,
  );
  const ms = performance.now() - t0;
  if (answer.inputRowCount !== ROWS || answer.executionError || typeof answer.outputData?.total !== 'number')
    throw new Error(`unexpected answer: ${JSON.stringify(answer).slice(0, 500)}`);
  return ms;
}

/** The lower median (nearest rank), min, max and number of the samples. */
const summary = (samples) => ({
  median: nearestRank(samples, 0.5),
  min: Math.min(...samples),
  max: Math.max(...samples),
  n: samples.length,
});
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

// ---------------------------------------------------------------------------------------------
// Main

const results = {};
let exitCode = 0;
try {
  step(`recreating the database ${dbName}`);
  await recreateDatabase(DATABASE_URL);
  adminToken = migrateAndBootstrap(DIST, DATABASE_URL, {
    account: 'bench-py',
    email: 'admin@bench-py.test',
  }).token;

  step('cold: PYTHON_POOL_SIZE=0, each run starts its own child');
  await startServer(0);
  const target = await setUp();
  let token = await embedToken(target.dep);
  const cold = [];
  for (let i = 0; i < COLD; i += 1) cold.push(await timedRun(target, token, `SELECT ${i} -- cold ${i}`));
  results.cold = summary(cold);
  await stopServer();

  step(`warm: PYTHON_POOL_SIZE=1, ${args.settle} s for the pool to refill before each run`);
  await startServer(1);
  token = await embedToken(target.dep);
  await timedRun(target, token, 'SELECT 0 -- first, maybe before the pool is warm');
  const warm = [];
  let last = '';
  for (let i = 0; i < WARM; i += 1) {
    await sleep(SETTLE_MS);
    last = `SELECT ${i} -- warm ${i}`;
    warm.push(await timedRun(target, token, last));
  }
  results.warm = summary(warm);
  const before = sqlRequests;
  const cached = [];
  for (let i = 0; i < 5; i += 1) cached.push(await timedRun(target, token, last));
  if (sqlRequests !== before) throw new Error('the cached runs queried the data API');
  results.cached = summary(cached);
  await stopServer();

  console.log('');
  console.log(`| Python run through HTTP (${ROWS} rows in) | Median | Min | Max | n |`);
  console.log('|---|---:|---:|---:|---:|');
  const row = (label, s) =>
    console.log(`| ${label} | ${fmt(s.median)} | ${fmt(s.min)} | ${fmt(s.max)} | ${s.n} |`);
  row('Cold (`PYTHON_POOL_SIZE=0`: the run starts its child)', results.cold);
  row('Warm (a warm child waiting)', results.warm);
  row('Cached answer (same report, code, SQL and user)', results.cached);
  console.log(JSON.stringify({ rows: ROWS, redis: REDIS_URL !== '', ...results }));
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await stopAllServices(10_000).catch(() => {});
  dataApi.close();
  await dropDatabase(DATABASE_URL);
}
process.exit(exitCode);
