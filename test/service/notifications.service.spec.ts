import { PNG } from 'pngjs';
import type { Principal } from '../../src/core/auth/principal.js';
import { Database } from '../../src/core/database/database.js';
import { JobQueue } from '../../src/core/queue/job-queue.service.js';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { EnvVarsService } from '../../src/modules/deployments/env-vars.service.js';
import type { CreateNotificationDto } from '../../src/modules/notifications/dto/notification.dto.js';
import type {
  NotificationDeliveryDto,
  NotificationRecipientInputDto,
} from '../../src/modules/notifications/dto/recipient.dto.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import { NOTIFICATION_RUN_JOB } from '../../src/modules/notifications/notification-jobs.js';
import { NotificationOperationsService } from '../../src/modules/notifications/notification-operations.service.js';
import { NotificationRecipientsService } from '../../src/modules/notifications/notification-recipients.service.js';
import { NotificationsService } from '../../src/modules/notifications/notifications.service.js';
import { ReportsService } from '../../src/modules/reports/reports.service.js';
import { DashboardsService } from '../../src/modules/workspace/dashboards.service.js';
import type { Actor } from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { readPdf } from '../support/pdf.js';
import { expectApiError, startServiceApp, type ServiceApp } from '../support/service.js';
import { NotificationJobs } from '../support/notification-jobs.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../support/smtp-sink.js';

/**
 * The rules of notification runs and deliveries below HTTP (moved from the notifications,
 * former notification-deliveries and notification-bounds e2e parts). A schedule is fired with the
 * controllable clock of `JobSchedules`; the `notification.run` it queued is run by calling its
 * handler with a test job context on the real run record (test/support/job-context.ts), then each
 * `notification.deliver` job that run queued, retried as its queue would (without the back-off).
 * Mail goes to a real SMTP server on loopback. The HTTP contract of the routes stays in e2e.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON records read back */
type Json = Record<string, any>;

const SECRET = 's'.repeat(40);
const LINK = 'https://console.example.test/deployments/{deploymentId}/dashboards/{publicId}';
/** Where a delivery ends: `skipped` only past the hourly limit (the bounds part). */
const ENDED = ['sent', 'failed', 'unknown'];
const ENDED_OR_SKIPPED = [...ENDED, 'skipped'];
/** Nothing here needs the outbox relay: the tests fire schedules and run jobs themselves. */
const NO_RELAY = { OUTBOX_RELAY_INTERVAL_MS: '600000' };

/** A widget of a dashboard showing report `reportId`, in row `row`. */
const widget = (reportId: number, row = 0) => ({
  id: `w${row}`,
  type: 'CHART',
  position: { x: 0, y: row * 4, w: 6, h: 4 },
  config: { reportId },
});

