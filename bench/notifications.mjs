// Benchmarks scheduled notifications (issue 16) end to end through the built service, on real
// PostgreSQL and Redis and a database of its own: one firing of a notification with N recipients
// (default 1000 embed users sharing one security context, so the dashboard is rendered once) and
// the time until every one of them was accepted by an SMTP server on loopback.
//
//   firing      the schedule's `next_run_at` is set to now; the relay's tick (every 200 ms) fires
//               it, the `notification.run` job reads the report from a data API on loopback,
//               renders the email and the PDF (headless Chromium), records N deliveries and queues
//               N `notification.deliver` jobs, which mail one recipient each
//   measured    from the run row's `created_at` to the last delivery's `sent_at` (PostgreSQL's
//               clock), and the delivery phase alone (first delivery recorded to last sent)
//
//   npm run build
//   node bench/notifications.mjs [--dist dist] [--recipients 1000] [--repeat 3] [--keep-db]
//
// Env: BENCH_NOTIFY_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_notify_<pid>;
// DROPPED and recreated, migrated and bootstrapped through the service's CLI, dropped at the end),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379; the API runs its jobs in process through Bull,
// under a queue prefix of this run whose keys are deleted at the end), CHROMIUM_PATH.
//
// Prints a Markdown table and one JSON line.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import {
  api as request,
  benchOptions,
  databaseName,
  deleteQueueKeys,
  deploymentBody,
  dropDatabase,
  median,
  migrateAndBootstrap,
  onInterrupt,
  positiveInt,
  productionEnv,
  recreateDatabase,
  root,
  startService,
  stepper,
  stopAllServices,
} from './service.mjs';

