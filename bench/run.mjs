// Benchmarks the reports API on the database seeded by bench/seed.mjs against plain
// node:http + pg servers, side by side, and checks the targets:
//   - bench/plain.mjs, the MINIMAL plain server (issue 17): the least work that answers the
//     requests (token by its hash, the report joined with its placements, ...), its own SQL;
//     run as `plain` (statements unnamed, the issue's yardstick) and `plain-prepared`;
//   - bench/baseline.mjs, the earlier comparison: the service's OWN SQL and mapping on bare
//     node:http + pg, so it measures what the framework costs and nothing else.
//
//   node bench/seed.mjs      # once: recreates the `bench` database, writes bench/.state.json
//   node bench/run.mjs [--rounds 3] [--duration 10] [--connections 32] [--warmup 3]
//                      [--scenarios get,list,deep,connect,disconnect] [--deep-rows 90000]
//                      [--servers service,baseline,plain,plain-prepared] [--node <node binary>]
//                      [--processes 1] [--list-before 73] [--before <build dir>]
//
// --servers      which servers to run (a subset of service,baseline,plain,plain-prepared); the
//                targets need the service and the server they compare it with.
// --before       an earlier build of the service (e.g. .build/old), run as the server `before`;
//                the "list >= 2x" target then compares with it instead of --list-before.
// --node         the node binary that runs ALL the servers (default: the one running this script);
//                its version is printed and recorded. On Node 24+ the get-report target is >= 0.7.
// --processes N  N processes of each server, each on its own port; the load is split over them (N
//                autocannon instances at once, connections/N each) and CPU time and peak RSS are
//                summed over the N processes. The service's processes share the database and Redis.
// --list-before  the service's list page-1 req/s before issue 17 (73, docs/performance.md), the
//                reference of the "list >= 2x" target.
//
// Env: BENCH_DIST (the built service, default dist; copied to bench/results/.dist-<pid> for the
// duration of the bench, so a rebuild meanwhile does not touch the servers), BENCH_REDIS_URL (Redis for the service's
// queues, default redis://127.0.0.1:6379; empty = none, jobs in process), DATABASE_POOL_SIZE
// (every server process, default 10 as the service's default).
//
// It starts the servers as child processes on free ports (the service as in production:
// NODE_ENV=production, ALLOW_HTTP=true, LOG_LEVEL=silent, RATE_LIMIT_MAX=1000000), warms each
// scenario up on each, then for every scenario runs the servers ALTERNATELY (`--rounds` rounds;
// the order rotates every round) with autocannon, and reports per server the median
// requests/s (2xx per second), p50 and p99 latency, CPU time per request (utime+stime of the
// server processes from /proc/<pid>/stat, over the run, divided by the requests sent) and the
// peak RSS (VmHWM from /proc/<pid>/status, reset through /proc/<pid>/clear_refs before each run).
// CPU time is charged to every request sent (the server finishes the ones in flight at the end;
// the run waits until it is idle). Also shown: PostgreSQL CPU per request (the backends of the
// bench database) and the CPU share taken by everything else on the machine ("others"), so a
// run disturbed by other work is visible.
//
// Scenarios (all as the seeded admin, deployment from .state.json):
//   get        GET one report, a random id over the seeded range per request (records a view)
//   list       GET the list, page 1 (first=100; sort createdAt DESC, id DESC)
//   deep       the same list after the cursor of row 90,000 (keyset; the cursor is computed from
//              the database and encoded as encodeCursor in src/core/http/cursor.ts)
//   connect    PUT connect-workbook: 2,000 reports x 2 spots in rotation; the first pass inserts,
//              later passes update (bench placements are deleted before each run)
//   disconnect DELETE connect-workbook of placements created before each run (2 per report on
//              enough reports for the run); half addressed by placementId, half by spreadsheet +
//              sheet + anchor. The share of requests that removed a placement is reported.
//
// Prints Markdown tables and writes bench/results/latest.json (also a timestamped copy).
/* global fetch */
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  CLK_TCK,
  copyBuild,
  cpuBetween,
  cpuSample,
  databaseName,
  median,
  onInterrupt,
  procTicks,
  productionEnv,
  removeDir,
  root,
  startService,
  stopAllServices,
  stopService,
} from './service.mjs';

