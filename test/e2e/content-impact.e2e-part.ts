import { bearer, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { STARTER_COUNT_RENAMED } from '../support/starter-model.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers */
type Json = Record<string, any>;

/**
 * The content impact through HTTP (docs/data-model.md, "Content impact"), with real compiles: a
 * branch renames `orders.count`, which a report (shown on a dashboard shared with an embed tenant)
 * and a scheduled notification of that dashboard use; the member diff and validate of the branch
 * both list them, with the tenants that see them. The rules are tested below HTTP in
 * test/service/content-impact.service.spec.ts.
 *
 * A part of model-review.e2e-spec.ts: its own describe, app and database.
 */
describe('content impact over HTTP', () => {
  let t: TestApp;
  let id: number;
  let branch: string;
  let other: Actor;
  const ids: Record<string, number> = {};

  const api = (path: string) => `/api/v1/deployments/${id}${path}`;
  const build = (path: string, deployment = id) => `/build/api/v1/deployments/${deployment}${path}`;
  const ok = async (req: PromiseLike<{ status: number; body: any }>, status = 200): Promise<Json> => {
    const res = await req;
    if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const as = (actor: Actor = t.admin) => bearer(actor.token);

  /** What each answer's `impact` must hold: the report, its dashboard and the notification. */
  const expected = () => {
    const renamed = { member: 'orders.count', reason: 'member_renamed', renamedTo: 'orders.order_count' };
    return [
      { type: 'report', id: ids.report, name: 'Orders count', ...renamed, tenants: ['retail'] },
      { type: 'dashboard', id: ids.dashboard, name: 'Sales', ...renamed, tenants: ['retail'] },
      {
        type: 'notification',
        id: ids.notification,
        name: expect.stringMatching(/^Sales: /),
        ...renamed,
        // The dashboard's tenant and those of its embed recipients.
        tenants: ['acme-co', 'retail'],
      },
    ];
  };

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'globex');
    id = (await ok(t.http().post('/build/api/v1/deployments').set(as()).send(deploymentInput()))).id;

    // Content on the deploy branch's model: a report in workbook "Sales" naming `orders.count`, the
    // published dashboard showing it, shared with tenant `retail`, and a notification of it.
    ids.workbook = (await ok(t.http().post(api('/workbooks')).set(as()).send({ name: 'Sales workbook' }))).id;
    ids.report = (
      await ok(
        t
          .http()
          .post(api('/reports'))
          .set(as())
          .send({
            name: 'Orders count',
            workbookId: ids.workbook,
            jsonQuery: JSON.stringify({ measures: ['orders.count'], dimensions: ['orders.status'] }),
          }),
      )
    ).id;
    ids.dashboard = (
      await ok(
        t
          .http()
          .post(api(`/workbooks/${ids.workbook}/publish`))
          .set(as())
          .send({
            workbookId: ids.workbook,
            title: 'Sales',
            config: {
              widgets: [
                {
                  id: 'w1',
                  type: 'CHART',
                  position: { x: 0, y: 0, w: 6, h: 4 },
                  config: { reportId: ids.report },
                },
              ],
            },
          }),
      )
    ).id;
    ids.notification = (
      await ok(
        t
          .http()
          .post(api('/notifications'))
          .set(as())
          .send({ dashboardId: ids.dashboard, scheduleType: 'DAILY', hour: 9, minute: 0 }),
      )
    ).id;
    // Embed recipients provision their tenants.
    await ok(
      t
        .http()
        .post(api(`/notifications/${ids.notification}/recipients`))
        .set(as())
        .send({
          recipients: [
            { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'carol@retail.test' },
            { type: 'EMBED_USER', embedTenantName: 'acme-co', externalId: 'dan@acme-co.test' },
          ],
        }),
    );
    await ok(
      t
        .http()
        .put(api(`/workbooks/${ids.workbook}/embed-access`))
        .set(as())
        .send({ embedTenantName: 'retail', action: 'read' }),
    );

    // A branch renaming the measure (and the view that includes it), committed.
    branch = (await ok(t.http().post(build('/dev-mode')).set(as()).send({}))).branchName;
    await ok(
      t
        .http()
        .put(build('/data-model/files'))
        .set(as())
        .send({
          files: [...STARTER_COUNT_RENAMED],
        }),
    );
    await ok(t.http().post(build('/commit')).set(as()).send({ message: 'Rename orders.count' }));
  });

  afterAll(() => t?.close());

  it('lists the broken report, dashboard and notification, with their tenants, in the member diff', async () => {
    const diff = await ok(
      t.http().get(build('/branches/diff')).query({ base: 'master', head: branch }).set(as()),
    );
    expect(diff.impact).toEqual(expected());
  });

  it('lists them in the validation of the branch', async () => {
    const validated = await ok(
      t.http().get(build('/data-model/validate')).query({ branchName: branch }).set(as()),
    );
    expect(validated).toMatchObject({ branchName: branch, valid: true });
    expect(validated.impact).toEqual(expected());
  });

  it('lists nothing for a branch that breaks nothing, and nothing of another account', async () => {
    const same = await ok(
      t.http().get(build('/branches/diff')).query({ base: 'master', head: 'master' }).set(as()),
    );
    expect(same.impact).toEqual([]);
    // Another account's deployment is a 404, whatever it holds.
    const foreign = await t
      .http()
      .get(build('/branches/diff'))
      .query({ base: 'master', head: branch })
      .set(as(other));
    expect(foreign.status).toBe(404);
  });
});