const { values: args } = parseArgs({
  options: {
    ...benchOptions,
    recipients: { type: 'string', default: '1000' },
    repeat: { type: 'string', default: '3' },
  },
});
const RECIPIENTS = positiveInt(args, 'recipients');
const REPEAT = positiveInt(args, 'repeat');
const DIST = args.dist;
if (!fs.existsSync(path.join(root, DIST, 'src/modules/notifications/notification-run.job.js'))) {
  throw new Error(`${DIST} has no notifications: build the current sources (npm run build)`);
}
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL =
  process.env.BENCH_NOTIFY_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/bench_notify_${process.pid}`;
const dbName = databaseName(DATABASE_URL);
const QUEUE_PREFIX = `bench-notify-${process.pid}`;
const SECRET = randomBytes(24).toString('hex');

const step = stepper();

let server = null;
let db = null;
let smtp = null;
let dataApi = null;
let accepted = 0;

let cleaned = false;
async function cleanUp() {
  if (cleaned) return;
  cleaned = true;
  await stopAllServices();
  await db?.end().catch(() => {});
  await new Promise((r) => (smtp ? smtp.close(r) : r()));
  await new Promise((r) => (dataApi ? dataApi.close(r) : r()));
  await deleteQueueKeys(REDIS_URL, QUEUE_PREFIX);
  if (!args['keep-db']) await dropDatabase(DATABASE_URL);
}
onInterrupt(cleanUp);

/** An SMTP server on loopback that accepts every message (and counts them). */
async function startSmtp() {
  smtp = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    closeTimeout: 500,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        accepted += 1;
        callback();
      });
    },
  });
  await new Promise((r) => smtp.listen(0, '127.0.0.1', r));
  return smtp.server.address().port;
}

/** A data API on loopback: every load answers the same 20 rows (tokens are not checked here). */
async function startDataApi() {
  const rows = Array.from({ length: 20 }, (_, i) => ({
    'Orders.status': `status-${i}`,
    'Orders.count': `${i * 7}`,
  }));
  dataApi = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: rows }));
    });
  });
  await new Promise((r) => dataApi.listen(0, '127.0.0.1', r));
  return dataApi.address().port;
}

async function main() {
  step(`database ${dbName}`);
  await recreateDatabase(DATABASE_URL);
  const { token } = migrateAndBootstrap(DIST, DATABASE_URL, { account: 'bench', email: 'admin@bench.test' });
  const smtpPort = await startSmtp();
  const dataPort = await startDataApi();
  step('starting the service');
  server = await startService({
    name: 'the service',
    argv: [`${DIST}/src/main.js`],
    env: {
      ...productionEnv,
      REDIS_URL,
      RUN_JOBS_IN_PROCESS: 'true',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      QUEUE_PREFIX,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      REPOS_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-notify-repos-')),
      DATABASE_URL,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SMTP_FROM: 'Reports <reports@bench.test>',
      DATA_API_URL_TEMPLATE: `http://127.0.0.1:${dataPort}`,
      DASHBOARD_URL_TEMPLATE: 'https://console.bench.test/d/{publicId}',
      // An account's bounds (500 recipients, 5,000 deliveries an hour by default) must not cut the runs short.
      NOTIFICATION_MAX_RECIPIENTS: String(Math.max(RECIPIENTS, 500)),
      NOTIFICATION_MAX_DELIVERIES_PER_HOUR: String(Math.max(RECIPIENTS * REPEAT, 5000)),
      // Each repeat fires the schedule at once, whatever its cron says: no minimum interval.
      NOTIFICATION_MIN_INTERVAL_MINUTES: '1',
      ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
    },
    hide: ['SECRETS_KEY'],
  });
  const api = (method, url, body) => request(server.base, method, url, body, { token });
  db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();

  step('a deployment, a dashboard and a notification');
  const dep = (await api('POST', '/build/api/v1/deployments', deploymentBody('Notified'))).id;
  await api('PUT', `/api/v1/deployments/${dep}/env-vars`, {
    env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }],
  });
  const wb = (await api('POST', `/api/v1/deployments/${dep}/workbooks`, { name: 'Sales' })).id;
  const report = await api('POST', `/api/v1/deployments/${dep}/reports`, {
    name: 'Orders by status',
    workbookId: wb,
    jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
  });
  const dashboard = await api('POST', `/api/v1/deployments/${dep}/workbooks/${wb}/publish`, {
    workbookId: wb,
    title: 'Bench dashboard',
    config: {
      widgets: [
        { id: 'w', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { reportId: report.id } },
      ],
    },
  });
  const n = await api('POST', `/api/v1/deployments/${dep}/notifications`, {
    dashboardId: dashboard.id,
    scheduleType: 'DAILY',
    hour: 3,
  });
  step(`${RECIPIENTS} recipients`);
  const t0 = performance.now();
  for (let i = 0; i < RECIPIENTS; i += 1000) {
    const recipients = [];
    for (let k = i; k < Math.min(i + 1000, RECIPIENTS); k++) {
      recipients.push({ type: 'EMBED_USER', embedTenantName: 'bench', externalId: `reader${k}@bench.test` });
    }
    await api('POST', `/api/v1/deployments/${dep}/notifications/${n.id}/recipients`, { recipients });
  }
  const addMs = performance.now() - t0;

  const results = [];
  for (let r = 0; r < REPEAT; r++) {
    const before = accepted;
    await db.query(`UPDATE job_schedules SET next_run_at = now() - interval '1 second' WHERE owner = $1`, [
      `notification:${n.id}`,
    ]);
    const wall = performance.now();
    let runId = null;
    for (;;) {
      if (performance.now() - wall > 600_000) throw new Error('the run did not finish within 10 minutes');
      const { rows } = await db.query(
        `SELECT r.id, count(d.id)::int AS total, count(d.id) FILTER (WHERE d.status = 'sent')::int AS sent,
           count(d.id) FILTER (WHERE d.status IN ('failed', 'unknown'))::int AS bad
         FROM notification_runs r LEFT JOIN notification_deliveries d ON d.run_id = r.id
         WHERE r.notification_id = $1 GROUP BY r.id ORDER BY r.id DESC LIMIT 1`,
        [n.id],
      );
      const row = rows[0];
      if (row && row.id !== results.at(-1)?.runId) {
        runId = row.id;
        if (row.bad > 0) throw new Error(`${row.bad} deliveries failed`);
        if (row.sent === RECIPIENTS) break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    const { rows } = await db.query(
      `SELECT extract(epoch FROM (max(d.sent_at) - r.created_at)) * 1000 AS "totalMs",
         extract(epoch FROM (max(d.sent_at) - min(d.created_at))) * 1000 AS "deliverMs",
         extract(epoch FROM (min(d.created_at) - r.created_at)) * 1000 AS "renderMs"
       FROM notification_runs r JOIN notification_deliveries d ON d.run_id = r.id WHERE r.id = $1
       GROUP BY r.created_at`,
      [runId],
    );
    const m = rows[0];
    results.push({
      runId,
      totalMs: Number(m.totalMs),
      renderMs: Number(m.renderMs),
      deliverMs: Number(m.deliverMs),
      perMinute: (RECIPIENTS / Number(m.deliverMs)) * 60_000,
      perMinuteOverall: (RECIPIENTS / Number(m.totalMs)) * 60_000,
      smtpAccepted: accepted - before,
    });
    step(`run ${r + 1}: ${Math.round(m.totalMs)} ms, ${results.at(-1).smtpAccepted} messages accepted`);
  }

  const table = [
    `| ${RECIPIENTS} recipients, one rendering | Median | Runs |`,
    '|---|---:|---:|',
    `| Adding the recipients (one request per 1000) | ${Math.round(addMs)} ms | 1 |`,
    `| Run start to deliveries recorded (data API, HTML, PDF) | ${Math.round(median(results.map((x) => x.renderMs)))} ms | ${REPEAT} |`,
    `| Deliveries recorded to the last accepted | ${Math.round(median(results.map((x) => x.deliverMs)))} ms | ${REPEAT} |`,
    `| Run start to the last accepted | ${Math.round(median(results.map((x) => x.totalMs)))} ms | ${REPEAT} |`,
    `| Deliveries per minute (delivery phase) | ${Math.round(median(results.map((x) => x.perMinute)))} | ${REPEAT} |`,
    `| Deliveries per minute (whole run) | ${Math.round(median(results.map((x) => x.perMinuteOverall)))} | ${REPEAT} |`,
  ];
  console.log(`\n${table.join('\n')}\n`);
  console.log(JSON.stringify({ recipients: RECIPIENTS, addMs: Math.round(addMs), runs: results }));
}

try {
  await main();
} finally {
  await cleanUp();
}
