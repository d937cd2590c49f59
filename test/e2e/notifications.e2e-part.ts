import type request from 'supertest';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { newDeployment, newReport } from '../support/reports.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/** A deployment with a workbook whose dashboard is published; answers their ids. */
async function publishedDashboard(t: TestApp, actor: Actor, name = 'Notified') {
  const as = bearer(actor.token);
  const dep = await newDeployment(t, actor, name);
  const wb = (
    await t.http().post(`/api/v1/deployments/${dep}/workbooks`).set(as).send({ name: 'Sales' }).expect(200)
  ).body.id as number;
  const report = await newReport(t, actor, dep, {
    name: 'Orders by status',
    workbookId: wb,
    jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
  });
  const published = await t
    .http()
    .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
    .set(as)
    .send({
      workbookId: wb,
      title: 'Weekly sales',
      config: {
        widgets: [
          { id: 'w1', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { reportId: report.id } },
        ],
      },
    })
    .expect(200);
  return { dep, wb, dashboardId: published.body.id as number, publicId: published.body.publicId as string };
}

/**
 * The notification routes: access, shapes, validation, and the rules of the rows and schedules
 * they write. Firing schedules and the runs they start (the schedule rules with a controllable
 * clock, a run on an installation without SMTP) are tested below HTTP, in
 * test/service/notifications.service.spec.ts; nothing consumes the queues here.
 */
