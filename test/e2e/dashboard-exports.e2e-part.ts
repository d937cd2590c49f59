import { PNG } from 'pngjs';
import type request from 'supertest';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { DashboardExportClock } from '../../src/modules/dashboard-exports/dashboard-export-clock.js';
import {
  DASHBOARD_EXPORT_JOB,
  DashboardExportJobs,
  type DashboardExportPayload,
} from '../../src/modules/dashboard-exports/dashboard-export.job.js';
import { DashboardRendering } from '../../src/modules/notifications/dashboard-rendering.service.js';
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
import { TENANTS } from '../support/embedding.js';
import { TestJobContext, TestJobs, type AttemptOutcome } from '../support/job-context.js';
import { readPdf } from '../support/pdf.js';
import { expectReferenceBody } from '../support/reference-schemas.js';
import { grantRole, newDeployment, newReport } from '../support/reports.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const SECRET = 'e'.repeat(40);
/** The most exports of one account in flight in this part (DASHBOARD_EXPORT_MAX_IN_FLIGHT). */
const MAX_IN_FLIGHT = 2;
const TTL_SECONDS = 300;
/** The viewport of the renderer: a PNG is this wide. */
const PNG_WIDTH = 1132;

/** Reads a binary answer whole, whatever its type (supertest parses only text and JSON). */
function binary(res: request.Response, callback: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

/**
 * Dashboard exports through HTTP: `POST .../dashboard-exports`, the status and the download, on
 * the real PostgreSQL, Redis and Chromium, with the loopback data API. Nothing consumes the
 * queues here: each export's `dashboard-export.render` job is run by calling its handler on its
 * real run record (test/support/job-context.ts), so `pending`, `processing` and the end are each
 * seen on purpose. Expiry is walked with the exports' clock, never waited for.
 */
describe('dashboard exports', () => {
  let t: TestApp;
  let fake: DataApiFake;
  let globex: Actor;
  let developer: Actor;
  let viewer: Actor;
  let nobody: Actor;
  let reader: Actor;
  let dep: number;
  let wb: number;
  let dashboardId: number;
  let publicId: string;
  let otherDep: { dep: number; dashboardId: number };
  const base = (deployment = dep) => `/api/v1/deployments/${deployment}/dashboard-exports`;
  const admin = () => bearer(t.admin.token);
  const start = (body: Json, actor: Actor = t.admin, deployment = dep) =>
    t.http().post(base(deployment)).set(bearer(actor.token)).send(body);
  const status = (jobId: string, actor: Actor = t.admin, deployment = dep) =>
    t
      .http()
      .get(`${base(deployment)}/${jobId}`)
      .set(bearer(actor.token));
  const download = (jobId: string, actor: Actor = t.admin, query: Json = {}, deployment = dep) =>
    t
      .http()
      .get(`${base(deployment)}/${jobId}/download`)
      .query(query)
      .set(bearer(actor.token))
      .buffer(true)
      .parse(binary);
  const runIdOf = async (jobId: string) =>
    (await t.sql<{ run_id: string }>(`SELECT run_id FROM dashboard_exports WHERE id = $1`, [jobId]))[0]
      .run_id;
  /** One attempt of the export's job, as a worker makes it. */
  const run = async (jobId: string, attempt = 1): Promise<AttemptOutcome> => {
    const { outcome } = await new TestJobs(t.app).attempt(
      DASHBOARD_EXPORT_JOB,
      await runIdOf(jobId),
      (payload, ctx) => t.app.get(DashboardExportJobs).render(payload, ctx),
      { attempt },
    );
    return outcome;
  };
  /** Starts an export (200, checked against the reference) and runs it to its end. */
  const exported = async (body: Json, actor: Actor = t.admin) => {
    const res = await start(body, actor);
    expect(res.status).toBe(200);
    expectReferenceBody('startExport', 200, res.body);
    const outcome = await run(res.body.jobId);
    return { jobId: res.body.jobId as string, outcome };
  };
  const clock = () => t.app.get(DashboardExportClock);

  beforeAll(async () => {
    fake = await startDataApiFake({ secret: SECRET });
    // Nothing consumes or relays jobs here: the test runs them.
    t = await startApp({
      ...fake.env(),
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      DASHBOARD_EXPORT_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      DASHBOARD_EXPORT_TTL_SECONDS: String(TTL_SECONDS),
    });
    serveOrders();
    globex = await newAccount(t, 'globex');
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    nobody = await newUser(t, t.admin, { defaultRoles: [] });
    ({ dep, wb, dashboardId, publicId } = await publishedDashboard('Exports'));
    otherDep = await publishedDashboard('Other deployment');
    // Manages the other deployment's workbook, only reads this one.
    reader = await newUser(t, t.admin, { defaultRoles: [] });
    const otherWb = (
      await t.sql(`SELECT workbook_id FROM dashboards WHERE id = $1`, [otherDep.dashboardId])
    )[0].workbook_id as number;
    await grantRole(t, t.admin, reader, 'Reads the exported workbook', [
      { resourceType: 'Workbook', resources: [String(wb)], actions: ['WorkbookRead'] },
      { resourceType: 'Workbook', resources: [String(otherWb)], actions: ['WorkbookManage'] },
    ]);
    // Embed tenants: `retail` sees the dashboard, `wholesale` does not.
    for (const tenant of ['retail', 'wholesale']) {
      await t
        .http()
        .post(`${TENANTS}/${tenant}/user`)
        .set(admin())
        .send({ externalId: `first@${tenant}.test` })
        .expect(200);
    }
    await t
      .http()
      .put(`/api/v1/deployments/${dep}/workbooks/${wb}/embed-access`)
      .set(admin())
      .send({ embedTenantName: 'retail', action: 'read' })
      .expect(200);
    await t.http().post('/api/v1/groups').set(admin()).send({ name: 'Store managers' }).expect(200);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** The data API's answer: console users see every order, the embed users of store 7 only theirs. */
  function serveOrders(): void {
    fake.onLoad((_query, ctx) =>
      ctx.store === 7
        ? [{ 'Orders.status': 'store-seven-only', 'Orders.count': '3' }]
        : [
            { 'Orders.status': 'completed', 'Orders.count': '42' },
            { 'Orders.status': 'returned', 'Orders.count': '5' },
          ],
    );
  }

  /** A deployment with the data API secret and a published dashboard of one report. */
  async function publishedDashboard(name: string) {
    const as = admin();
    const deployment = await newDeployment(t, t.admin, name);
    await t
      .http()
      .put(`/api/v1/deployments/${deployment}/env-vars`)
      .set(as)
      .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] })
      .expect(200);
    const workbook = (
      await t
        .http()
        .post(`/api/v1/deployments/${deployment}/workbooks`)
        .set(as)
        .send({ name: 'Sales' })
        .expect(200)
    ).body.id as number;
    const report = await newReport(t, t.admin, deployment, {
      name: 'Orders by status',
      workbookId: workbook,
      jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
    });
    const published = await t
      .http()
      .post(`/api/v1/deployments/${deployment}/workbooks/${workbook}/publish`)
      .set(as)
      .send({
        workbookId: workbook,
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
      })
      .expect(200);
    return {
      dep: deployment,
      wb: workbook,
      dashboardId: published.body.id as number,
      publicId: published.body.publicId as string,
    };
  }

  describe('access and input', () => {
    it('answers 401 without a token on every route', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await t.http().post(base()).send({ dashboardId, format: 'png' }),
        await t.http().get(`${base()}/${id}`),
        await t.http().get(`${base()}/${id}/download`),
      ]) {
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401);
      }
    });

    it('answers 403 on every route to a token without any content action', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await start({ dashboardId, format: 'png' }, nobody),
        await status(id, nobody),
        await download(id, nobody),
      ]) {
        expect(res.status).toBe(403);
        const body: unknown = Buffer.isBuffer(res.body) ? JSON.parse(res.body.toString()) : res.body;
        expectErrorShape(body, 403, 'forbidden');
      }
    });

    it('answers 403 to a start without manage access to the workbook: read only, or managing another one', async () => {
      for (const who of [viewer, reader]) {
        const res = await start({ dashboardId, format: 'png' }, who);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      // The workbook it manages exports.
      const managed = await start({ dashboardId: otherDep.dashboardId, format: 'png' }, reader, otherDep.dep);
      expect(managed.status).toBe(200);
      expect(await run(managed.body.jobId)).toEqual({ status: 'succeeded' });
      expect((await status(managed.body.jobId, reader, otherDep.dep)).body.status).toBe('completed');
    });

    it('answers 404 for another account’s deployment, another deployment’s dashboard, and an unknown one', async () => {
      const foreign = await start({ dashboardId, format: 'pdf' }, globex);
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
      const elsewhere = await start({ dashboardId: otherDep.dashboardId, format: 'pdf' });
      expect(elsewhere.status).toBe(404);
      expectErrorShape(elsewhere.body, 404, 'dashboard_not_found');
      const unknown = await start({ dashboardPublicId: 'nosuchdashboard', format: 'pdf' });
      expect(unknown.status).toBe(404);
      expectErrorShape(unknown.body, 404, 'dashboard_not_found');
      expect((await start({ dashboardId, format: 'pdf' }, t.admin, 999_999)).body.code).toBe(
        'deployment_not_found',
      );
    });

    it.each([
      ['no dashboard', { format: 'png' }],
      ['both dashboard ids', { dashboardId: 1, dashboardPublicId: 'abc', format: 'png' }],
      ['no format', { dashboardId: 1 }],
      ['an unknown format', { dashboardId: 1, format: 'jpeg' }],
      ['an unknown field', { dashboardId: 1, format: 'png', colour: 'red' }],
      ['a filter on no member path', { dashboardId: 1, format: 'png', filters: [{ member: 'status' }] }],
      [
        'a between filter with one bound',
        {
          dashboardId: 1,
          format: 'png',
          filters: [{ member: 'Orders.amount', operator: 'between', value: [1] }],
        },
      ],
      [
        'a time grain without grain',
        { dashboardId: 1, format: 'png', timeGrains: [{ member: 'Orders.at' }] },
      ],
      ['renderAs of no type', { dashboardId: 1, format: 'png', renderAs: { userId: 1 } }],
      [
        'a USER subject by id and email',
        { dashboardId: 1, format: 'png', renderAs: { type: 'USER', userId: 1, email: 'a@b.test' } },
      ],
      [
        'a USER subject with a security context',
        { dashboardId: 1, format: 'png', renderAs: { type: 'USER', userId: 1, securityContext: { a: 1 } } },
      ],
      [
        'an EMBED_USER subject without a tenant',
        { dashboardId: 1, format: 'png', renderAs: { type: 'EMBED_USER', externalId: 'x' } },
      ],
    ])('answers 400 to %s, starting nothing', async (_what, body) => {
      const res = await start(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400);
      expect(await t.sql(`SELECT 1 FROM dashboard_exports WHERE deployment_id = $1`, [dep])).toEqual([]);
    });

    it('answers 400 to an undeclared query parameter of the download and 404 to a job id that is no UUID', async () => {
      const extra = await t
        .http()
        .get(`${base()}/00000000-0000-4000-8000-000000000000/download`)
        .query({ name: 'x' })
        .set(admin());
      expect(extra.status).toBe(400);
      for (const id of ['42', 'not-a-job', '00000000-0000-4000-8000-000000000000']) {
        const res = await status(id);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'dashboard_export_not_found');
      }
    });
  });

  describe('an export', () => {
    it('is pending until its job runs, processing while it renders, then completed: a PDF with the dashboard’s text', async () => {
      const res = await start({ dashboardPublicId: publicId, format: 'pdf' });
      expect(res.status).toBe(200);
      expectReferenceBody('startExport', 200, res.body);
      const { jobId, expiresAt } = res.body as { jobId: string; expiresAt: string };
      expect(jobId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ttl = Date.parse(expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan((TTL_SECONDS - 60) * 1000);
      expect(ttl).toBeLessThanOrEqual(TTL_SECONDS * 1000);

      const pending = await status(jobId);
      expect(pending.status).toBe(200);
      expectReferenceBody('getExportStatus', 200, pending.body);
      expect(pending.body).toEqual({ status: 'pending', contentType: null, error: null, progress: null });
      const early = await download(jobId);
      expect(early.status).toBe(409);
      expectErrorShape(JSON.parse(early.body.toString()), 409, 'dashboard_export_not_ready');

      // Looked at while the browser is about to print it.
      const seen: Json[] = [];
      const rendering = t.app.get(DashboardRendering);
      const print = rendering.file.bind(rendering);
      jest.spyOn(rendering, 'file').mockImplementation(async (doc, format) => {
        const during = await status(jobId);
        expectReferenceBody('getExportStatus', 200, during.body);
        seen.push(during.body, { download: (await download(jobId)).status });
        return print(doc, format);
      });
      const outcome = await run(jobId);
      expect(outcome).toEqual({ status: 'succeeded' });
      // One report read of two steps (the reports, then the rendering).
      expect(seen).toEqual([
        { status: 'processing', contentType: null, error: null, progress: 50 },
        { download: 409 },
      ]);

      const done = await status(jobId);
      expectReferenceBody('getExportStatus', 200, done.body);
      expect(done.body).toEqual({
        status: 'completed',
        contentType: 'application/pdf',
        error: null,
        progress: 100,
      });
      const file = await download(jobId);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('application/pdf');
      expect(file.headers['content-disposition']).toBe(
        `attachment; filename="dashboard.pdf"; filename*=UTF-8''dashboard.pdf`,
      );
      const pdf = file.body as Buffer;
      expect(Number(file.headers['content-length'])).toBe(pdf.length);
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const read = await readPdf(pdf);
      expect(read.pages).toBeGreaterThanOrEqual(1);
      expect(read.text).toContain('Weekly sales');
      expect(read.text).toContain('Orders by status');
      expect(read.text).toContain('completed');
      expect(read.text).toContain('42');
      // The caller's own context: a console user's, empty.
      const loads = fake.requests.filter((r) => r.path.endsWith('/load') && r.deploymentId === dep);
      expect(loads.at(-1)!.securityContext).toEqual({});
    });

    it('renders a PNG as wide as the renderer’s page, named by ?filename= with the format’s extension', async () => {
      const { jobId, outcome } = await exported({ dashboardId, format: 'png' });
      expect(outcome).toEqual({ status: 'succeeded' });
      expect((await status(jobId)).body.contentType).toBe('image/png');
      const file = await download(jobId, t.admin, { filename: 'Q3 sales: “final”' });
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('image/png');
      expect(file.headers['content-disposition']).toBe(
        `attachment; filename="Q3 sales_ _final_.png"; filename*=UTF-8''Q3%20sales_%20%E2%80%9Cfinal%E2%80%9D.png`,
      );
      const image = PNG.sync.read(file.body as Buffer);
      expect(image.width).toBe(PNG_WIDTH);
      expect(image.height).toBeGreaterThan(100);
      expect(image.height).toBeLessThanOrEqual(16_384);
    });

    it('applies filters, time grains and field switchers to the reports’ queries, as notifications do', async () => {
      const before = fake.requests.length;
      const { outcome } = await exported({
        dashboardId,
        format: 'pdf',
        filters: [{ member: 'Orders.status', operator: 'not_equals', value: 'cancelled' }],
        memberSwitchers: [{ member: 'Orders.status', selected: 'region' }],
      });
      expect(outcome).toEqual({ status: 'succeeded' });
      const [load] = fake.requests.slice(before).filter((r) => r.path.endsWith('/load'));
      expect(load.query).toEqual({
        measures: ['Orders.count'],
        dimensions: ['Orders.region'],
        filters: [{ member: 'Orders.status', operator: 'notEquals', values: ['cancelled'] }],
      });
    });

    it('does nothing when its job runs again after the file was stored', async () => {
      const { jobId } = await exported({ dashboardId, format: 'png' });
      const first = (await download(jobId)).body as Buffer;
      const before = fake.requests.length;
      await t.app
        .get(DashboardExportJobs)
        .render(
          { exportId: jobId } satisfies DashboardExportPayload,
          new TestJobContext(DASHBOARD_EXPORT_JOB.name),
        );
      expect(fake.requests.length).toBe(before);
      expect(((await download(jobId)).body as Buffer).equals(first)).toBe(true);
      // The run already ended: a second delivery of its job is not even claimed.
      expect(await run(jobId)).toEqual({ status: 'unclaimed' });
    });

    it('fails when every report fails: the status says why and the download answers 422', async () => {
      const res = await start({ dashboardId, format: 'pdf' });
      fake.failWith(400, 'Cube Orders not found');
      let outcome: AttemptOutcome;
      try {
        outcome = await run(res.body.jobId);
      } finally {
        fake.reset();
        serveOrders();
      }
      expect(outcome.status).toBe('failed');
      const failed = await status(res.body.jobId);
      expectReferenceBody('getExportStatus', 200, failed.body);
      expect(failed.body.status).toBe('failed');
      expect(failed.body.contentType).toBeNull();
      expect(failed.body.error).toContain('Cube Orders not found');
      const file = await download(res.body.jobId);
      expect(file.status).toBe(422);
      expectErrorShape(JSON.parse(file.body.toString()), 422, 'dashboard_export_failed');
    });

    it('is tried again while the data API is out of reach, and fails after its last attempt', async () => {
      const { jobId } = (await start({ dashboardId, format: 'png' }).expect(200)).body as { jobId: string };
      fake.failWith(503, 'down for maintenance');
      try {
        expect((await run(jobId, 1)).status).toBe('retry');
        // Back in the queue: pending again, no file.
        expect((await status(jobId)).body).toEqual({
          status: 'pending',
          contentType: null,
          error: null,
          progress: null,
        });
        expect((await run(jobId, DASHBOARD_EXPORT_JOB.attempts)).status).toBe('failed');
      } finally {
        fake.reset();
        serveOrders();
      }
      const failed = await status(jobId);
      expect(failed.body.status).toBe('failed');
      expect(failed.body.error).toContain('data_api_unavailable');
    });

    it('is seen by the user who started it only, and only under its deployment', async () => {
      const { jobId } = await exported({ dashboardId, format: 'png' }, developer);
      expect((await status(jobId, developer)).body.status).toBe('completed');
      for (const [who, deployment] of [
        [t.admin, dep],
        [viewer, dep],
        [developer, otherDep.dep],
      ] as const) {
        const res = await status(jobId, who, deployment);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'dashboard_export_not_found');
        const file = await download(jobId, who, {}, deployment);
        expect(file.status).toBe(404);
      }
      const foreign = await status(jobId, globex);
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
    });
  });

  describe('renderAs', () => {
    it('renders as an embed user with this render’s context only: that user’s rows, nothing stored on the user', async () => {
      const { jobId, outcome } = await exported({
        dashboardId,
        format: 'pdf',
        renderAs: {
          type: 'EMBED_USER',
          embedTenantName: 'Retail',
          externalId: 'carol@retail.test',
          groups: ['Store managers'],
          securityContext: { store: 7 },
        },
      });
      expect(outcome).toEqual({ status: 'succeeded' });
      const read = await readPdf((await download(jobId)).body as Buffer);
      expect(read.text).toContain('store-seven-only');
      expect(read.text).not.toContain('completed');
      expect(read.text).not.toContain('returned');
      const load = fake.requests.filter((r) => r.path.endsWith('/load')).at(-1)!;
      expect(load.securityContext).toEqual({
        store: 7,
        cubeCloud: { userAttributes: {}, groups: ['Store managers'] },
      });
      // Provisioned in its tenant, with neither the groups nor the context written to it.
      const [user] = await t.sql<{ id: number }>(
        `SELECT u.id FROM embed_users u JOIN embed_tenants t ON t.id = u.tenant_id
         WHERE t.name = 'retail' AND u.external_id = 'carol@retail.test'`,
      );
      expect(user).toBeDefined();
      expect(await t.sql(`SELECT 1 FROM embed_user_groups WHERE embed_user_id = $1`, [user.id])).toEqual([]);
      // The export's own user (the admin) downloads it; the subject is recorded.
      expect(
        await t.sql(`SELECT subject_type, subject_id, user_id FROM dashboard_exports WHERE id = $1`, [jobId]),
      ).toEqual([{ subject_type: 'EMBED_USER', subject_id: user.id, user_id: t.admin.userId }]);
    });

    it('renders as a console user named by email, case-insensitively', async () => {
      const { jobId, outcome } = await exported({
        dashboardId,
        format: 'png',
        renderAs: { type: 'USER', email: developer.email.toUpperCase() },
      });
      expect(outcome).toEqual({ status: 'succeeded' });
      expect(
        await t.sql(`SELECT subject_type, subject_id FROM dashboard_exports WHERE id = $1`, [jobId]),
      ).toEqual([{ subject_type: 'USER', subject_id: developer.userId }]);
    });

    it('answers 403 to a caller who is not an admin, and for a tenant the workbook is not shared with', async () => {
      const notAdmin = await start(
        { dashboardId, format: 'png', renderAs: { type: 'USER', userId: t.admin.userId } },
        developer,
      );
      expect(notAdmin.status).toBe(403);
      expectErrorShape(notAdmin.body, 403, 'forbidden');
      const unshared = await start({
        dashboardId,
        format: 'png',
        renderAs: { type: 'EMBED_USER', embedTenantName: 'wholesale', externalId: 'dave@wholesale.test' },
      });
      expect(unshared.status).toBe(403);
      expectErrorShape(unshared.body, 403, 'export_subject_not_shared');
      // Nobody was provisioned for it.
      expect(await t.sql(`SELECT 1 FROM embed_users WHERE external_id = 'dave@wholesale.test'`)).toEqual([]);
    });

    it('answers 404 for a console user who is deactivated or not of the account, 400 for unknown groups', async () => {
      const gone = await newUser(t, t.admin, { defaultRoles: [] });
      await t.sql(`UPDATE users SET is_deactivated = true WHERE id = $1`, [gone.userId]);
      for (const renderAs of [
        { type: 'USER', userId: gone.userId },
        { type: 'USER', userId: globex.userId },
        { type: 'USER', email: globex.email },
      ]) {
        const res = await start({ dashboardId, format: 'png', renderAs });
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'user_not_found');
      }
      const groups = await start({
        dashboardId,
        format: 'png',
        renderAs: {
          type: 'EMBED_USER',
          embedTenantName: 'retail',
          externalId: 'erin@retail.test',
          groups: ['Nope'],
        },
      });
      expect(groups.status).toBe(400);
      expectErrorShape(groups.body, 400, 'unknown_groups');
    });
  });

  describe('bounds, expiry and settings', () => {
    it(`answers 429 past ${MAX_IN_FLIGHT} exports in flight in the account, however many start at once`, async () => {
      // Users of one account, at once, on two deployments: the bound is the account's.
      const answers = await Promise.all(
        [t.admin, developer, t.admin, developer, t.admin].map((who, i) =>
          i % 2 === 0
            ? start({ dashboardId, format: 'png' }, who)
            : start({ dashboardId: otherDep.dashboardId, format: 'png' }, who, otherDep.dep),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429, 429, 429]);
      for (const refused of answers.filter((a) => a.status === 429)) {
        expectErrorShape(refused.body, 429, 'dashboard_export_limit_reached');
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      }
      const [first] = answers.filter((a) => a.status === 200);
      expect(await run(first.body.jobId)).toEqual({ status: 'succeeded' });
      // One ended: one more is taken.
      const again = await start({ dashboardId, format: 'png' }).expect(200);
      expect(await run(again.body.jobId)).toEqual({ status: 'succeeded' });
    });

    it('answers 404 once expired, counts it in flight no more, and the prune deletes it with its run', async () => {
      const res = await start({ dashboardId, format: 'pdf' }).expect(200);
      const { jobId, expiresAt } = res.body as { jobId: string; expiresAt: string };
      const runId = await runIdOf(jobId);
      // Still in flight (never run): with the one left by the test above, the account is at its bound.
      expect((await start({ dashboardId, format: 'png' })).status).toBe(429);
      const later = new Date(Date.parse(expiresAt) + 1000);
      jest.spyOn(clock(), 'now').mockReturnValue(later);
      const gone = await status(jobId);
      expect(gone.status).toBe(404);
      expectErrorShape(gone.body, 404, 'dashboard_export_not_found');
      expect((await download(jobId)).status).toBe(404);
      // Its job, run late, renders nothing.
      expect(await run(jobId)).toEqual({
        status: 'failed',
        error: 'The export expired before it was rendered',
      });
      // Both expired exports no longer hold a slot.
      const fresh = await start({ dashboardId, format: 'png' }).expect(200);
      const pruned = await t.app.get(DashboardExportJobs).prune(new Date(later.getTime() + 1000));
      expect(pruned).toBeGreaterThanOrEqual(2);
      expect(await t.sql(`SELECT 1 FROM dashboard_exports WHERE id = $1`, [jobId])).toEqual([]);
      expect(await t.sql(`SELECT 1 FROM job_runs WHERE id = $1`, [runId])).toEqual([]);
      // The one started at the walked time is not expired yet.
      expect(await t.sql(`SELECT 1 FROM dashboard_exports WHERE id = $1`, [fresh.body.jobId])).toHaveLength(
        1,
      );
      expect(await run(fresh.body.jobId)).toEqual({ status: 'succeeded' });
      // The prune is scheduled once, by the first export.
      expect(await t.app.get(JobSchedules).listByOwner('dashboard-exports:prune')).toEqual([
        expect.objectContaining({ job: 'dashboard-export.prune', cron: '*/5 * * * *', accountId: null }),
      ]);
    });

    it('answers 403 while the account restricts data downloads, starting nothing and serving no file', async () => {
      const { jobId } = await exported({ dashboardId, format: 'png' });
      await t.http().put('/api/v1/app-config').set(admin()).send({ restrictDataDownload: true }).expect(200);
      try {
        const count = async () =>
          (await t.sql(`SELECT count(*)::int AS n FROM dashboard_exports`))[0].n as number;
        const before = await count();
        const refused = await start({
          dashboardId,
          format: 'pdf',
          renderAs: { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'carol@retail.test' },
        });
        expect(refused.status).toBe(403);
        expectErrorShape(refused.body, 403, 'data_downloads_restricted');
        expect(await count()).toBe(before);
        const file = await download(jobId);
        expect(file.status).toBe(403);
        expectErrorShape(JSON.parse(file.body.toString()), 403, 'data_downloads_restricted');
      } finally {
        await t
          .http()
          .put('/api/v1/app-config')
          .set(admin())
          .send({ restrictDataDownload: false })
          .expect(200);
      }
      expect((await download(jobId)).status).toBe(200);
    });
  });
});
