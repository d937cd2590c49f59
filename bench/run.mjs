// Benchmarks the reports API against the plain node:http + pg baseline (bench/baseline.mjs) on the
// database seeded by bench/seed.mjs, side by side, and checks the targets.
//
//   node bench/seed.mjs      # once: recreates the `bench` database, writes bench/.state.json
//   node bench/run.mjs [--rounds 3] [--duration 10] [--connections 32] [--warmup 3]
//                      [--scenarios get,list,deep,connect,disconnect] [--deep-rows 90000]
//
// Env: BENCH_DIST (the built service, default dist; copied to bench/results/.dist-<pid> for the
// duration of the bench, so a rebuild meanwhile does not touch the servers), BENCH_REDIS_URL (Redis for the service's
// queues, default redis://127.0.0.1:6379; empty = none, jobs in process), DATABASE_POOL_SIZE
// (both servers, default 10 as the service's default).
//
// It starts both servers as child processes on free ports (the service as in production:
// NODE_ENV=production, ALLOW_HTTP=true, LOG_LEVEL=silent, RATE_LIMIT_MAX=1000000), warms each
// scenario up on both, then for every scenario runs the two servers ALTERNATELY (`--rounds`
// rounds; the order flips every round) with autocannon, and reports per server the median
// requests/s (2xx per second), p50 and p99 latency, CPU time per request (utime+stime of the
// server process from /proc/<pid>/stat, over the run, divided by the requests sent) and the
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
//              the database and encoded as encodeCursor in src/core/http/pagination.ts)
//   connect    PUT connect-workbook: 2,000 reports x 2 spots in rotation; the first pass inserts,
//              later passes update (bench placements are deleted before each run)
//   disconnect DELETE connect-workbook of placements created before each run (2 per report on
//              enough reports for the run); half addressed by placementId, half by spreadsheet +
//              sheet + anchor. The share of requests that removed a placement is reported.
//
// Prints Markdown tables and writes bench/results/latest.json (also a timestamped copy).
/* global fetch */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '3' },
    scenarios: { type: 'string', default: 'get,list,deep,connect,disconnect' },
    'deep-rows': { type: 'string', default: '90000' },
  },
});
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP = Number(args.warmup);
const DEEP_ROWS = Number(args['deep-rows']);
const SOURCE_DIST = process.env.BENCH_DIST ?? 'dist';
// Both servers run a private copy of the build, so a rebuild during the bench changes neither.
// It lives under bench/results/ (gitignored), where node still resolves the repository's node_modules.
const DIST = `bench/results/.dist-${process.pid}`;
if (!fs.existsSync(path.join(root, SOURCE_DIST, 'src/main.js')))
  throw new Error(`${SOURCE_DIST}/src/main.js is missing`);
fs.cpSync(path.join(root, SOURCE_DIST), path.join(root, DIST), { recursive: true });
const buildStamp = fs.existsSync(path.join(root, DIST, '.build-stamp'))
  ? fs.readFileSync(path.join(root, DIST, '.build-stamp'), 'utf8').trim()
  : null;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POOL_SIZE = process.env.DATABASE_POOL_SIZE ?? '10';
const CLK_TCK = 100; // USER_HZ on Linux (`getconf CLK_TCK`)

const stateFile = path.join(here, '.state.json');
if (!fs.existsSync(stateFile)) throw new Error('bench/.state.json is missing: run node bench/seed.mjs first');
const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
const DATABASE_URL = state.databaseUrl;
const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();