describe('scheduled notifications: routes and schedules', () => {
  let t: TestApp;
  let other: Actor;
  let developer: Actor;
  let dep: number;
  let dashboardId: number;
  let publicId: string;
  let otherDep: { dep: number; dashboardId: number };
  const base = (deployment = dep) => `/api/v1/deployments/${deployment}/notifications`;
  const admin = () => bearer(t.admin.token);
  const create = (body: Json, deployment = dep, actor: Actor = t.admin) =>
    t.http().post(base(deployment)).set(bearer(actor.token)).send(body);
  const daily = (extra: Json = {}) => ({ dashboardId, scheduleType: 'DAILY', hour: 9, minute: 0, ...extra });
  const schedules = () => t.app.get(JobSchedules);
  const scheduleOf = async (id: number) => (await schedules().listByOwner(`notification:${id}`))[0];

  beforeAll(async () => {
    // Nothing is consumed or fired here: no relay either.
    t = await startApp({ OUTBOX_RELAY_INTERVAL_MS: '600000' });
    other = await newAccount(t, 'globex');
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    ({ dep, dashboardId, publicId } = await publishedDashboard(t, t.admin));
    otherDep = await publishedDashboard(t, t.admin, 'Other deployment');
  });

  afterAll(async () => {
    await t.close();
  });

  describe('access', () => {
    it('401 without a token, 403 for a non-admin, 404 for another account’s deployment', async () => {
      const anonymous = await t.http().get(base());
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401);
      const forbidden = await t.http().get(base()).set(bearer(developer.token));
      expect(forbidden.status).toBe(403);
      expectErrorShape(forbidden.body, 403);
      expect((await create(daily(), dep, developer)).status).toBe(403);
      const foreign = await t.http().get(base()).set(bearer(other.token));
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
      const foreignCreate = await create(daily(), dep, other);
      expect(foreignCreate.status).toBe(404);
      expect(foreignCreate.body.code).toBe('deployment_not_found');
    });

    it('answers every route 401 without a token, 403 to a non-admin and 404 to another account', async () => {
      const made = (await create(daily()).expect(200)).body as Json;
      const one = `${base()}/${made.id}`;
      const routes: [string, string, Json?][] = [
        ['get', base()],
        ['post', base(), daily()],
        ['get', one],
        ['put', one, { hour: 10 }],
        ['delete', one],
        ['get', `${one}/recipients`],
        ['post', `${one}/recipients`, { recipients: [{ type: 'USER', userId: t.admin.userId }] }],
        ['delete', `${one}/recipients`, { recipients: [{ type: 'USER', id: t.admin.userId }] }],
        ['get', `${one}/deliveries`],
      ];
      const send = (method: string, url: string, body: Json | undefined, token?: string) => {
        const req = (t.http() as unknown as Record<string, (u: string) => request.Test>)[method](url);
        if (token) void req.set(bearer(token));
        return body === undefined ? req : req.send(body);
      };
      for (const [method, url, body] of routes) {
        const what = `${method.toUpperCase()} ${url}`;
        expect({ what, status: (await send(method, url, body)).status }).toEqual({ what, status: 401 });
        const forbidden = await send(method, url, body, developer.token);
        expect({ what, status: forbidden.status }).toEqual({ what, status: 403 });
        expectErrorShape(forbidden.body, 403);
        const foreign = await send(method, url, body, other.token);
        expect({ what, status: foreign.status, code: foreign.body.code }).toEqual({
          what,
          status: 404,
          code: 'deployment_not_found',
        });
      }
      // None of those changed it.
      const after = (await t.http().get(one).set(admin()).expect(200)).body as Json;
      expect(after.hour).toBe(made.hour);
      expect((await t.http().get(`${one}/recipients`).set(admin()).expect(200)).body.items).toEqual([]);
    });

    it('404 for a notification of another deployment, and deployment_not_found for a missing deployment', async () => {
      const made = await create(daily()).expect(200);
      const elsewhere = await t
        .http()
        .get(`${base(otherDep.dep)}/${made.body.id}`)
        .set(admin());
      expect(elsewhere.status).toBe(404);
      expectErrorShape(elsewhere.body, 404, 'notification_not_found');
      const missing = await t
        .http()
        .get(`${base(999_999)}/${made.body.id}`)
        .set(admin());
      expect(missing.body.code).toBe('deployment_not_found');
      const foreign = await t.http().delete(`${base()}/${made.body.id}`).set(bearer(other.token));
      expect(foreign.status).toBe(404);
      await t.http().get(`${base()}/${made.body.id}`).set(admin()).expect(200);
    });

    // From notification-deliveries.e2e-part (its runs and deliveries are tested below HTTP, in
    // test/service/notifications.service.spec.ts); with the answer of a notification never run.
    it('answers 401, 403 and 404 on the deliveries route', async () => {
      const n = (await create(daily({ hour: 12 })).expect(200)).body as Json;
      expect((await t.http().get(`${base()}/${n.id}/deliveries`)).status).toBe(401);
      const viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
      expect((await t.http().get(`${base()}/${n.id}/deliveries`).set(bearer(viewer.token))).status).toBe(403);
      const missing = await t.http().get(`${base()}/999999/deliveries`).set(admin());
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('notification_not_found');
      expect(
        (await t.http().get(`${base()}/${n.id}/deliveries`).query({ after: 'x' }).set(admin())).status,
      ).toBe(400);
      const none = await t.http().get(`${base()}/${n.id}/deliveries`).set(admin());
      expect(none.status).toBe(200);
      expect(none.body.items).toEqual([]);
    });
  });

  describe('create, read, update, delete', () => {
    it('creates from a dashboard id or public id with the defaults, and reads it back', async () => {
      const res = await create(daily({ timezone: 'Europe/Berlin' })).expect(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        deploymentId: dep,
        dashboardId,
        scheduleType: 'DAILY',
        minute: 0,
        hour: 9,
        dayOfWeek: null,
        dayOfMonth: null,
        cronExpression: '0 9 * * *',
        timezone: 'Europe/Berlin',
        humanReadableSchedule: 'At 09:00 (Europe/Berlin)',
        isEnabled: true,
        notificationEnabled: true,
        pausedAt: null,
        notificationFormat: 'pdf',
        notificationAiSummary: false,
        filters: null,
        timeGrains: null,
        memberSwitchers: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const read = await t.http().get(`${base()}/${res.body.id}`).set(admin()).expect(200);
      expect(read.body).toEqual(res.body);
      const schedule = await scheduleOf(res.body.id);
      expect(schedule).toMatchObject({
        job: 'notification.run',
        cron: '0 9 * * *',
        timezone: 'Europe/Berlin',
        enabled: true,
        payload: { notificationId: res.body.id },
      });

      const byPublic = await create({
        dashboardPublicId: publicId,
        scheduleType: 'WEEKLY',
        dayOfWeek: 1,
        hour: 7,
        minute: 30,
        notificationFormat: 'png',
        notificationAiSummary: true,
        filters: [{ member: 'Orders.status', operator: 'equals', value: 'completed' }],
        timeGrains: [{ member: 'Orders.created_at', grain: 'week' }],
        memberSwitchers: [{ member: 'Orders.status', selected: 'city' }],
      }).expect(200);
      expect(byPublic.body).toMatchObject({
        dashboardId,
        cronExpression: '30 7 * * 1',
        timezone: 'UTC',
        notificationFormat: 'png',
        notificationAiSummary: true,
        filters: [{ member: 'Orders.status', operator: 'equals', value: 'completed' }],
        timeGrains: [{ member: 'Orders.created_at', grain: 'week' }],
        memberSwitchers: [{ member: 'Orders.status', selected: 'city' }],
      });
      expect(byPublic.body.humanReadableSchedule).toMatch(/07:30.*Monday/);
    });

    it('derives the cron of every schedule type', async () => {
      const cases: Array<[Json, string]> = [
        [{ scheduleType: 'HOURLY', minute: 15 }, '15 * * * *'],
        [{ scheduleType: 'DAILY' }, '0 0 * * *'],
        [{ scheduleType: 'WEEKLY', dayOfWeek: 0, hour: 18 }, '0 18 * * 0'],
        [{ scheduleType: 'MONTHLY', dayOfMonth: 31, hour: 6, minute: 5 }, '5 6 31 * *'],
        [{ scheduleType: 'CUSTOM', customCron: ' 0  9 * *  1-5 ' }, '0 9 * * 1-5'],
        // Fields a type does not use are not kept.
        [{ scheduleType: 'HOURLY', minute: 1, hour: 5, dayOfWeek: 3 }, '1 * * * *'],
      ];
      for (const [body, cron] of cases) {
        const res = await create({ dashboardId, ...body }).expect(200);
        expect(res.body.cronExpression).toBe(cron);
      }
    });

    it('refuses bad input with 400 and writes nothing', async () => {
      const before = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM notifications`))[0].n;
      const bad: Json[] = [
        { scheduleType: 'DAILY' },
        { dashboardId, dashboardPublicId: publicId, scheduleType: 'DAILY' },
        { dashboardId, scheduleType: 'YEARLY' },
        { dashboardId, scheduleType: 'WEEKLY' },
        { dashboardId, scheduleType: 'MONTHLY' },
        { dashboardId, scheduleType: 'CUSTOM' },
        { dashboardId, scheduleType: 'CUSTOM', customCron: 'every day' },
        { dashboardId, scheduleType: 'CUSTOM', customCron: '0 0 30 2 *' },
        { dashboardId, scheduleType: 'CUSTOM', customCron: '0 0 0 * * *' },
        { dashboardId, scheduleType: 'DAILY', hour: 24 },
        { dashboardId, scheduleType: 'HOURLY', minute: 60 },
        { dashboardId, scheduleType: 'WEEKLY', dayOfWeek: 7 },
        { dashboardId, scheduleType: 'DAILY', timezone: 'Mars/Olympus' },
        { dashboardId, scheduleType: 'DAILY', notificationFormat: 'gif' },
        { dashboardId, scheduleType: 'DAILY', filters: [{ member: 'status' }] },
        { dashboardId, scheduleType: 'DAILY', filters: [{ member: 'Orders.status', operator: 'like' }] },
        {
          dashboardId,
          scheduleType: 'DAILY',
          filters: [{ member: 'Orders.amount', operator: 'between', value: [1] }],
        },
        { dashboardId, scheduleType: 'DAILY', filters: [{ member: 'Orders.status', value: { a: 1 } }] },
        { dashboardId, scheduleType: 'DAILY', timeGrains: [{ member: 'Orders.created_at' }] },
        { dashboardId, scheduleType: 'DAILY', memberSwitchers: [{ member: 'Orders', selected: 'city' }] },
        { dashboardId, scheduleType: 'DAILY', unknownField: true },
      ];
      for (const body of bad) {
        const res = await create(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const never = await create({ dashboardId, scheduleType: 'CUSTOM', customCron: '0 0 30 2 *' });
      expect(JSON.stringify(never.body.message)).toMatch(/never|invalid/i);
      expect((await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM notifications`))[0].n).toBe(before);
    });

    it('answers 404 for a dashboard that is not published in this deployment', async () => {
      const res = await create({ dashboardId: otherDep.dashboardId, scheduleType: 'DAILY' });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'dashboard_not_found');
      const byPublic = await create({ dashboardPublicId: 'nosuchdashbd', scheduleType: 'DAILY' });
      expect(byPublic.body.code).toBe('dashboard_not_found');
      const foreign = await create({ dashboardId, scheduleType: 'DAILY' }, otherDep.dep);
      expect(foreign.body.code).toBe('dashboard_not_found');
    });

    it('updates any subset, keeps the rest, and moves the schedule with it', async () => {
      const made = (
        await create(daily({ filters: [{ member: 'Orders.status', value: 'open' }] })).expect(200)
      ).body;
      const put = (body: Json) => t.http().put(`${base()}/${made.id}`).set(admin()).send(body);
      const tz = await put({ timezone: 'America/New_York' }).expect(200);
      expect(tz.body).toMatchObject({ cronExpression: '0 9 * * *', timezone: 'America/New_York', hour: 9 });
      expect(tz.body.filters).toEqual([{ member: 'Orders.status', value: 'open' }]);
      expect(await scheduleOf(made.id)).toMatchObject({ cron: '0 9 * * *', timezone: 'America/New_York' });

      const weekly = await put({ scheduleType: 'WEEKLY', dayOfWeek: 5 }).expect(200);
      expect(weekly.body).toMatchObject({
        scheduleType: 'WEEKLY',
        cronExpression: '0 9 * * 5',
        dayOfWeek: 5,
      });
      expect((await scheduleOf(made.id)).cron).toBe('0 9 * * 5');

      const off = await put({ isEnabled: false, filters: null, notificationFormat: 'png' }).expect(200);
      expect(off.body).toMatchObject({ isEnabled: false, filters: null, notificationFormat: 'png' });
      expect((await scheduleOf(made.id)).enabled).toBe(false);
      await put({ isEnabled: true, notificationEnabled: false }).expect(200);
      expect((await scheduleOf(made.id)).enabled).toBe(false);
      await put({ notificationEnabled: true }).expect(200);
      expect((await scheduleOf(made.id)).enabled).toBe(true);

      const custom = await put({ customCron: '15 8 * * 1-5' }).expect(200);
      expect(custom.body).toMatchObject({
        scheduleType: 'CUSTOM',
        cronExpression: '15 8 * * 1-5',
        dayOfWeek: null,
      });
      await put({ scheduleType: 'WEEKLY', dayOfWeek: 5, hour: 9, minute: 0 }).expect(200);
      const bad = await put({ scheduleType: 'CUSTOM' });
      expect(bad.status).toBe(400);
      expect((await put({ scheduleType: 'MONTHLY' })).status).toBe(400);
      expect((await t.http().put(`${base()}/999999`).set(admin()).send({ hour: 1 })).body.code).toBe(
        'notification_not_found',
      );
      const unchanged = await t.http().get(`${base()}/${made.id}`).set(admin()).expect(200);
      expect(unchanged.body.cronExpression).toBe('0 9 * * 5');
    });

    it('deletes with 204, with its recipients and schedule', async () => {
      const made = (await create(daily()).expect(200)).body;
      await t
        .http()
        .post(`${base()}/${made.id}/recipients`)
        .set(admin())
        .send({ recipients: [{ type: 'USER', userId: t.admin.userId }] })
        .expect(200);
      const res = await t.http().delete(`${base()}/${made.id}`).set(admin());
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await scheduleOf(made.id)).toBeUndefined();
      expect((await t.http().get(`${base()}/${made.id}`).set(admin())).status).toBe(404);
      expect(
        await t.sql(`SELECT 1 FROM notification_recipients WHERE notification_id = $1`, [made.id]),
      ).toHaveLength(0);
      expect((await t.http().delete(`${base()}/${made.id}`).set(admin())).status).toBe(404);
    });
  });

  describe('list', () => {
    let dash2: { dep: number; dashboardId: number; publicId: string };
    let ids: number[];
    let listed: Actor;

    beforeAll(async () => {
      dash2 = await publishedDashboard(t, t.admin, 'Listed');
      listed = await newUser(t, t.admin, { email: 'listed@acme.test' });
      ids = [];
      for (let i = 0; i < 5; i++) {
        // Mail off: these never fire while the file runs.
        const res = await create(
          { dashboardId: dash2.dashboardId, scheduleType: 'HOURLY', minute: i, notificationEnabled: false },
          dash2.dep,
        );
        ids.push(res.body.id);
      }
      await t
        .http()
        .post(`${base(dash2.dep)}/${ids[1]}/recipients`)
        .set(admin())
        .send({ recipients: [{ type: 'USER', userId: listed.userId }] })
        .expect(200);
      await t
        .http()
        .post(`${base(dash2.dep)}/${ids[3]}/recipients`)
        .set(admin())
        .send({
          recipients: [
            { type: 'USER', email: 'LISTED@acme.test' },
            { type: 'EMBED_USER', embedTenantName: 'Retail', externalId: 'viewer@retail.test' },
          ],
        })
        .expect(200);
    });

    const list = (query: Json = {}) => t.http().get(base(dash2.dep)).query(query).set(admin());

    it('answers newest first with cursor paging', async () => {
      const all = await list().expect(200);
      expect(all.body.items.map((n: Json) => n.id)).toEqual([...ids].reverse());
      expect(all.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      const first = await list({ first: 2 }).expect(200);
      expect(first.body.items.map((n: Json) => n.id)).toEqual([ids[4], ids[3]]);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const next = await list({ first: 2, after: first.body.pageInfo.endCursor }).expect(200);
      expect(next.body.items.map((n: Json) => n.id)).toEqual([ids[2], ids[1]]);
      expect(next.body.pageInfo.hasPreviousPage).toBe(true);
      expect((await list({ after: 'garbage' })).body.code).toBe('invalid_cursor');
    });

    it('filters by dashboard and by recipient', async () => {
      const idsOf = async (query: Json) =>
        ((await list(query).expect(200)).body.items as Json[]).map((n) => n.id);
      expect(await idsOf({ dashboardId: dash2.dashboardId })).toHaveLength(5);
      expect(await idsOf({ dashboardPublicId: dash2.publicId })).toHaveLength(5);
      expect(await idsOf({ dashboardId })).toEqual([]);
      expect(await idsOf({ dashboardPublicId: 'nosuchdashbd' })).toEqual([]);
      expect(await idsOf({ recipientUserId: listed.userId })).toEqual([ids[3], ids[1]]);
      expect(await idsOf({ recipientEmail: 'Listed@ACME.test' })).toEqual([ids[3], ids[1]]);
      expect(
        await idsOf({ recipientEmbedTenantName: 'retail', recipientExternalId: 'VIEWER@retail.test' }),
      ).toEqual([ids[3]]);
    });

    it('refuses two identifiers of one dimension with 400', async () => {
      const bad: Json[] = [
        { dashboardId: dash2.dashboardId, dashboardPublicId: dash2.publicId },
        { recipientUserId: listed.userId, recipientEmail: 'listed@acme.test' },
        { recipientUserId: listed.userId, recipientEmbedTenantName: 'retail', recipientExternalId: 'x' },
        { recipientEmbedTenantName: 'retail' },
        { recipientExternalId: 'x' },
        { recipientUserId: 0 },
        { unknown: 1 },
      ];
      for (const query of bad) {
        const res = await list(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400);
      }
    });
  });

  describe('recipients', () => {
    let id: number;
    let alice: Actor;
    let bob: Actor;
    const path = () => `${base()}/${id}/recipients`;
    const add = (recipients: Json[]) => t.http().post(path()).set(admin()).send({ recipients });

    beforeAll(async () => {
      id = (await create(daily()).expect(200)).body.id;
      alice = await newUser(t, t.admin, { email: 'alice@acme.test', username: 'alice' });
      bob = await newUser(t, t.admin, { email: 'bob@acme.test' });
    });

    it('adds users by id or email and embed users (provisioned), idempotently', async () => {
      const res = await add([
        { type: 'USER', userId: alice.userId },
        { type: 'USER', email: 'BOB@acme.test' },
        {
          type: 'EMBED_USER',
          embedTenantName: 'Retail',
          externalId: 'Carol@Retail.test',
          securityContext: { store: 7 },
        },
        { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'dave', email: 'dave@retail.test' },
      ]).expect(200);
      expect(res.body.updatedRecipients).toEqual([]);
      expect(res.body.unchangedRecipients).toEqual([]);
      const created = res.body.createdRecipients as Json[];
      expect(created).toHaveLength(4);
      expect(created).toEqual(
        expect.arrayContaining([
          {
            type: 'USER',
            userId: alice.userId,
            username: 'alice',
            email: 'alice@acme.test',
            embedUserId: null,
            embedTenantName: null,
            externalId: null,
            channelId: null,
            channelName: null,
          },
          expect.objectContaining({ type: 'USER', userId: bob.userId, email: 'bob@acme.test' }),
          expect.objectContaining({
            type: 'EMBED_USER',
            userId: null,
            embedUserId: expect.any(Number),
            embedTenantName: 'retail',
            externalId: 'carol@retail.test',
            email: 'carol@retail.test',
          }),
          expect.objectContaining({ type: 'EMBED_USER', externalId: 'dave', email: 'dave@retail.test' }),
        ]),
      );

      const again = await add([
        { type: 'USER', email: 'alice@acme.test' },
        {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'carol@retail.test',
          securityContext: { store: 7 },
        },
        { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'dave', securityContext: { store: 9 } },
      ]).expect(200);
      expect(again.body.createdRecipients).toEqual([]);
      expect((again.body.unchangedRecipients as Json[]).map((r) => r.userId ?? r.externalId).sort()).toEqual(
        [alice.userId, 'carol@retail.test'].sort(),
      );
      expect(again.body.updatedRecipients).toEqual([expect.objectContaining({ externalId: 'dave' })]);

      const listed = await t.http().get(path()).set(admin()).expect(200);
      expect(listed.body.items).toHaveLength(4);
      const page = await t.http().get(path()).query({ first: 3 }).set(admin()).expect(200);
      expect(page.body.items).toHaveLength(3);
      expect(page.body.pageInfo.hasNextPage).toBe(true);
      const rest = await t
        .http()
        .get(path())
        .query({ first: 3, after: page.body.pageInfo.endCursor })
        .set(admin())
        .expect(200);
      expect(rest.body.items).toHaveLength(1);
    });

    it('refuses Slack, unknown users and address-less embed users with 400, writing nothing', async () => {
      const fresh = (await create(daily()).expect(200)).body.id as number;
      const addTo = (recipients: Json[]) =>
        t.http().post(`${base()}/${fresh}/recipients`).set(admin()).send({ recipients });
      const slack = await addTo([
        { type: 'USER', userId: alice.userId },
        { type: 'SLACK', channelId: 'C1' },
      ]);
      expect(slack.status).toBe(400);
      expectErrorShape(slack.body, 400, 'unsupported_recipient_type');
      const cases: Json[][] = [
        [
          { type: 'USER', userId: alice.userId },
          { type: 'USER', userId: 999_999 },
        ],
        [{ type: 'USER', email: 'nobody@acme.test' }],
        [{ type: 'USER', email: other.email }],
        [{ type: 'USER', userId: other.userId }],
        [{ type: 'USER' }],
        [{ type: 'USER', userId: alice.userId, email: 'alice@acme.test' }],
        [{ type: 'EMBED_USER', embedTenantName: 'retail' }],
        [{ type: 'EMBED_USER', embedTenantName: 'Not A Tenant!', externalId: 'x@y.test' }],
        // A new embed user with neither an email nor an email-shaped external id.
        [
          { type: 'USER', userId: alice.userId },
          { type: 'EMBED_USER', embedTenantName: 'fresh-tenant', externalId: 'no-address' },
        ],
        [
          {
            type: 'EMBED_USER',
            embedTenantName: 'retail',
            externalId: 'x@y.test',
            groups: ['no-such-group'],
          },
        ],
        // Attribute values must name attributes the account defines.
        [
          {
            type: 'EMBED_USER',
            embedTenantName: 'retail',
            externalId: 'x@y.test',
            userAttributes: [{ name: 'no_such_attribute', value: 'x' }],
          },
        ],
      ];
      for (const recipients of cases) {
        const res = await addTo(recipients);
        expect({ recipients, status: res.status }).toEqual({ recipients, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_notification_recipient');
      }
      expect((await addTo([])).status).toBe(400);
      expect(
        (await t.http().get(`${base()}/${fresh}/recipients`).set(admin()).expect(200)).body.items,
      ).toEqual([]);
      // Nothing was provisioned by the refused requests.
      const tenants = await t.http().get('/api/v1/embed-tenants').set(admin()).expect(200);
      expect((tenants.body.items as Json[]).map((x) => x.name)).not.toContain('fresh-tenant');

      // Once the attribute exists, the same recipient is taken.
      await t
        .http()
        .post('/api/v1/user-attributes')
        .set(admin())
        .send({ name: 'region', type: 'string' })
        .expect(200);
      const withAttribute = await addTo([
        {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'x@y.test',
          userAttributes: [{ name: 'region', value: 'EMEA' }],
        },
      ]);
      expect(withAttribute.status).toBe(200);
      expect(withAttribute.body.createdRecipients).toEqual([
        expect.objectContaining({ externalId: 'x@y.test' }),
      ]);
    });

    it('removes recipients idempotently with 204', async () => {
      const listed = (await t.http().get(path()).set(admin()).expect(200)).body.items as Json[];
      const carol = listed.find((r) => r.externalId === 'carol@retail.test')!;
      const remove = (recipients: Json[]) => t.http().delete(path()).set(admin()).send({ recipients });
      const res = await remove([
        { type: 'USER', id: bob.userId },
        { type: 'EMBED_USER', id: carol.embedUserId, embedTenantName: 'retail' },
        { type: 'SLACK', id: 'C123' },
      ]);
      expect(res.status).toBe(204);
      expect((await remove([{ type: 'USER', id: String(bob.userId) }])).status).toBe(204);
      const left = (await t.http().get(path()).set(admin()).expect(200)).body.items as Json[];
      expect(left.map((r) => r.userId ?? r.externalId).sort()).toEqual([alice.userId, 'dave'].sort());
      expect((await remove([{ type: 'EMBED_USER', id: 1 }])).status).toBe(400);
      expect((await remove([])).status).toBe(400);
      expect(
        (
          await t
            .http()
            .delete(`${base()}/999999/recipients`)
            .set(admin())
            .send({ recipients: [{ type: 'USER', id: 1 }] })
        ).status,
      ).toBe(404);
    });

    it('parallel adds of one recipient neither fail nor duplicate it', async () => {
      const fresh = (await create(daily()).expect(200)).body.id as number;
      const body = {
        recipients: [
          { type: 'USER', userId: bob.userId },
          { type: 'EMBED_USER', embedTenantName: 'parallel', externalId: 'erin@parallel.test' },
        ],
      };
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.http().post(`${base()}/${fresh}/recipients`).set(admin()).send(body),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
      const created = results.flatMap((r) => r.body.createdRecipients as Json[]);
      expect(created).toHaveLength(2);
      const rows = await t.sql(`SELECT type FROM notification_recipients WHERE notification_id = $1`, [
        fresh,
      ]);
      expect(rows).toHaveLength(2);
    });
  });

  // From notification-bounds.e2e-part (issue 26, item 3): what the request's validation refuses of
  // an address, and takes (the recipient limit and the schedule's minimum interval are tested
  // below HTTP, in test/service/notifications.service.spec.ts).
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
    const addRecipients = (id: number, recipients: Json[]) =>
      t.http().post(`${base()}/${id}/recipients`).set(admin()).send({ recipients });
    const recipientsOf = async (id: number) =>
      (await t.http().get(`${base()}/${id}/recipients`).query({ first: 100 }).set(admin()).expect(200)).body
        .items as Json[];
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

    it('refuses every other form with a 400, as an email and as an address-shaped externalId, storing nothing', async () => {
      const n = (await create(daily({ hour: 12 })).expect(200)).body as Json;
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
      const n = (await create(daily({ hour: 13 })).expect(200)).body as Json;
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
});
