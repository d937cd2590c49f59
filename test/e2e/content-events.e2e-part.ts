import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { EventTap } from '../support/published-events.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/**
 * The events workspace content publishes (docs/webhooks.md, Event types): folders, workbooks,
 * dashboards and reports, each change one event with the resource as its GET shows it, a refused
 * change none, and only the account's own endpoints hearing of it. Observed through the webhooks
 * API: an endpoint subscribed to `*` and its deliveries (nothing is sent: no job is relayed).
 */
describe('content events', () => {
  let t: TestApp;
  let other: Actor;
  let viewer: Actor;
  let dep: number;
  let otherDep: number;
  let tap: EventTap;
  let otherTap: EventTap;
  const admin = () => bearer(t.admin.token);
  const at = (path: string, deployment = dep) => `/api/v1/deployments/${deployment}${path}`;

  const deployment = async (actor: Actor): Promise<number> => {
    const res = await t
      .http()
      .post('/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput({ name: `events ${actor.slug}` }));
    if (res.status !== 200) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };
  const ok = async (req: PromiseLike<{ status: number; body: Json }>, status = 200): Promise<Json> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const createFolder = (name: string, parentId?: number) =>
    ok(
      t
        .http()
        .post(at('/folders'))
        .set(admin())
        .send({ name, ...(parentId ? { parentId } : {}) }),
    );
  const createWorkbook = (body: Json = {}) => ok(t.http().post(at('/workbooks')).set(admin()).send(body));
  const createReport = (body: Json = {}) => ok(t.http().post(at('/reports')).set(admin()).send(body));
  const move = (type: string, id: number, folderId: number | null) =>
    ok(t.http().post(at('/workspace/move')).set(admin()).send({ type, id, folderId }));

  beforeAll(async () => {
    // Nothing relays the queue: deliveries are recorded and never sent.
    t = await startApp({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOX_RELAY_INTERVAL_MS: '600000' });
    other = await newAccount(t, 'events-other');
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    dep = await deployment(t.admin);
    otherDep = await deployment(other);
    tap = await EventTap.open(t, t.admin);
    otherTap = await EventTap.open(t, other);
  });
  afterAll(() => t?.close());

  it('publishes one event for each change of a folder, with the folder as the API shows it', async () => {
    const created = await createFolder('Sales');
    const event = await tap.expectOne('folder.created', { type: 'folder', id: created.id });
    expect(event).toEqual({
      id: expect.any(String),
      type: 'folder.created',
      timestamp: expect.any(String),
      resource: { type: 'folder', id: event.resource.id },
      data: created,
    });

    const renamed = await ok(
      t
        .http()
        .put(at(`/folders/${created.id}`))
        .set(admin())
        .send({ name: 'Sales EU' }),
    );
    expect((await tap.expectOne('folder.changed', { type: 'folder', id: created.id })).data).toEqual(renamed);

    const parent = await createFolder('Regions');
    await tap.expectOne('folder.created', { type: 'folder', id: parent.id });
    await move('FOLDER', created.id, parent.id);
    const moved = await tap.expectOne('folder.changed', { type: 'folder', id: created.id });
    expect(moved.data).toMatchObject({
      id: created.id,
      name: 'Sales EU',
      parentId: parent.id,
      deploymentId: dep,
    });
    const listed = await ok(t.http().get(at('/folders')).query({ parentId: parent.id }).set(admin()));
    expect(moved.data).toEqual(listed.items[0]);
    // Moved where it already is: nothing changes, nothing is published.
    await move('FOLDER', created.id, parent.id);
    await tap.expectNone();

    await ok(
      t
        .http()
        .delete(at(`/folders/${created.id}`))
        .set(admin()),
    );
    const deleted = await tap.expectOne('folder.deleted', { type: 'folder', id: created.id });
    expect(deleted.data).toEqual({
      id: created.id,
      name: 'Sales EU',
      parentId: parent.id,
      deploymentId: dep,
    });
  });

  it('publishes nothing for a change it refuses (400, 403, 404)', async () => {
    const parent = await createFolder('Kept');
    const child = await createFolder('Child', parent.id);
    const workbook = await createWorkbook({ name: 'Kept' });
    const report = await createReport({ name: 'Kept' });
    await tap.next();
    const theirs = await ok(
      t.http().post(at('/folders', otherDep)).set(bearer(other.token)).send({ name: 'Theirs' }),
    );
    await otherTap.next();

    const refusals: Array<[number, string, PromiseLike<{ status: number; body: Json }>]> = [
      [
        400,
        'validation_failed',
        t
          .http()
          .put(at(`/folders/${child.id}`))
          .set(admin())
          .send({ name: '  ' }),
      ],
      [
        400,
        'folder_not_empty',
        t
          .http()
          .delete(at(`/folders/${parent.id}`))
          .set(admin()),
      ],
      [
        403,
        'forbidden',
        t
          .http()
          .put(at(`/folders/${child.id}`))
          .set(bearer(viewer.token))
          .send({ name: 'x' }),
      ],
      [403, 'forbidden', t.http().post(at('/workbooks')).set(bearer(viewer.token)).send({ name: 'x' })],
      [
        404,
        'folder_not_found',
        t
          .http()
          .put(at(`/folders/${theirs.id}`))
          .set(admin())
          .send({ name: 'x' }),
      ],
      [404, 'deployment_not_found', t.http().post(at('/folders', otherDep)).set(admin()).send({ name: 'x' })],
      [
        400,
        'validation_failed',
        t
          .http()
          .put(at(`/workbooks/${workbook.id}`))
          .set(admin())
          .send({ name: ' ' }),
      ],
      [
        403,
        'forbidden',
        t
          .http()
          .delete(at(`/workbooks/${workbook.id}`))
          .set(bearer(viewer.token)),
      ],
      [
        409,
        'version_conflict',
        t
          .http()
          .put(at(`/reports/${report.id}`))
          .set(admin())
          .send({ title: 'x', expectedVersion: report.version + 5 }),
      ],
      [
        403,
        'forbidden',
        t
          .http()
          .put(at(`/reports/${report.id}`))
          .set(bearer(viewer.token))
          .send({ title: 'x' }),
      ],
      [
        404,
        'report_not_found',
        t
          .http()
          .delete(at(`/reports/${report.id + 1000}`))
          .set(admin()),
      ],
      [
        400,
        'nothing_to_publish',
        t
          .http()
          .post(at(`/workbooks/${workbook.id}/publish`))
          .set(admin())
          .send({ workbookId: workbook.id }),
      ],
    ];
    for (const [status, code, req] of refusals) {
      const res = await req;
      expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
      expectErrorShape(res.body, status, code);
    }
    await tap.expectNone();
    await otherTap.expectNone();
  });

  it('publishes workbook and dashboard events: create, update, draft, publish, move, copy and delete', async () => {
    const folder = await createFolder('Books');
    await tap.next();

    const created = await createWorkbook({ name: 'Revenue' });
    const createdEvent = await tap.expectOne('workbook.created', { type: 'workbook', id: created.id });
    expect(createdEvent.data).toEqual(created);
    expect(createdEvent.data).toEqual(
      await ok(
        t
          .http()
          .get(at(`/workbooks/${created.id}`))
          .set(admin()),
      ),
    );

    const renamed = await ok(
      t
        .http()
        .put(at(`/workbooks/${created.id}`))
        .set(admin())
        .send({ name: 'Revenue 2' }),
    );
    expect((await tap.expectOne('workbook.changed', { type: 'workbook', id: created.id })).data).toEqual(
      renamed,
    );
    // Nothing sent to change: nothing published.
    await ok(
      t
        .http()
        .put(at(`/workbooks/${created.id}`))
        .set(admin())
        .send({}),
    );
    await tap.expectNone();

    await ok(
      t
        .http()
        .put(at(`/workbooks/${created.id}/dashboard`))
        .set(admin())
        .send({ dashboardDraft: { title: 'Draft', widgets: [] } }),
    );
    const drafted = await tap.expectOne('workbook.changed', { type: 'workbook', id: created.id });
    expect(drafted.data.dashboardDraft).toEqual({ title: 'Draft', widgets: [] });

    const report = await createReport({ name: 'In the book', workbookId: created.id });
    await tap.expectOne('report.created', { type: 'report', id: report.id });

    const published = await ok(
      t
        .http()
        .post(at(`/workbooks/${created.id}/publish`))
        .set(admin())
        .send({ workbookId: created.id, config: {} }),
    );
    const first = await tap.expectOne('dashboard.created', { type: 'dashboard', id: published.id });
    expect(first.data).toEqual(published);
    const republished = await ok(
      t
        .http()
        .post(at(`/workbooks/${created.id}/publish`))
        .set(admin())
        .send({ workbookId: created.id, config: {}, title: 'Second' }),
    );
    const second = await tap.expectOne('dashboard.changed', { type: 'dashboard', id: published.id });
    expect(second.data).toEqual(republished);
    expect(second.data).toMatchObject({ versionNumber: 2, title: 'Second' });

    await move('WORKBOOK', created.id, folder.id);
    const moved = await tap.expectOne('workbook.changed', { type: 'workbook', id: created.id });
    expect(moved.data).toMatchObject({ id: created.id, folderId: folder.id });
    await move('WORKBOOK', created.id, folder.id);
    await tap.expectNone();

    const copy = await ok(
      t
        .http()
        .post(at(`/workbooks/${created.id}/duplicate`))
        .set(admin())
        .send({}),
    );
    const copiedReports = await ok(t.http().get(at('/reports')).query({ workbookId: copy.id }).set(admin()));
    expect(copiedReports.items).toHaveLength(1);
    const copied = await tap.expectExactly([
      `workbook.created workbook:${copy.id}`,
      `dashboard.created dashboard:${copy.publishedDashboard.id}`,
      `report.created report:${copiedReports.items[0].id}`,
    ]);
    expect(copied.get(`workbook.created workbook:${copy.id}`)!.data).toEqual(copy);
    expect(copied.get(`report.created report:${copiedReports.items[0].id}`)!.data).toMatchObject({
      id: copiedReports.items[0].id,
      workbookId: copy.id,
      name: 'In the book',
    });

    await ok(
      t
        .http()
        .delete(at(`/workbooks/${created.id}`))
        .set(admin()),
    );
    const deleted = await tap.expectExactly([
      `workbook.deleted workbook:${created.id}`,
      `dashboard.deleted dashboard:${published.id}`,
      `report.deleted report:${report.id}`,
    ]);
    expect(deleted.get(`workbook.deleted workbook:${created.id}`)!.data).toEqual({
      id: created.id,
      name: 'Revenue 2',
      slug: null,
      folderId: folder.id,
      deploymentId: dep,
    });
    expect(deleted.get(`dashboard.deleted dashboard:${published.id}`)!.data).toEqual({
      id: published.id,
      publicId: published.publicId,
      title: 'Second',
      workbookId: created.id,
      deploymentId: dep,
    });
    expect(deleted.get(`report.deleted report:${report.id}`)!.data).toEqual({
      id: report.id,
      publicId: report.publicId,
      name: 'In the book',
      folderId: null,
      workbookId: created.id,
      deploymentId: dep,
    });
  });

  it('publishes a by-slug upsert as created, then changed, and a repeat of it as nothing', async () => {
    const put = (body: Json) =>
      ok(t.http().put(at('/workbooks/by-slug/events-sales')).set(admin()).send(body));
    const made = await put({ name: 'Sales' });
    expect((await tap.expectOne('workbook.created', { type: 'workbook', id: made.id })).data).toEqual(made);
    await put({ name: 'Sales' });
    await tap.expectNone();
    const changed = await put({ name: 'Sales (EU)' });
    expect((await tap.expectOne('workbook.changed', { type: 'workbook', id: made.id })).data).toEqual(
      changed,
    );
  });

  it('publishes report events for create, update and move, and nothing for reads and placements', async () => {
    const folder = await createFolder('Reports');
    await tap.next();

    const created = await createReport({ name: 'Orders', jsonQuery: '{"measures":["orders.count"]}' });
    const event = await tap.expectOne('report.created', { type: 'report', id: created.id });
    expect(event.data).toEqual(created);

    const updated = await ok(
      t
        .http()
        .put(at(`/reports/${created.id}`))
        .set(admin())
        .send({ title: 'All orders' }),
    );
    expect((await tap.expectOne('report.changed', { type: 'report', id: created.id })).data).toEqual(updated);
    await ok(
      t
        .http()
        .put(at(`/reports/${created.id}`))
        .set(admin())
        .send({}),
    );
    await tap.expectNone();

    await move('REPORT', created.id, folder.id);
    const moved = await tap.expectOne('report.changed', { type: 'report', id: created.id });
    expect(moved.data).toMatchObject({ id: created.id, folderId: folder.id, title: 'All orders' });

    // Reads and the spreadsheet add-ins' placements are not content changes.
    await ok(
      t
        .http()
        .get(at(`/reports/${created.id}`))
        .set(admin()),
    );
    await ok(t.http().get(at('/reports')).set(admin()));
    await ok(
      t
        .http()
        .put(at(`/reports/${created.id}/connect-workbook`))
        .set(admin())
        .send({ externalWorkbookId: 'events-wb', resultLocation: 'Sheet1!B3' }),
    );
    await ok(
      t
        .http()
        .put(at(`/reports/${created.id}/refresh`))
        .set(admin())
        .send({ externalWorkbookId: 'events-wb', resultLocation: 'Sheet1!B3' }),
    );
    await ok(
      t
        .http()
        .delete(at(`/reports/${created.id}/connect-workbook`))
        .set(admin())
        .send({ externalWorkbookId: 'events-wb', resultLocation: 'Sheet1!B3' }),
    );
    await tap.expectNone();

    await ok(
      t
        .http()
        .delete(at(`/reports/${created.id}`))
        .set(admin()),
    );
    const deleted = await tap.expectOne('report.deleted', { type: 'report', id: created.id });
    expect(deleted.data).toEqual({
      id: created.id,
      publicId: created.publicId,
      name: 'Orders',
      folderId: folder.id,
      workbookId: null,
      deploymentId: dep,
    });
  });

  it('publishes one deletion per item a bulk delete removes, and none for an item it refuses', async () => {
    const folder = await createFolder('Bulk');
    const workbook = await createWorkbook({ name: 'Bulk' });
    const report = await createReport({ name: 'Bulk' });
    await tap.next();
    const res = await ok(
      t
        .http()
        .post(at('/workspace/bulk-delete'))
        .set(admin())
        .send({
          items: [
            { type: 'FOLDER', id: folder.id },
            { type: 'WORKBOOK', id: workbook.id },
            { type: 'REPORT', id: report.id },
            { type: 'REPORT', id: report.id + 100000 },
          ],
        }),
    );
    expect(res.failed).toHaveLength(1);
    await tap.expectExactly([
      `folder.deleted folder:${folder.id}`,
      `workbook.deleted workbook:${workbook.id}`,
      `report.deleted report:${report.id}`,
    ]);
  });

  it('tells each account of its own changes only', async () => {
    await tap.next();
    await otherTap.expectNone();
    const theirs = await ok(
      t.http().post(at('/folders', otherDep)).set(bearer(other.token)).send({ name: 'Mine' }),
    );
    const event = await otherTap.expectOne('folder.created', { type: 'folder', id: theirs.id });
    expect(event.data).toEqual(theirs);
    await tap.expectNone();
  });
});