// ---------------------------------------------------------------------------------------------
// Servers

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startServer(name, argv, env) {
  const port = await freePort();
  const fullEnv = {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL,
    DATABASE_POOL_SIZE: POOL_SIZE,
  };
  const child = spawn(process.execPath, argv, {
    cwd: root,
    env: { ...process.env, ...fullEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((_, reject) =>
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}):\n${stderr}`))),
  );
  const base = `http://127.0.0.1:${port}`;
  const ready = (async () => {
    for (;;) {
      try {
        if ((await fetch(`${base}/health/live`)).ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.race([ready, exited]);
  exited.catch(() => {});
  const shown = Object.entries(fullEnv)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return { name, child, pid: child.pid, port, base, command: `${shown} node ${argv.join(' ')}` };
}

const procStat = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks
};
const hwmMb = (pid) =>
  Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const resetHwm = (pid) => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');

const dbName = decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1));
/** CPU ticks of each PostgreSQL backend serving the bench database (its title names it), by pid. */
function pgTicks() {
  const ticks = new Map();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${dbName} `)) ticks.set(pid, procStat(pid));
    } catch {
      /* gone */
    }
  }
  return ticks;
}
/**
 * Ticks the bench database's backends used between two samples. A backend that went away in
 * between (a pool closing an idle connection) is left out: idle, it used next to nothing.
 */
const pgDelta = (before, after) => {
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
};
/** Machine-wide busy and total ticks (/proc/stat), the server's, the database's and our own. */
function sample(pid) {
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
    server: procStat(pid),
    pg: pgTicks(),
    self: ((self.user + self.system) / 1e6) * CLK_TCK,
  };
}
/** Waits until the process has used no CPU for 400 ms (at most 15 s). */
async function waitIdle(pid) {
  let last = procStat(pid);
  let quiet = 0;
  for (let i = 0; i < 75 && quiet < 2; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = procStat(pid);
    quiet = now - last <= 1 ? quiet + 1 : 0;
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

async function run(server, key, seconds, measure = true) {
  const scenario = SCENARIOS[key];
  await scenario.prepare?.();
  let sent = 0;
  const before = measure ? { ...sample(server.pid), placements: await scenario.remaining?.() } : null;
  if (measure) resetHwm(server.pid);
  const result = await autocannon({
    url: server.base,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    requests: [
      {
        method: scenario.method,
        setupRequest: (req) => {
          const r = scenario.request(sent++);
          return { ...req, path: r.path, body: r.body };
        },
      },
    ],
  });
  // Requests still in flight when autocannon stops are processed by the server all the same:
  // wait until it is idle, then charge its CPU time to every request sent.
  await waitIdle(server.pid);
  if (!measure) return null;
  const after = sample(server.pid);
  const ms = (ticks) => (ticks / CLK_TCK) * 1000;
  const serverTicks = after.server - before.server;
  const pgTicks = pgDelta(before.pg, after.pg);
  const otherTicks = after.busy - before.busy - serverTicks - pgTicks - (after.self - before.self);
  const out = {
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMsPerReq: ms(serverTicks) / Math.max(1, sent),
    dbCpuMsPerReq: ms(pgTicks) / Math.max(1, sent),
    peakRssMb: hwmMb(server.pid),
    requests: sent,
    completed: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    // CPU used by anything else on the machine (other people's tests...), as a share of all cores.
    othersCpuPct: (100 * Math.max(0, otherTicks)) / Math.max(1, after.total - before.total),
  };
  if (scenario.remaining) {
    const removed = before.placements - (await scenario.remaining());
    out.removedShare = removed / Math.max(1, sent);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const servers = {};
try {
  servers.service = await startServer('service', [`${DIST}/src/main.js`], {
    NODE_ENV: 'production',
    ALLOW_HTTP: 'true',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    MIGRATIONS_RUN: 'false',
    REDIS_URL,
    QUEUE_PREFIX: 'bench',
    SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
  });
  servers.baseline = await startServer('baseline', ['bench/baseline.mjs'], { BENCH_DIST: DIST });
  const startupPeak = { service: hwmMb(servers.service.pid), baseline: hwmMb(servers.baseline.pid) };

  // Same answers from both for the read scenarios (a sanity check of the baseline, not timed).
  for (const key of ['get', 'list', 'deep']) {
    const { path: p } =
      key === 'get' ? { path: `${reports}/${state.minReportId + 7}` } : SCENARIOS[key].request(0);
    const [a, b] = await Promise.all(
      [servers.service, servers.baseline].map(async (s) => {
        const res = await fetch(s.base + p, { headers });
        return `${res.status} ${await res.text()}`;
      }),
    );
    if (!a.startsWith('200 ')) throw new Error(`${key}: the service answered ${a.slice(0, 300)}`);
    if (!b.startsWith('200 ')) throw new Error(`${key}: the baseline answered ${b.slice(0, 300)}`);
    if (a !== b) console.warn(`warning: ${key}: the service and the baseline answer differently`);
    if (key !== 'get') {
      const page = JSON.parse(a.slice(4));
      if (page.items.length !== 100 || page.pageInfo.hasPreviousPage !== (key === 'deep')) {
        throw new Error(`${key}: expected a full page of 100 (got ${page.items.length})`);
      }
    }
  }

  console.log(
    `${CONNECTIONS} connections, ${DURATION}s per run, ${ROUNDS} rounds, warm-up ${WARMUP}s; ` +
      `service pid ${servers.service.pid}, baseline pid ${servers.baseline.pid}`,
  );
  const results = {};
  for (const key of chosen) {
    for (const s of Object.values(servers)) await run(s, key, WARMUP, false);
    const runs = { service: [], baseline: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
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
      service: summary(runs.service),
      baseline: summary(runs.baseline),
      runs,
    };
  }

  // Targets
  const targets = [];
  const target = (name, measured, limit, pass, detail) =>
    targets.push({ name, measured, limit, pass, detail });
  const ratio = (key, field) => results[key].service[field] / results[key].baseline[field];
  if (results.get) {
    target('get report: throughput vs baseline', ratio('get', 'rps'), '>= 0.60', ratio('get', 'rps') >= 0.6);
    target('get report: p99 vs baseline', ratio('get', 'p99'), '<= 2.00', ratio('get', 'p99') <= 2);
  }
  if (results.list) {
    target(
      'list page 1: throughput vs baseline',
      ratio('list', 'rps'),
      '>= 0.55',
      ratio('list', 'rps') >= 0.55,
    );
  }
  if (results.connect) {
    target(
      'connect: throughput vs baseline',
      ratio('connect', 'rps'),
      '>= 0.55',
      ratio('connect', 'rps') >= 0.55,
    );
  }
  if (results.list && results.deep) {
    const p50 = results.deep.service.p50 / results.list.service.p50;
    const thr = results.list.service.rps / results.deep.service.rps;
    target(`deep page vs page 1 (service), p50`, p50, '<= 1.20', p50 <= 1.2);
    target(`deep page vs page 1 (service), time per request (1/throughput)`, thr, '<= 1.20', thr <= 1.2);
  }
  const peak = (name) => Math.max(...Object.values(results).map((r) => r[name].peakRssMb));
  const memRatio = peak('service') / peak('baseline');
  target(
    'peak memory vs baseline',
    memRatio,
    '<= 2.50',
    memRatio <= 2.5,
    `${peak('service').toFixed(0)} MB vs ${peak('baseline').toFixed(0)} MB`,
  );

  // Report
  const f = (x, d = 0) => (x === undefined ? '' : x.toFixed(d));
  const lines = [
    `| scenario | server | req/s | p50 ms | p99 ms | CPU ms/req | DB CPU ms/req | peak RSS MB | req/s vs baseline | others' CPU |`,
    `|---|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const r of Object.values(results)) {
    for (const name of ['service', 'baseline']) {
      const m = r[name];
      const note = m.removedShare !== undefined ? ` (removed a placement: ${f(m.removedShare * 100)}%)` : '';
      const bad = m.non2xx ? ` (non-2xx/errors: ${m.non2xx})` : '';
      lines.push(
        `| ${r.title}${note}${bad} | ${name} | ${f(m.rps)} | ${f(m.p50, 1)} | ${f(m.p99, 1)} | ${f(m.cpuMsPerReq, 2)} | ${f(m.dbCpuMsPerReq, 2)} | ${f(m.peakRssMb)} | ${name === 'service' ? f(m.rps / r.baseline.rps, 2) : ''} | ${f(m.othersCpuPct)}% |`,
      );
    }
  }
  lines.push('', '| target | measured | limit | result |', '|---|---:|---:|---|');
  for (const t of targets) {
    lines.push(
      `| ${t.name}${t.detail ? ` (${t.detail})` : ''} | ${t.measured.toFixed(2)} | ${t.limit} | ${t.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  const acCommand = (key) => {
    const s = SCENARIOS[key];
    const sample = s.request(0);
    return (
      `autocannon -c ${CONNECTIONS} -d ${DURATION} -m ${s.method} -H "Authorization: Bearer $TOKEN"` +
      (sample.body ? ` -H "Content-Type: application/json" -b '${sample.body}'` : '') +
      ` "http://127.0.0.1:PORT${sample.path}"` +
      (['get', 'connect', 'disconnect'].includes(key) ? '  # path/body vary per request (setupRequest)' : '')
    );
  };
  const commands = {
    bench: `node bench/run.mjs --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --warmup ${WARMUP} --scenarios ${chosen.join(',')} --deep-rows ${DEEP_ROWS}`,
    service: servers.service.command,
    baseline: servers.baseline.command,
    autocannon: Object.fromEntries(chosen.map((k) => [k, acCommand(k)])),
  };
  const noisy = Object.values(results).some(
    (r) => r.service.othersCpuPct > 10 || r.baseline.othersCpuPct > 10,
  );
  if (noisy) {
    lines.push(
      '',
      'Other processes used more than 10% of the machine during some runs: figures are disturbed.',
    );
  }
  const table = lines.join('\n');
  console.log(`\n${table}\n`);
  console.log(
    `startup peak RSS: service ${startupPeak.service.toFixed(0)} MB, baseline ${startupPeak.baseline.toFixed(0)} MB`,
  );
  console.log(`service:  ${commands.service}\nbaseline: ${commands.baseline}`);

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
      postgres: pgVersion.v,
    },
    build: { dist: SOURCE_DIST, stamp: buildStamp },
    options: {
      rounds: ROUNDS,
      duration: DURATION,
      connections: CONNECTIONS,
      warmup: WARMUP,
      deepRows: DEEP_ROWS,
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
  for (const s of Object.values(servers)) s.child.kill('SIGTERM');
  fs.rmSync(path.join(root, DIST), { recursive: true, force: true });
  await db.query(`DELETE FROM report_placements WHERE external_workbook_id LIKE 'bench-%'`).catch(() => {});
  await db.end();
}