/** What each part does with its app: build dashboards, make notifications, fire and run them. */
function notificationHarness(get: () => ServiceApp) {
  const principals = new Map<string, Principal>();
  const principal = async (actor: Actor) => {
    let p = principals.get(actor.email);
    if (!p) principals.set(actor.email, (p = await get().make.principal(actor)));
    return p;
  };
  const runner = new NotificationJobs(
    () => get().app,
    (text, params) => get().sql(text, params),
  );

  const h = {
    principal,
    /** A deployment of the actor's account with the data API secret, and a workbook in it. */
    async workbook(actor: Actor, name: string, secret = true) {
      const s = get();
      const dep = (await s.make.deployment({ name, by: actor })).id;
      if (secret) {
        await s.app
          .get(EnvVarsService)
          .set(await principal(actor), dep, [{ name: 'CUBEJS_API_SECRET', value: SECRET }]);
      }
      const wb = (await s.make.workbook(dep, { by: actor })).id;
      return { dep, wb };
    },
    async report(actor: Actor, dep: number, fields: Json) {
      return get()
        .app.get(ReportsService)
        .create(await principal(actor), dep, fields);
    },
    async publish(actor: Actor, dep: number, wb: number, title: string, widgets: Json[]) {
      return get()
        .app.get(DashboardsService)
        .publish(await principal(actor), dep, wb, { workbookId: wb, title, config: { widgets } as never });
    },
    async create(actor: Actor, dep: number, body: Json) {
      return get()
        .app.get(NotificationsService)
        .create(await principal(actor), dep, body as CreateNotificationDto);
    },
    async addRecipients(actor: Actor, dep: number, id: number, recipients: Json[]) {
      return get()
        .app.get(NotificationRecipientsService)
        .add(await principal(actor), dep, id, { recipients: recipients as NotificationRecipientInputDto[] });
    },
    async deliveries(actor: Actor, dep: number, id: number, query: { first?: number; after?: string } = {}) {
      return get()
        .app.get(NotificationsService)
        .deliveries(await principal(actor), dep, id, { first: 1000, ...query });
    },
    /** Fires the notification's schedule alone at `at` (the controllable clock of JobSchedules). */
    async fireAt(id: number, at: string, late = 1000) {
      const s = get();
      await s.sql(`UPDATE job_schedules SET enabled = (owner = $1)`, [`notification:${id}`]);
      await s.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE owner = $2`, [at, `notification:${id}`]);
      expect(await s.app.get(JobSchedules).fireDue({ now: new Date(Date.parse(at) + late) })).toBe(1);
    },
    /** Runs the notification's queued `notification.run` (one attempt, as a worker makes it). */
    async runQueued(id: number) {
      const [queued] = await get().sql<{ id: string }>(
        `SELECT id FROM job_runs WHERE owner = $1 AND job = 'notification.run' AND status = 'queued' ORDER BY id`,
        [`notification:${id}`],
      );
      expect(queued).toBeDefined();
      return h.runJob(queued.id);
    },
    runJob: (runId: string) => runner.runJob(runId),
    /** Runs every `notification.deliver` job recorded since the last call, each until it ends. */
    deliverQueued: () => runner.deliverQueued(),
    deliver: (deliveryId: string) => runner.deliver(deliveryId),
    /** Fires the schedule at `at`, runs the run it queued, then the deliveries that run queued. */
    async fire(id: number, at: string) {
      await h.fireAt(id, at);
      const attempt = await h.runQueued(id);
      await h.deliverQueued();
      return attempt;
    },
    runsOf: (id: number) =>
      get().sql<{ id: string; status: string; error: string | null; trigger: string }>(
        `SELECT id, status, error, trigger FROM notification_runs WHERE notification_id = $1 ORDER BY id`,
        [id],
      ),
    /** Run now, resend, pause and resume, as the admin `actor`. */
    async ops(actor: Actor) {
      const me = await principal(actor);
      const ops = get().app.get(NotificationOperationsService);
      return {
        runNow: (dep: number, id: number) => ops.runNow(me, dep, id),
        resend: (dep: number, id: number, deliveryId: string) => ops.resend(me, dep, id, deliveryId),
        pause: (dep: number, id: number) => ops.pause(me, dep, id),
        resume: (dep: number, id: number) => ops.resume(me, dep, id),
      };
    },
    scheduleOf: async (id: number) =>
      (await get().app.get(JobSchedules).listByOwner(`notification:${id}`))[0],
    jobOf: async (id: number) =>
      (
        await get().sql<{ status: string; error: string | null }>(
          `SELECT status, error FROM job_runs WHERE owner = $1 AND job = 'notification.run'`,
          [`notification:${id}`],
        )
      )[0],
  };
  return h;
}

const only = (messages: SinkMessage[]) => {
  expect(messages).toHaveLength(1);
  return messages[0];
};
const settledAll = (items: NotificationDeliveryDto[], ended = ENDED) =>
  items.every((d) => ended.includes(d.status));

describe('notification runs and deliveries', () => {
  let s: ServiceApp;
  let sink: SmtpSink;
  let fake: DataApiFake;
  let dep: number;
  let dashboard: { id: number; publicId: string };
  let alice: Actor;
  let bob: Actor;
  let flaky: Actor;
  let gone: Actor;
  const h = notificationHarness(() => s);
  const create = (body: Json) =>
    h.create(s.admin, dep, { dashboardId: dashboard.id, scheduleType: 'DAILY', hour: 9, minute: 0, ...body });
  const addRecipients = (id: number, recipients: Json[]) => h.addRecipients(s.admin, dep, id, recipients);
  const deliveries = async (id: number) => (await h.deliveries(s.admin, dep, id)).items;

  beforeAll(async () => {
    [sink, fake] = await Promise.all([startSmtpSink(), startDataApiFake({ secret: SECRET })]);
    s = await startServiceApp({ DASHBOARD_URL_TEMPLATE: LINK, ...fake.env(), ...sink.env, ...NO_RELAY });
    let wb: number;
    ({ dep, wb } = await h.workbook(s.admin, 'Mailed'));
    const byStatus = await h.report(s.admin, dep, {
      name: 'Orders by status',
      workbookId: wb,
      jsonQuery: JSON.stringify({
        measures: ['Orders.count'],
        dimensions: ['Orders.status'],
        timeDimensions: [{ dimension: 'Orders.created_at', granularity: 'day' }],
      }),
    });
    const bySql = await h.report(s.admin, dep, {
      name: 'Totals',
      title: 'Total revenue',
      workbookId: wb,
      sqlQuery: 'SELECT sum(amount) AS revenue FROM orders',
    });
    const broken = await h.report(s.admin, dep, {
      name: 'Broken',
      workbookId: wb,
      jsonQuery: JSON.stringify({ measures: ['Broken.count'] }),
    });
    dashboard = await h.publish(
      s.admin,
      dep,
      wb,
      'Weekly sales',
      [byStatus, bySql, broken].map((r, i) => widget(r.id, i)),
    );
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
    alice = await s.make.user({ email: 'alice@acme.test' });
    bob = await s.make.user({ email: 'bob@acme.test' });
    flaky = await s.make.user({ email: 'flaky@acme.test' });
    gone = await s.make.user({ email: 'gone@acme.test' });
  });

  afterAll(async () => {
    await s?.close();
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
      const { outcome } = await h.fire(n.id, '2027-06-01T09:00:00Z');
      expect(outcome).toEqual({ status: 'succeeded' });
      // The last delivery to end ended the run, which queued the owner's notice of the refusal.
      expect(await h.deliverQueued()).toBe(1);
      const items = await deliveries(n.id);
      expect(items).toHaveLength(6);
      expect(settledAll(items)).toBe(true);
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
      // One rendering per security context, kept for retries (and the owner's notice of the refusal).
      const [run] = await h.runsOf(n.id);
      const renders = await s.sql(
        `SELECT context_hash FROM notification_renders WHERE run_id = $1 AND context_hash <> 'owner-notice'`,
        [run.id],
      );
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
        resends: [],
        createdAt: expect.any(String),
      });
      expect(by('carol@retail.test')).toMatchObject({
        recipientType: 'EMBED_USER',
        embedUserId: expect.any(Number),
      });
      // No summary is ever written into the mail.
      expect(only(sink.messagesTo(alice.email)).headers.get('x-ai-summary')).toBe('not_produced');
      const page = await h.deliveries(s.admin, dep, n.id, { first: 2 });
      expect(page.items).toHaveLength(2);
      const next = await h.deliveries(s.admin, dep, n.id, { first: 10, after: page.pageInfo.endCursor! });
      expect(next.items).toHaveLength(4);
      expect((await h.runsOf(n.id)).map((r) => r.status)).toEqual(['finished']);
    });

    it('tells the notification’s owner once which recipients the mail server refused, never mailing them', async () => {
      const notices = sink.messagesTo(s.admin.email);
      expect(notices).toHaveLength(1);
      const [notice] = notices;
      expect(notice.subject).toBe('Weekly sales: scheduled report not delivered');
      expect(notice.text).toContain('did not reach 1 of its 5 recipients');
      expect(notice.text).toContain(`- ${gone.email}: Refused (550)`);
      expect(notice.text).toContain(`POST .../notifications/${n.id}/deliveries/{deliveryId}/resend`);
      expect(notice.html).toContain(gone.email);
      expect(notice.attachments).toEqual([]);
      expect(sink.messagesTo(gone.email)).toEqual([]);
      const owner = (await deliveries(n.id)).find((d) => d.recipientType === 'OWNER')!;
      expect(owner).toMatchObject({ email: s.admin.email, userId: s.admin.userId, status: 'sent' });
      const [run] = await h.runsOf(n.id);
      expect(run.error).toBe(
        `1 of 5 recipients were refused for good by the mail server; the notification’s owner (${s.admin.email}) ` +
          'is told by email (the run’s OWNER delivery)',
      );
    });

    it('a run executed again, or a delivery job run twice, mails nobody twice', async () => {
      const before = sink.messages.length;
      const queue = s.app.get(JobQueue);
      const { runId } = await s.app
        .get(Database)
        .transaction(() =>
          queue.enqueue(
            NOTIFICATION_RUN_JOB,
            { notificationId: n.id, scheduledFor: '2027-06-01T09:00:00.000Z' },
            { accountId: s.admin.accountId, owner: `notification:${n.id}` },
          ),
        );
      const { outcome } = await h.runJob(runId!);
      expect(outcome).toEqual({ status: 'succeeded' });
      const [done] = await s.sql<{ status: string }>(`SELECT status FROM job_runs WHERE id = $1`, [runId]);
      expect(done.status).toBe('succeeded');
      // It queued nothing more; each delivery's job run once again ends done, mailing nobody.
      expect(await h.deliverQueued()).toBe(0);
      for (const d of await deliveries(n.id)) {
        expect((await h.deliver(d.id)).status).toBe('succeeded');
      }
      expect(sink.messages.length).toBe(before);
      expect(await deliveries(n.id)).toHaveLength(6);
      expect(await h.runsOf(n.id)).toHaveLength(1);
    });

    it('a delivery whose worker died while sending is not sent again (at most once)', async () => {
      const before = sink.messages.length;
      const target = (await deliveries(n.id)).find((d) => d.email === bob.email)!;
      // What a worker killed between taking the delivery and recording the answer leaves behind.
      await s.sql(`UPDATE notification_deliveries SET status = 'sending' WHERE id = $1`, [target.id]);
      expect((await h.deliver(target.id)).status).toBe('succeeded');
      const unknown = (await deliveries(n.id)).find((d) => d.id === target.id)!;
      expect(unknown.status).toBe('unknown');
      expect(unknown.lastError).toMatch(/not sent again/);
      expect(sink.messages.length).toBe(before);
    });
  });

  it('attaches a PNG when asked, and mails nothing for a notification without recipients', async () => {
    const png = await create({ notificationFormat: 'png', hour: 10 });
    await addRecipients(png.id, [{ type: 'USER', userId: alice.userId }]);
    const before = sink.messagesTo(alice.email).length;
    await h.fire(png.id, '2027-06-02T10:00:00Z');
    const [d, ...more] = await deliveries(png.id);
    expect(more).toEqual([]);
    expect(d).toMatchObject({ status: 'sent', aiSummary: null });
    const message = sink.messagesTo(alice.email)[before];
    const [attachment] = message.attachments;
    expect(attachment.contentType).toBe('image/png');
    const image = PNG.sync.read(attachment.content);
    expect(image.width).toBeGreaterThan(100);
    expect(image.height).toBeGreaterThan(100);

    const empty = await create({ hour: 11 });
    const total = sink.messages.length;
    await h.fire(empty.id, '2027-06-02T11:00:00Z');
    const runs = await h.runsOf(empty.id);
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('finished');
    expect(await deliveries(empty.id)).toEqual([]);
    expect(sink.messages.length).toBe(total);
  });

  describe('when every report fails', () => {
    const owner = () => s.admin.email;

    it('mails nobody an email of errors only: the run fails saying why, and the owner is told', async () => {
      const book = (await s.make.workbook(dep, { name: 'Broken book' })).id;
      const report = await h.report(s.admin, dep, {
        name: 'Only broken',
        workbookId: book,
        jsonQuery: JSON.stringify({ measures: ['Broken.count'] }),
      });
      const broken = await h.publish(s.admin, dep, book, 'Broken board', [widget(report.id)]);
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
      const { outcome } = await h.fire(n.id, '2027-06-03T13:00:00Z');
      const items = await deliveries(n.id);
      expect(items).toHaveLength(3);
      expect(settledAll(items)).toBe(true);

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
        userId: s.admin.userId,
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
      const [run] = await h.runsOf(n.id);
      expect(run.status).toBe('failed');
      expect(run.error).toMatch(/^Nobody was mailed: The one report of the dashboard failed/);
      expect(run.error).toContain(`the notification’s owner (${owner()}) is told by email`);
      expect(outcome).toEqual({ status: 'failed', error: run.error });
      expect(await h.jobOf(n.id)).toEqual({ status: 'failed', error: run.error });
      // Nothing was made to send them: a resend has nothing to send (run it again instead).
      const unsent = items.find((d) => d.email === alice.email)!;
      await expectApiError(
        (await h.ops(s.admin)).resend(dep, n.id, unsent.id),
        409,
        'delivery_not_resendable',
      );
      expect((await deliveries(n.id)).find((d) => d.id === unsent.id)).toMatchObject({
        status: 'failed',
        resends: [],
      });
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
      await h.fire(n.id, '2027-06-03T14:00:00Z');
      const items = await deliveries(n.id);
      expect(items).toHaveLength(3);
      expect(settledAll(items)).toBe(true);

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
      const [run] = await h.runsOf(n.id);
      expect(run.status).toBe('finished');
      expect(run.error).toMatch(/^1 of 2 recipients were not mailed, every report having failed/);
      expect((await h.jobOf(n.id)).status).toBe('succeeded');
    });
  });

  describe('operated by an admin: pause, resume, run now, resend', () => {
    it('holds a scheduled run’s deliveries while paused, lets them go once on resume, and fires from the next occurrence', async () => {
      const ops = await h.ops(s.admin);
      const n = await create({ hour: 16 });
      await addRecipients(n.id, [{ type: 'USER', userId: alice.userId }]);
      await h.fireAt(n.id, '2027-06-05T16:00:00Z');
      expect((await h.runQueued(n.id)).outcome).toEqual({ status: 'succeeded' });

      const paused = await ops.pause(dep, n.id);
      expect(paused).toMatchObject({ id: n.id, isEnabled: true, pausedAt: expect.any(String) });
      expect((await ops.pause(dep, n.id)).pausedAt).toBe(paused.pausedAt);
      expect((await h.scheduleOf(n.id)).enabled).toBe(false);
      const toAlice = sink.messagesTo(alice.email).length;
      expect(await h.deliverQueued()).toBe(1);
      const [held] = await deliveries(n.id);
      expect(held).toMatchObject({ status: 'held', attempts: 0 });
      // Its job run again while paused: still held, nobody mailed, the run not ended.
      expect((await h.deliver(held.id)).status).toBe('succeeded');
      expect(await deliveries(n.id)).toEqual([expect.objectContaining({ id: held.id, status: 'held' })]);
      expect(sink.messagesTo(alice.email)).toHaveLength(toAlice);
      expect((await h.runsOf(n.id)).map((r) => r.status)).toEqual(['delivering']);

      const before = Date.now();
      const resumed = await ops.resume(dep, n.id);
      expect(resumed).toMatchObject({ pausedAt: null, isEnabled: true });
      expect((await ops.resume(dep, n.id)).pausedAt).toBeNull();
      // From the next 16:00 after now: the occurrences missed while paused are not made up.
      const schedule = await h.scheduleOf(n.id);
      expect(schedule.enabled).toBe(true);
      expect(Date.parse(schedule.nextRunAt)).toBeGreaterThan(before);
      expect(Date.parse(schedule.nextRunAt)).toBeLessThanOrEqual(before + 24 * 3600_000);
      expect(new Date(schedule.nextRunAt).getUTCHours()).toBe(16);
      // The held delivery was queued again (once, however often resume is asked): mailed once.
      expect(await h.deliverQueued()).toBe(1);
      expect(sink.messagesTo(alice.email)).toHaveLength(toAlice + 1);
      expect(await deliveries(n.id)).toEqual([expect.objectContaining({ status: 'sent', attempts: 1 })]);
      expect((await h.runsOf(n.id)).map((r) => r.status)).toEqual(['finished']);
    });

    it('runs a paused notification now, without holding its deliveries or moving its schedule; one run now at a time', async () => {
      const ops = await h.ops(s.admin);
      const n = await create({ hour: 17 });
      await addRecipients(n.id, [{ type: 'USER', userId: bob.userId }]);
      await ops.pause(dep, n.id);
      const schedule = await h.scheduleOf(n.id);
      const run = await ops.runNow(dep, n.id);
      expect(run).toEqual({
        id: expect.any(String),
        notificationId: n.id,
        scheduledFor: expect.any(String),
        trigger: 'manual',
        status: 'queued',
        error: null,
        jobRunId: expect.any(String),
        requestedBy: s.admin.userId,
        createdAt: expect.any(String),
        finishedAt: null,
      });
      await expectApiError(ops.runNow(dep, n.id), 409, 'notification_run_in_progress');
      const toBob = sink.messagesTo(bob.email).length;
      expect((await h.runJob(run.jobRunId!)).outcome).toEqual({ status: 'succeeded' });
      expect(await h.deliverQueued()).toBe(1);
      expect(sink.messagesTo(bob.email)).toHaveLength(toBob + 1);
      const [delivery] = await deliveries(n.id);
      expect(delivery).toMatchObject({ runId: run.id, status: 'sent', scheduledFor: run.scheduledFor });
      expect(await h.runsOf(n.id)).toEqual([
        expect.objectContaining({ trigger: 'manual', status: 'finished' }),
      ]);
      const after = await h.scheduleOf(n.id);
      expect({ enabled: after.enabled, nextRunAt: after.nextRunAt }).toEqual({
        enabled: false,
        nextRunAt: schedule.nextRunAt,
      });
      // Once its job has ended, another run now is taken.
      const again = await ops.runNow(dep, n.id);
      expect(again.id).not.toBe(run.id);
      await ops.resume(dep, n.id);
    });

    it('resends a failed delivery once, to the user’s address now; refuses what is not failed, or a deactivated user', async () => {
      const ops = await h.ops(s.admin);
      const moved = await s.make.user({ email: 'moved@acme.test' });
      const leaver = await s.make.user({ email: 'leaver@acme.test' });
      const n = await create({ hour: 18 });
      await addRecipients(n.id, [
        { type: 'USER', userId: moved.userId },
        { type: 'USER', userId: leaver.userId },
        { type: 'USER', userId: bob.userId },
      ]);
      sink.rejectPermanently(moved.email);
      sink.rejectPermanently(leaver.email);
      const toBob = sink.messagesTo(bob.email).length;
      const toOwner = sink.messagesTo(s.admin.email).length;
      await h.fire(n.id, '2027-06-06T18:00:00Z');
      expect(await h.deliverQueued()).toBe(1);
      const failed = (await deliveries(n.id)).find((d) => d.email === moved.email)!;
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: expect.stringMatching(/550/),
      });
      expect(sink.messagesTo(s.admin.email)).toHaveLength(toOwner + 1);

      // The user's address changes (SCIM changes a console user's email; this is the row it leaves).
      await s.sql(`UPDATE users SET email = $1 WHERE id = $2`, ['moved@new.test', moved.userId]);
      const resent = await ops.resend(dep, n.id, failed.id);
      expect(resent).toMatchObject({
        id: failed.id,
        status: 'queued',
        email: 'moved@new.test',
        attempts: 1,
        lastError: null,
        resends: [
          {
            at: expect.any(String),
            byUserId: s.admin.userId,
            email: moved.email,
            error: expect.stringMatching(/^Refused \(550\)/),
          },
        ],
      });
      await expectApiError(ops.resend(dep, n.id, failed.id), 409, 'delivery_not_failed');
      expect(await h.deliverQueued()).toBe(1);
      expect(sink.messagesTo('moved@new.test')).toHaveLength(1);
      expect(sink.attempts(moved.email)).toBe(1);
      expect(sink.messagesTo(bob.email)).toHaveLength(toBob + 1);
      expect(sink.messagesTo(s.admin.email)).toHaveLength(toOwner + 1);
      expect((await deliveries(n.id)).find((d) => d.id === failed.id)).toMatchObject({
        status: 'sent',
        attempts: 2,
        email: 'moved@new.test',
      });
      await expectApiError(ops.resend(dep, n.id, failed.id), 409, 'delivery_not_failed');

      // A deactivated user is not mailed, and a delivery of another notification is not this one's.
      await s.app
        .get(UsersService)
        .update(await h.principal(s.admin), leaver.userId, { isDeactivated: true });
      const gone = (await deliveries(n.id)).find((d) => d.email === leaver.email)!;
      await expectApiError(ops.resend(dep, n.id, gone.id), 409, 'delivery_not_resendable');
      const other = await create({ hour: 19 });
      await expectApiError(ops.resend(dep, other.id, failed.id), 404, 'notification_delivery_not_found');
      expect((await deliveries(n.id)).find((d) => d.id === gone.id)).toMatchObject({
        status: 'failed',
        resends: [],
      });
      sink.accept(moved.email);
      sink.accept(leaver.email);
    });
  });
});

/* Issue 26, item 3: recipients per notification, deliveries per account and hour, and the
 * schedule's minimum interval, on small limits, so each boundary is reached with a few recipients.
 * Issue 27, item 5: this installation has SMTP but no data API (neither DATA_API_URL_TEMPLATE nor
 * DEPLOYMENT_DOMAIN). (What the request's validation refuses of an address: notifications.e2e-part.) */
const MAX_RECIPIENTS = 4;
const MAX_PER_HOUR = 3;

describe('notifications within bounds', () => {
  let s: ServiceApp;
  let sink: SmtpSink;
  let dep: number;
  let dashboardId: number;
  const h = notificationHarness(() => s);
  const embed = (externalId: string, extra: Json = {}) => ({
    type: 'EMBED_USER',
    embedTenantName: 'retail',
    externalId,
    ...extra,
  });
  /** A deployment of the actor's account with a published dashboard (no reports: nothing to query). */
  const publishedDashboard = async (actor: Actor) => {
    const { dep: deployment, wb } = await h.workbook(actor, 'Bounded', false);
    const published = await h.publish(actor, deployment, wb, 'Bounded', []);
    return { dep: deployment, dashboardId: published.id };
  };
  const create = (body: Json, actor: Actor = s.admin, at = { dep, dashboardId }) =>
    h.create(actor, at.dep, { dashboardId: at.dashboardId, scheduleType: 'DAILY', hour: 9, ...body });
  const recipientsOf = async (id: number) =>
    (await s.app.get(NotificationRecipientsService).list(await h.principal(s.admin), dep, id, { first: 100 }))
      .items;
  const embedUsersNamed = async (externalIds: string[]) =>
    (
      await s.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_users WHERE external_id = ANY($1::text[])`,
        [externalIds],
      )
    )[0].n;

  beforeAll(async () => {
    sink = await startSmtpSink();
    s = await startServiceApp({
      NOTIFICATION_MAX_RECIPIENTS: String(MAX_RECIPIENTS),
      NOTIFICATION_MAX_DELIVERIES_PER_HOUR: String(MAX_PER_HOUR),
      NOTIFICATION_MIN_INTERVAL_MINUTES: '15',
      ...sink.env,
      ...NO_RELAY,
    });
    ({ dep, dashboardId } = await publishedDashboard(s.admin));
  });

  afterAll(async () => {
    await s?.close();
    await sink?.close();
  });

  describe('recipients per notification (NOTIFICATION_MAX_RECIPIENTS)', () => {
    it('takes exactly the limit, console and embed users together; one more is a 400 that writes nothing', async () => {
      const n = await create({});
      const four = [
        { type: 'USER', userId: s.admin.userId },
        embed('r1@retail.test'),
        embed('r2@retail.test'),
        embed('r3@retail.test'),
      ];
      const added = await h.addRecipients(s.admin, dep, n.id, four);
      expect(added.createdRecipients).toHaveLength(MAX_RECIPIENTS);
      // At the limit, the same recipients again change nothing and pass.
      const again = await h.addRecipients(s.admin, dep, n.id, four);
      expect(again.unchangedRecipients).toHaveLength(MAX_RECIPIENTS);

      const over = await expectApiError(
        h.addRecipients(s.admin, dep, n.id, [embed('r1@retail.test'), embed('r5@retail.test')]),
        400,
        'notification_recipient_limit_reached',
      );
      expect(over.messages).toMatch(/at most 4 recipients.*would give it 5/);
      expect(await recipientsOf(n.id)).toHaveLength(MAX_RECIPIENTS);
      // The embed user it would have provisioned was rolled back with the rest.
      expect(await embedUsersNamed(['r5@retail.test'])).toBe(0);
    });

    it('refuses one request asking for more than the limit at once, before provisioning anyone', async () => {
      const n = await create({ hour: 10 });
      const five = ['b1', 'b2', 'b3', 'b4', 'b5'].map((id) => embed(`${id}@retail.test`));
      await expectApiError(
        h.addRecipients(s.admin, dep, n.id, five),
        400,
        'notification_recipient_limit_reached',
      );
      expect(await recipientsOf(n.id)).toEqual([]);
      expect(await embedUsersNamed(five.map((r) => r.externalId))).toBe(0);
    });
  });

  it('creates a schedule firing exactly every 15 minutes, and refuses any closer with a 400 that says why', async () => {
    const notifications = s.app.get(NotificationsService);
    const admin = await h.principal(s.admin);
    const listed = async () => (await notifications.list(admin, dep, { first: 100 })).items.length;
    const every15 = await create({ scheduleType: 'CUSTOM', customCron: '*/15 * * * *' });
    expect(every15.cronExpression).toBe('*/15 * * * *');
    await create({ scheduleType: 'HOURLY', minute: 5 });
    const before = await listed();
    for (const customCron of [
      '* * * * *',
      '*/14 * * * *',
      '0,5 9 * * *', // five minutes apart once a day
      '5,55 0,23 * * 1,2', // 23:55 on Monday, then 00:05 on Tuesday
    ]) {
      const refused = await expectApiError(
        create({ scheduleType: 'CUSTOM', customCron, timezone: 'Europe/Berlin' }),
        400,
        'validation_failed',
      );
      expect({ customCron, message: (refused.messages as string[]).join(' ') }).toEqual({
        customCron,
        message: expect.stringMatching(/fires \d+ minute\(s\) apart .* at most once every 15 minutes/),
      });
    }
    expect(await listed()).toBe(before);

    // An update to a closer schedule is refused too, and leaves the notification as it was.
    await expectApiError(
      notifications.update(admin, dep, every15.id, { customCron: '*/5 * * * *' }),
      400,
      'validation_failed',
    );
    expect((await notifications.get(admin, dep, every15.id)).cronExpression).toBe('*/15 * * * *');
    expect((await s.app.get(JobSchedules).listByOwner(`notification:${every15.id}`))[0].cron).toBe(
      '*/15 * * * *',
    );
  });

  it('skips, and records, the firing of a schedule stored before the minimum: nobody is mailed', async () => {
    const n = await create({ hour: 11 });
    await h.addRecipients(s.admin, dep, n.id, [embed('legacy@retail.test')]);
    // An every-minute schedule written before the minimum existed.
    await s.sql(
      `UPDATE notifications SET schedule_type = 'CUSTOM', custom_cron = $1, cron_expression = $1 WHERE id = $2`,
      ['* * * * *', n.id],
    );
    await s.sql(`UPDATE job_schedules SET cron = $1 WHERE owner = $2`, ['* * * * *', `notification:${n.id}`]);
    const { outcome } = await h.fire(n.id, '2027-06-01T09:00:00Z');
    expect(outcome).toEqual({ status: 'succeeded' });
    const [run] = await h.runsOf(n.id);
    expect({ status: run.status, error: run.error }).toEqual({
      status: 'skipped',
      error: expect.stringMatching(/fires again within 15 minutes/),
    });
    expect((await h.deliveries(s.admin, dep, n.id)).items).toEqual([]);
    expect(sink.messagesTo('legacy@retail.test')).toEqual([]);
  });

  it('sends an account the limit and records the rest as skipped; another account still gets its own limit', async () => {
    const initech = await s.make.account('initech');
    const umbrella = await s.make.account('umbrella');
    const setUp = async (actor: Actor, count: number) => {
      const at = await publishedDashboard(actor);
      const n = await create({}, actor, at);
      const addresses = Array.from({ length: count }, (_, i) => `reader${i}@${actor.slug}.test`);
      await h.addRecipients(
        actor,
        at.dep,
        n.id,
        addresses.map((a) => embed(a)),
      );
      return { n, at, addresses };
    };
    const settled = async (actor: Actor, id: number, deployment: number, count: number) => {
      const items = (await h.deliveries(actor, deployment, id, { first: 100 })).items;
      expect(items).toHaveLength(count);
      expect(settledAll(items, ENDED_OR_SKIPPED)).toBe(true);
      return items;
    };

    // One account asks for one more delivery than its hour allows: every run of it is one count.
    const flood = await setUp(initech, MAX_PER_HOUR + 1);
    await h.fire(flood.n.id, '2027-06-01T09:00:00Z');
    const flooded = await settled(initech, flood.n.id, flood.at.dep, MAX_PER_HOUR + 1);
    const sent = flooded.filter((d) => d.status === 'sent');
    const skipped = flooded.filter((d) => d.status === 'skipped');
    expect(sent).toHaveLength(MAX_PER_HOUR);
    expect(skipped).toEqual([
      expect.objectContaining({
        status: 'skipped',
        attempts: 0,
        sentAt: null,
        lastError: expect.stringMatching(/hourly delivery limit was reached/),
      }),
    ]);
    // The oldest recipients are served; the newest is the one refused, and was not mailed.
    expect(skipped[0].email).toBe(flood.addresses[MAX_PER_HOUR]);
    for (const d of sent) expect(sink.messagesTo(d.email)).toHaveLength(1);
    expect(sink.messagesTo(skipped[0].email)).toEqual([]);
    const [run] = await h.runsOf(flood.n.id);
    expect({ status: run.status, error: run.error }).toEqual({
      status: 'finished',
      error: '1 of 4 deliveries not sent: the account’s hourly delivery limit (3) was reached',
    });

    // The other account is not held by the first one's limit: exactly its own limit is sent.
    const fair = await setUp(umbrella, MAX_PER_HOUR);
    await h.fire(fair.n.id, '2027-06-01T09:00:00Z');
    const delivered = await settled(umbrella, fair.n.id, fair.at.dep, MAX_PER_HOUR);
    expect(delivered.map((d) => d.status)).toEqual(Array(MAX_PER_HOUR).fill('sent'));
    for (const address of fair.addresses) expect(sink.messagesTo(address)).toHaveLength(1);
  });

  it('counts a resend against the hourly limit: past it, the resend is refused and changes nothing', async () => {
    const account = await s.make.account('resender');
    const at = await publishedDashboard(account);
    const n = await create({}, account, at);
    await h.addRecipients(account, at.dep, n.id, [
      embed('kept@resender.test'),
      embed('bounced@resender.test'),
    ]);
    sink.rejectPermanently('bounced@resender.test');
    await h.fire(n.id, '2027-06-01T09:00:00Z');
    // The owner's notice of the refusal is the hour's third delivery: the limit.
    expect(await h.deliverQueued()).toBe(1);
    expect(sink.messagesTo(account.email)).toHaveLength(1);
    sink.accept('bounced@resender.test');
    const bounced = (await h.deliveries(account, at.dep, n.id)).items.find(
      (d) => d.email === 'bounced@resender.test',
    )!;
    expect(bounced.status).toBe('failed');
    await expectApiError(
      (await h.ops(account)).resend(at.dep, n.id, bounced.id),
      409,
      'notification_delivery_limit_reached',
    );
    expect((await h.deliveries(account, at.dep, n.id)).items.find((d) => d.id === bounced.id)).toMatchObject({
      status: 'failed',
      resends: [],
    });
    expect(await h.deliverQueued()).toBe(0);
  });

  it('without a data API, mails the recipients nothing, says which setting is missing, and tells the owner', async () => {
    await s.app
      .get(EnvVarsService)
      .set(await h.principal(s.admin), dep, [{ name: 'CUBEJS_API_SECRET', value: SECRET }]);
    const wb = (await s.make.workbook(dep, { name: 'Sales' })).id;
    const report = await h.report(s.admin, dep, {
      name: 'Orders',
      workbookId: wb,
      jsonQuery: JSON.stringify({ measures: ['Orders.count'] }),
    });
    const published = await h.publish(s.admin, dep, wb, 'Unreadable', [widget(report.id)]);
    const at = { dep, dashboardId: published.id };
    const n = await create({ hour: 15 }, s.admin, at);
    await h.addRecipients(s.admin, dep, n.id, [embed('reader@no-data.test')]);
    const toOwner = sink.messagesTo(s.admin.email).length;
    await h.fire(n.id, '2027-06-04T15:00:00Z');
    const items = (await h.deliveries(s.admin, dep, n.id, { first: 100 })).items;
    expect(items).toHaveLength(2);
    expect(settledAll(items, ENDED_OR_SKIPPED)).toBe(true);
    const reader = items.find((d) => d.email === 'reader@no-data.test')!;
    expect(reader.status).toBe('failed');
    expect(reader.lastError).toContain(
      'data_api_not_configured: No data API is configured on this installation',
    );
    expect(reader.lastError).toContain('DATA_API_URL_TEMPLATE');
    expect(reader.lastError).not.toMatch(/ENOTFOUND|retry/);
    expect(sink.messagesTo('reader@no-data.test')).toEqual([]);
    expect(items.find((d) => d.recipientType === 'OWNER')).toMatchObject({ status: 'sent' });
    const [notice] = sink.messagesTo(s.admin.email).slice(toOwner);
    expect(notice.subject).toBe('Unreadable: scheduled report not sent');
    expect(notice.text).toContain('DATA_API_URL_TEMPLATE');
    const [run] = await h.runsOf(n.id);
    expect(run.status).toBe('failed');
    expect(run.error).toContain('data_api_not_configured');
  });
});

