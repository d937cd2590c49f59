import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { ReportViews } from '../../src/modules/reports/report-views.js';
import {
  grantRole,
  insertFolder,
  insertPlacement,
  insertReport,
  insertWorkbook,
  newDeployment,
  newReport,
  reportsPath,
  type ReportBody,
} from '../support/reports.js';

const BAD_IDS = ['abc', '0'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const legacyId = (id: number) => `R${String(id).padStart(11, '0')}`;

type Body = Record<string, unknown>;

describe('reports', () => {
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;
  let viewer: Actor;
  let noRole: Actor;
  let globex: Actor;
  let globexDeploymentId: number;
  let globexReport: ReportBody;

  beforeAll(async () => {
    t = await startApp();
    deploymentId = await newDeployment(t, t.admin, 'Reports');
    otherDeploymentId = await newDeployment(t, t.admin, 'Reports elsewhere');
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'], firstName: 'Vic' });
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
    globex = await newAccount(t, 'globex');
    globexDeploymentId = await newDeployment(t, globex, 'Globex');
    globexReport = await newReport(t, globex, globexDeploymentId, { name: 'Globex report' });
  });
  afterAll(() => t.close());

  const as = (actor: Actor = t.admin) => bearer(actor.token);
  const list = (
    query: Record<string, unknown>,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) => t.http().get(reportsPath(dep)).query(query).set(as(actor));
  const get = (id: number | string, actor: Actor = t.admin, dep: number | string = deploymentId) =>
    t
      .http()
      .get(reportsPath(dep, `/${id}`))
      .set(as(actor));
  const create = (body: unknown, actor: Actor = t.admin, dep: number | string = deploymentId) =>
    t
      .http()
      .post(reportsPath(dep))
      .set(as(actor))
      .send(body as Body);
  const update = (
    id: number | string,
    body: unknown,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) =>
    t
      .http()
      .put(reportsPath(dep, `/${id}`))
      .set(as(actor))
      .send(body as Body);
  const remove = (id: number | string, actor: Actor = t.admin, dep: number | string = deploymentId) =>
    t
      .http()
      .delete(reportsPath(dep, `/${id}`))
      .set(as(actor));
  const upsert = (
    publicId: string,
    body: unknown,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) =>
    t
      .http()
      .put(reportsPath(dep, `/by-public-id/${publicId}`))
      .set(as(actor))
      .send(body as Body);

  const reportRow = async (id: number) =>
    (await t.sql<Record<string, unknown>>(`SELECT * FROM reports WHERE id = $1`, [id]))[0];
  const ids = (body: { items: Array<{ id: number }> }) => body.items.map((r) => r.id);

  describe('the Report shape', () => {
    it('has every field with the right types and nullability', async () => {
      const folder = await insertFolder(t, t.admin, deploymentId, 'Finance');
      const sub = await insertFolder(t, t.admin, deploymentId, 'Monthly', folder);
      const workbook = await insertWorkbook(t, t.admin, deploymentId, 'Book');
      const pivotItems = {
        columns: ['orders.month'],
        measures: ['orders.revenue'],
        rows: ['orders.region'],
        filters: [],
        measuresAxis: 'columns',
        measuresPosition: 'after',
      };
      const res = await create({
        name: '  Revenue  ',
        title: 'Revenue by month',
        description: 'All regions',
        jsonQuery: '{"measures":["orders.revenue"]}',
        sqlQuery: 'SELECT 1',
        pythonCode: 'output = len(rows)',
        meta: { chart: 'bar', nested: { a: [1, 2] } },
        pivotItems,
        folderId: sub,
        workbookId: workbook,
        publicId: 'RevByMonth01',
        source: 'GOOGLE_SHEETS',
      });
      expect(res.status).toBe(200);
      const body = res.body as ReportBody;
      const owner = {
        id: t.admin.userId,
        email: t.admin.email,
        firstName: body.user.firstName,
        picture: null,
      };
      expect([null, 'string']).toContain(body.user.firstName === null ? null : typeof body.user.firstName);
      expect(body).toEqual({
        id: expect.any(Number),
        publicId: 'RevByMonth01',
        deploymentId,
        userId: t.admin.userId,
        user: owner,
        refreshedByUser: owner,
        name: 'Revenue',
        type: 'REPORT',
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        canEdit: true,
        canManage: true,
        createdBy: t.admin.userId,
        description: 'All regions',
        title: 'Revenue by month',
        endResultCell: null,
        resultLocation: null,
        externalWorkbookId: null,
        externalWorkbookPlacements: [],
        folderId: sub,
        folderPath: [
          { id: folder, name: 'Finance' },
          { id: sub, name: 'Monthly' },
        ],
        jsonQuery: '{"measures":["orders.revenue"]}',
        sqlQuery: 'SELECT 1',
        pythonCode: 'output = len(rows)',
        meta: { chart: 'bar', nested: { a: [1, 2] } },
        pivotItems,
        refreshedBy: null,
        rolesWithAccess: expect.any(Array),
        source: 'GOOGLE_SHEETS',
        version: 1,
        workbookId: workbook,
      });
      // GET answers the same shape.
      const got = await get(body.id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(body);
    });

    it('a minimal report: defaults and nulls', async () => {
      const res = await create({});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'Untitled report',
        type: 'REPORT',
        title: null,
        description: null,
        jsonQuery: null,
        sqlQuery: null,
        pythonCode: null,
        meta: null,
        pivotItems: null,
        folderId: null,
        folderPath: [],
        workbookId: null,
        source: null,
        version: 1,
        refreshedBy: null,
        externalWorkbookPlacements: [],
      });
      expect(res.body.publicId).toMatch(/^[0-9A-Za-z]{12}$/);
    });

    it('synthesizes R + 11 digits as the publicId of a report stored without one', async () => {
      const id = await insertReport(t, t.admin, deploymentId, { name: 'Made long ago', publicId: null });
      const res = await get(id);
      expect(res.status).toBe(200);
      expect(res.body.publicId).toBe(legacyId(id));
      expect(res.body.publicId).toHaveLength(12);
      expect(res.body.publicId).toMatch(/^R\d{11}$/);
      expect(res.body.user).toEqual(res.body.refreshedByUser);
      expect(res.body.refreshedBy).toBeNull();
    });

    it('lists placements with their fields', async () => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'Placed' });
      await insertPlacement(t, t.admin.accountId, r.id, {
        placementId: 'p-1',
        externalWorkbookId: 'sheet-abc',
        resultLocation: 'Data!A1:B2',
        sheetId: '0',
        sheetName: 'Data',
        anchorCell: 'A1',
        endResultCell: 'B2',
        placedAt: '2025-05-05T05:05:05.123Z',
      });
      const res = await get(r.id);
      expect(res.body.externalWorkbookPlacements).toEqual([
        {
          id: 'p-1',
          workbookId: 'sheet-abc',
          resultLocation: 'Data!A1:B2',
          anchorCell: 'A1',
          endResultCell: 'B2',
          host: null,
          sheetId: '0',
          sheetName: 'Data',
          workbookName: null,
          placedAt: '2025-05-05T05:05:05.123Z',
          placedByUserId: null,
          refreshedAt: null,
          refreshedByUserId: null,
        },
      ]);
      expect(res.body).toMatchObject({
        externalWorkbookId: 'sheet-abc',
        resultLocation: 'Data!A1:B2',
        endResultCell: 'B2',
      });
    });
  });

  describe('GET .../reports (list)', () => {
    let pagingDeployment: number;
    let all: number[];

    beforeAll(async () => {
      pagingDeployment = await newDeployment(t, t.admin, 'Paging');
      // Ties on every sort column, so the id must break them for pages to be exact.
      const rows: Array<[string, string, string]> = [
        ['alpha', '2025-01-01T00:00:00Z', '2025-03-01T00:00:00Z'],
        ['Bravo', '2025-01-01T00:00:00Z', '2025-03-01T00:00:00Z'],
        ['alpha', '2025-01-02T00:00:00Z', '2025-02-01T00:00:00Z'],
        ['charlie', '2025-01-02T00:00:00Z', '2025-03-01T00:00:00Z'],
        ['Delta', '2025-01-03T00:00:00Z', '2025-01-01T00:00:00Z'],
        ['ALPHA team', '2025-01-03T00:00:00Z', '2025-01-01T00:00:00Z'],
        ['50% margin', '2025-01-04T00:00:00Z', '2025-04-01T00:00:00Z'],
        ['echo', '2025-01-04T00:00:00.500Z', '2025-04-01T00:00:00Z'],
        ['alpha', '2025-01-05T00:00:00Z', '2025-01-01T00:00:00Z'],
      ];
      all = [];
      for (const [name, createdAt, updatedAt] of rows) {
        all.push(await insertReport(t, t.admin, pagingDeployment, { name, createdAt, updatedAt }));
      }
    });

    const expectedOrder = async (column: string, direction: 'ASC' | 'DESC') =>
      (
        await t.sql<{ id: number }>(
          `SELECT id FROM reports WHERE deployment_id = $1 ORDER BY ${column} ${direction}, id ${direction}`,
          [pagingDeployment],
        )
      ).map((r) => r.id);

    async function pageThrough(query: Record<string, unknown>, size: number): Promise<number[]> {
      const seen: number[] = [];
      let after: string | undefined;
      for (let page = 0; page < 20; page++) {
        const res = await list(
          { ...query, first: size, ...(after ? { after } : {}) },
          t.admin,
          pagingDeployment,
        );
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(size);
        expect(res.body.pageInfo.hasPreviousPage).toBe(page > 0);
        expect(res.body.count).toBe(all.length);
        expect(res.body.data).toEqual(res.body.items);
        seen.push(...ids(res.body));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
        expect(after).toEqual(expect.any(String));
      }
      return seen;
    }

    describe.each([
      ['createdAt', 'r.created_at'],
      ['updatedAt', 'r.updated_at'],
      ['name', 'r.name'],
    ])('sortBy=%s', (sortBy, column) => {
      it.each(['ASC', 'DESC'] as const)(
        'pages with first/after %s over more than two pages, no gaps or duplicates',
        async (direction) => {
          const expected = await expectedOrder(column.replace('r.', ''), direction);
          expect(expected).toHaveLength(all.length);
          const seen = await pageThrough({ sortBy, sortDirection: direction }, 2);
          expect(seen).toEqual(expected);
          const single = await list(
            { sortBy, sortDirection: direction, first: 1000 },
            t.admin,
            pagingDeployment,
          );
          expect(ids(single.body)).toEqual(expected);
        },
      );
    });

    it('sorts by createdAt DESC by default, and by name ASC when sortBy=name', async () => {
      const byDefault = await list({}, t.admin, pagingDeployment);
      expect(ids(byDefault.body)).toEqual(await expectedOrder('created_at', 'DESC'));
      expect(byDefault.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      expect(byDefault.body.pagination).toEqual({ total: all.length, offset: 0, limit: 100 });
      const byName = await list({ sortBy: 'name' }, t.admin, pagingDeployment);
      expect(ids(byName.body)).toEqual(await expectedOrder('name', 'ASC'));
    });

    it('search is a case-insensitive substring of the name, with % and _ taken literally', async () => {
      const res = await list({ search: 'ALPHA', first: 1000 }, t.admin, pagingDeployment);
      expect(res.status).toBe(200);
      const names = res.body.items.map((r: ReportBody) => r.name).sort();
      expect(names).toEqual(['ALPHA team', 'alpha', 'alpha', 'alpha'].sort());
      expect(res.body.count).toBe(4);
      const percent = await list({ search: '%' }, t.admin, pagingDeployment);
      expect(percent.body.items.map((r: ReportBody) => r.name)).toEqual(['50% margin']);
      const underscore = await list({ search: '_' }, t.admin, pagingDeployment);
      expect(underscore.body.items).toEqual([]);
    });

    it('legacy limit/page pages by number and fills data, count and pagination', async () => {
      const expected = await expectedOrder('name', 'ASC');
      const res = await list({ sortBy: 'name', limit: 3, page: 2 }, t.admin, pagingDeployment);
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual(expected.slice(3, 6));
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(all.length);
      expect(res.body.pagination).toEqual({ total: all.length, offset: 3, limit: 3 });
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      const last = await list({ sortBy: 'name', limit: 3, page: 3 }, t.admin, pagingDeployment);
      expect(ids(last.body)).toEqual(expected.slice(6, 9));
      expect(last.body.pageInfo.hasNextPage).toBe(false);
      const onlyLimit = await list({ sortBy: 'name', limit: 4 }, t.admin, pagingDeployment);
      expect(ids(onlyLimit.body)).toEqual(expected.slice(0, 4));
    });

    it.each<[string, Record<string, unknown>]>([
      ['first with limit', { first: 2, limit: 2 }],
      ['after with page', { after: 'abc', page: 1 }],
      ['first with page', { first: 2, page: 2 }],
    ])('answers 400 pagination_conflict for %s', async (_label, query) => {
      const res = await list(query, t.admin, pagingDeployment);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'pagination_conflict');
    });

    it('answers 400 cursor_unavailable_for_sort for sortBy=lastViewedAt with after, saying why', async () => {
      const first = await list({ sortBy: 'createdAt', first: 1 }, t.admin, pagingDeployment);
      const res = await list(
        { sortBy: 'lastViewedAt', after: first.body.pageInfo.endCursor },
        t.admin,
        pagingDeployment,
      );
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'cursor_unavailable_for_sort');
      expect(res.body.message).toMatch(/lastViewedAt/);
      expect(res.body.message).toMatch(/cursor/i);
      expect(res.body.message).toMatch(/limit/);
    });

    it.each<[string, Record<string, unknown>]>([
      ['an unknown sortBy', { sortBy: 'title' }],
      ['a lower-case direction', { sortDirection: 'asc' }],
      ['first=0', { first: 0 }],
      ['first above the maximum', { first: 1001 }],
      ['a non-numeric first', { first: 'ten' }],
      ['a garbage cursor', { after: 'not a cursor' }],
      ['a folderId that is not an id', { folderId: 'x' }],
      ['an unknown query parameter', { colour: 'red' }],
      ['page=0', { page: 0 }],
    ])('answers 400 for %s', async (_label, query) => {
      const res = await list(query, t.admin, pagingDeployment);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400);
    });

    const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');

    it.each<[string, unknown[]]>([
      ['a name where a date belongs', ['alpha', 1]],
      ['a name that Date.parse reads as a year ("50% margin")', ['50% margin', 1]],
      ['a number where a date belongs', [12345, 1]],
      ['a string where the id belongs', ['2025-01-01T00:00:00.000Z', 'x']],
      ['too few values', ['2025-01-01T00:00:00.000Z']],
    ])('answers 400 invalid_cursor for a createdAt cursor holding %s (never 500)', async (_label, values) => {
      const res = await list({ sortBy: 'createdAt', after: cursor(values) }, t.admin, pagingDeployment);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_cursor');
    });

    it('a cursor of one sort is refused by another (name cursor with sortBy=createdAt)', async () => {
      const byName = await list({ sortBy: 'name', first: 1 }, t.admin, pagingDeployment);
      expect(byName.body.items[0].name).toBe('50% margin');
      const res = await list(
        { sortBy: 'createdAt', after: byName.body.pageInfo.endCursor },
        t.admin,
        pagingDeployment,
      );
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_cursor');
    });

    describe('filters', () => {
      let filterDeployment: number;
      let folder: number;
      let sub: number;
      let workbook: number;
      let inFolder: number;
      let inSub: number;
      let inWorkbook: number;
      let placed: number;
      let placedElsewhere: number;

      beforeAll(async () => {
        filterDeployment = await newDeployment(t, t.admin, 'Filters');
        folder = await insertFolder(t, t.admin, filterDeployment, 'Folder');
        sub = await insertFolder(t, t.admin, filterDeployment, 'Sub', folder);
        workbook = await insertWorkbook(t, t.admin, filterDeployment, 'Workbook');
        inFolder = (await newReport(t, t.admin, filterDeployment, { name: 'in folder', folderId: folder }))
          .id;
        inSub = (await newReport(t, t.admin, filterDeployment, { name: 'in sub', folderId: sub })).id;
        inWorkbook = (
          await newReport(t, t.admin, filterDeployment, { name: 'in workbook', workbookId: workbook })
        ).id;
        placed = (await newReport(t, t.admin, filterDeployment, { name: 'placed' })).id;
        placedElsewhere = (await newReport(t, t.admin, filterDeployment, { name: 'placed elsewhere' })).id;
        await insertPlacement(t, t.admin.accountId, placed, {
          externalWorkbookId: 'ext-1',
          resultLocation: 'Sheet1!A1',
        });
        await insertPlacement(t, t.admin.accountId, placed, {
          externalWorkbookId: 'ext-2',
          resultLocation: 'Sheet1!A1',
        });
        await insertPlacement(t, t.admin.accountId, placedElsewhere, {
          externalWorkbookId: 'ext-2',
          resultLocation: 'Sheet1!A1',
        });
      });

      it('folderId keeps the reports directly in that folder', async () => {
        const res = await list({ folderId: folder }, t.admin, filterDeployment);
        expect(ids(res.body)).toEqual([inFolder]);
        expect(res.body.count).toBe(1);
        expect(ids((await list({ folderId: sub }, t.admin, filterDeployment)).body)).toEqual([inSub]);
      });

      it('workbookId keeps the reports of that workbook', async () => {
        const res = await list({ workbookId: workbook }, t.admin, filterDeployment);
        expect(ids(res.body)).toEqual([inWorkbook]);
      });

      it('externalWorkbookId keeps the reports placed in that spreadsheet', async () => {
        expect(ids((await list({ externalWorkbookId: 'ext-1' }, t.admin, filterDeployment)).body)).toEqual([
          placed,
        ]);
        expect(
          ids((await list({ externalWorkbookId: 'ext-2', sortBy: 'name' }, t.admin, filterDeployment)).body),
        ).toEqual([placed, placedElsewhere]);
        expect((await list({ externalWorkbookId: 'nowhere' }, t.admin, filterDeployment)).body.items).toEqual(
          [],
        );
      });

      it('filters combine with search', async () => {
        const res = await list(
          { externalWorkbookId: 'ext-2', search: 'ELSEWHERE' },
          t.admin,
          filterDeployment,
        );
        expect(ids(res.body)).toEqual([placedElsewhere]);
      });

      it('lists only the reports of the deployment in the path', async () => {
        const res = await list({ first: 1000 }, t.admin, filterDeployment);
        expect(ids(res.body).sort((a, b) => a - b)).toEqual(
          [inFolder, inSub, inWorkbook, placed, placedElsewhere].sort((a, b) => a - b),
        );
      });
    });

    describe('sortBy=lastViewedAt (the caller’s own views)', () => {
      let viewsDeployment: number;
      let a: number, b: number, c: number, d: number;
      beforeAll(async () => {
        viewsDeployment = await newDeployment(t, t.admin, 'Views');
        a = (await newReport(t, t.admin, viewsDeployment, { name: 'A' })).id;
        b = (await newReport(t, t.admin, viewsDeployment, { name: 'B' })).id;
        c = (await newReport(t, t.admin, viewsDeployment, { name: 'C' })).id;
        d = (await newReport(t, t.admin, viewsDeployment, { name: 'D' })).id;
        for (const id of [c, a, b]) {
          expect((await get(id, viewer, viewsDeployment)).status).toBe(200);
        }
        // Someone else's view does not count for the viewer.
        expect((await get(d, t.admin, viewsDeployment)).status).toBe(200);
      });

      it('orders by when the caller last viewed each report, never-viewed last', async () => {
        const desc = await list({ sortBy: 'lastViewedAt' }, viewer, viewsDeployment);
        expect(desc.status).toBe(200);
        expect(ids(desc.body)).toEqual([b, a, c, d]);
        const asc = await list({ sortBy: 'lastViewedAt', sortDirection: 'ASC' }, viewer, viewsDeployment);
        expect(ids(asc.body)).toEqual([c, a, b, d]);
        const admin = await list({ sortBy: 'lastViewedAt' }, t.admin, viewsDeployment);
        expect(ids(admin.body)[0]).toBe(d);
      });

      it('a new view moves the report to the front', async () => {
        expect((await get(c, viewer, viewsDeployment)).status).toBe(200);
        const res = await list({ sortBy: 'lastViewedAt' }, viewer, viewsDeployment);
        expect(ids(res.body)).toEqual([c, b, a, d]);
      });

      it('pages with limit/page, and with first but without cursors', async () => {
        const page2 = await list({ sortBy: 'lastViewedAt', limit: 2, page: 2 }, viewer, viewsDeployment);
        expect(page2.status).toBe(200);
        expect(page2.body.items).toHaveLength(2);
        const first = await list({ sortBy: 'lastViewedAt', first: 2 }, viewer, viewsDeployment);
        expect(first.status).toBe(200);
        expect(first.body.items).toHaveLength(2);
        expect(first.body.pageInfo).toMatchObject({ hasNextPage: true, startCursor: null, endCursor: null });
      });
    });

    it("answers 404 for another account's deployment and for a deployment that does not exist", async () => {
      for (const dep of [globexDeploymentId, 2_000_000_000]) {
        const res = await list({}, t.admin, dep);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });
  });

  describe('GET .../reports/{reportId}', () => {
    it('records the caller’s view in report_views, and a later view moves it forward', async () => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'Viewed' });
      // Views are buffered in memory and written every REPORT_VIEW_FLUSH_MS; write them now.
      const views = async () => {
        await t.app.get(ReportViews).flush();
        return t.sql<{ user_id: number; last_viewed_at: Date }>(
          `SELECT user_id, last_viewed_at FROM report_views WHERE report_id = $1 ORDER BY user_id`,
          [r.id],
        );
      };
      expect(await views()).toEqual([]);
      expect((await list({ first: 1000 })).status).toBe(200);
      expect(await views()).toEqual([]);
      expect((await get(r.id, viewer)).status).toBe(200);
      const [first] = await views();
      expect(first.user_id).toBe(viewer.userId);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await get(r.id, viewer)).status).toBe(200);
      const [second] = await views();
      expect(second.last_viewed_at.getTime()).toBeGreaterThan(first.last_viewed_at.getTime());
      expect((await get(r.id)).status).toBe(200);
      expect((await views()).map((v) => v.user_id).sort()).toEqual([t.admin.userId, viewer.userId].sort());
    });

    it('does not record a view of a report it answers 404 for', async () => {
      const elsewhere = await newReport(t, t.admin, otherDeploymentId, { name: 'Elsewhere' });
      const res = await get(elsewhere.id);
      expect(res.status).toBe(404);
      await t.app.get(ReportViews).flush();
      expect(await t.sql(`SELECT 1 FROM report_views WHERE report_id = $1`, [elsewhere.id])).toEqual([]);
    });
  });

  describe('POST .../reports (create)', () => {
    it('stores the report and answers 200', async () => {
      const res = await create({ name: 'Stored', source: 'PLAYGROUND', meta: { k: 1 } });
      expect(res.status).toBe(200);
      const row = await reportRow(res.body.id);
      expect(row).toMatchObject({
        account_id: t.admin.accountId,
        deployment_id: deploymentId,
        name: 'Stored',
        source: 'PLAYGROUND',
        meta: { k: 1 },
        version: 1,
        user_id: t.admin.userId,
        created_by: t.admin.userId,
        public_id: null,
      });
    });

    it.each(['D3', 'EXCEL', 'GOOGLE_SHEETS', 'PLAYGROUND'])('accepts source %s', async (source) => {
      const res = await create({ source });
      expect(res.status).toBe(200);
      expect(res.body.source).toBe(source);
    });

    it.each<[string, Body, string]>([
      ['a blank name', { name: '   ' }, 'blank_name'],
      ['an unknown source', { source: 'HOST_A' }, 'validation_failed'],
      ['an unknown field', { ephemeral: 1 }, 'validation_failed'],
      ['a number as name', { name: 5 }, 'validation_failed'],
      ['meta that is not an object', { meta: 'x' }, 'validation_failed'],
      ['pivotItems without its arrays', { pivotItems: { columns: [] } }, 'validation_failed'],
      ['a publicId of 11 characters', { publicId: 'abcdefghijk' }, 'validation_failed'],
      ['a publicId of 13 characters', { publicId: 'abcdefghijklm' }, 'validation_failed'],
      ['a publicId with a dash', { publicId: 'abcdef-ghijk' }, 'validation_failed'],
      ['a publicId of the reserved shape R + 11 digits', { publicId: 'R00000000042' }, 'public_id_reserved'],
      [
        'the reserved shape R + 11 digits beyond any report id',
        { publicId: 'R99999999999' },
        'public_id_reserved',
      ],
      ['the reserved shape R + 11 zeros', { publicId: 'R00000000000' }, 'public_id_reserved'],
      ['a folderId of 0', { folderId: 0 }, 'validation_failed'],
    ])('answers 400 for %s and creates nothing', async (_label, body, code) => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM reports`);
      const res = await create(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
      expect(await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM reports`)).toEqual(before);
    });

    it('answers 409 public_id_taken for a publicId already used in the account', async () => {
      expect((await create({ publicId: 'TakenId00001' })).status).toBe(200);
      for (const dep of [deploymentId, otherDeploymentId]) {
        const res = await create({ publicId: 'TakenId00001' }, t.admin, dep);
        expect(res.status).toBe(409);
        expectErrorShape(res.body, 409, 'public_id_taken');
      }
      expect(await t.sql(`SELECT id FROM reports WHERE public_id = 'TakenId00001'`)).toHaveLength(1);
      // Another account may use the same id.
      expect((await create({ publicId: 'TakenId00001' }, globex, globexDeploymentId)).status).toBe(200);
    });

    it('answers 404 for a folder or workbook of another deployment', async () => {
      const folder = await insertFolder(t, t.admin, otherDeploymentId, 'Elsewhere');
      const workbook = await insertWorkbook(t, t.admin, otherDeploymentId, 'Elsewhere');
      for (const [body, code] of [
        [{ folderId: folder }, 'folder_not_found'],
        [{ workbookId: workbook }, 'workbook_not_found'],
        [{ folderId: 2_000_000_000 }, 'folder_not_found'],
      ] as const) {
        const res = await create(body);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, code);
      }
    });
  });

  describe('PUT .../reports/{reportId} (update)', () => {
    it('changes only the fields sent, bumps version and updatedAt', async () => {
      const r = await newReport(t, t.admin, deploymentId, {
        name: 'Before',
        title: 'Kept',
        description: 'Old description',
        meta: { a: 1 },
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await update(r.id, { description: 'New description', meta: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'Before',
        title: 'Kept',
        description: 'New description',
        meta: null,
        version: 2,
        createdAt: r.createdAt,
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(r.updatedAt));
      expect(await reportRow(r.id)).toMatchObject({
        name: 'Before',
        description: 'New description',
        version: 2,
      });
      const again = await update(r.id, { name: '  After  ', expectedVersion: 2 });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ name: 'After', version: 3 });
    });

    it('answers 409 version_conflict for a stale expectedVersion and changes nothing', async () => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'Versioned' });
      expect((await update(r.id, { title: 'v2' })).status).toBe(200);
      const before = await reportRow(r.id);
      const res = await update(r.id, { title: 'lost update', expectedVersion: 1 });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'version_conflict');
      expect(res.body.message).toContain('2');
      expect(await reportRow(r.id)).toEqual(before);
    });

    it('publicId is write-once: set once, then changing it is a 400', async () => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'No public id yet' });
      expect(r.publicId).toBe(legacyId(r.id));
      const set = await update(r.id, { publicId: 'SetOnce00001' });
      expect(set.status).toBe(200);
      expect(set.body.publicId).toBe('SetOnce00001');
      const same = await update(r.id, { publicId: 'SetOnce00001', title: 't' });
      expect(same.status).toBe(200);
      const before = await reportRow(r.id);
      for (const publicId of ['Changed00001', null]) {
        const res = await update(r.id, { publicId });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'public_id_immutable');
      }
      expect(await reportRow(r.id)).toEqual(before);
    });

    it.each(['R00000000042', 'R12345678901'])(
      'refuses the publicId %s of the reserved shape (400 public_id_reserved)',
      async (publicId) => {
        const r = await newReport(t, t.admin, deploymentId, { name: 'Reserved' });
        const res = await update(r.id, { publicId });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'public_id_reserved');
        expect((await reportRow(r.id)).public_id).toBeNull();
      },
    );

    it.each<[string, Body, string]>([
      ['a blank name', { name: ' ' }, 'blank_name'],
      ['an unknown field', { resultChecksum: 'x' }, 'validation_failed'],
      ['expectedVersion 0', { expectedVersion: 0 }, 'validation_failed'],
      ['expectedVersion as a string', { expectedVersion: '2' }, 'validation_failed'],
      ['source (create only)', { source: 'EXCEL' }, 'validation_failed'],
    ])('answers 400 for %s and changes nothing', async (_label, body, code) => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'Bad update' });
      const before = await reportRow(r.id);
      const res = await update(r.id, body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
      expect(await reportRow(r.id)).toEqual(before);
    });
  });

  describe('DELETE .../reports/{reportId}', () => {
    it('deletes the report with its placements, views and grants', async () => {
      const r = await newReport(t, t.admin, deploymentId, { name: 'Doomed' });
      await insertPlacement(t, t.admin.accountId, r.id, { externalWorkbookId: 'x', resultLocation: 'S!A1' });
      expect((await get(r.id, viewer)).status).toBe(200);
      const reader = await newUser(t, t.admin, { defaultRoles: [] });
      await grantRole(t, t.admin, reader, 'Reads the doomed report', [
        { resourceType: 'Report', resources: [String(r.id)], actions: ['ReportRead'] },
      ]);
      const res = await remove(r.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await t.sql(`SELECT 1 FROM reports WHERE id = $1`, [r.id])).toEqual([]);
      expect(await t.sql(`SELECT 1 FROM report_placements WHERE report_id = $1`, [r.id])).toEqual([]);
      expect(await t.sql(`SELECT 1 FROM report_views WHERE report_id = $1`, [r.id])).toEqual([]);
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE resource_type = 'Report' AND resource_id = $1`, [
          String(r.id),
        ]),
      ).toEqual([]);
      const again = await remove(r.id);
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'report_not_found');
      expect((await get(r.id)).status).toBe(404);
    });

    it('needs ReportManage: an Explorer (ReportEdit) gets 403 and the report stays', async () => {
      const explorer = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
      const r = await newReport(t, t.admin, deploymentId, { name: 'Guarded' });
      const res = await remove(r.id, explorer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(await reportRow(r.id)).toBeDefined();
    });

    it('an owner manages what they own', async () => {
      const explorer = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
      const own = await newReport(t, explorer, deploymentId, { name: 'Mine' });
      expect(own.canManage).toBe(true);
      const res = await remove(own.id, explorer);
      expect(res.status).toBe(200);
    });
  });

  describe('PUT .../reports/by-public-id/{publicId}', () => {
    it.each(['abcdefghijk', 'abcdefghijklm', 'abcdef-ghijk', 'abcdef_ghijk', 'abcdefghij%21'])(
      'answers 400 for the publicId %j',
      async (publicId) => {
        const res = await upsert(publicId, { name: 'x' });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400);
      },
    );

    it('creates, then updates the same report; source is kept from creation', async () => {
      const created = await upsert('Upsert000001', { name: 'First', source: 'EXCEL', title: 'T' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        publicId: 'Upsert000001',
        name: 'First',
        source: 'EXCEL',
        version: 1,
      });
      const updated = await upsert('Upsert000001', { name: 'Second', source: 'PLAYGROUND' });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        id: created.body.id,
        publicId: 'Upsert000001',
        name: 'Second',
        title: 'T',
        source: 'EXCEL',
        version: 2,
      });
      expect(await t.sql(`SELECT id FROM reports WHERE public_id = 'Upsert000001'`)).toEqual([
        { id: created.body.id },
      ]);
    });

    it('adopts the synthesized id of a report made before public ids', async () => {
      const id = await insertReport(t, t.admin, deploymentId, { name: 'Legacy', publicId: null });
      const res = await upsert(legacyId(id), { name: 'Adopted' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id, publicId: legacyId(id), name: 'Adopted' });
      expect((await reportRow(id)).public_id).toBe(legacyId(id));
      const again = await upsert(legacyId(id), { title: 'Still the same report' });
      expect(again.body.id).toBe(id);
    });

    it('answers 409 public_id_in_other_deployment for an id owned by another deployment', async () => {
      const elsewhere = await newReport(t, t.admin, otherDeploymentId, { publicId: 'Elsewhere001' });
      const before = await reportRow(elsewhere.id);
      const res = await upsert('Elsewhere001', { name: 'Hijack' });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'public_id_in_other_deployment');
      expect(await reportRow(elsewhere.id)).toEqual(before);
      expect(await t.sql(`SELECT 1 FROM reports WHERE public_id = 'Elsewhere001'`)).toHaveLength(1);
    });

    it('answers 400 public_id_mismatch when the body names another publicId', async () => {
      const res = await upsert('Mismatch0001', { publicId: 'Mismatch0002' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'public_id_mismatch');
      expect(await t.sql(`SELECT 1 FROM reports WHERE public_id LIKE 'Mismatch%'`)).toEqual([]);
    });

    it('parallel upserts of a new id create exactly one report; the others update it or get 409 upsert_branch_changed', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => upsert('Parallel0001', { name: `Writer ${i}` })),
      );
      for (const res of results) {
        expect([200, 409]).toContain(res.status);
        if (res.status === 409) expectErrorShape(res.body, 409, 'upsert_branch_changed');
      }
      expect(results.some((res) => res.status === 200)).toBe(true);
      const rows = await t.sql<{ id: number }>(`SELECT id FROM reports WHERE public_id = 'Parallel0001'`);
      expect(rows).toHaveLength(1);
      for (const res of results.filter((x) => x.status === 200)) expect(res.body.id).toBe(rows[0].id);
    });

    it('answers 403 to a Viewer and 404 for a deployment of another account', async () => {
      const forbidden = await upsert('ViewerTry001', { name: 'x' }, viewer);
      expect(forbidden.status).toBe(403);
      expectErrorShape(forbidden.body, 403, 'forbidden');
      const missing = await upsert('OtherAcct001', { name: 'x' }, t.admin, globexDeploymentId);
      expect(missing.status).toBe(404);
      expectErrorShape(missing.body, 404, 'deployment_not_found');
      expect(
        await t.sql(`SELECT 1 FROM reports WHERE public_id IN ('ViewerTry001', 'OtherAcct001')`),
      ).toEqual([]);
    });

    it('answers 400 for an unknown body field', async () => {
      const res = await upsert('UnknownFld01', { name: 'x', ephemeral: 1 });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  // A policy on every report (`"resources": ["All"]`), in an account of its own so the roles
  // listed elsewhere stay as they are.
  describe('a role on every report', () => {
    it('reads every report, later ones included, and is among the rolesWithAccess of each', async () => {
      const owner = await newAccount(t, 'every-report');
      const dep = await newDeployment(t, owner, 'Every report');
      const first = await newReport(t, owner, dep, { name: 'First' });
      const reader = await newUser(t, owner, { defaultRoles: [] });
      const roleId = await grantRole(t, owner, reader, 'Reads every report', [
        { resourceType: 'Report', resources: ['All'], actions: ['ReportRead'] },
      ]);
      const later = await newReport(t, owner, dep, { name: 'Later' });
      for (const report of [first, later]) {
        const res = await get(report.id, reader, dep);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ canEdit: false, canManage: false });
        const asOwner = await get(report.id, owner, dep);
        expect(asOwner.body.rolesWithAccess).toEqual([
          { id: roleId, name: 'Reads every report', actions: ['ReportRead'] },
        ]);
      }
    });
  });

  describe('access: canEdit, canManage, rolesWithAccess, grants', () => {
    let accessDeployment: number;
    let granted: ReportBody;
    let notGranted: ReportBody;
    let reader: Actor;
    let roleId: number;

    beforeAll(async () => {
      accessDeployment = await newDeployment(t, t.admin, 'Access');
      granted = await newReport(t, t.admin, accessDeployment, { name: 'Granted' });
      notGranted = await newReport(t, t.admin, accessDeployment, { name: 'Not granted' });
      reader = await newUser(t, t.admin, { defaultRoles: [] });
      roleId = await grantRole(t, t.admin, reader, 'Reads one report', [
        { resourceType: 'Report', resources: [String(granted.id)], actions: ['ReportRead'] },
      ]);
    });

    it('an admin can edit and manage and sees the custom roles with access', async () => {
      const res = await get(granted.id, t.admin, accessDeployment);
      expect(res.body).toMatchObject({ canEdit: true, canManage: true });
      expect(res.body.rolesWithAccess).toEqual([
        { id: roleId, name: 'Reads one report', actions: ['ReportRead'] },
      ]);
      const other = await get(notGranted.id, t.admin, accessDeployment);
      expect(other.body.rolesWithAccess).toEqual([]);
    });

    it('a Viewer can neither edit nor manage, and rolesWithAccess is null', async () => {
      const res = await get(granted.id, viewer, accessDeployment);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ canEdit: false, canManage: false, rolesWithAccess: null });
      const listed = await list({}, viewer, accessDeployment);
      expect(listed.status).toBe(200);
      for (const item of listed.body.items as ReportBody[]) {
        expect(item).toMatchObject({ canEdit: false, canManage: false, rolesWithAccess: null });
      }
      expect(ids(listed.body).sort()).toEqual([granted.id, notGranted.id].sort());
    });

    it('a Viewer gets 403 on create, update, upsert and delete', async () => {
      const before = await reportRow(granted.id);
      for (const res of [
        await create({ name: 'x' }, viewer, accessDeployment),
        await update(granted.id, { name: 'x' }, viewer, accessDeployment),
        await upsert('ViewerUps001', { name: 'x' }, viewer, accessDeployment),
        await remove(granted.id, viewer, accessDeployment),
      ]) {
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await reportRow(granted.id)).toEqual(before);
    });

    it('a ReportRead grant on one report reads that report only: 404 for others, absent from the list', async () => {
      const mine = await get(granted.id, reader, accessDeployment);
      expect(mine.status).toBe(200);
      expect(mine.body).toMatchObject({
        id: granted.id,
        canEdit: false,
        canManage: false,
        rolesWithAccess: null,
      });
      const theirs = await get(notGranted.id, reader, accessDeployment);
      expect(theirs.status).toBe(404);
      expectErrorShape(theirs.body, 404, 'report_not_found');
      const listed = await list({}, reader, accessDeployment);
      expect(listed.status).toBe(200);
      expect(ids(listed.body)).toEqual([granted.id]);
      expect(listed.body.count).toBe(1);
      const edit = await update(granted.id, { name: 'x' }, reader, accessDeployment);
      expect(edit.status).toBe(403);
    });

    it('a ReportEdit grant on one report lets the holder edit it but not others (404)', async () => {
      const editor = await newUser(t, t.admin, { defaultRoles: [] });
      await grantRole(t, t.admin, editor, 'Edits one report', [
        { resourceType: 'Report', resources: [String(granted.id)], actions: ['ReportEdit'] },
      ]);
      const ok = await update(granted.id, { title: 'Edited by grant' }, editor, accessDeployment);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ canEdit: true, canManage: false, title: 'Edited by grant' });
      const other = await update(notGranted.id, { title: 'no' }, editor, accessDeployment);
      expect(other.status).toBe(404);
      const del = await remove(granted.id, editor, accessDeployment);
      expect(del.status).toBe(403);
    });

    describe.each([
      ['FolderRead', 'FolderRead'],
      ['ReportRead', 'ReportRead'],
    ])('a %s grant on a folder', (_label, action) => {
      let top: number;
      let sub: number;
      let deep: number;
      let inSub: number;
      let inDeep: number;
      let outside: number;
      let user: Actor;

      beforeAll(async () => {
        top = await insertFolder(t, t.admin, accessDeployment, `Top ${action}`);
        sub = await insertFolder(t, t.admin, accessDeployment, 'Sub', top);
        deep = await insertFolder(t, t.admin, accessDeployment, 'Deep', sub);
        inSub = (await newReport(t, t.admin, accessDeployment, { name: 'In sub', folderId: sub })).id;
        inDeep = (await newReport(t, t.admin, accessDeployment, { name: 'In deep', folderId: deep })).id;
        outside = (await newReport(t, t.admin, accessDeployment, { name: 'Outside' })).id;
        user = await newUser(t, t.admin, { defaultRoles: [] });
        await grantRole(t, t.admin, user, `Folder ${action}`, [
          { resourceType: 'Folder', resources: [String(top)], actions: [action] },
        ]);
      });

      it('reaches reports in sub-folders at any depth, and nothing outside', async () => {
        const res = await get(inDeep, user, accessDeployment);
        expect(res.status).toBe(200);
        expect(res.body.folderPath.map((f: { id: number }) => f.id)).toEqual([top, sub, deep]);
        expect((await get(inSub, user, accessDeployment)).status).toBe(200);
        const denied = await get(outside, user, accessDeployment);
        expect(denied.status).toBe(404);
        expectErrorShape(denied.body, 404, 'report_not_found');
        const listed = await list({ first: 1000 }, user, accessDeployment);
        expect(listed.status).toBe(200);
        expect(ids(listed.body).sort()).toEqual([inSub, inDeep].sort());
      });

      it('lets the holder place the reports it reaches in a spreadsheet', async () => {
        const res = await t
          .http()
          .put(reportsPath(accessDeployment, `/${inDeep}/connect-workbook`))
          .set(as(user))
          .send({ externalWorkbookId: 'wb', resultLocation: 'Sheet1!A1' });
        expect(res.status).toBe(200);
        expect(res.body.externalWorkbookPlacements).toHaveLength(1);
      });
    });
  });

  describe('access and input checks on every report endpoint', () => {
    let r: ReportBody;
    let elsewhere: ReportBody;
    beforeAll(async () => {
      r = await newReport(t, t.admin, deploymentId, { name: 'Matrix' });
      elsewhere = await newReport(t, t.admin, otherDeploymentId, { name: 'Matrix elsewhere' });
    });

    type Call = (
      rep: number | string,
      actor: Actor,
      dep: number | string,
    ) => PromiseLike<{
      status: number;
      body: Body;
    }>;
    const endpoints: Array<{ name: string; call: Call; perReport: boolean; body?: boolean }> = [
      { name: 'list', call: (_rep, actor, dep) => list({}, actor, dep), perReport: false },
      {
        name: 'create',
        call: (_rep, actor, dep) => create({ name: 'x' }, actor, dep),
        perReport: false,
        body: true,
      },
      {
        name: 'upsert by public id',
        call: (_rep, actor, dep) => upsert('MatrixUps001', { name: 'x' }, actor, dep),
        perReport: false,
        body: true,
      },
      { name: 'get', call: (rep, actor, dep) => get(rep, actor, dep), perReport: true },
      {
        name: 'update',
        call: (rep, actor, dep) => update(rep, { title: 'x' }, actor, dep),
        perReport: true,
        body: true,
      },
      { name: 'delete', call: (rep, actor, dep) => remove(rep, actor, dep), perReport: true },
    ];

    describe.each(endpoints)('$name', ({ call, perReport }) => {
      it('answers 401 without a token', async () => {
        const res = await call(r.id, { ...t.admin, token: '' }, deploymentId);
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401, 'unauthorized');
      });

      it('answers 403 to a user without any role', async () => {
        const res = await call(r.id, noRole, deploymentId);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      });

      it("answers 404 for another account's deployment or report", async () => {
        const before = await reportRow(globexReport.id);
        // Under the other account's deployment it is the deployment that is missing.
        const theirs = await call(globexReport.id, t.admin, globexDeploymentId);
        expect(theirs.status).toBe(404);
        expectErrorShape(theirs.body, 404, 'deployment_not_found');
        if (perReport) {
          const res = await call(globexReport.id, t.admin, deploymentId);
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'report_not_found');
        }
        expect(await reportRow(globexReport.id)).toEqual(before);
      });

      if (perReport) {
        it('answers 404 for a report of another deployment of the same account', async () => {
          const before = await reportRow(elsewhere.id);
          const res = await call(elsewhere.id, t.admin, deploymentId);
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'report_not_found');
          expect(await reportRow(elsewhere.id)).toEqual(before);
        });
      }

      it.each(BAD_IDS)('answers 400 for the bad id %j', async (bad) => {
        const responses = [await call(r.id, t.admin, bad)];
        if (perReport) responses.push(await call(bad, t.admin, deploymentId));
        for (const res of responses) {
          expect(res.status).toBe(400);
          expectErrorShape(res.body, 400, 'validation_failed');
        }
      });
    });

    it.each<[string, (body: unknown) => PromiseLike<{ status: number; body: Body }>]>([
      ['create', (body) => create(body)],
      ['update', (body) => update(r.id, body)],
      ['upsert by public id', (body) => upsert('MatrixBad001', body)],
    ])('%s answers 400 for bad bodies', async (_name, send) => {
      const before = await reportRow(r.id);
      for (const body of [
        { unknownField: 1 },
        { name: ['x'] },
        { pivotItems: 'rows' },
        ['x'],
        { folderId: 'one' },
      ]) {
        const res = await send(body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(await reportRow(r.id)).toEqual(before);
      expect(await t.sql(`SELECT 1 FROM reports WHERE public_id = 'MatrixBad001'`)).toEqual([]);
    });
  });
});
