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

interface Workbook {
  id: number;
  name: string;
  slug: string | null;
  meta: Record<string, unknown>;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  userId: number;
  createdAt: string;
  updatedAt: string;
  dashboardDraft: Record<string, unknown> | null;
  dashboardPublished: Record<string, unknown> | null;
  publishedDashboard: Record<string, unknown> | null;
}

const ADVERTISED = [
  'CHART',
  'TEXT',
  'FILTER',
  'AI',
  'TIME_GRAIN',
  'FIELD',
  'PARENT',
  'SPACER',
  'DIVIDER',
  'CONTAINER',
];

const widget = (id: string | undefined, type = 'CHART', extra: Record<string, unknown> = {}) => ({
  ...(id === undefined ? {} : { id }),
  type,
  position: { x: 0, y: 0, w: 6, h: 4 },
  ...extra,
});

describe('workbooks and dashboards', () => {
  let t: TestApp;
  let viewer: Actor;
  let explorer: Actor;
  let other: Actor;
  let deploymentId: number;
  let secondDeploymentId: number;
  let otherDeploymentId: number;
  let otherWorkbookId: number;

  const base = (dep = deploymentId) => `/api/v1/deployments/${dep}/workbooks`;

  const createDeployment = async (actor: Actor) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    if (res.status !== 200) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const createWorkbook = async (
    body: Record<string, unknown> = {},
    actor: Actor = t.admin,
    dep = deploymentId,
  ): Promise<Workbook> => {
    const res = await t.http().post(base(dep)).set(bearer(actor.token)).send(body);
    if (res.status !== 200) throw new Error(`workbook: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Workbook;
  };

  const insertFolder = async (name: string, dep = deploymentId, actor: Actor = t.admin, parent?: number) => {
    const [row] = await t.sql<{ id: number }>(
      `INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, user_id, created_by)
       VALUES ($1, $2, $3::int, CASE WHEN $3::int IS NULL THEN '{}'::int[] ELSE ARRAY[$3::int] END, $4, $5, $5)
       RETURNING id`,
      [actor.accountId, dep, parent ?? null, name, actor.userId],
    );
    return row.id;
  };

  const insertReport = async (
    workbookId: number,
    name: string,
    extra: { publicId?: string; folderId?: number; dep?: number } = {},
  ) => {
    const [row] = await t.sql<{ id: number }>(
      `INSERT INTO reports (account_id, deployment_id, workbook_id, name, user_id, created_by, public_id, folder_id,
         sql_query, meta)
       VALUES ($1, $2, $3, $4, $5, $5, $6, $7, 'SELECT 1', '{"chart":"bar"}') RETURNING id`,
      [
        t.admin.accountId,
        extra.dep ?? deploymentId,
        workbookId,
        name,
        t.admin.userId,
        extra.publicId ?? null,
        extra.folderId ?? null,
      ],
    );
    return row.id;
  };

  const grant = (actor: Actor, resourceType: string, resourceId: number | string, action: string) =>
    t.sql(
      `INSERT INTO policies (account_id, principal_type, principal_id, resource_type, resource_id, action)
       VALUES ($1, 'user', $2, $3, $4, $5)`,
      [actor.accountId, actor.userId, resourceType, String(resourceId), action],
    );

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    explorer = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
    other = await newAccount(t, 'globex');
    deploymentId = await createDeployment(t.admin);
    secondDeploymentId = await createDeployment(t.admin);
    otherDeploymentId = await createDeployment(other);
    otherWorkbookId = (await createWorkbook({ name: 'Globex book' }, other, otherDeploymentId)).id;
  });
  afterAll(() => t.close());

  describe('authentication', () => {
    it.each([
      ['get', ''],
      ['post', ''],
      ['put', '/by-slug/abc'],
      ['get', '/1'],
      ['put', '/1'],
      ['delete', '/1'],
      ['post', '/1/duplicate'],
      ['put', '/1/dashboard'],
      ['post', '/1/publish'],
    ] as const)('%s workbooks%s answers 401 without a token', async (method, suffix) => {
      const res = await t.http()[method](`${base()}${suffix}`).send({});
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });
  });

  describe('POST /workbooks', () => {
    it('creates a workbook owned by the caller, with the Workbook shape', async () => {
      const res = await t
        .http()
        .post(base())
        .set(bearer(t.admin.token))
        .send({ name: '  Revenue  ', meta: { color: 'blue' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Revenue',
        slug: null,
        meta: { color: 'blue' },
        calculatedFields: {},
        deploymentId,
        folderId: null,
        folderPath: [],
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: expect.stringMatching(/Z$/),
        createdBy: t.admin.userId,
        userId: t.admin.userId,
        user: { id: t.admin.userId, email: t.admin.email, firstName: null, picture: null },
        type: 'WORKBOOK',
        dashboardDraft: null,
        dashboardPublished: null,
        publishedDashboard: null,
        isFavorite: null,
      });
      const [row] = await t.sql(
        `SELECT account_id, deployment_id, name, user_id FROM workbooks WHERE id = $1`,
        [res.body.id],
      );
      expect(row).toEqual({
        account_id: t.admin.accountId,
        deployment_id: deploymentId,
        name: 'Revenue',
        user_id: t.admin.userId,
      });
    });

    it('names a workbook "Untitled workbook" without a name, and accepts an absent body', async () => {
      const res = await t.http().post(base()).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Untitled workbook', meta: {}, folderId: null });
    });

    it('creates in a folder with its folder path', async () => {
      const parent = await insertFolder('Finance');
      const child = await insertFolder('Quarterly', deploymentId, t.admin, parent);
      const wb = await createWorkbook({ name: 'Q1', folderId: child });
      expect(wb.folderId).toBe(child);
      expect(wb.folderPath).toEqual([
        { id: parent, name: 'Finance' },
        { id: child, name: 'Quarterly' },
      ]);
    });

    it('turns meta.dashboardDraft into the draft after validating it', async () => {
      const ok = await createWorkbook({
        meta: { a: 1, dashboardDraft: { title: 'T', widgets: [widget('w1')] } },
      });
      expect(ok.meta).toEqual({ a: 1 });
      expect(ok.dashboardDraft).toEqual({ title: 'T', widgets: [widget('w1')] });

      const bad = await t
        .http()
        .post(base())
        .set(bearer(t.admin.token))
        .send({ meta: { dashboardDraft: { widgets: [widget('w1', 'NOPE')] } } });
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'validation_failed');
      expect(JSON.stringify(bad.body.message)).toContain('meta.dashboardDraft.widgets.0.type');
    });

    it.each([
      ['a name that is not a string', { name: 123 }],
      ['a blank name', { name: '   ' }],
      ['a name over 255 characters', { name: 'x'.repeat(256) }],
      ['an unknown field', { colour: 'blue' }],
      ['a folderId that is not an integer', { folderId: 'abc' }],
      ['meta that is an array', { meta: [1] }],
    ])('answers 400 for %s and creates nothing', async (_, body) => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM workbooks`);
      const res = await t.http().post(base()).set(bearer(t.admin.token)).send(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(await t.sql(`SELECT count(*)::int AS n FROM workbooks`)).toEqual(before);
    });

    it('answers 404 for a folder that does not exist or is in another deployment', async () => {
      const elsewhere = await insertFolder('Elsewhere', secondDeploymentId);
      for (const folderId of [99999, elsewhere]) {
        const res = await t.http().post(base()).set(bearer(t.admin.token)).send({ folderId });
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'folder_not_found');
      }
    });

    it('answers 404 for another account’s deployment and a missing one', async () => {
      for (const dep of [otherDeploymentId, 99999]) {
        const res = await t.http().post(base(dep)).set(bearer(t.admin.token)).send({ name: 'x' });
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });

    it('answers 403 to a Viewer at the root and in a folder, and creates nothing', async () => {
      const folder = await insertFolder('Viewer can read');
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM workbooks`);
      for (const body of [{ name: 'x' }, { name: 'x', folderId: folder }]) {
        const res = await t.http().post(base()).set(bearer(viewer.token)).send(body);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await t.sql(`SELECT count(*)::int AS n FROM workbooks`)).toEqual(before);
    });

    it('lets FolderEdit on a folder create there, but not at the root', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const folder = await insertFolder('Shared with user');
      await grant(user, 'Folder', folder, 'FolderEdit');
      const inFolder = await t.http().post(base()).set(bearer(user.token)).send({ folderId: folder });
      expect(inFolder.status).toBe(200);
      expect(inFolder.body).toMatchObject({ folderId: folder, userId: user.userId });
      const atRoot = await t.http().post(base()).set(bearer(user.token)).send({});
      expect(atRoot.status).toBe(403);
    });
  });

  describe('GET /workbooks', () => {
    let dep: number;
    let folder: number;
    let ids: number[];

    beforeAll(async () => {
      dep = await createDeployment(t.admin);
      folder = await insertFolder('Listed', dep);
      ids = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await createWorkbook({ name: `L${i}`, folderId: i < 2 ? folder : null }, t.admin, dep)).id);
      }
    });

    it('pages through every workbook by id with cursors and the legacy fields', async () => {
      const first = await t
        .http()
        .get(`${base(dep)}?first=2`)
        .set(bearer(t.admin.token));
      expect(first.status).toBe(200);
      expect(first.body.items.map((w: Workbook) => w.id)).toEqual(ids.slice(0, 2));
      expect(first.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      expect(first.body.data).toEqual(first.body.items);
      expect(first.body.count).toBe(5);
      expect(first.body.pagination).toEqual({ total: 5, offset: 0, limit: 2 });

      const seen: number[] = [...first.body.items.map((w: Workbook) => w.id)];
      let cursor = first.body.pageInfo.endCursor as string;
      for (;;) {
        const page = await t
          .http()
          .get(`${base(dep)}?first=2&after=${cursor}`)
          .set(bearer(t.admin.token));
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((w: Workbook) => w.id));
        if (!page.body.pageInfo.hasNextPage) break;
        cursor = page.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(ids);
    });

    it('filters by folder, and folderId=0 keeps the root only', async () => {
      const inFolder = await t
        .http()
        .get(`${base(dep)}?folderId=${folder}`)
        .set(bearer(t.admin.token));
      expect(inFolder.body.items.map((w: Workbook) => w.id)).toEqual(ids.slice(0, 2));
      expect(inFolder.body.items[0].folderPath).toEqual([{ id: folder, name: 'Listed' }]);
      const root = await t
        .http()
        .get(`${base(dep)}?folderId=0`)
        .set(bearer(t.admin.token));
      expect(root.body.items.map((w: Workbook) => w.id)).toEqual(ids.slice(2));
    });

    it('shows only the workbooks a user may read', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      await grant(user, 'Workbook', ids[3], 'WorkbookRead');
      const res = await t.http().get(base(dep)).set(bearer(user.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((w: Workbook) => w.id)).toEqual([ids[3]]);
      expect(res.body.count).toBe(1);
      const viewerList = await t.http().get(base(dep)).set(bearer(viewer.token));
      expect(viewerList.body.count).toBe(5);
    });

    it('answers 403 to a user without any workspace action, and lists only their own workbooks to one whose grants are elsewhere', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      const denied = await t.http().get(base(dep)).set(bearer(user.token));
      expect(denied.status).toBe(403);
      expectErrorShape(denied.body, 403, 'forbidden');
      await grant(user, 'Folder', await insertFolder('Elsewhere', dep), 'FolderRead');
      const res = await t.http().get(base(dep)).set(bearer(user.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ items: [], count: 0 });
      const [owned] = await t.sql<{ id: number }>(
        `INSERT INTO workbooks (account_id, deployment_id, name, user_id, created_by) VALUES ($1, $2, 'Owned', $3, $3)
         RETURNING id`,
        [user.accountId, dep, user.userId],
      );
      const mine = await t.http().get(base(dep)).set(bearer(user.token));
      expect(mine.body.items.map((w: Workbook) => w.id)).toEqual([owned.id]);
    });

    it('lists the workbooks below a folder granted to a user', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      await grant(user, 'Folder', folder, 'FolderRead');
      const res = await t.http().get(base(dep)).set(bearer(user.token));
      expect(res.body.items.map((w: Workbook) => w.id)).toEqual(ids.slice(0, 2));
    });

    it.each(['first=0', 'first=abc', 'after=%25%25', 'folderId=abc', 'folderId=-1', 'limit=5'])(
      'answers 400 for %s',
      async (query) => {
        const res = await t
          .http()
          .get(`${base(dep)}?${query}`)
          .set(bearer(t.admin.token));
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400);
      },
    );

    it('answers 404 for another account’s deployment', async () => {
      const res = await t.http().get(base(otherDeploymentId)).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'deployment_not_found');
    });
  });

  describe('GET /workbooks/{workbookId}', () => {
    it('reads a workbook; a Viewer may too', async () => {
      const wb = await createWorkbook({ name: 'Readable' });
      for (const actor of [t.admin, viewer]) {
        const res = await t.http().get(`${base()}/${wb.id}`).set(bearer(actor.token));
        expect(res.status).toBe(200);
        expect(res.body).toEqual(wb);
      }
    });

    it('answers 404 for another account’s workbook, another deployment’s, and an unreadable one', async () => {
      const wb = await createWorkbook({ name: 'Private' }, t.admin, secondDeploymentId);
      const mine = await createWorkbook({ name: 'Mine' });
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      await grant(user, 'Workbook', mine.id, 'WorkbookRead');
      const cases: Array<[Actor, string]> = [
        [t.admin, `${base()}/${otherWorkbookId}`],
        [t.admin, `${base(otherDeploymentId)}/${otherWorkbookId}`],
        [t.admin, `${base()}/${wb.id}`],
        [user, `${base(secondDeploymentId)}/${wb.id}`],
      ];
      for (const [actor, url] of cases) {
        const res = await t.http().get(url).set(bearer(actor.token));
        expect({ url, status: res.status }).toEqual({ url, status: 404 });
        expectErrorShape(res.body, 404);
      }
      expect((await t.http().get(`${base()}/${mine.id}`).set(bearer(user.token))).status).toBe(200);
    });

    it('lets grants on a folder reach the workbooks below it', async () => {
      const parent = await insertFolder('Granted parent');
      const child = await insertFolder('Granted child', deploymentId, t.admin, parent);
      const wb = await createWorkbook({ name: 'Deep', folderId: child });
      const reader = await newUser(t, t.admin, { defaultRoles: [] });
      const editor = await newUser(t, t.admin, { defaultRoles: [] });
      await grant(reader, 'Folder', parent, 'FolderRead');
      await grant(editor, 'Folder', parent, 'FolderEdit');
      expect((await t.http().get(`${base()}/${wb.id}`).set(bearer(reader.token))).status).toBe(200);
      const readerEdit = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(reader.token))
        .send({ name: 'No' });
      expect(readerEdit.status).toBe(403);
      const editorEdit = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(editor.token))
        .send({ name: 'Yes' });
      expect(editorEdit.status).toBe(200);
      expect(editorEdit.body.name).toBe('Yes');
    });

    it.each(['abc', '0', '99999999999'])('answers 400 for the id %s', async (id) => {
      const res = await t.http().get(`${base()}/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  describe('PUT /workbooks/{workbookId}', () => {
    it('renames, replaces meta and normalises the slug', async () => {
      const wb = await createWorkbook({ name: 'Before', meta: { a: 1, b: 2 } });
      const res = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ name: ' After ', meta: { c: 3 }, slug: '  Sales-Overview ' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: wb.id, name: 'After', meta: { c: 3 }, slug: 'sales-overview' });
      const [row] = await t.sql(`SELECT slug, meta FROM workbooks WHERE id = $1`, [wb.id]);
      expect(row).toEqual({ slug: 'sales-overview', meta: { c: 3 } });
    });

    it('answers 409 for a slug taken in the deployment, unless taking it over', async () => {
      const holder = await createWorkbook({ name: 'Holder' });
      await t.http().put(`${base()}/${holder.id}`).set(bearer(t.admin.token)).send({ slug: 'taken' });
      const wb = await createWorkbook({ name: 'Taker' });
      const conflict = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ slug: 'TAKEN' });
      expect(conflict.status).toBe(409);
      expectErrorShape(conflict.body, 409, 'slug_taken');

      const elsewhere = await createWorkbook({ name: 'Other deployment' }, t.admin, secondDeploymentId);
      const sameSlugElsewhere = await t
        .http()
        .put(`${base(secondDeploymentId)}/${elsewhere.id}`)
        .set(bearer(t.admin.token))
        .send({ slug: 'taken' });
      expect(sameSlugElsewhere.status).toBe(200);

      const takeover = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ slug: 'taken', slugTakeover: true });
      expect(takeover.status).toBe(200);
      expect(takeover.body.slug).toBe('taken');
      const rows = await t.sql(`SELECT id, slug FROM workbooks WHERE id = ANY($1) ORDER BY id`, [
        [holder.id, wb.id],
      ]);
      expect(rows).toEqual([
        { id: holder.id, slug: null },
        { id: wb.id, slug: 'taken' },
      ]);

      const cleared = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ slug: null });
      expect(cleared.body.slug).toBeNull();
    });

    it('moves into a folder and back to the root', async () => {
      const folder = await insertFolder('Destination');
      const wb = await createWorkbook({ name: 'Mover' });
      const moved = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ folderId: folder });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({
        folderId: folder,
        folderPath: [{ id: folder, name: 'Destination' }],
      });
      const back = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ folderId: null });
      expect(back.body).toMatchObject({ folderId: null, folderPath: [] });
      const missing = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(t.admin.token))
        .send({ folderId: 99999 });
      expect(missing.status).toBe(404);
    });

    it('lets an Explorer rename but not move a workbook it does not own', async () => {
      const folder = await insertFolder('Explorer target');
      const wb = await createWorkbook({ name: 'Admin owned' });
      const rename = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(explorer.token))
        .send({ name: 'Renamed' });
      expect(rename.status).toBe(200);
      const move = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(explorer.token))
        .send({ folderId: folder });
      expect(move.status).toBe(403);
      expectErrorShape(move.body, 403, 'forbidden');
      const [row] = await t.sql(`SELECT folder_id FROM workbooks WHERE id = $1`, [wb.id]);
      expect(row).toEqual({ folder_id: null });
    });

    it('answers 403 to a Viewer and changes nothing', async () => {
      const wb = await createWorkbook({ name: 'Keep' });
      const res = await t
        .http()
        .put(`${base()}/${wb.id}`)
        .set(bearer(viewer.token))
        .send({ name: 'Changed' });
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      const [row] = await t.sql(`SELECT name FROM workbooks WHERE id = $1`, [wb.id]);
      expect(row).toEqual({ name: 'Keep' });
    });

    it.each([
      ['an invalid slug', { slug: 'no spaces' }],
      ['a blank slug', { slug: '   ' }],
      ['a blank name', { name: '' }],
      ['an unknown field', { owner: 1 }],
      ['slugTakeover that is not a boolean', { slugTakeover: 'yes' }],
    ])('answers 400 for %s', async (_, body) => {
      const wb = await createWorkbook({ name: 'Valid' });
      const res = await t.http().put(`${base()}/${wb.id}`).set(bearer(t.admin.token)).send(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('answers 404 for another account’s workbook', async () => {
      const res = await t
        .http()
        .put(`${base(otherDeploymentId)}/${otherWorkbookId}`)
        .set(bearer(t.admin.token))
        .send({ name: 'Hijack' });
      expect(res.status).toBe(404);
      const [row] = await t.sql(`SELECT name FROM workbooks WHERE id = $1`, [otherWorkbookId]);
      expect(row).toEqual({ name: 'Globex book' });
    });
  });

  describe('DELETE /workbooks/{workbookId}', () => {
    it('deletes the workbook with its reports, dashboard and grants, answering 200 {}', async () => {
      const wb = await createWorkbook({ name: 'Doomed' });
      const r1 = await insertReport(wb.id, 'R1');
      const r2 = await insertReport(wb.id, 'R2');
      const kept = await createWorkbook({ name: 'Kept' });
      const keptReport = await insertReport(kept.id, 'Kept report');
      await t
        .http()
        .post(`${base()}/${wb.id}/publish`)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, config: {} });
      await grant(viewer, 'Workbook', wb.id, 'WorkbookEdit');
      await grant(viewer, 'Report', r1, 'ReportEdit');
      await grant(viewer, 'Workbook', kept.id, 'WorkbookEdit');

      const res = await t.http().delete(`${base()}/${wb.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await t.sql(`SELECT id FROM workbooks WHERE id = $1`, [wb.id])).toEqual([]);
      expect(await t.sql(`SELECT id FROM reports WHERE id = ANY($1)`, [[r1, r2]])).toEqual([]);
      expect(await t.sql(`SELECT id FROM dashboards WHERE workbook_id = $1`, [wb.id])).toEqual([]);
      const grants = await t.sql(
        `SELECT resource_type, resource_id FROM policies WHERE principal_type = 'user' AND principal_id = $1
         ORDER BY resource_type, resource_id`,
        [viewer.userId],
      );
      expect(grants).toEqual([{ resource_type: 'Workbook', resource_id: String(kept.id) }]);
      expect(await t.sql(`SELECT id FROM reports WHERE id = $1`, [keptReport])).toEqual([{ id: keptReport }]);
      expect((await t.http().get(`${base()}/${wb.id}`).set(bearer(t.admin.token))).status).toBe(404);
    });

    it('answers 403 to a Viewer and to an Explorer on a workbook it does not own; owners may delete', async () => {
      const wb = await createWorkbook({ name: 'Admin owned' });
      for (const actor of [viewer, explorer]) {
        const res = await t.http().delete(`${base()}/${wb.id}`).set(bearer(actor.token));
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await t.sql(`SELECT id FROM workbooks WHERE id = $1`, [wb.id])).toEqual([{ id: wb.id }]);
      const own = await createWorkbook({ name: 'Explorer owned' }, explorer);
      expect((await t.http().delete(`${base()}/${own.id}`).set(bearer(explorer.token))).status).toBe(200);
    });

    it('answers 404 for another account’s workbook and 400 for a bad id', async () => {
      const res = await t
        .http()
        .delete(`${base(otherDeploymentId)}/${otherWorkbookId}`)
        .set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expect(await t.sql(`SELECT id FROM workbooks WHERE id = $1`, [otherWorkbookId])).toHaveLength(1);
      const bad = await t.http().delete(`${base()}/abc`).set(bearer(t.admin.token));
      expect(bad.status).toBe(400);
    });
  });

  describe('PUT /workbooks/by-slug/{slug}', () => {
    const upsert = (
      slug: string,
      body: Record<string, unknown> = {},
      actor: Actor = t.admin,
      dep = deploymentId,
    ) =>
      t
        .http()
        .put(`${base(dep)}/by-slug/${slug}`)
        .set(bearer(actor.token))
        .send(body);

    it('creates with the normalised slug, then updates the same workbook idempotently', async () => {
      const created = await upsert('%20Team-Board%20', { name: 'Team board', meta: { owner: 'ops' } });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ slug: 'team-board', name: 'Team board', meta: { owner: 'ops' } });

      const again = await upsert('team-board', { name: 'Team board', meta: { owner: 'ops' } });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(created.body.id);
      expect(again.body.updatedAt).toBe(created.body.updatedAt);

      const upper = await upsert('TEAM-BOARD', { name: 'Renamed' });
      expect(upper.body).toMatchObject({ id: created.body.id, name: 'Renamed', meta: { owner: 'ops' } });
      const rows = await t.sql(`SELECT id FROM workbooks WHERE deployment_id = $1 AND slug = 'team-board'`, [
        deploymentId,
      ]);
      expect(rows).toEqual([{ id: created.body.id }]);
    });

    it('merges meta key by key; a null value removes the key', async () => {
      await upsert('merge-me', { meta: { a: 1, b: { x: 1 } } });
      const merged = await upsert('merge-me', { meta: { b: { y: 2 }, c: 3 } });
      expect(merged.body.meta).toEqual({ a: 1, b: { y: 2 }, c: 3 });
      const removed = await upsert('merge-me', { meta: { a: null } });
      expect(removed.body.meta).toEqual({ b: { y: 2 }, c: 3 });
      expect(removed.body.name).toBe('Untitled workbook');
    });

    it('sets the draft from meta.dashboardDraft', async () => {
      const res = await upsert('as-code', { meta: { dashboardDraft: { widgets: [widget('w', 'TEXT')] } } });
      expect(res.status).toBe(200);
      expect(res.body.dashboardDraft).toEqual({ widgets: [widget('w', 'TEXT')] });
      expect(res.body.meta).toEqual({});
    });

    it('moves an existing workbook with folderId', async () => {
      const folder = await insertFolder('Slug folder');
      await upsert('movable', {});
      const moved = await upsert('movable', { folderId: folder });
      expect(moved.body.folderId).toBe(folder);
    });

    it('creates exactly one workbook from parallel upserts of a new slug', async () => {
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => upsert('race-slug', { meta: { [`k${i}`]: i } })),
      );
      for (const res of responses) {
        if (res.status === 409) expectErrorShape(res.body, 409, 'upsert_branch_changed');
        else expect(res.status).toBe(200);
      }
      expect(responses.some((r) => r.status === 200)).toBe(true);
      const rows = await t.sql(`SELECT id FROM workbooks WHERE deployment_id = $1 AND slug = 'race-slug'`, [
        deploymentId,
      ]);
      expect(rows).toHaveLength(1);
      const ids = new Set(responses.filter((r) => r.status === 200).map((r) => r.body.id));
      expect([...ids]).toEqual([rows[0].id]);
    });

    it.each([
      ['blank after trimming', '%20%20'],
      ['with a space inside', 'a%20b'],
      ['with other characters', 'a%2Bb'],
      ['over 255 characters', 'a'.repeat(256)],
    ])('answers 400 for a slug %s', async (_, slug) => {
      const res = await upsert(slug);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('answers 400 for a bad body', async () => {
      const res = await upsert('bad-body', { meta: 'x' });
      expect(res.status).toBe(400);
      expect(await t.sql(`SELECT id FROM workbooks WHERE slug = 'bad-body'`)).toEqual([]);
    });

    it('answers 403 to a Viewer creating or updating', async () => {
      const create = await upsert('viewer-new', {}, viewer);
      expect(create.status).toBe(403);
      expect(await t.sql(`SELECT id FROM workbooks WHERE slug = 'viewer-new'`)).toEqual([]);
      await upsert('viewer-existing', { name: 'Admin' });
      const update = await upsert('viewer-existing', { name: 'Viewer' }, viewer);
      expect(update.status).toBe(403);
      expectErrorShape(update.body, 403, 'forbidden');
    });

    it('answers 404 for another account’s deployment', async () => {
      const res = await upsert('x', {}, t.admin, otherDeploymentId);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'deployment_not_found');
    });
  });

  describe('dashboards', () => {
    it('saves a draft as sent, TABS_CONTAINER included, and returns draft and published', async () => {
      const wb = await createWorkbook({ name: 'Drafted' });
      const draft = {
        kind: 'CLASSIC',
        title: 'Sales',
        layout: { cols: { lg: 12 } },
        widgets: [
          widget('tabs', 'TABS_CONTAINER', { config: { tabs: ['A', 'B'] } }),
          widget(undefined, 'TEXT', { responsiveLayouts: { lg: { x: 1, y: 2, w: 3, h: 4 }, sm: null } }),
        ],
      };
      const res = await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft: draft });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ dashboardDraft: draft, dashboardPublished: null });
      const [row] = await t.sql<{ dashboard_draft: unknown }>(
        `SELECT dashboard_draft FROM workbooks WHERE id = $1`,
        [wb.id],
      );
      expect(row.dashboard_draft).toEqual(draft);
      const read = await t.http().get(`${base()}/${wb.id}`).set(bearer(viewer.token));
      expect(read.body.dashboardDraft).toEqual(draft);

      const cleared = await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft: null });
      expect(cleared.body.dashboardDraft).toBeNull();
    });

    it.each([
      ['an unknown widget type', { widgets: [widget('a', 'NOPE')] }, 'widgets.0.type'],
      ['an unknown key in a widget', { widgets: [widget('a', 'CHART', { colour: 1 })] }, 'widgets.0.colour'],
      [
        'a negative position',
        { widgets: [{ id: 'a', type: 'CHART', position: { x: -1, y: 0, w: 1, h: 1 } }] },
        'widgets.0.position.x',
      ],
      [
        'a fractional position',
        { widgets: [{ id: 'a', type: 'CHART', position: { x: 0.5, y: 0, w: 1, h: 1 } }] },
        'widgets.0.position.x',
      ],
      [
        'an unknown key in a position',
        { widgets: [{ id: 'a', type: 'CHART', position: { x: 0, y: 0, w: 1, h: 1, z: 1 } }] },
        'widgets.0.position.z',
      ],
      ['a widget without a position', { widgets: [{ id: 'a', type: 'CHART' }] }, 'widgets.0.position'],
      ['an id over 128 characters', { widgets: [widget('x'.repeat(129))] }, 'widgets.0.id'],
      ['an unknown kind', { kind: 'MODERN' }, 'kind'],
      ['an unknown key in the config', { colour: 'red' }, 'colour'],
      [
        'more than 500 widgets',
        { widgets: Array.from({ length: 501 }, (_, i) => widget(`w${i}`)) },
        'widgets',
      ],
    ])('answers 400 for %s, naming it', async (_, dashboardDraft, field) => {
      const wb = await createWorkbook({ name: 'Invalid draft' });
      const res = await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect((res.body.message as string[]).some((m) => m.includes(`dashboardDraft.${field}`))).toBe(true);
      const [row] = await t.sql(`SELECT dashboard_draft FROM workbooks WHERE id = $1`, [wb.id]);
      expect(row).toEqual({ dashboard_draft: null });
    });

    it('answers 403 to a Viewer and 404 for another account’s workbook', async () => {
      const wb = await createWorkbook({ name: 'Guarded' });
      const body = { dashboardDraft: { widgets: [] } };
      const forbidden = await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(viewer.token))
        .send(body);
      expect(forbidden.status).toBe(403);
      const missing = await t
        .http()
        .put(`${base(otherDeploymentId)}/${otherWorkbookId}/dashboard`)
        .set(bearer(t.admin.token))
        .send(body);
      expect(missing.status).toBe(404);
      const publishForbidden = await t
        .http()
        .post(`${base()}/${wb.id}/publish`)
        .set(bearer(viewer.token))
        .send({ workbookId: wb.id, config: {} });
      expect(publishForbidden.status).toBe(403);
      const publishMissing = await t
        .http()
        .post(`${base(otherDeploymentId)}/${otherWorkbookId}/publish`)
        .set(bearer(t.admin.token))
        .send({ workbookId: otherWorkbookId, config: {} });
      expect(publishMissing.status).toBe(404);
      expect(
        await t.sql(`SELECT id FROM dashboards WHERE workbook_id = ANY($1)`, [[wb.id, otherWorkbookId]]),
      ).toEqual([]);
    });

    it('publishes a config, then the draft, bumping versionNumber on the same dashboard', async () => {
      const wb = await createWorkbook({ name: 'Published' });
      const url = `${base()}/${wb.id}/publish`;
      const none = await t.http().post(url).set(bearer(t.admin.token)).send({ workbookId: wb.id });
      expect(none.status).toBe(400);
      expectErrorShape(none.body, 400, 'nothing_to_publish');

      const config = { title: 'v1', widgets: [widget('w1', 'TABS_CONTAINER')] };
      const first = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, config, title: 'Board' });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: expect.any(Number),
        publicId: expect.stringMatching(/^[A-Za-z0-9]{12}$/),
        deploymentId,
        workbookId: wb.id,
        status: 'published',
        allowEmbed: false,
        config,
        versionNumber: 1,
        versionId: first.body.id,
        reportSnapshots: [],
        title: 'Board',
        createdBy: t.admin.userId,
      });

      const draft = { title: 'v2', widgets: [widget('w2', 'TEXT')] };
      await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft: draft });
      const second = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, allowEmbed: true, dashboardId: first.body.id });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        id: first.body.id,
        publicId: first.body.publicId,
        versionNumber: 2,
        config: draft,
        title: 'Board',
        allowEmbed: true,
      });

      const read = await t.http().get(`${base()}/${wb.id}`).set(bearer(t.admin.token));
      expect(read.body.dashboardPublished).toEqual(draft);
      expect(read.body.publishedDashboard).toEqual(second.body);
      expect(await t.sql(`SELECT version_number FROM dashboards WHERE workbook_id = $1`, [wb.id])).toEqual([
        { version_number: 2 },
      ]);
    });

    it('answers 400 for a mismatched workbookId, a draft widget without id, and a bad config', async () => {
      const wb = await createWorkbook({ name: 'Checks' });
      const url = `${base()}/${wb.id}/publish`;
      const mismatch = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id + 1000, config: {} });
      expect(mismatch.status).toBe(400);
      expectErrorShape(mismatch.body, 400, 'workbook_id_mismatch');

      await t
        .http()
        .put(`${base()}/${wb.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft: { widgets: [widget(undefined)] } });
      const noId = await t.http().post(url).set(bearer(t.admin.token)).send({ workbookId: wb.id });
      expect(noId.status).toBe(400);
      expect(JSON.stringify(noId.body.message)).toContain('dashboardDraft.widgets.0.id');

      const badConfig = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, config: { widgets: [widget(undefined)] } });
      expect(badConfig.status).toBe(400);
      expect(JSON.stringify(badConfig.body.message)).toContain('config.widgets.0.id');

      const missingWorkbookId = await t.http().post(url).set(bearer(t.admin.token)).send({ config: {} });
      expect(missingWorkbookId.status).toBe(400);
      expect(await t.sql(`SELECT id FROM dashboards WHERE workbook_id = $1`, [wb.id])).toEqual([]);

      const published = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, config: {} });
      const wrongDashboard = await t
        .http()
        .post(url)
        .set(bearer(t.admin.token))
        .send({ workbookId: wb.id, config: {}, dashboardId: published.body.id + 1000 });
      expect(wrongDashboard.status).toBe(404);
      expectErrorShape(wrongDashboard.body, 404, 'dashboard_not_found');
    });

    it('keeps TABS_CONTAINER out of the OpenAPI document while accepting it', async () => {
      const res = await t.http().get('/api/v1/spec').set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      const schemas = res.body.components.schemas;
      expect(schemas.DashboardWidgetType.enum).toEqual(ADVERTISED);
      expect(JSON.stringify(res.body)).not.toContain('TABS_CONTAINER');
      const widgetSchema = schemas.DashboardWidgetInputDto;
      expect(JSON.stringify(widgetSchema)).toContain('DashboardWidgetType');
      const ops = Object.values(res.body.paths as Record<string, Record<string, { operationId: string }>>)
        .flatMap((item) => Object.values(item))
        .map((op) => op.operationId);
      expect(ops).toEqual(
        expect.arrayContaining([
          'getWorkbooks',
          'createWorkbook',
          'getWorkbook',
          'updateWorkbook',
          'deleteWorkbook',
          'upsertWorkbookBySlug',
          'duplicateWorkbook',
          'updateWorkbookDashboard',
          'publishDashboard',
        ]),
      );
    });
  });

  describe('POST /workbooks/{workbookId}/duplicate', () => {
    let folder: number;
    let source: Workbook;
    let r1: number;
    let r2: number;
    let outside: number;

    beforeAll(async () => {
      folder = await insertFolder('Duplicates');
      source = await createWorkbook({ name: 'Original', folderId: folder, meta: { theme: 'dark' } });
      r1 = await insertReport(source.id, 'First', { publicId: 'AbCdEfGh1234', folderId: folder });
      r2 = await insertReport(source.id, 'Second');
      const stranger = await createWorkbook({ name: 'Stranger' });
      outside = await insertReport(stranger.id, 'Outside');
      const config = (title: string) => ({
        title,
        widgets: [
          widget('c1', 'CHART', { config: { reportId: r1 } }),
          widget('c2', 'CHART', { config: { series: [{ reportId: r2, label: 'x' }], reportId: outside } }),
          widget('t1', 'TEXT', { config: { text: 'hello', reportId: String(r1) } }),
        ],
      });
      await t
        .http()
        .put(`${base()}/${source.id}/dashboard`)
        .set(bearer(t.admin.token))
        .send({ dashboardDraft: config('draft') });
      await t
        .http()
        .post(`${base()}/${source.id}/publish`)
        .set(bearer(t.admin.token))
        .send({ workbookId: source.id, config: config('published'), allowEmbed: true, title: 'Live' });
      await grant(viewer, 'Workbook', source.id, 'WorkbookEdit');
      await t.sql(`INSERT INTO report_views (report_id, user_id, last_viewed_at) VALUES ($1, $2, now())`, [
        r1,
        t.admin.userId,
      ]);
    });

    it('copies the workbook, its reports and dashboards with re-pointed references, and nothing else', async () => {
      const res = await t.http().post(`${base()}/${source.id}/duplicate`).set(bearer(explorer.token));
      expect(res.status).toBe(200);
      const copy = res.body as Workbook;
      expect(copy).toMatchObject({
        name: 'Copy of Original',
        slug: null,
        meta: { theme: 'dark' },
        folderId: folder,
        userId: explorer.userId,
      });
      expect(copy.id).not.toBe(source.id);

      const reports = await t.sql<{
        id: number;
        name: string;
        public_id: string | null;
        folder_id: number | null;
        sql_query: string;
        meta: unknown;
        user_id: number;
      }>(
        `SELECT id, name, public_id, folder_id, sql_query, meta, user_id FROM reports WHERE workbook_id = $1 ORDER BY name`,
        [copy.id],
      );
      expect(reports).toHaveLength(2);
      const [first, second] = reports;
      expect(first).toMatchObject({
        name: 'First',
        folder_id: folder,
        sql_query: 'SELECT 1',
        meta: { chart: 'bar' },
      });
      expect(first.public_id).toMatch(/^[A-Za-z0-9]{12}$/);
      expect(first.public_id).not.toBe('AbCdEfGh1234');
      expect(second).toMatchObject({
        name: 'Second',
        public_id: null,
        folder_id: null,
        user_id: explorer.userId,
      });
      expect([first.id, second.id]).not.toContain(r1);

      const expected = (title: string) => ({
        title,
        widgets: [
          widget('c1', 'CHART', { config: { reportId: first.id } }),
          widget('c2', 'CHART', {
            config: { series: [{ reportId: second.id, label: 'x' }], reportId: outside },
          }),
          widget('t1', 'TEXT', { config: { text: 'hello', reportId: String(r1) } }),
        ],
      });
      expect(copy.dashboardDraft).toEqual(expected('draft'));
      expect(copy.dashboardPublished).toEqual(expected('published'));
      const published = copy.publishedDashboard as Record<string, unknown>;
      const original = (await t.http().get(`${base()}/${source.id}`).set(bearer(t.admin.token)))
        .body as Workbook;
      expect(published).toMatchObject({
        allowEmbed: false,
        versionNumber: 1,
        title: 'Live',
        workbookId: copy.id,
      });
      expect(published.publicId).not.toBe(original.publishedDashboard?.publicId);
      expect(original.publishedDashboard).toMatchObject({ allowEmbed: true });

      expect(
        await t.sql(`SELECT id FROM policies WHERE resource_type = 'Workbook' AND resource_id = $1`, [
          String(copy.id),
        ]),
      ).toEqual([]);
      expect(
        await t.sql(`SELECT report_id FROM report_views WHERE report_id = ANY($1)`, [[first.id, second.id]]),
      ).toEqual([]);
      // The source is untouched.
      expect(
        await t.sql(`SELECT count(*)::int AS n FROM reports WHERE workbook_id = $1`, [source.id]),
      ).toEqual([{ n: 2 }]);
    });

    it('places the copy at the root when the caller cannot edit the source folder', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      await grant(user, 'Workbook', source.id, 'WorkbookRead');
      await grant(user, 'Global', '*', 'WorkbookEdit');
      const res = await t.http().post(`${base()}/${source.id}/duplicate`).set(bearer(user.token)).send({});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ folderId: null, folderPath: [], userId: user.userId });
      const reports = await t.sql(`SELECT folder_id FROM reports WHERE workbook_id = $1`, [res.body.id]);
      expect(reports).toEqual([{ folder_id: null }, { folder_id: null }]);
    });

    it('answers 403 to a Viewer, and to shared: true', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM workbooks`);
      const res = await t.http().post(`${base()}/${source.id}/duplicate`).set(bearer(viewer.token)).send({});
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      const shared = await t
        .http()
        .post(`${base()}/${source.id}/duplicate`)
        .set(bearer(t.admin.token))
        .send({ shared: true });
      expect(shared.status).toBe(403);
      expectErrorShape(shared.body, 403, 'shared_workspace_unavailable');
      expect(await t.sql(`SELECT count(*)::int AS n FROM workbooks`)).toEqual(before);
    });

    it('answers 404 for another account’s workbook and 400 for a bad body', async () => {
      const missing = await t
        .http()
        .post(`${base(otherDeploymentId)}/${otherWorkbookId}/duplicate`)
        .set(bearer(t.admin.token));
      expect(missing.status).toBe(404);
      const bad = await t
        .http()
        .post(`${base()}/${source.id}/duplicate`)
        .set(bearer(t.admin.token))
        .send({ shared: 'yes' });
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'validation_failed');
    });
  });
});
