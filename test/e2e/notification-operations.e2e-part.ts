import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { NOTIFICATION_RUN_JOB } from '../../src/modules/notifications/notification-jobs.js';
import { NotificationRunJob } from '../../src/modules/notifications/notification-run.job.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { TestJobContext } from '../support/job-context.js';
import { NotificationJobs } from '../support/notification-jobs.js';
import { EventTap } from '../support/published-events.js';
import { newDeployment, newReport } from '../support/reports.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const SECRET = 'n'.repeat(40);

/**
 * Issue 32, part 4, through HTTP: run now, resend a failed delivery, pause and resume, and what a
 * refused recipient leads to (the owner's notice, `notification.delivery_failed` and
 * `notification.run_finished`), with the real SMTP sink, the loopback data API and Chromium.
 * Nothing consumes the queues: each `notification.run` is run by calling its handler on its real
 * run record, and each `notification.deliver` recorded since the last call likewise
 * (test/support/job-context.ts). Events are read through the webhooks API (an endpoint subscribed
 * to `*` at 127.0.0.1, which OUTBOUND_ALLOWED_HOSTS opens; nothing is sent). The rules below HTTP
 * (holding while paused, the hourly limit) are in test/service/notifications.service.spec.ts.
 */
describe('operating scheduled notifications', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let fake: DataApiFake;
  let tap: EventTap;
  let other: Actor;
  let developer: Actor;
  let ana: Actor;
  let ben: Actor;
  let dep: number;
  let dashboardId: number;
  let otherDep: number;
  let otherDashboardId: number;
  const base = (deployment = dep) => `/api/v1/deployments/${deployment}/notifications`;
  const admin = () => bearer(t.admin.token);

  const ok = async (req: PromiseLike<{ status: number; body: Json }>, status = 200): Promise<Json> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const create = (hour: number, deployment = dep, dashboard = dashboardId, actor: Actor = t.admin) =>
    ok(
      t
        .http()
        .post(base(deployment))
        .set(bearer(actor.token))
        .send({ dashboardId: dashboard, scheduleType: 'DAILY', hour, minute: 0 }),
    );
  const addRecipients = (id: number, recipients: Json[]) =>
    ok(t.http().post(`${base()}/${id}/recipients`).set(admin()).send({ recipients }));
  const deliveries = async (id: number): Promise<Json[]> =>
    (await ok(t.http().get(`${base()}/${id}/deliveries`).query({ first: 100 }).set(admin()))).items;
  const post = (path: string, actor: Actor = t.admin) => t.http().post(path).set(bearer(actor.token));
  const runner = new NotificationJobs(
    () => t.app,
    (text, params) => t.sql(text, params),
  );
  const runJob = (jobRunId: string) => runner.runJob(jobRunId);
  const deliver = (deliveryId: string) => runner.deliver(deliveryId);
  const deliverQueued = () => runner.deliverQueued();
  const scheduleOf = async (id: number) =>
    (await t.app.get(JobSchedules).listByOwner(`notification:${id}`))[0];

  /** A deployment with the data API secret and a published dashboard of one report. */
  const publishedDashboard = async (actor: Actor, name: string) => {
    const as = bearer(actor.token);
    const deployment = await newDeployment(t, actor, name);
    await ok(
      t
        .http()
        .put(`/api/v1/deployments/${deployment}/env-vars`)
        .set(as)
        .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] }),
    );
    const wb = (
      await ok(t.http().post(`/api/v1/deployments/${deployment}/workbooks`).set(as).send({ name: 'Sales' }))
    ).id as number;
    const report = await newReport(t, actor, deployment, {
      name: 'Orders by status',
      workbookId: wb,
      jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
    });
    const published = await ok(
      t
        .http()
        .post(`/api/v1/deployments/${deployment}/workbooks/${wb}/publish`)
        .set(as)
        .send({
          workbookId: wb,
          title: 'Weekly sales',
          config: {
            widgets: [
              {
                id: 'w1',
                type: 'CHART',
                position: { x: 0, y: 0, w: 6, h: 4 },
                config: { reportId: report.id },
              },
            ],
          },
        }),
    );
    return { dep: deployment, dashboardId: published.id as number };
  };

  beforeAll(async () => {
    [sink, fake] = await Promise.all([startSmtpSink(), startDataApiFake({ secret: SECRET })]);
    // Nothing relays the queue: jobs run when a test runs them, webhook deliveries are never sent.
    t = await startApp({
      ...fake.env(),
      ...sink.env,
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      OUTBOX_RELAY_INTERVAL_MS: '600000',
    });
    fake.onLoad(() => [
      { 'Orders.status': 'completed', 'Orders.count': '42' },
      { 'Orders.status': 'open', 'Orders.count': '5' },
    ]);
    other = await newAccount(t, 'ops-other');
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    ana = await newUser(t, t.admin, { email: 'ana@acme.test' });
    ben = await newUser(t, t.admin, { email: 'ben@acme.test' });
    ({ dep, dashboardId } = await publishedDashboard(t.admin, 'Operated'));
    ({ dep: otherDep, dashboardId: otherDashboardId } = await publishedDashboard(other, 'Elsewhere'));
    tap = await EventTap.open(t, t.admin);
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([sink?.close(), fake?.close()]);
  });

  it('a recipient refused for good: the run mails the others, the owner is told once, and a resend after fixing the address mails that recipient alone, once', async () => {
    const n = await create(9);
    await addRecipients(n.id, [
      { type: 'USER', userId: ana.userId },
      { type: 'USER', email: ben.email },
      { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'carol-7', email: 'carol@old.test' },
    ]);
    sink.rejectPermanently('carol@old.test');
    await tap.next();

    const run = await ok(post(`${base()}/${n.id}/run`), 200);
    expect(run).toMatchObject({ notificationId: n.id, trigger: 'manual', status: 'queued' });
    expect(Math.abs(Date.parse(run.scheduledFor) - Date.now())).toBeLessThan(10 * 60_000);
    expect((await runJob(run.jobRunId)).outcome).toEqual({ status: 'succeeded' });
    expect(await deliverQueued()).toBe(3);
    // The last delivery to end ended the run, which queued the owner's one notice.
    expect(await deliverQueued()).toBe(1);

    expect(sink.messagesTo(ana.email)).toHaveLength(1);
    expect(sink.messagesTo(ben.email)).toHaveLength(1);
    expect(sink.messagesTo('carol@old.test')).toEqual([]);
    expect(sink.attempts('carol@old.test')).toBe(1);
    const notices = sink.messagesTo(t.admin.email);
    expect(notices).toHaveLength(1);
    expect(notices[0].subject).toBe('Weekly sales: scheduled report not delivered');
    expect(notices[0].text).toContain('- carol@old.test: Refused (550)');

    const items = await deliveries(n.id);
    const carol = items.find((d) => d.recipientType === 'EMBED_USER')!;
    expect(carol).toMatchObject({
      runId: run.id,
      email: 'carol@old.test',
      status: 'failed',
      attempts: 1,
      lastError: expect.stringMatching(/^Refused \(550\): 550 5\.1\.1/),
      resends: [],
    });
    expect(items.filter((d) => d.recipientType === 'USER').map((d) => d.status)).toEqual(['sent', 'sent']);
    expect(items.find((d) => d.recipientType === 'OWNER')).toMatchObject({
      status: 'sent',
      email: t.admin.email,
    });

    // One event per failed delivery, one per run, each with what the API shows.
    const events = await tap.expectExactly([
      `notification.delivery_failed notification_delivery:${carol.id}`,
      `notification.run_finished notification_run:${run.id}`,
    ]);
    expect(events.get(`notification.delivery_failed notification_delivery:${carol.id}`)!.data).toEqual({
      ...carol,
      notificationId: n.id,
    });
    expect(events.get(`notification.run_finished notification_run:${run.id}`)!.data).toMatchObject({
      id: run.id,
      notificationId: n.id,
      trigger: 'manual',
      status: 'finished',
      finishedAt: expect.any(String),
      counts: { total: 3, sent: 2, failed: 1, unknown: 0, skipped: 0 },
    });
    // Jobs run twice publish nothing twice, and mail nobody.
    expect((await deliver(carol.id)).status).toBe('succeeded');
    await t.app
      .get(NotificationRunJob)
      .run(
        { notificationId: n.id, scheduledFor: run.scheduledFor, manual: true },
        new TestJobContext(NOTIFICATION_RUN_JOB.name),
      );
    expect(await deliverQueued()).toBe(0);
    expect(sink.attempts('carol@old.test')).toBe(1);
    await tap.expectNone();

    // The address is fixed: the recipient is added again with its new address.
    const fixed = await addRecipients(n.id, [
      { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'carol-7', email: 'carol@new.test' },
    ]);
    expect(fixed.updatedRecipients).toHaveLength(1);
    const resend = () => post(`${base()}/${n.id}/deliveries/${carol.id}/resend`);
    const answers = await Promise.all([resend(), resend(), resend()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const accepted = answers.find((a) => a.status === 200)!.body as Json;
    expect(accepted).toMatchObject({
      id: carol.id,
      status: 'queued',
      email: 'carol@new.test',
      resends: [
        {
          at: expect.any(String),
          byUserId: t.admin.userId,
          email: 'carol@old.test',
          error: carol.lastError,
        },
      ],
    });
    for (const refused of answers.filter((a) => a.status === 409)) {
      expectErrorShape(refused.body, 409, 'delivery_not_failed');
    }
    expect(await deliverQueued()).toBe(1);
    expect(sink.messagesTo('carol@new.test')).toHaveLength(1);
    expect(sink.attempts('carol@old.test')).toBe(1);
    expect(sink.messagesTo(ana.email)).toHaveLength(1);
    expect(sink.messagesTo(ben.email)).toHaveLength(1);
    expect(sink.messagesTo(t.admin.email)).toHaveLength(1);
    const sent = (await deliveries(n.id)).find((d) => d.id === carol.id)!;
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, email: 'carol@new.test', lastError: null });
    expect(sent.resends).toEqual(accepted.resends);

    // Sent now: a second resend is refused and changes nothing; its job run again mails nobody.
    const again = await resend();
    expect(again.status).toBe(409);
    expectErrorShape(again.body, 409, 'delivery_not_failed');
    expect((await deliver(carol.id)).status).toBe('succeeded');
    expect(sink.messagesTo('carol@new.test')).toHaveLength(1);
    expect((await deliveries(n.id)).find((d) => d.id === carol.id)).toEqual(sent);
    await tap.expectNone();
  });

  it('runs now once for parallel requests, outside the schedule, and again once that run has ended', async () => {
    const n = await create(10);
    await addRecipients(n.id, [{ type: 'USER', userId: ana.userId }]);
    const schedule = await scheduleOf(n.id);
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(`${base()}/${n.id}/run`)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expectErrorShape(refused.body, 409, 'notification_run_in_progress');
    }
    const run = answers.find((a) => a.status === 200)!.body as Json;
    expect(run).toEqual({
      id: expect.any(String),
      notificationId: n.id,
      scheduledFor: expect.any(String),
      trigger: 'manual',
      status: 'queued',
      error: null,
      jobRunId: expect.any(String),
      requestedBy: t.admin.userId,
      createdAt: expect.any(String),
      finishedAt: null,
    });
    const recorded = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM notification_runs WHERE notification_id = $1`,
      [n.id],
    );
    expect(recorded[0].n).toBe(1);

    const toAna = sink.messagesTo(ana.email).length;
    expect((await runJob(run.jobRunId)).outcome).toEqual({ status: 'succeeded' });
    expect(await deliverQueued()).toBe(1);
    expect(sink.messagesTo(ana.email)).toHaveLength(toAna + 1);
    // The schedule's next occurrence did not move.
    expect((await scheduleOf(n.id)).nextRunAt).toBe(schedule.nextRunAt);
    const finished = await tap.expectOne('notification.run_finished', {
      type: 'notification_run',
      id: run.id,
    });
    expect(finished.data.counts).toEqual({ total: 1, sent: 1, failed: 0, unknown: 0, skipped: 0 });

    const next = await ok(post(`${base()}/${n.id}/run`), 200);
    expect(next.id).not.toBe(run.id);
    expect(Date.parse(next.scheduledFor)).toBeGreaterThan(Date.parse(run.scheduledFor));
  });

  it('pauses and resumes: pausedAt in the notification’s shape, isEnabled untouched, the schedule off and back on, both idempotent', async () => {
    const n = await create(11);
    expect(n.pausedAt).toBeNull();
    const one = `${base()}/${n.id}`;
    const paused = await ok(post(`${one}/pause`));
    expect(paused).toEqual({ ...n, pausedAt: expect.any(String), updatedAt: expect.any(String) });
    expect((await scheduleOf(n.id)).enabled).toBe(false);
    expect(await ok(post(`${one}/pause`))).toEqual(paused);
    expect(await ok(t.http().get(one).set(admin()))).toEqual(paused);
    // Listed paused too; a change of the schedule while paused leaves it off.
    const listed = (await ok(t.http().get(base()).set(admin()))).items.find((i: Json) => i.id === n.id);
    expect(listed.pausedAt).toBe(paused.pausedAt);
    const changed = await ok(t.http().put(one).set(admin()).send({ hour: 12 }));
    expect(changed).toMatchObject({ hour: 12, isEnabled: true, pausedAt: paused.pausedAt });
    expect((await scheduleOf(n.id)).enabled).toBe(false);

    // A paused notification runs now all the same.
    const run = await ok(post(`${one}/run`), 200);
    expect(run.status).toBe('queued');

    const before = Date.now();
    const resumed = await ok(post(`${one}/resume`));
    expect(resumed).toMatchObject({ id: n.id, hour: 12, isEnabled: true, pausedAt: null });
    const schedule = await scheduleOf(n.id);
    expect(schedule.enabled).toBe(true);
    expect(Date.parse(schedule.nextRunAt)).toBeGreaterThan(before);
    expect(await ok(post(`${one}/resume`))).toEqual(resumed);
    // Disabled and paused: resuming leaves the schedule off, as isEnabled says.
    await ok(t.http().put(one).set(admin()).send({ isEnabled: false }));
    await ok(post(`${one}/pause`));
    const off = await ok(post(`${one}/resume`));
    expect(off).toMatchObject({ isEnabled: false, pausedAt: null });
    expect((await scheduleOf(n.id)).enabled).toBe(false);
  });

  it('answers each new route 401 without a token, 403 to a non-admin, 404 for another account’s notification, 400 for bad input, and changes nothing', async () => {
    const n = await create(13);
    await addRecipients(n.id, [{ type: 'USER', userId: ben.userId }]);
    const foreign = await create(13, otherDep, otherDashboardId, other);
    const one = `${base()}/${n.id}`;
    const routes = [`${one}/run`, `${one}/pause`, `${one}/resume`, `${one}/deliveries/1/resend`];
    const send = (url: string, token?: string, body?: Json) => {
      const req = t.http().post(url);
      if (token) void req.set(bearer(token));
      return body === undefined ? req : req.send(body);
    };
    for (const url of routes) {
      const anonymous = await send(url);
      expect({ url, status: anonymous.status }).toEqual({ url, status: 401 });
      expectErrorShape(anonymous.body, 401, 'unauthorized');
      const forbidden = await send(url, developer.token);
      expect({ url, status: forbidden.status }).toEqual({ url, status: 403 });
      expectErrorShape(forbidden.body, 403, 'forbidden');
      // Another account's admin: our deployment is not theirs.
      const outsider = await send(url, other.token);
      expect({ url, code: outsider.body.code }).toEqual({ url, code: 'deployment_not_found' });
      expect(outsider.status).toBe(404);
      // Their notification's id under our deployment: not ours.
      const theirs = await send(
        url.replace(`/notifications/${n.id}/`, `/notifications/${foreign.id}/`),
        t.admin.token,
      );
      expect({ url, status: theirs.status, code: theirs.body.code }).toEqual({
        url,
        status: 404,
        code: 'notification_not_found',
      });
      // Ours under their deployment.
      const elsewhere = await send(
        url.replace(`/deployments/${dep}/`, `/deployments/${otherDep}/`),
        t.admin.token,
      );
      expect({ url, status: elsewhere.status, code: elsewhere.body.code }).toEqual({
        url,
        status: 404,
        code: 'deployment_not_found',
      });
      const withBody = await send(url, t.admin.token, { now: true });
      expect({ url, status: withBody.status }).toEqual({ url, status: 400 });
      expectErrorShape(withBody.body, 400, 'validation_failed');
      const badId = await send(url.replace(`/notifications/${n.id}/`, '/notifications/abc/'), t.admin.token);
      expect({ url, status: badId.status }).toEqual({ url, status: 400 });
      expectErrorShape(badId.body, 400, 'validation_failed');
    }
    for (const bad of ['x', '0', '-1', '99999999999999999999']) {
      const res = await send(`${one}/deliveries/${bad}/resend`, t.admin.token);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expectErrorShape(res.body, 400, 'validation_failed');
    }
    const missing = await send(`${one}/deliveries/999999999/resend`, t.admin.token);
    expect(missing.status).toBe(404);
    expectErrorShape(missing.body, 404, 'notification_delivery_not_found');
    // A delivery of another notification is not this one's.
    const mine = await create(14);
    await addRecipients(mine.id, [{ type: 'USER', userId: ben.userId }]);
    const run = await ok(post(`${base()}/${mine.id}/run`), 200);
    await runJob(run.jobRunId);
    const [delivery] = await deliveries(mine.id);
    const crossed = await send(`${one}/deliveries/${delivery.id}/resend`, t.admin.token);
    expectErrorShape(crossed.body, 404, 'notification_delivery_not_found');
    // Queued, not failed: 409, and nothing changed.
    const queued = await send(`${base()}/${mine.id}/deliveries/${delivery.id}/resend`, t.admin.token);
    expect(queued.status).toBe(409);
    expectErrorShape(queued.body, 409, 'delivery_not_failed');
    await deliverQueued();
    const [after] = await deliveries(mine.id);
    expect(after).toMatchObject({ id: delivery.id, status: 'sent', attempts: 1, resends: [] });

    // None of the refusals ran, paused or changed it.
    const read = await ok(t.http().get(one).set(admin()));
    expect(read.pausedAt).toBeNull();
    expect((await scheduleOf(n.id)).enabled).toBe(true);
    expect(await deliveries(n.id)).toEqual([]);
    const runs = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM notification_runs WHERE notification_id = $1`,
      [n.id],
    );
    expect(runs[0].n).toBe(0);
  });
});
