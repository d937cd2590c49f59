import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { OutboxRelay } from '../../src/core/queue/outbox.relay.js';
import { bearer, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { waitFor } from '../support/factories.js';
import { newDeployment, newReport } from '../support/reports.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { killHard, Workers } from '../support/workers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const SECRET = 'c'.repeat(40);

/**
 * Notifications run by worker processes (`node dist/src/worker.js`): a worker killed (kill -9) in
 * the middle of a run, after it rendered the dashboard but before the unit of work recording the
 * deliveries committed, leaves one effective run: the next worker reuses the rendering, records
 * the deliveries once, and mails every recipient exactly once. A worker killed while its
 * deliveries are talking to the SMTP server leaves them `sending`; the next worker ends them
 * `unknown` and never sends them again (at most once).
 */
describe('notification runs with worker processes', () => {
  let t: TestApp;
  let workers: Workers;
  let sink: SmtpSink;
  let fake: DataApiFake;
  let dep: number;
  let recipients: Actor[];
  const admin = () => bearer(t.admin.token);
  const relay = () => t.app.get(OutboxRelay).relayOnce();

  /** A new workbook of the deployment; its id. */
  const newWorkbook = async (name: string) =>
    (await t.http().post(`/api/v1/deployments/${dep}/workbooks`).set(admin()).send({ name }).expect(200)).body
      .id as number;

  /**
   * Publishes workbook `wb` as a dashboard (`title`, `config`) and creates a notification of it on
   * `schedule` to `to` (users); the notification.
   */
  async function newNotification(
    wb: number,
    dashboard: { title: string; config: Json },
    schedule: Json,
    to: Actor[],
  ): Promise<Json> {
    const published = (
      await t
        .http()
        .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
        .set(admin())
        .send({ workbookId: wb, ...dashboard })
        .expect(200)
    ).body as Json;
    const n = (
      await t
        .http()
        .post(`/api/v1/deployments/${dep}/notifications`)
        .set(admin())
        .send({ dashboardId: published.id, ...schedule })
        .expect(200)
    ).body as Json;
    await t
      .http()
      .post(`/api/v1/deployments/${dep}/notifications/${n.id}/recipients`)
      .set(admin())
      .send({ recipients: to.map((r) => ({ type: 'USER', userId: r.userId })) })
      .expect(200);
    return n;
  }

  /** Makes notification `id`'s schedule due at `at`, fires what is due a second later; how many fired. */
  async function fireScheduleAt(id: number, at: string): Promise<number> {
    await t.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE owner = $2`, [at, `notification:${id}`]);
    return t.app.get(JobSchedules).fireDue({ now: new Date(Date.parse(at) + 1_000) });
  }

  beforeAll(async () => {
    [sink, fake] = await Promise.all([startSmtpSink(), startDataApiFake({ secret: SECRET })]);
    // This process records and hands over jobs only; worker processes run them.
    t = await startApp({ RUN_JOBS_IN_PROCESS: 'false', OUTBOX_RELAY_INTERVAL_MS: '600000', ...fake.env() });
    // A dashboard's first rendering starts Chromium: on a machine the whole suite loads, that can
    // take longer than the production bound, and a rendering timed out would be retried later.
    workers = await Workers.open(t, {
      WORKER_QUEUES: 'default',
      RENDER_TIMEOUT_MS: '150000',
      ...fake.env(),
      ...sink.env,
    });
    dep = await newDeployment(t, t.admin, 'Crash');
    await t
      .http()
      .put(`/api/v1/deployments/${dep}/env-vars`)
      .set(admin())
      .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] })
      .expect(200);
    fake.onLoad(() => [{ 'Orders.status': 'completed', 'Orders.count': '3' }]);
    recipients = [];
    for (const name of ['ann', 'ben', 'cat'])
      recipients.push(await newUser(t, t.admin, { email: `${name}@acme.test` }));
  }, 60_000);

  // A test that failed while a worker was paused leaves the next one nothing held.
  afterEach(() => workers.resumeWrites());

  afterAll(async () => {
    await workers?.close();
    await t?.close();
    await Promise.all([sink?.close(), fake?.close()]);
  }, 30_000);

  it('mails every recipient once when the worker running it is killed mid-run', async () => {
    const wb = await newWorkbook('Ops');
    const report = await newReport(t, t.admin, dep, {
      name: 'Orders',
      workbookId: wb,
      jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
    });
    const widget = {
      id: 'w',
      type: 'CHART',
      position: { x: 0, y: 0, w: 4, h: 4 },
      config: { reportId: report.id },
    };
    const n = await newNotification(
      wb,
      { title: 'Ops daily', config: { widgets: [widget] } },
      { scheduleType: 'DAILY', hour: 6 },
      recipients,
    );

    const worker = await workers.start();
    // Stop the run in the middle, deterministically: it renders, then the unit of work recording
    // its deliveries waits behind a lock this test holds on notification_deliveries.
    await workers.pauseWritesTo('notification_deliveries');
    expect(await fireScheduleAt(n.id, '2027-03-01T06:00:00Z')).toBe(1);
    await relay();
    const blocked = await workers.waitForBlockedWorker(150_000);
    expect(blocked).toHaveLength(1);
    const session = blocked[0].pid;
    const [run] = await t.sql<{ id: string; job_run_id: string; status: string }>(
      `SELECT id, job_run_id, status FROM notification_runs WHERE notification_id = $1`,
      [n.id],
    );
    expect(run.status).toBe('rendering');
    expect(await t.sql(`SELECT 1 FROM notification_renders WHERE run_id = $1`, [run.id])).toHaveLength(1);
    const loadsBefore = fake.requests.filter((r) => r.path.endsWith('/load')).length;

    await workers.killBlocked(worker, session);
    expect(await t.sql(`SELECT 1 FROM notification_deliveries WHERE run_id = $1`, [run.id])).toEqual([]);
    expect(sink.messages).toHaveLength(0);

    // Time passes: the dead worker's leases run out. A new worker and one relay pass finish it.
    await workers.expireLeases(run.job_run_id);
    await workers.start();
    await relay();
    await waitFor(
      () => t.sql<{ status: string }>(`SELECT status FROM job_runs WHERE id = $1`, [run.job_run_id]),
      (rows) => rows[0].status === 'succeeded',
      60_000,
      200,
    );
    // The deliveries' jobs were handed to the queue after that run's commit.
    await relay();
    const deliveries = await waitFor(
      () =>
        t.sql<{ email: string; status: string; attempts: number }>(
          `SELECT email, status, attempts FROM notification_deliveries WHERE run_id = $1 ORDER BY email`,
          [run.id],
        ),
      (rows) => rows.length === 3 && rows.every((r) => r.status === 'sent'),
      60_000,
      200,
    );
    expect(deliveries).toEqual(recipients.map((r) => ({ email: r.email, status: 'sent', attempts: 1 })));
    await sink.waitForMessages(3, 10_000);
    for (const r of recipients) expect(sink.messagesTo(r.email)).toHaveLength(1);
    expect(sink.messages).toHaveLength(3);
    // The rendering the dead worker kept was reused: the data API was not asked again.
    expect(fake.requests.filter((r) => r.path.endsWith('/load')).length).toBe(loadsBefore);
    expect(await t.sql(`SELECT 1 FROM notification_runs WHERE notification_id = $1`, [n.id])).toHaveLength(1);
  }, 360_000);
  it('never sends again a delivery whose worker was killed while talking to the SMTP server', async () => {
    await workers.killAll();
    const sinkPort = Number(new URL(sink.url).port);
    const proxy = new TcpProxy('127.0.0.1', sinkPort);
    await proxy.listen();
    try {
      const n = await newNotification(
        await newWorkbook('Ops 2'),
        { title: 'Ops hourly', config: {} },
        { scheduleType: 'HOURLY', minute: 30 },
        recipients.slice(0, 2),
      );
      const before = sink.messages.length;
      // The SMTP server hangs: the deliveries are taken (`sending`) and wait for its greeting.
      proxy.freeze();
      const worker = await workers.start({ SMTP_URL: `smtp://127.0.0.1:${proxy.port}` });
      await t.sql(`UPDATE job_schedules SET enabled = (owner = $1)`, [`notification:${n.id}`]);
      expect(await fireScheduleAt(n.id, '2027-03-02T06:30:00Z')).toBe(1);
      await relay();
      const deliveries = () =>
        t.sql<{ status: string; last_error: string }>(
          `SELECT status, last_error FROM notification_deliveries WHERE notification_id = $1`,
          [n.id],
        );
      const sending = await waitFor(
        deliveries,
        (rows) => rows.length === 2 && rows.every((r) => r.status === 'sending'),
        150_000,
        100,
      );
      if (sending.length !== 2) throw new Error(`no deliveries sending: ${await workers.diagnosis()}`);
      expect(sending.map((r) => r.status)).toEqual(['sending', 'sending']);

      await killHard(worker);
      proxy.sever();
      proxy.resume();

      // The dead worker's job leases run out; the next worker takes the jobs over.
      await t.sql(
        `UPDATE job_outbox SET lease_until = now() - interval '1 second'
         WHERE name = 'notification.deliver' AND status = 'dispatched'`,
      );
      await workers.start();
      await relay();
      const settled = await waitFor(
        deliveries,
        (rows) => rows.every((r) => r.status === 'unknown'),
        60_000,
        200,
      );
      expect(settled.map((r) => r.status)).toEqual(['unknown', 'unknown']);
      expect(settled[0].last_error).toMatch(/not sent again/);
      expect(sink.messages.length).toBe(before);
    } finally {
      await proxy.close();
    }
  }, 360_000);
});
