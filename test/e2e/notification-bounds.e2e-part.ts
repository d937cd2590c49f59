import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { bearer, expectErrorShape, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { waitFor } from '../support/factories.js';
import { newDeployment, newReport } from '../support/reports.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/* Issue 26, item 3: recipients per notification, deliveries per account and hour, the schedule's
 * minimum interval, and recipient addresses as single mailboxes. Small limits, so each boundary
 * is reached with a few recipients. */
const MAX_RECIPIENTS = 4;
const MAX_PER_HOUR = 3;
const TERMINAL = ['sent', 'failed', 'unknown', 'skipped'];

describe('scheduled notifications: bounds', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let dep: number;
  let dashboardId: number;

  const base = (deployment = dep) => `/api/v1/deployments/${deployment}/notifications`;
  const admin = () => bearer(t.admin.token);

  /** A deployment of the actor's account with a published dashboard (no reports: nothing to query). */
  const publishedDashboard = async (actor: Actor) => {
    const as = bearer(actor.token);
    const deployment = await newDeployment(t, actor, 'Bounded');
    const wb = (
      await t
        .http()
        .post(`/api/v1/deployments/${deployment}/workbooks`)
        .set(as)
        .send({ name: 'Sales' })
        .expect(200)
    ).body.id as number;
    const published = await t
      .http()
      .post(`/api/v1/deployments/${deployment}/workbooks/${wb}/publish`)
      .set(as)
      .send({ workbookId: wb, title: 'Bounded', config: { widgets: [] } })
      .expect(200);
    return { dep: deployment, dashboardId: published.body.id as number };
  };
  const create = (body: Json, actor: Actor = t.admin, at = { dep, dashboardId }) =>
    t
      .http()
      .post(base(at.dep))
      .set(bearer(actor.token))
      .send({ dashboardId: at.dashboardId, scheduleType: 'DAILY', hour: 9, ...body });
  const addRecipients = (id: number, recipients: Json[], actor: Actor = t.admin, deployment = dep) =>
    t
      .http()
      .post(`${base(deployment)}/${id}/recipients`)
      .set(bearer(actor.token))
      .send({ recipients });
  const recipientsOf = async (id: number, actor: Actor = t.admin, deployment = dep) =>
    (
      await t
        .http()
        .get(`${base(deployment)}/${id}/recipients`)
        .query({ first: 100 })
        .set(bearer(actor.token))
        .expect(200)
    ).body.items as Json[];
  const deliveriesOf = async (id: number, actor: Actor, deployment: number) =>
    (
      await t
        .http()
        .get(`${base(deployment)}/${id}/deliveries`)
        .query({ first: 100 })
        .set(bearer(actor.token))
        .expect(200)
    ).body.items as Json[];
  const embed = (externalId: string, extra: Json = {}) => ({
    type: 'EMBED_USER',
    embedTenantName: 'retail',
    externalId,
    ...extra,
  });
  const embedUsersNamed = async (externalIds: string[]) =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_users WHERE external_id = ANY($1::text[])`,
        [externalIds],
      )
    )[0].n;
  /** Fires the notification's schedule alone at `at` (the controllable clock of JobSchedules). */
  const fireAt = async (id: number, at: string) => {
    await t.sql(`UPDATE job_schedules SET enabled = (owner = $1)`, [`notification:${id}`]);
    await t.sql(`UPDATE job_schedules SET next_run_at = $1 WHERE owner = $2`, [at, `notification:${id}`]);
    expect(await t.app.get(JobSchedules).fireDue({ now: new Date(Date.parse(at) + 1000) })).toBe(1);
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      NOTIFICATION_MAX_RECIPIENTS: String(MAX_RECIPIENTS),
      NOTIFICATION_MAX_DELIVERIES_PER_HOUR: String(MAX_PER_HOUR),
      NOTIFICATION_MIN_INTERVAL_MINUTES: '15',
      ...sink.env,
    });
    ({ dep, dashboardId } = await publishedDashboard(t.admin));
  });

  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  describe('recipients per notification (NOTIFICATION_MAX_RECIPIENTS)', () => {
    it('takes exactly the limit, console and embed users together; one more is a 400 that writes nothing', async () => {
      const n = (await create({}).expect(200)).body as Json;
      const four = [
        { type: 'USER', userId: t.admin.userId },
        embed('r1@retail.test'),
        embed('r2@retail.test'),
        embed('r3@retail.test'),
      ];
      const added = await addRecipients(n.id, four).expect(200);
      expect(added.body.createdRecipients).toHaveLength(MAX_RECIPIENTS);
      // At the limit, the same recipients again change nothing and pass.
      const again = await addRecipients(n.id, four).expect(200);
      expect(again.body.unchangedRecipients).toHaveLength(MAX_RECIPIENTS);

      const over = await addRecipients(n.id, [embed('r1@retail.test'), embed('r5@retail.test')]);
      expect(over.status).toBe(400);
      expectErrorShape(over.body, 400, 'notification_recipient_limit_reached');
      expect(over.body.message).toMatch(/at most 4 recipients.*would give it 5/);
      expect(await recipientsOf(n.id)).toHaveLength(MAX_RECIPIENTS);
      // The embed user it would have provisioned was rolled back with the rest.
      expect(await embedUsersNamed(['r5@retail.test'])).toBe(0);
    });

    it('refuses one request asking for more than the limit at once, before provisioning anyone', async () => {
      const n = (await create({ hour: 10 }).expect(200)).body as Json;
      const five = ['b1', 'b2', 'b3', 'b4', 'b5'].map((id) => embed(`${id}@retail.test`));
      const res = await addRecipients(n.id, five);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'notification_recipient_limit_reached');
      expect(await recipientsOf(n.id)).toEqual([]);
      expect(await embedUsersNamed(five.map((r) => r.externalId))).toBe(0);
    });
  });

  describe('the schedule’s minimum interval (NOTIFICATION_MIN_INTERVAL_MINUTES)', () => {
    it('creates a schedule firing exactly every 15 minutes, and refuses any closer with a 400 that says why', async () => {
      const listed = async () =>
        (await t.http().get(base()).query({ first: 100 }).set(admin()).expect(200)).body.items
          .length as number;
      const every15 = await create({ scheduleType: 'CUSTOM', customCron: '*/15 * * * *' }).expect(200);
      expect(every15.body.cronExpression).toBe('*/15 * * * *');
      await create({ scheduleType: 'HOURLY', minute: 5 }).expect(200);
      const before = await listed();
      for (const customCron of [
        '* * * * *',
        '*/14 * * * *',
        '0,5 9 * * *', // five minutes apart once a day
        '5,55 0,23 * * 1,2', // 23:55 on Monday, then 00:05 on Tuesday
      ]) {
        const res = await create({ scheduleType: 'CUSTOM', customCron, timezone: 'Europe/Berlin' });
        expect({ customCron, status: res.status }).toEqual({ customCron, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(res.body.message.join(' ')).toMatch(
          /fires \d+ minute\(s\) apart .* at most once every 15 minutes/,
        );
      }
      expect(await listed()).toBe(before);

      // An update to a closer schedule is refused too, and leaves the notification as it was.
      const refused = await t
        .http()
        .put(`${base()}/${every15.body.id}`)
        .set(admin())
        .send({ customCron: '*/5 * * * *' });
      expect(refused.status).toBe(400);
      expectErrorShape(refused.body, 400, 'validation_failed');
      const kept = await t.http().get(`${base()}/${every15.body.id}`).set(admin()).expect(200);
      expect(kept.body.cronExpression).toBe('*/15 * * * *');
      expect((await t.app.get(JobSchedules).listByOwner(`notification:${every15.body.id}`))[0].cron).toBe(
        '*/15 * * * *',
      );
    });

    it('skips, and records, the firing of a schedule stored before the minimum: nobody is mailed', async () => {
      const n = (await create({ hour: 11 }).expect(200)).body as Json;
      await addRecipients(n.id, [embed('legacy@retail.test')]).expect(200);
      // An every-minute schedule written before the minimum existed.
      await t.sql(
        `UPDATE notifications SET schedule_type = 'CUSTOM', custom_cron = $1, cron_expression = $1 WHERE id = $2`,
        ['* * * * *', n.id],
      );
      await t.sql(`UPDATE job_schedules SET cron = $1 WHERE owner = $2`, [
        '* * * * *',
        `notification:${n.id}`,
      ]);
      await fireAt(n.id, '2027-06-01T09:00:00Z');
      const [run] = await waitFor(
        () =>
          t.sql<{ status: string; error: string }>(
            `SELECT status, error FROM notification_runs WHERE notification_id = $1`,
            [n.id],
          ),
        (rows) => rows[0]?.status === 'skipped',
        20_000,
      );
      expect(run).toEqual({
        status: 'skipped',
        error: expect.stringMatching(/fires again within 15 minutes/),
      });
      expect(await deliveriesOf(n.id, t.admin, dep)).toEqual([]);
      expect(sink.messagesTo('legacy@retail.test')).toEqual([]);
    });
  });

  describe('deliveries per account and hour (NOTIFICATION_MAX_DELIVERIES_PER_HOUR)', () => {
    it('sends an account the limit and records the rest as skipped; another account still gets its own limit', async () => {
      const initech = await newAccount(t, 'initech');
      const umbrella = await newAccount(t, 'umbrella');
      const setUp = async (actor: Actor, count: number) => {
        const at = await publishedDashboard(actor);
        const n = (await create({}, actor, at).expect(200)).body as Json;
        const addresses = Array.from({ length: count }, (_, i) => `reader${i}@${actor.slug}.test`);
        await addRecipients(
          n.id,
          addresses.map((a) => embed(a)),
          actor,
          at.dep,
        ).expect(200);
        return { n, at, addresses };
      };
      const settled = (actor: Actor, id: number, deployment: number, count: number) =>
        waitFor(
          () => deliveriesOf(id, actor, deployment),
          (items) => items.length === count && items.every((d) => TERMINAL.includes(d.status)),
          60_000,
          100,
        );

      // One account asks for one more delivery than its hour allows: every run of it is one count.
      const flood = await setUp(initech, MAX_PER_HOUR + 1);
      await fireAt(flood.n.id, '2027-06-01T09:00:00Z');
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
      const [run] = await t.sql<{ status: string; error: string }>(
        `SELECT status, error FROM notification_runs WHERE notification_id = $1`,
        [flood.n.id],
      );
      expect(run).toEqual({
        status: 'delivering',
        error: '1 of 4 deliveries not sent: the account’s hourly delivery limit (3) was reached',
      });

      // The other account is not held by the first one's limit: exactly its own limit is sent.
      const fair = await setUp(umbrella, MAX_PER_HOUR);
      await fireAt(fair.n.id, '2027-06-01T09:00:00Z');
      const delivered = await settled(umbrella, fair.n.id, fair.at.dep, MAX_PER_HOUR);
      expect(delivered.map((d) => d.status)).toEqual(Array(MAX_PER_HOUR).fill('sent'));
      for (const address of fair.addresses) expect(sink.messagesTo(address)).toHaveLength(1);
    });
  });

  describe('recipient addresses are single mailboxes', () => {
    const BAD = [
      '"a\r\nb"@x.test',
      'a\r\nb@x.test',
      'ana@x.test\r\nBcc: all@x.test',
      'Ana <ana@x.test>',
      'ana@x.test, bob@x.test',
      'ana@x.test;bob@x.test',
      'ana(comment)@x.test',
      '"a\u0007b"@x.test',
      '"a b"@x.test',
      'a\u200bb@x.test',
    ];

    it('refuses every other form with a 400, as an email and as an address-shaped externalId, storing nothing', async () => {
      const n = (await create({ hour: 12 }).expect(200)).body as Json;
      for (const bad of BAD) {
        const asEmail = await addRecipients(n.id, [embed('reader', { email: bad })]);
        expect({ bad, status: asEmail.status, code: asEmail.body.code }).toEqual({
          bad,
          status: 400,
          code: 'validation_failed',
        });
        expect(asEmail.body.message.join(' ')).toMatch(/email must be a single address/);
        const asUser = await addRecipients(n.id, [{ type: 'USER', email: bad }]);
        expect({ bad, status: asUser.status, code: asUser.body.code }).toEqual({
          bad,
          status: 400,
          code: 'validation_failed',
        });
        const asExternalId = await addRecipients(n.id, [embed(bad)]);
        expect({ bad, status: asExternalId.status, code: asExternalId.body.code }).toEqual({
          bad,
          status: 400,
          code: 'invalid_notification_recipient',
        });
        expect(asExternalId.body.message.join(' ')).toMatch(/an externalId that is a single address/);
      }
      expect(await recipientsOf(n.id)).toEqual([]);
      expect(await embedUsersNamed(['reader', ...BAD.map((b) => b.toLowerCase())])).toBe(0);
    });

    it('still takes ordinary addresses: plus tags, subdomains, international domains', async () => {
      const n = (await create({ hour: 13 }).expect(200)).body as Json;
      const res = await addRecipients(n.id, [
        embed('ana+reports@eu.retail.test'),
        embed('jörg@münchen.de'),
        embed('o.brien', { email: "o'brien@mail.retail.test" }),
        { type: 'USER', email: t.admin.email },
      ]).expect(200);
      expect(res.body.createdRecipients.map((r: Json) => r.email).sort()).toEqual(
        ['ana+reports@eu.retail.test', 'jörg@münchen.de', "o'brien@mail.retail.test", t.admin.email].sort(),
      );
    });
  });
  // Issue 27, item 5: this installation has SMTP but no data API (neither DATA_API_URL_TEMPLATE nor
  // DEPLOYMENT_DOMAIN is set).
  describe('a run on an installation without a data API', () => {
    it('mails the recipients nothing, says which setting is missing, and tells the owner', async () => {
      const as = admin();
      const deployment = await newDeployment(t, t.admin, 'No data API');
      await t
        .http()
        .put(`/api/v1/deployments/${deployment}/env-vars`)
        .set(as)
        .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: 's'.repeat(40) }] })
        .expect(200);
      const wb = (
        await t
          .http()
          .post(`/api/v1/deployments/${deployment}/workbooks`)
          .set(as)
          .send({ name: 'Sales' })
          .expect(200)
      ).body.id as number;
      const report = await newReport(t, t.admin, deployment, {
        name: 'Orders',
        workbookId: wb,
        jsonQuery: JSON.stringify({ measures: ['Orders.count'] }),
      });
      const published = await t
        .http()
        .post(`/api/v1/deployments/${deployment}/workbooks/${wb}/publish`)
        .set(as)
        .send({
          workbookId: wb,
          title: 'Unreadable',
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
        .expect(200);
      const at = { dep: deployment, dashboardId: published.body.id as number };
      const n = (await create({ hour: 15 }, t.admin, at).expect(200)).body as Json;
      await addRecipients(n.id, [embed('reader@no-data.test')], t.admin, deployment).expect(200);
      const toOwner = sink.messagesTo(t.admin.email).length;
      await fireAt(n.id, '2027-06-04T15:00:00Z');
      const items = await waitFor(
        () => deliveriesOf(n.id, t.admin, deployment),
        (rows) => rows.length === 2 && rows.every((d) => TERMINAL.includes(d.status)),
        30_000,
        100,
      );
      const reader = items.find((d) => d.email === 'reader@no-data.test')!;
      expect(reader.status).toBe('failed');
      expect(reader.lastError).toContain(
        'data_api_not_configured: No data API is configured on this installation',
      );
      expect(reader.lastError).toContain('DATA_API_URL_TEMPLATE');
      expect(reader.lastError).not.toMatch(/ENOTFOUND|retry/);
      expect(sink.messagesTo('reader@no-data.test')).toEqual([]);
      expect(items.find((d) => d.recipientType === 'OWNER')).toMatchObject({ status: 'sent' });
      const [notice] = sink.messagesTo(t.admin.email).slice(toOwner);
      expect(notice.subject).toBe('Unreadable: scheduled report not sent');
      expect(notice.text).toContain('DATA_API_URL_TEMPLATE');
      const [run] = await t.sql<{ status: string; error: string }>(
        `SELECT status, error FROM notification_runs WHERE notification_id = $1`,
        [n.id],
      );
      expect(run.status).toBe('failed');
      expect(run.error).toContain('data_api_not_configured');
    });
  });
});