/** An installation without SMTP (nor a data API), as the notification routes' e2e app. */
describe('notification schedules firing runs, with a controllable clock', () => {
  let s: ServiceApp;
  let dep: number;
  let dashboardId: number;
  const h = notificationHarness(() => s);
  const create = (body: Json) => h.create(s.admin, dep, { dashboardId, ...body });
  const daily = (extra: Json = {}) => ({ scheduleType: 'DAILY', hour: 9, minute: 0, ...extra });
  const schedules = () => s.app.get(JobSchedules);
  const scheduleOf = async (id: number) => (await schedules().listByOwner(`notification:${id}`))[0];
  /** Fired occurrences of a notification's schedule (`scheduledFor` of its queued runs), oldest first. */
  const firedFor = async (id: number) =>
    (
      await s.sql<{ at: string }>(
        `SELECT payload->>'scheduledFor' AS at FROM job_runs WHERE owner = $1 AND job = 'notification.run' ORDER BY id`,
        [`notification:${id}`],
      )
    ).map((r) => r.at);
  /** Leaves only these notifications' schedules enabled, so a tick at a chosen instant fires them alone. */
  const only = async (...ids: number[]) => {
    await s.sql(`UPDATE job_schedules SET enabled = (owner = ANY($1::text[]))`, [
      ids.map((id) => `notification:${id}`),
    ]);
  };
  const local = (iso: string, tz = 'Europe/Berlin') =>
    new Intl.DateTimeFormat('sv-SE', { timeZone: tz, dateStyle: 'short', timeStyle: 'short' }).format(
      new Date(iso),
    );

  /**
   * Walks a notification's schedule through time with the controllable clock: its next firing
   * is set to `start`, then the tick runs one second after each firing it announces, until the
   * next one is past `end`. Answers every firing computed on the way (ISO instants).
   */
  const walk = async (id: number, start: string, end: string): Promise<string[]> => {
    await only(id);
    const schedule = await scheduleOf(id);
    await s.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE id = $2`, [start, schedule.id]);
    const out: string[] = [];
    for (let i = 0; i < 100; i++) {
      const { nextRunAt } = (await schedules().get(schedule.id))!;
      if (i > 0) {
        if (nextRunAt > new Date(end).toISOString()) break;
        out.push(nextRunAt);
      }
      await schedules().fireDue({ now: new Date(new Date(nextRunAt).getTime() + 1000), limit: 500 });
    }
    return out;
  };

  beforeAll(async () => {
    s = await startServiceApp(NO_RELAY);
    // No reports: these runs render nothing (no recipients, or no mail to send).
    const { dep: deployment, wb } = await h.workbook(s.admin, 'Notified', false);
    dep = deployment;
    dashboardId = (await h.publish(s.admin, dep, wb, 'Weekly sales', [])).id;
  });

  afterAll(async () => {
    await s?.close();
  });

  it('a daily 09:00 in Europe/Berlin fires at 08:00Z in winter and 07:00Z in summer', async () => {
    const { id } = await create(daily({ timezone: 'Europe/Berlin' }));
    expect(await walk(id, '2027-01-09T08:00:00.000Z', '2027-01-12T00:00:00Z')).toEqual([
      '2027-01-10T08:00:00.000Z',
      '2027-01-11T08:00:00.000Z',
    ]);
    // Across the spring change (28 March 2027).
    expect(await walk(id, '2027-03-26T08:00:00.000Z', '2027-03-30T00:00:00Z')).toEqual([
      '2027-03-27T08:00:00.000Z',
      '2027-03-28T07:00:00.000Z',
      '2027-03-29T07:00:00.000Z',
    ]);
    expect(await walk(id, '2027-04-14T07:00:00.000Z', '2027-04-16T00:00:00Z')).toEqual([
      '2027-04-15T07:00:00.000Z',
    ]);
    const fired = await firedFor(id);
    expect(fired).toContain('2027-01-10T08:00:00.000Z');
    expect(fired).toContain('2027-03-28T07:00:00.000Z');
    expect(fired).toContain('2027-04-15T07:00:00.000Z');
  });

  it('a time that does not exist fires once; a repeated hour once daily and twice hourly', async () => {
    const spring = (await create(daily({ timezone: 'Europe/Berlin', hour: 2, minute: 30 }))).id;
    const springFirings = await walk(spring, '2027-03-26T01:30:00.000Z', '2027-03-30T00:00:00Z');
    const springDays = springFirings.map((f) => local(f).slice(0, 10));
    expect(springDays).toEqual(['2027-03-27', '2027-03-28', '2027-03-29']);
    // 02:30 does not exist on 28 March: that day fires once, just after the gap.
    expect(local(springFirings[1])).toMatch(/^2027-03-28 03:/);

    const autumn = (await create(daily({ timezone: 'Europe/Berlin', hour: 2, minute: 30 }))).id;
    const autumnFirings = await walk(autumn, '2027-10-29T00:30:00.000Z', '2027-11-01T12:00:00Z');
    expect(autumnFirings).toEqual([
      '2027-10-30T00:30:00.000Z',
      '2027-10-31T00:30:00.000Z', // 02:30 CEST, the first of the two 02:30s
      '2027-11-01T01:30:00.000Z',
    ]);

    const hourly = (await create({ scheduleType: 'HOURLY', minute: 0, timezone: 'Europe/Berlin' })).id;
    const hourlyFirings = await walk(hourly, '2027-10-30T22:00:00.000Z', '2027-10-31T02:30:00Z');
    expect(hourlyFirings).toEqual([
      '2027-10-30T23:00:00.000Z',
      '2027-10-31T00:00:00.000Z',
      '2027-10-31T01:00:00.000Z',
      '2027-10-31T02:00:00.000Z',
    ]);
    expect(hourlyFirings.map((f) => local(f).slice(11))).toEqual(['01:00', '02:00', '02:00', '03:00']);
  });

  it('after downtime only the latest missed run fires, within the grace window', async () => {
    const { id } = await create({ scheduleType: 'HOURLY', minute: 0 });
    const dailyId = (await create(daily({ hour: 10 }))).id;
    await only(id, dailyId);
    const schedule = await scheduleOf(id);
    await s.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE id = $2`, [
      '2027-02-01T09:00:00Z',
      schedule.id,
    ]);
    // Down from 09:00 to 14:40: five hourly occurrences missed; only 14:00 fires.
    await schedules().fireDue({ now: new Date('2027-02-01T14:40:00Z') });
    expect(await firedFor(id)).toEqual(['2027-02-01T14:00:00.000Z']);
    expect((await schedules().get(schedule.id))!.nextRunAt).toBe('2027-02-01T15:00:00.000Z');
    // The run records that occurrence (no recipients: nothing is rendered or mailed).
    expect((await h.runQueued(id)).outcome).toEqual({ status: 'succeeded' });
    const runs = await s.sql<{ at: string }>(
      `SELECT scheduled_for AS at FROM notification_runs WHERE notification_id = $1`,
      [id],
    );
    expect(runs.map((r) => new Date(r.at).toISOString())).toEqual(['2027-02-01T14:00:00.000Z']);

    // A daily schedule down for two days: its latest occurrence is past the grace window (1 h).
    const dailySchedule = await scheduleOf(dailyId);
    await s.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE id = $2`, [
      '2027-02-01T10:00:00Z',
      dailySchedule.id,
    ]);
    await schedules().fireDue({ now: new Date('2027-02-03T12:00:00Z') });
    expect(await firedFor(dailyId)).toEqual([]);
    const skipped = (await schedules().get(dailySchedule.id))!;
    expect(skipped.nextRunAt).toBe('2027-02-04T10:00:00.000Z');
    expect(skipped.lastError).toMatch(/grace/);
    // Firing on time again works.
    await schedules().fireDue({ now: new Date('2027-02-04T10:00:05Z') });
    expect(await firedFor(dailyId)).toEqual(['2027-02-04T10:00:00.000Z']);
  });

  it('on an installation without SMTP, a run fails at once naming SMTP_URL and SMTP_FROM', async () => {
    const developer = await s.make.user({ role: 'Developer' });
    const { id } = await create(daily({ hour: 11 }));
    await h.addRecipients(s.admin, dep, id, [{ type: 'USER', userId: developer.userId }]);
    await h.fireAt(id, '2027-05-02T11:00:00Z', 5000);
    const { outcome } = await h.runQueued(id);
    const reason =
      'Mail is not configured on this installation: set SMTP_URL and SMTP_FROM to send notifications';
    expect(outcome).toEqual({ status: 'failed', error: reason });
    const [run] = await h.runsOf(id);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'failed', error: reason });
    const deliveries = (await h.deliveries(s.admin, dep, id)).items;
    expect(deliveries).toEqual([
      expect.objectContaining({ email: developer.email, status: 'failed', attempts: 0, lastError: reason }),
    ]);
    expect(await h.jobOf(id)).toEqual({ status: 'failed', error: reason });
  });

  it('a disabled notification does not fire', async () => {
    const { id } = await create(daily({ notificationEnabled: false }));
    const schedule = await scheduleOf(id);
    expect(schedule.enabled).toBe(false);
    await s.sql(`UPDATE job_schedules SET enabled = false`);
    await s.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE id = $2`, [
      '2027-05-01T09:00:00Z',
      schedule.id,
    ]);
    await schedules().fireDue({ now: new Date('2027-05-01T09:00:05Z') });
    expect(await firedFor(id)).toEqual([]);
  });
});