const here = path.join(root, 'bench');
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '3' },
    scenarios: { type: 'string', default: 'get,list,deep,connect,disconnect' },
    'deep-rows': { type: 'string', default: '90000' },
    servers: { type: 'string', default: 'service,baseline,plain,plain-prepared' },
    node: { type: 'string', default: process.execPath },
    processes: { type: 'string', default: '1' },
    'list-before': { type: 'string', default: '73' },
    before: { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
const DEEP_ROWS = Number(args['deep-rows']);
const PROCESSES = Number(args.processes);
const LIST_BEFORE = Number(args['list-before']);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1) throw new Error('--processes must be a positive integer');
if (CONNECTIONS < PROCESSES) throw new Error('--connections must be at least --processes');
if (!(LIST_BEFORE > 0)) throw new Error('--list-before must be a positive number of requests per second');
const SERVER_NAMES = ['service', 'before', 'baseline', 'plain', 'plain-prepared'];
const chosenServers = args.servers.split(',').map((s) => s.trim());
// --before <build>: the service as built before a change (e.g. before issue 17), run as one more server.
if (args.before) chosenServers.push('before');
for (const s of chosenServers) if (!SERVER_NAMES.includes(s)) throw new Error(`unknown server ${s}`);
if (chosenServers.includes('before') && !args.before)
  throw new Error('the server before needs --before <build dir>');
// In a fixed order, whatever the order of --servers.
const names = SERVER_NAMES.filter((s) => chosenServers.includes(s));
if (names.length === 0) throw new Error('--servers names no server');

// The node binary that runs every server (not necessarily the one running this script).
const NODE = path.resolve(args.node);
const NODE_VERSION = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
const NODE_MAJOR = Number(/^v(\d+)/.exec(NODE_VERSION)[1]);
/** Issue 17: the get-report throughput target against the plain server, higher on Node 24+. */
const GET_VS_PLAIN = NODE_MAJOR >= 24 ? 0.7 : 0.5;

const SOURCE_DIST = process.env.BENCH_DIST ?? 'dist';
// The service and the baseline run a private copy of the build, so a rebuild during the bench
// changes neither (bench/results/.dist-<pid>). The plain server needs no build.
const needsDist = names.includes('service') || names.includes('baseline');
if (needsDist && !fs.existsSync(path.join(root, SOURCE_DIST, 'src/main.js')))
  throw new Error(`${SOURCE_DIST}/src/main.js is missing`);
const { dist: DIST, stamp: buildStamp } = needsDist
  ? copyBuild(SOURCE_DIST, 'dist')
  : { dist: `bench/results/.dist-${process.pid}`, stamp: null };
// The earlier build, copied likewise (bench/results/.before-<pid>).
if (names.includes('before') && !fs.existsSync(path.join(root, args.before, 'src/main.js')))
  throw new Error(`${args.before}/src/main.js is missing`);
const BEFORE_DIST = names.includes('before')
  ? copyBuild(args.before, 'before').dist
  : `bench/results/.before-${process.pid}`;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';

const stateFile = path.join(here, '.state.json');
if (!fs.existsSync(stateFile)) throw new Error('bench/.state.json is missing: run node bench/seed.mjs first');
const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
const DATABASE_URL = state.databaseUrl;
const db = new pg.Client({ connectionString: DATABASE_URL });
// A terminated connection (the database dropped by a seed meanwhile...) fails the next query, and
// the bench stops through its `finally`; unhandled, the 'error' event would end the process at once.
db.on('error', (e) => console.warn(`bench database connection lost: ${e.message}`));
await db.connect();

