import { PNG } from 'pngjs';
import { Database } from '../../src/core/database/database.js';
import { JobQueue } from '../../src/core/queue/job-queue.service.js';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import {
  NOTIFICATION_DELIVER_JOB,
  NOTIFICATION_RUN_JOB,
} from '../../src/modules/notifications/notification-jobs.js';
import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { waitFor } from '../support/factories.js';
import { readPdf } from '../support/pdf.js';
import { newDeployment, newReport } from '../support/reports.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../support/smtp-sink.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const SECRET = 's'.repeat(40);
const LINK = 'https://console.example.test/deployments/{deploymentId}/dashboards/{publicId}';
const TERMINAL = ['sent', 'failed', 'unknown'];

describe('scheduled notifications: runs and deliveries', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let fake: DataApiFake;
  let dep: number;
  let dashboard: Json;
  let alice: Actor;
  let bob: Actor;
  let flaky: Actor;
  let gone: Actor;
  const admin = () => bearer(t.admin.token);
  const base = () => `/api/v1/deployments/${dep}/notifications`;

  const create = async (body: Json) =>
    (
      await t
        .http()
        .post(base())
        .set(admin())
        .send({ dashboardId: dashboard.id, scheduleType: 'DAILY', hour: 9, minute: 0, ...body })
        .expect(200)
    ).body as Json;
  const addRecipients = (id: number, recipients: Json[]) =>
    t.http().post(`${base()}/${id}/recipients`).set(admin()).send({ recipients }).expect(200);
  const deliveries = async (id: number) =>
    (await t.http().get(`${base()}/${id}/deliveries`).query({ first: 1000 }).set(admin()).expect(200)).body
      .items as Json[];
  /** Waits until the notification has `count` deliveries and every one is settled. */
  const settled = (id: number, count: number) =>
    waitFor(
      () => deliveries(id),
      (items) => items.length === count && items.every((d) => TERMINAL.includes(d.status)),
      60_000,
      100,
    );
  /** Fires the notification's schedule alone at `at` (the controllable clock of JobSchedules). */
  const fireAt = async (id: number, at: string) => {
    await t.sql(`UPDATE job_schedules SET enabled = (owner = $1)`, [`notification:${id}`]);
    await t.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE owner = $2`, [at, `notification:${id}`]);
    const fired = await t.app.get(JobSchedules).fireDue({ now: new Date(new Date(at).getTime() + 1000) });
    expect(fired).toBe(1);
  };
  const runsOf = (id: number) =>
    t.sql<{ id: string; status: string }>(
      `SELECT id, status FROM notification_runs WHERE notification_id = $1`,
      [id],
    );
  const only = (messages: SinkMessage[]) => {
    expect(messages).toHaveLength(1);
    return messages[0];
  };

  beforeAll(async () => {
    [sink, fake] = await Promise.all([startSmtpSink(), startDataApiFake({ secret: SECRET })]);
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      DASHBOARD_URL_TEMPLATE: LINK,
      ...fake.env(),
      ...sink.env,
    });
    const as = admin();
    dep = await newDeployment(t, t.admin, 'Mailed');
    await t
      .http()
      .put(`/api/v1/deployments/${dep}/env-vars`)
      .set(as)
      .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] })
      .expect(200);
    const wb = (
      await t.http().post(`/api/v1/deployments/${dep}/workbooks`).set(as).send({ name: 'Sales' }).expect(200)
    ).body.id as number;
    const byStatus = await newReport(t, t.admin, dep, {
      name: 'Orders by status',
      workbookId: wb,
      jsonQuery: JSON.stringify({
        measures: ['Orders.count'],
        dimensions: ['Orders.status'],
        timeDimensions: [{ dimension: 'Orders.created_at', granularity: 'day' }],
      }),
    });
    const bySql = await newReport(t, t.admin, dep, {
      name: 'Totals',
      title: 'Total revenue',
      workbookId: wb,
      sqlQuery: 'SELECT sum(amount) AS revenue FROM orders',
    });
    const broken = await newReport(t, t.admin, dep, {
      name: 'Broken',
      workbookId: wb,
      jsonQuery: JSON.stringify({ measures: ['Broken.count'] }),
    });
    dashboard = (
      await t
        .http()
        .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
        .set(as)
        .send({
          workbookId: wb,
          title: 'Weekly sales',
          config: {
            widgets: [byStatus, bySql, broken].map((r, i) => ({
              id: `w${i}`,
              type: 'CHART',
              position: { x: 0, y: i * 4, w: 6, h: 4 },
              config: { reportId: r.id },
            })),
          },
        })
        .expect(200)
    ).body;
    fake.onLoad((query, ctx) => {
      if (JSON.stringify(query).includes('Broken.')) throw new Error('Cube Broken not found');
      // Store 13's security context reads nothing: every report fails under it.
      if (ctx.store === 13) throw new Error('Store 13 is closed');
      return ctx.store === 7
        ? [{ 'Orders.status': 'store-seven-only', 'Orders.count': '7' }]
        : [
            { 'Orders.status': 'completed', 'Orders.count': '42' },
            { 'Orders.status': 'open', 'Orders.count': '5' },
          ];
    });
    fake.onSql((_sql, ctx) => {
      if (ctx.store === 13) throw new Error('Store 13 is closed');
      return { columns: ['revenue'], rows: [{ revenue: 1234.5 }] };
    });
    alice = await newUser(t, t.admin, { email: 'alice@acme.test' });
    bob = await newUser(t, t.admin, { email: 'bob@acme.test' });
    flaky = await newUser(t, t.admin, { email: 'flaky@acme.test' });
    gone = await newUser(t, t.admin, { email: 'gone@acme.test' });
    await newAccount(t, 'globex');
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([sink?.close(), fake?.close()]);
  });

  describe('a run', () => {
    let n: Json;

    beforeAll(async () => {
      n = await create({
        notificationAiSummary: true,
        filters: [{ member: 'Orders.status', operator: 'not_equals', value: 'cancelled' }],
        timeGrains: [{ member: 'Orders.created_at', grain: 'week' }],
      });
      await addRecipients(n.id, [
        { type: 'USER', userId: alice.userId },
        { type: 'USER', email: bob.email },
        { type: 'USER', userId: flaky.userId },
        { type: 'USER', userId: gone.userId },
        {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'carol@retail.test',
          securityContext: { store: 7 },
        },
      ]);
      sink.failTemporarily(flaky.email, 1);
      sink.rejectPermanently(gone.email);
      await fireAt(n.id, '2027-06-01T09:00:00Z');
      await settled(n.id, 5);
    });

    it('mails each recipient once: the tables, the title, the link, and the dashboard as a PDF', () => {
      for (const who of [alice.email, bob.email, flaky.email, 'carol@retail.test']) {
        const message = only(sink.messagesTo(who));
        expect(message.envelope.to).toEqual([who]);
        expect(message.to).toEqual([who]);
        expect(message.subject).toBe('Weekly sales: scheduled report');
        expect(message.html).toContain('Weekly sales');
        expect(message.html).toContain(
          `https://console.example.test/deployments/${dep}/dashboards/${dashboard.publicId}`,
        );
        expect(message.html).toContain('Total revenue');
        expect(message.html).toContain('1234.5');
        // The report that fails shows its error instead of failing the run.
        expect(message.html).toContain('Cube Broken not found');
        expect(message.text).toContain('Weekly sales');
        expect(message.attachments).toHaveLength(1);
        const [pdf] = message.attachments;
        expect(pdf.contentType).toBe('application/pdf');
        expect(pdf.filename).toMatch(/\.pdf$/);
        expect(pdf.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
        expect(pdf.content.subarray(-8).toString('latin1')).toMatch(/%%EOF\s*$/);
        expect(pdf.content.toString('latin1')).toMatch(/\/Type\s*\/Page\b/);
      }
      expect(sink.messagesTo(gone.email)).toHaveLength(0);
    });

    it('attaches a PDF that decodes, with the dashboard’s title and its data as text', async () => {
      const [pdf] = only(sink.messagesTo(alice.email)).attachments;
      const read = await readPdf(pdf.content);
      expect(read.pages).toBeGreaterThanOrEqual(1);
      expect(read.text).toContain('Weekly sales');
      expect(read.text).toContain('Total revenue');
    });

    it('renders each recipient’s copy under its own security context, filters and time grains applied', async () => {
      const console = only(sink.messagesTo(alice.email));
      expect(console.html).toContain('completed');
      expect(console.html).toContain('42');
      expect(console.html).not.toContain('store-seven-only');
      const embed = only(sink.messagesTo('carol@retail.test'));
      expect(embed.html).toContain('store-seven-only');
      expect(embed.html).not.toContain('completed');
      expect(embed.attachments[0].content.equals(console.attachments[0].content)).toBe(false);

      const loads = fake.requests.filter((r) => r.path.endsWith('/load') && r.deploymentId === dep);
      expect(
        loads
          .map((r) => r.securityContext)
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      ).toEqual(expect.arrayContaining([{}, { store: 7 }]));
      const query = loads.find((r) => JSON.stringify(r.query).includes('Orders.count'))!.query as Json;
      expect(query.filters).toEqual([
        { member: 'Orders.status', operator: 'notEquals', values: ['cancelled'] },
      ]);
      expect(query.timeDimensions).toEqual([{ dimension: 'Orders.created_at', granularity: 'week' }]);
      // One rendering per security context, kept for retries.
      const [run] = await runsOf(n.id);
      const renders = await t.sql(`SELECT context_hash FROM notification_renders WHERE run_id = $1`, [
        run.id,
      ]);
      expect(renders).toHaveLength(2);
    });

    it('retries a temporary refusal, never a permanent one, and shows every outcome', async () => {
      const items = await deliveries(n.id);
      const by = (email: string) => items.find((d) => d.email === email)!;
      expect(by(flaky.email)).toMatchObject({ status: 'sent', attempts: 2 });
      expect(sink.attempts(flaky.email)).toBe(2);
      expect(by(gone.email)).toMatchObject({ status: 'failed', attempts: 1, sentAt: null });
      expect(by(gone.email).lastError).toMatch(/550/);
      expect(sink.attempts(gone.email)).toBe(1);
      expect(by(alice.email)).toEqual({
        id: expect.any(String),
        runId: expect.any(String),
        scheduledFor: '2027-06-01T09:00:00.000Z',
        recipientType: 'USER',
        userId: alice.userId,
        embedUserId: null,
        email: alice.email,
        status: 'sent',
        attempts: 1,
        lastError: null,
        smtpResponse: expect.stringMatching(/^250/),
        messageId: expect.any(String),
        aiSummary: 'not_produced',
        sentAt: expect.any(String),
        createdAt: expect.any(String),
      });
      expect(by('carol@retail.test')).toMatchObject({
        recipientType: 'EMBED_USER',
        embedUserId: expect.any(Number),
      });
      // No summary is ever written into the mail.
      expect(only(sink.messagesTo(alice.email)).headers.get('x-ai-summary')).toBe('not_produced');
      const page = await t
        .http()
        .get(`${base()}/${n.id}/deliveries`)
        .query({ first: 2 })
        .set(admin())
        .expect(200);
      expect(page.body.items).toHaveLength(2);
      const next = await t
        .http()
        .get(`${base()}/${n.id}/deliveries`)
        .query({ first: 10, after: page.body.pageInfo.endCursor })
        .set(admin())
        .expect(200);
      expect(next.body.items).toHaveLength(3);
      expect((await runsOf(n.id)).map((r) => r.status)).toEqual(['delivering']);
    });

    it('a run executed again, or a delivery job run twice, mails nobody twice', async () => {
      const before = sink.messages.length;
      const queue = t.app.get(JobQueue);
      const db = t.app.get(Database);
      const { runId } = await db.transaction(() =>
        queue.enqueue(
          NOTIFICATION_RUN_JOB,
          { notificationId: n.id, scheduledFor: '2027-06-01T09:00:00.000Z' },
          { accountId: t.admin.accountId, owner: `notification:${n.id}` },
        ),
      );
      const done = await waitFor(
        () => t.sql<{ status: string }>(`SELECT status FROM job_runs WHERE id = $1`, [runId]),
        (rows) => rows[0]?.status === 'succeeded',
        30_000,
      );
      expect(done[0].status).toBe('succeeded');
      const doneDeliverJobs = async () =>
        (
          await t.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM job_outbox WHERE name = 'notification.deliver' AND status = 'done'`,
          )
        )[0].n;
      const doneBefore = await doneDeliverJobs();
      for (const d of await deliveries(n.id)) {
        await db.transaction(() => queue.enqueue(NOTIFICATION_DELIVER_JOB, { deliveryId: d.id }));
      }
      expect(
        await waitFor(doneDeliverJobs, (count) => count >= doneBefore + 5, 30_000),
      ).toBeGreaterThanOrEqual(doneBefore + 5);
      expect(sink.messages.length).toBe(before);
      expect(await deliveries(n.id)).toHaveLength(5);
      expect(await runsOf(n.id)).toHaveLength(1);
    });

    it('a delivery whose worker died while sending is not sent again (at most once)', async () => {
      const before = sink.messages.length;
      const target = (await deliveries(n.id)).find((d) => d.email === bob.email)!;
      // What a worker killed between taking the delivery and recording the answer leaves behind.
      await t.sql(`UPDATE notification_deliveries SET status = 'sending' WHERE id = $1`, [target.id]);
      await t.app
        .get(Database)
        .transaction(() => t.app.get(JobQueue).enqueue(NOTIFICATION_DELIVER_JOB, { deliveryId: target.id }));
      const after = await waitFor(
        () => deliveries(n.id),
        (items) => items.find((d) => d.id === target.id)?.status === 'unknown',
        30_000,
      );
      const unknown = after.find((d) => d.id === target.id)!;
      expect(unknown.lastError).toMatch(/not sent again/);
      expect(sink.messages.length).toBe(before);
    });
  });

  it('attaches a PNG when asked, and mails nothing for a notification without recipients', async () => {
    const png = await create({ notificationFormat: 'png', hour: 10 });
    await addRecipients(png.id, [{ type: 'USER', userId: alice.userId }]);
    const before = sink.messagesTo(alice.email).length;
    await fireAt(png.id, '2027-06-02T10:00:00Z');
    const [d] = await settled(png.id, 1);
    expect(d).toMatchObject({ status: 'sent', aiSummary: null });
    const message = sink.messagesTo(alice.email)[before];
    const [attachment] = message.attachments;
    expect(attachment.contentType).toBe('image/png');
    const image = PNG.sync.read(attachment.content);
    expect(image.width).toBeGreaterThan(100);
    expect(image.height).toBeGreaterThan(100);

    const empty = await create({ hour: 11 });
    const total = sink.messages.length;
    await fireAt(empty.id, '2027-06-02T11:00:00Z');
    const runs = await waitFor(
      () => runsOf(empty.id),
      (rows) => rows[0]?.status === 'delivering',
      20_000,
    );
    expect(runs).toHaveLength(1);
    expect(await deliveries(empty.id)).toEqual([]);
    expect(sink.messages.length).toBe(total);
  });

  describe('when every report fails', () => {
    const owner = () => t.admin.email;
    const runOf = async (id: number) =>
      (
        await t.sql<{ status: string; error: string | null }>(
          `SELECT status, error FROM notification_runs WHERE notification_id = $1`,
          [id],
        )
      )[0];
    const jobOf = async (id: number) =>
      (
        await t.sql<{ status: string; error: string | null }>(
          `SELECT status, error FROM job_runs WHERE owner = $1 AND job = 'notification.run'`,
          [`notification:${id}`],
        )
      )[0];

    it('mails nobody an email of errors only: the run fails saying why, and the owner is told', async () => {
      const as = admin();
      const wb = (
        await t
          .http()
          .post(`/api/v1/deployments/${dep}/workbooks`)
          .set(as)
          .send({ name: 'Broken book' })
          .expect(200)
      ).body.id as number;
      const report = await newReport(t, t.admin, dep, {
        name: 'Only broken',
        workbookId: wb,
        jsonQuery: JSON.stringify({ measures: ['Broken.count'] }),
      });
      const broken = (
        await t
          .http()
          .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
          .set(as)
          .send({
            workbookId: wb,
            title: 'Broken board',
            config: {
              widgets: [
                {
                  id: 'w0',
                  type: 'CHART',
                  position: { x: 0, y: 0, w: 6, h: 4 },
                  config: { reportId: report.id },
                },
              ],
            },
          })
          .expect(200)
      ).body as Json;
      const n = await create({ dashboardId: broken.id, hour: 13 });
      await addRecipients(n.id, [
        { type: 'USER', userId: alice.userId },
        {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'dave@retail.test',
          securityContext: { store: 7 },
        },
      ]);
      const toAlice = sink.messagesTo(alice.email).length;
      const toOwner = sink.messagesTo(owner()).length;
      await fireAt(n.id, '2027-06-03T13:00:00Z');
      const items = await settled(n.id, 3);

      // The recipients got nothing; their deliveries say why.
      expect(sink.messagesTo(alice.email)).toHaveLength(toAlice);
      expect(sink.messagesTo('dave@retail.test')).toEqual([]);
      const why =
        /^Not sent: The one report of the dashboard failed, so the email would hold only errors: data_api_query_invalid: .*Cube Broken not found/;
      for (const email of [alice.email, 'dave@retail.test']) {
        expect(items.find((d) => d.email === email)).toMatchObject({
          status: 'failed',
          attempts: 0,
          sentAt: null,
          lastError: expect.stringMatching(why),
        });
      }
      // The owner got one notice saying why, without an attachment.
      expect(items.find((d) => d.recipientType === 'OWNER')).toMatchObject({
        userId: t.admin.userId,
        email: owner(),
        status: 'sent',
      });
      const notices = sink.messagesTo(owner()).slice(toOwner);
      expect(notices).toHaveLength(1);
      expect(notices[0].subject).toBe('Broken board: scheduled report not sent');
      expect(notices[0].text).toContain('None of its 2 recipients were mailed');
      expect(notices[0].text).toContain('Only broken: The data API of deployment');
      expect(notices[0].text).toContain('Cube Broken not found');
      expect(notices[0].attachments).toEqual([]);
      // The run's history, and its job, say it failed and why.
      const run = await runOf(n.id);
      expect(run.status).toBe('failed');
      expect(run.error).toMatch(/^Nobody was mailed: The one report of the dashboard failed/);
      expect(run.error).toContain(`the notification’s owner (${owner()}) is told by email`);
      expect(await jobOf(n.id)).toEqual({ status: 'failed', error: run.error });
    });

    it('mails the recipients whose reports were read, and not those under whose context every report failed', async () => {
      const n = await create({ hour: 14 });
      await addRecipients(n.id, [
        { type: 'USER', userId: bob.userId },
        {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'erin@retail.test',
          securityContext: { store: 13 },
        },
      ]);
      const toBob = sink.messagesTo(bob.email).length;
      const toOwner = sink.messagesTo(owner()).length;
      await fireAt(n.id, '2027-06-03T14:00:00Z');
      const items = await settled(n.id, 3);

      expect(sink.messagesTo(bob.email)).toHaveLength(toBob + 1);
      expect(sink.messagesTo('erin@retail.test')).toEqual([]);
      expect(items.find((d) => d.email === bob.email)).toMatchObject({ status: 'sent' });
      expect(items.find((d) => d.email === 'erin@retail.test')).toMatchObject({
        status: 'failed',
        lastError: expect.stringMatching(
          /^Not sent: All 3 reports of the dashboard failed, so the email would hold only errors: .*Store 13 is closed/,
        ),
      });
      const notices = sink.messagesTo(owner()).slice(toOwner);
      expect(notices).toHaveLength(1);
      expect(notices[0].text).toContain('1 of its 2 recipients were not mailed');
      const run = await runOf(n.id);
      expect(run.status).toBe('delivering');
      expect(run.error).toMatch(/^1 of 2 recipients were not mailed, every report having failed/);
      expect((await jobOf(n.id)).status).toBe('succeeded');
    });
  });

  it('answers 401, 403 and 404 on the deliveries route', async () => {
    const n = await create({ hour: 12 });
    expect((await t.http().get(`${base()}/${n.id}/deliveries`)).status).toBe(401);
    const viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    expect((await t.http().get(`${base()}/${n.id}/deliveries`).set(bearer(viewer.token))).status).toBe(403);
    const missing = await t.http().get(`${base()}/999999/deliveries`).set(admin());
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('notification_not_found');
    expect(
      (await t.http().get(`${base()}/${n.id}/deliveries`).query({ after: 'x' }).set(admin())).status,
    ).toBe(400);
  });
});