// ---------------------------------------------------------------------------------------------
// Servers

/** One server process (bench/service.mjs: none outlives the bench). */
const startServer = (name, argv, env) =>
  startService({ name, argv, node: NODE, env: { ...env, DATABASE_URL, DATABASE_POOL_SIZE: POOL_SIZE } });

/** `--processes` processes of one server, one after the other, each on its own port. */
async function startGroup(name, argv, env) {
  const procs = [];
  try {
    for (let i = 0; i < PROCESSES; i++) {
      procs.push(await startServer(PROCESSES > 1 ? `${name}#${i + 1}` : name, argv, env));
    }
  } catch (e) {
    await stopProcesses(procs);
    throw e;
  }
  return { name, procs, pids: procs.map((p) => p.pid), commands: procs.map((p) => p.command) };
}

/** SIGTERM, then SIGKILL whatever has not exited 5 s later; resolves when all have exited. */
const stopProcesses = (procs) => Promise.all(procs.map((p) => stopService(p)));

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
/** utime + stime of the processes, in clock ticks. */
const groupTicks = (pids) => sum(pids.map((pid) => procTicks(pid)));
/** Peak RSS of the processes, in MB: the sum of each one's VmHWM. */
const hwmMb = (pids) =>
  sum(
    pids.map(
      (pid) => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024,
    ),
  );
const resetHwm = (pids) => pids.forEach((pid) => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'));

const dbName = databaseName(DATABASE_URL);
/** CPU ticks of the machine, the servers, the bench database's backends and this process. */
const sample = (pids) => cpuSample(pids, dbName);
/** Waits until the processes have used no CPU for 400 ms (at most 15 s). */
async function waitIdle(pids) {
  let last = groupTicks(pids);
  let quiet = 0;
  for (let i = 0; i < 75 && quiet < 2; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = groupTicks(pids);
    quiet = now - last <= pids.length ? quiet + 1 : 0;
    last = now;
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const D = state.deploymentId;
const reports = `/api/v1/deployments/${D}/reports`;
const encodeCursor = (values) => Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
const uuidOf = (text) => {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

const {
  rows: [deepRow],
} = await db.query(
  `SELECT created_at, id FROM reports WHERE account_id = $1 AND deployment_id = $2
   ORDER BY created_at DESC, id DESC OFFSET $3 - 1 LIMIT 1`,
  [state.accountId, D, DEEP_ROWS],
);
const deepCursor = encodeCursor([deepRow.created_at.toISOString(), deepRow.id]);

const span = state.maxReportId - state.minReportId + 1;
const CONNECT_REPORTS = 2000;
const CONNECT_SPOTS = ['B3', 'H12'];
const connectFirst = state.minReportId + Math.floor(span * 0.2);
const DISCONNECT_POOL = Math.max(20_000, DURATION * 4_000); // placements pre-created per run
const DISCONNECT_REPORTS = Math.min(Math.ceil(DISCONNECT_POOL / 2), Math.floor(span * 0.5));
const disconnectFirst = state.minReportId + Math.floor(span * 0.4);
const DISCONNECT_SPOTS = ['C5', 'J30'];

/** Each scenario: how to reset the data before a run, and the request for the n-th call. */
const SCENARIOS = {
  get: {
    title: 'get report (random id)',
    method: 'GET',
    request: () => ({
      path: `${reports}/${state.minReportId + Math.floor(Math.random() * span)}`,
    }),
  },
  list: {
    title: 'list, page 1 (first=100)',
    method: 'GET',
    request: () => ({ path: `${reports}?first=100` }),
  },
  deep: {
    title: `list, ${DEEP_ROWS.toLocaleString('en')} rows deep`,
    method: 'GET',
    request: () => ({ path: `${reports}?first=100&after=${deepCursor}` }),
  },
  connect: {
    title: 'connect (upsert of a spot)',
    method: 'PUT',
    prepare: () => db.query(`DELETE FROM report_placements WHERE external_workbook_id LIKE 'bench-conn-%'`),
    request: (n) => {
      const reportId = connectFirst + (n % CONNECT_REPORTS);
      const anchor = CONNECT_SPOTS[Math.floor(n / CONNECT_REPORTS) % CONNECT_SPOTS.length];
      return {
        path: `${reports}/${reportId}/connect-workbook`,
        body: JSON.stringify({
          externalWorkbookId: `bench-conn-${reportId % 97}`,
          resultLocation: `'Bench data'!${anchor}:M${40 + (n % 50)}`,
          sheetId: n % 2 ? '42' : undefined,
          host: 'GOOGLE_SHEETS',
          workbookName: 'Bench workbook',
        }),
      };
    },
  },
  disconnect: {
    title: 'disconnect (removes a placement)',
    method: 'DELETE',
    prepare: async () => {
      await db.query(`DELETE FROM report_placements WHERE external_workbook_id LIKE 'bench-disc-%'`);
      await db.query(
        `INSERT INTO report_placements (account_id, report_id, placement_id, external_workbook_id, result_location,
           sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name, placed_at, placed_by_user_id)
         SELECT $1, r, md5('bench-disc-' || r || '-' || s)::uuid::text, 'bench-disc-' || (r % 89),
           'Sheet1!' || (ARRAY[$5, $6])[s] || ':F40', CASE WHEN s = 1 THEN '7' END, 'Sheet1', (ARRAY[$5, $6])[s],
           'F40', 'EXCEL', 'Bench workbook', now() - interval '1 day', $2
         FROM generate_series($3::int, $3::int + $4::int - 1) r, generate_series(1, 2) s`,
        [state.accountId, state.userId, disconnectFirst, DISCONNECT_REPORTS, ...DISCONNECT_SPOTS],
      );
    },
    remaining: async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM report_placements WHERE external_workbook_id LIKE 'bench-disc-%'`,
        )
      ).rows[0].n,
    request: (n) => {
      const i = n % (DISCONNECT_REPORTS * 2);
      const reportId = disconnectFirst + (i % DISCONNECT_REPORTS);
      const s = Math.floor(i / DISCONNECT_REPORTS);
      const body =
        n % 2 === 0
          ? { placementId: uuidOf(`bench-disc-${reportId}-${s + 1}`) }
          : {
              externalWorkbookId: `bench-disc-${reportId % 89}`,
              sheetName: 'Sheet1',
              anchorCell: DISCONNECT_SPOTS[s],
            };
      return { path: `${reports}/${reportId}/connect-workbook`, body: JSON.stringify(body) };
    },
  },
};
const chosen = args.scenarios.split(',').map((s) => s.trim());
for (const s of chosen) if (!SCENARIOS[s]) throw new Error(`unknown scenario ${s}`);

// ---------------------------------------------------------------------------------------------
// One run

const headers = { authorization: `Bearer ${state.token}`, 'content-type': 'application/json' };

/** The connections of each of the `--processes` autocannon instances: CONNECTIONS split evenly. */
const connectionsOf = (i) => Math.floor(CONNECTIONS / PROCESSES) + (i < CONNECTIONS % PROCESSES ? 1 : 0);

async function run(server, key, seconds, measure = true) {
  const scenario = SCENARIOS[key];
  await scenario.prepare?.();
  let sent = 0; // one counter for all instances: they share the sequence of requests
  const before = measure ? { ...sample(server.pids), placements: await scenario.remaining?.() } : null;
  if (measure) resetHwm(server.pids);
  // One autocannon instance per server process, all at once; their histograms are merged.
  const parts = await Promise.all(
    server.procs.map((proc, i) =>
      autocannon({
        url: proc.base,
        connections: connectionsOf(i),
        duration: seconds,
        headers,
        skipAggregateResult: true,
        requests: [
          {
            method: scenario.method,
            setupRequest: (req) => {
              const r = scenario.request(sent++);
              return { ...req, path: r.path, body: r.body };
            },
          },
        ],
      }),
    ),
  );
  const result = autocannon.aggregateResult(parts, { url: server.procs[0].base, connections: CONNECTIONS });
  // aggregateResult takes the duration of the first instance: take the longest.
  result.duration = Math.max(...parts.map((r) => r.duration));
  // Requests still in flight when autocannon stops are processed by the server all the same:
  // wait until it is idle, then charge its CPU time to every request sent.
  await waitIdle(server.pids);
  if (!measure) return null;
  const ticks = cpuBetween(before, sample(server.pids));
  const ms = (t) => (t / CLK_TCK) * 1000;
  const out = {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMsPerReq: ms(ticks.server) / Math.max(1, sent),
    dbCpuMsPerReq: ms(ticks.pg) / Math.max(1, sent),
    peakRssMb: hwmMb(server.pids),
    requests: sent,
    completed: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    // CPU used by anything else on the machine (other people's tests...), as a share of all cores.
    othersCpuPct: (100 * ticks.others) / Math.max(1, ticks.total),
  };
  if (scenario.remaining) {
    const removed = before.placements - (await scenario.remaining());
    out.removedShare = removed / Math.max(1, sent);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main

/** The command line of each server, by name. */
const SERVER_COMMANDS = {
  service: () => [
    [`${DIST}/src/main.js`],
    {
      ...productionEnv,
      REDIS_URL,
      QUEUE_PREFIX: 'bench',
      // One key for all the service's processes.
      SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
    },
  ],
  before: () => {
    const [, env] = SERVER_COMMANDS.service();
    return [[`${BEFORE_DIST}/src/main.js`], env];
  },
  baseline: () => [['bench/baseline.mjs'], { BENCH_DIST: DIST }],
  // The yardstick of issue 17: statements sent unnamed, as a plain pool.query(text, values) server
  // does. Against it the build before issue 17 measures the issue's 0.13 (docs/performance.md).
  plain: () => [['bench/plain.mjs'], { PLAIN_STATEMENTS: 'unnamed' }],
  // The same server with every statement prepared: the stricter comparison, shown beside it.
  'plain-prepared': () => [['bench/plain.mjs'], {}],
};

const servers = {};
const removeBuilds = () => {
  if (needsDist) removeDir(DIST);
  removeDir(BEFORE_DIST);
};
// Ctrl-C or a kill: stop the servers before leaving (the finally below does not run then).
const offInterrupt = onInterrupt(removeBuilds);

try {
  for (const name of names) {
    const [argv, env] = SERVER_COMMANDS[name]();
    servers[name] = await startGroup(name, argv, env);
  }
  const startupPeak = Object.fromEntries(names.map((n) => [n, hwmMb(servers[n].pids)]));

  // Sanity checks of the read scenarios (not timed): every server answers 200 with the same rows,
  // and the service and the baseline (same SQL, same mapping) with the same bytes.
  for (const key of ['get', 'list', 'deep']) {
    const { path: p } =
      key === 'get' ? { path: `${reports}/${state.minReportId + 7}` } : SCENARIOS[key].request(0);
    const answers = {};
    for (const name of names) {
      const res = await fetch(servers[name].procs[0].base + p, { headers });
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`${key}: the ${name} server answered ${res.status} ${text.slice(0, 300)}`);
      answers[name] = text;
    }
    if (
      answers.service !== undefined &&
      answers.baseline !== undefined &&
      answers.service !== answers.baseline
    ) {
      console.warn(`warning: ${key}: the service and the baseline answer differently`);
    }
    const rows = {};
    for (const name of names) {
      const body = JSON.parse(answers[name]);
      if (key === 'get') {
        rows[name] = `report ${body.id} with ${body.placements?.length ?? 0} placements`;
        continue;
      }
      if (body.items.length !== 100 || body.pageInfo.hasPreviousPage !== (key === 'deep')) {
        throw new Error(
          `${key}: expected a full page of 100 from the ${name} server (got ${body.items.length})`,
        );
      }
      rows[name] = body.items.map((r) => r.id).join(',');
    }
    if (new Set(Object.values(rows)).size > 1) {
      console.warn(
        `warning: ${key}: the servers answer different rows: ${JSON.stringify(rows).slice(0, 300)}`,
      );
    }
  }

  console.log(
    `${CONNECTIONS} connections, ${DURATION}s per run, ${ROUNDS} rounds, warm-up ${WARMUP}s; ` +
      `servers on Node ${NODE_VERSION} (${NODE}), ${PROCESSES} process(es) each; ` +
      names.map((n) => `${n} pid ${servers[n].pids.join('+')}`).join(', '),
  );
  const results = {};
  for (const key of chosen) {
    for (const name of names) await run(servers[name], key, WARMUP, false);
    const runs = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates every round (with two servers: it flips).
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) {
        const r = await run(servers[name], key, DURATION);
        runs[name].push(r);
        console.log(
          `  ${key.padEnd(10)} round ${round + 1} ${name.padEnd(8)} ${r.rps.toFixed(0).padStart(6)} req/s` +
            `  p50 ${r.p50} ms  p99 ${r.p99} ms  cpu ${r.cpuMsPerReq.toFixed(2)} ms/req` +
            `  db ${r.dbCpuMsPerReq.toFixed(2)} ms/req  peak ${r.peakRssMb.toFixed(0)} MB` +
            `  others ${r.othersCpuPct.toFixed(0)}%` +
            (r.non2xx || r.errors ? `  non-2xx ${r.non2xx} errors ${r.errors}` : '') +
            (r.removedShare !== undefined ? `  removed ${(r.removedShare * 100).toFixed(0)}%` : ''),
        );
      }
    }
    const summary = (rs) => ({
      rps: median(rs.map((r) => r.rps)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      cpuMsPerReq: median(rs.map((r) => r.cpuMsPerReq)),
      dbCpuMsPerReq: median(rs.map((r) => r.dbCpuMsPerReq)),
      othersCpuPct: median(rs.map((r) => r.othersCpuPct)),
      peakRssMb: Math.max(...rs.map((r) => r.peakRssMb)),
      non2xx: rs.reduce((a, r) => a + r.non2xx + r.errors, 0),
      ...(rs[0].removedShare !== undefined ? { removedShare: median(rs.map((r) => r.removedShare)) } : {}),
    });
    results[key] = {
      title: SCENARIOS[key].title,
      ...Object.fromEntries(names.map((n) => [n, summary(runs[n])])),
      runs,
    };
  }

  // Targets: issue 17's against the minimal plain server, then the earlier ones against the baseline.
  const f = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(d));
  const targets = [];
  const target = (against, name, measured, limit, pass, detail) =>
    targets.push({ against, name, measured, limit, pass, detail });
  const has = (key, ...servers) => results[key] !== undefined && servers.every((s) => results[key][s]);
  const ratio = (key, field, other) => results[key].service[field] / results[key][other][field];
  const peak = (name) => Math.max(...Object.values(results).map((r) => r[name].peakRssMb));
  const anyResults = Object.keys(results).length > 0;

  const ISSUE = 'plain (issue 17)';
  if (has('get', 'service', 'plain')) {
    const rps = ratio('get', 'rps', 'plain');
    const p99 = ratio('get', 'p99', 'plain');
    const limit = `>= ${GET_VS_PLAIN.toFixed(2)}`;
    target(ISSUE, `get report: throughput (Node ${NODE_MAJOR})`, rps, limit, rps >= GET_VS_PLAIN);
    target(ISSUE, 'get report: p99', p99, '<= 2.50', p99 <= 2.5);
  }
  if (has('list', 'service')) {
    // Against the earlier build measured in the same run when there is one, else --list-before.
    const measured = has('list', 'before');
    const before = measured ? results.list.before.rps : LIST_BEFORE;
    const r = results.list.service.rps / before;
    const detail = `${f(results.list.service.rps)} req/s vs ${f(before)} req/s before`;
    const against = measured ? 'before (--before, same run)' : 'before (--list-before)';
    target(against, 'list page 1: throughput', r, '>= 2.00', r >= 2, detail);
  }
  if (has('list', 'service') && has('deep', 'service')) {
    const p50 = results.deep.service.p50 / results.list.service.p50;
    const thr = results.list.service.rps / results.deep.service.rps;
    target('page 1 (service)', 'deep page: p50', p50, '<= 1.20', p50 <= 1.2);
    target('page 1 (service)', 'deep page: time per request (1/throughput)', thr, '<= 1.20', thr <= 1.2);
  }
  if (has('connect', 'service', 'plain')) {
    const r = ratio('connect', 'rps', 'plain');
    target(ISSUE, 'connect: throughput', r, '>= 0.50', r >= 0.5);
  }
  if (anyResults && names.includes('service') && names.includes('plain')) {
    const r = peak('service') / peak('plain');
    const detail = `${f(peak('service'))} MB vs ${f(peak('plain'))} MB`;
    target(ISSUE, 'peak memory', r, '<= 2.50', r <= 2.5, detail);
  }

  const EARLIER = 'baseline (earlier comparison)';
  if (has('get', 'service', 'baseline')) {
    const rps = ratio('get', 'rps', 'baseline');
    const p99 = ratio('get', 'p99', 'baseline');
    target(EARLIER, 'get report: throughput', rps, '>= 0.60', rps >= 0.6);
    target(EARLIER, 'get report: p99', p99, '<= 2.00', p99 <= 2);
  }
  for (const key of ['list', 'connect']) {
    if (!has(key, 'service', 'baseline')) continue;
    const r = ratio(key, 'rps', 'baseline');
    target(EARLIER, `${key === 'list' ? 'list page 1' : 'connect'}: throughput`, r, '>= 0.55', r >= 0.55);
  }
  if (anyResults && names.includes('service') && names.includes('baseline')) {
    const r = peak('service') / peak('baseline');
    const detail = `${f(peak('service'))} MB vs ${f(peak('baseline'))} MB`;
    target(EARLIER, 'peak memory', r, '<= 2.50', r <= 2.5, detail);
  }

  // Report
  const lines = [
    `| scenario | server | req/s | p50 ms | p99 ms | CPU ms/req | DB CPU ms/req | peak RSS MB | req/s vs baseline | req/s vs plain | p99 vs plain | req/s vs plain-prepared | others' CPU |`,
    `|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const r of Object.values(results)) {
    for (const name of names) {
      const m = r[name];
      const note = m.removedShare !== undefined ? ` (removed a placement: ${f(m.removedShare * 100)}%)` : '';
      const bad = m.non2xx ? ` (non-2xx/errors: ${m.non2xx})` : '';
      const vsBaseline = name === 'service' && r.baseline ? f(m.rps / r.baseline.rps, 2) : '';
      const isPlain = name.startsWith('plain');
      const vsPlain = !isPlain && r.plain ? f(m.rps / r.plain.rps, 2) : '';
      const p99VsPlain = !isPlain && r.plain ? f(m.p99 / r.plain.p99, 2) : '';
      const prepared = r['plain-prepared'];
      const vsPrepared = !isPlain && prepared ? f(m.rps / prepared.rps, 2) : '';
      lines.push(
        `| ${r.title}${note}${bad} | ${name} | ${f(m.rps)} | ${f(m.p50, 1)} | ${f(m.p99, 1)} | ${f(m.cpuMsPerReq, 2)} | ${f(m.dbCpuMsPerReq, 2)} | ${f(m.peakRssMb)} | ${vsBaseline} | ${vsPlain} | ${p99VsPlain} | ${vsPrepared} | ${f(m.othersCpuPct)}% |`,
      );
    }
  }
  lines.push('', '| target | against | measured | limit | result |', '|---|---|---:|---:|---|');
  for (const t of targets) {
    lines.push(
      `| ${t.name}${t.detail ? ` (${t.detail})` : ''} | ${t.against} | ${t.measured.toFixed(2)} | ${t.limit} | ${t.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  const acCommand = (key) => {
    const s = SCENARIOS[key];
    const sample = s.request(0);
    const c = PROCESSES > 1 ? `${connectionsOf(0)}` : `${CONNECTIONS}`;
    return (
      `autocannon -c ${c} -d ${DURATION} -m ${s.method} -H "Authorization: Bearer $TOKEN"` +
      (sample.body ? ` -H "Content-Type: application/json" -b '${sample.body}'` : '') +
      ` "http://127.0.0.1:PORT${sample.path}"` +
      (PROCESSES > 1 ? `  # x ${PROCESSES} at once, one per server process (PORT)` : '') +
      (['get', 'connect', 'disconnect'].includes(key) ? '  # path/body vary per request (setupRequest)' : '')
    );
  };
  const nodeOption = NODE === process.execPath ? '' : ` --node ${path.relative(root, NODE)}`;
  const commands = {
    bench:
      `node bench/run.mjs --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --warmup ${WARMUP}` +
      ` --scenarios ${chosen.join(',')} --deep-rows ${DEEP_ROWS} --servers ${names.join(',')}` +
      ` --processes ${PROCESSES} --list-before ${LIST_BEFORE}${nodeOption}`,
    ...Object.fromEntries(
      names.map((n) => [n, PROCESSES === 1 ? servers[n].commands[0] : servers[n].commands]),
    ),
    autocannon: Object.fromEntries(chosen.map((k) => [k, acCommand(k)])),
  };
  const noisy = Object.values(results).some((r) => names.some((n) => r[n].othersCpuPct > 10));
  if (noisy) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some runs: figures are disturbed.',
    );
  }
  const table = lines.join('\n');
  console.log(`\n${table}\n`);
  console.log(
    `servers on Node ${NODE_VERSION} (${NODE}), ${PROCESSES} process(es) each; startup peak RSS: ` +
      names.map((n) => `${n} ${f(startupPeak[n])} MB`).join(', '),
  );
  for (const n of names)
    console.log(`${`${n}:`.padEnd(10)}${[commands[n]].flat().join(`\n${' '.repeat(10)}`)}`);

  const {
    rows: [pgVersion],
  } = await db.query(`SELECT current_setting('server_version') AS v`);
  const out = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      memoryMb: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
      serverNode: NODE_VERSION,
      postgres: pgVersion.v,
    },
    build: { dist: SOURCE_DIST, stamp: buildStamp },
    options: {
      rounds: ROUNDS,
      duration: DURATION,
      connections: CONNECTIONS,
      warmup: WARMUP,
      deepRows: DEEP_ROWS,
      servers: names,
      node: NODE,
      nodeVersion: NODE_VERSION,
      processes: PROCESSES,
      listBefore: LIST_BEFORE,
      poolSize: Number(POOL_SIZE),
      redis: REDIS_URL || null,
    },
    dataset: state.stats,
    commands,
    startupPeakRssMb: startupPeak,
    results,
    targets,
    table,
  };
  const dir = path.join(here, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(out, null, 2)}\n`;
  fs.writeFileSync(path.join(dir, 'latest.json'), text);
  fs.writeFileSync(path.join(dir, `${out.date.replace(/[:.]/g, '-')}.json`), text);
  console.log(`wrote bench/results/latest.json`);
} finally {
  await stopAllServices();
  offInterrupt();
  removeBuilds();
  await db.query(`DELETE FROM report_placements WHERE external_workbook_id LIKE 'bench-%'`).catch(() => {});
  await db.end();
}
