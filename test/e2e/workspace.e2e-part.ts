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

const BAD_IDS = ['abc', '0', '99999999999'];

interface Item {
  type: 'FOLDER' | 'WORKBOOK' | 'REPORT';
  id: number;
  name: string;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  [key: string]: unknown;
}

describe('workspace', () => {
  let t: TestApp;
  let viewer: Actor;
  let explorer: Actor;
  let other: Actor;
  let otherDeploymentId: number;
  let otherFolderId: number;

  const base = (dep: number) => `/api/v1/deployments/${dep}`;

  const createDeployment = async (actor: Actor = t.admin): Promise<number> => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    if (res.status !== 200) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const folder = async (
    dep: number,
    name: string,
    parentId: number | null = null,
    actor: Actor = t.admin,
  ) => {
    const res = await t
      .http()
      .post(`${base(dep)}/folders`)
      .set(bearer(actor.token))
      .send({ name, parentId });
    if (res.status !== 200) throw new Error(`folder: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  interface RowFields {
    folderId?: number | null;
    owner?: Actor;
    updatedAt?: string;
    createdAt?: string;
    workbookId?: number | null;
  }

  const workbook = async (dep: number, name: string, f: RowFields = {}) => {
    const owner = f.owner ?? t.admin;
    const [row] = await t.sql<{ id: number }>(
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, user_id, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $5, COALESCE($6::timestamptz, now()), COALESCE($7::timestamptz, now()))
       RETURNING id`,
      [
        owner.accountId,
        dep,
        f.folderId ?? null,
        name,
        owner.userId,
        f.createdAt ?? null,
        f.updatedAt ?? null,
      ],
    );
    return row.id;
  };

  const report = async (dep: number, name: string, f: RowFields = {}) => {
    const owner = f.owner ?? t.admin;
    const [row] = await t.sql<{ id: number }>(
      `INSERT INTO reports (account_id, deployment_id, folder_id, workbook_id, name, user_id, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6, COALESCE($7::timestamptz, now()), COALESCE($8::timestamptz, now()))
       RETURNING id`,
      [
        owner.accountId,
        dep,
        f.folderId ?? null,
        f.workbookId ?? null,
        name,
        owner.userId,
        f.createdAt ?? null,
        f.updatedAt ?? null,
      ],
    );
    return row.id;
  };

  const feed = (dep: number, query: Record<string, unknown> | string = {}, actor: Actor = t.admin) =>
    t
      .http()
      .get(`${base(dep)}/workspace`)
      .query(query)
      .set(bearer(actor.token));

  const names = (body: { items: Item[] }) => body.items.map((i) => i.name);

  const ancestorIds = async (dep: number, id: number) =>
    (
      await t
        .http()
        .get(`${base(dep)}/folders/${id}/ancestors`)
        .set(bearer(t.admin.token))
    ).body.map((f: { id: number }) => f.id);

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    explorer = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
    other = await newAccount(t, 'globex');
    otherDeploymentId = await createDeployment(other);
    otherFolderId = await folder(otherDeploymentId, 'Theirs', null, other);
  });
  afterAll(() => t.close());

  describe('GET /workspace', () => {
    let dep: number;
    let alpha: number;
    let inner: number;
    let deep: number;
    let wbZeta: number;
    let rpRoot: number;

    beforeAll(async () => {
      dep = await createDeployment();
      alpha = await folder(dep, 'Alpha');
      await folder(dep, 'Beta');
      inner = await folder(dep, 'Inner', alpha);
      deep = await folder(dep, 'Deep needle', inner);
      wbZeta = await workbook(dep, 'wb Zeta', {
        updatedAt: '2024-01-03T00:00:00Z',
        createdAt: '2023-01-01T00:00:00Z',
      });
      await workbook(dep, 'wb Needle', {
        updatedAt: '2024-01-01T00:00:00Z',
        createdAt: '2023-01-04T00:00:00Z',
      });
      await workbook(dep, 'wb in alpha', { folderId: alpha });
      await report(dep, 'rp Mid', { updatedAt: '2024-01-02T00:00:00Z', createdAt: '2023-01-02T00:00:00Z' });
      rpRoot = await report(dep, 'rp NEEDLE root', {
        updatedAt: '2024-01-04T00:00:00Z',
        createdAt: '2023-01-03T00:00:00Z',
      });
      await report(dep, 'rp needle deep', { folderId: inner, updatedAt: '2024-01-05T00:00:00Z' });
      await report(dep, 'rp needle of workbook', { workbookId: wbZeta, updatedAt: '2024-01-06T00:00:00Z' });
    });

    it('lists the root: folders first by position, then workbooks and reports by updated_at DESC', async () => {
      const res = await feed(dep);
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(['Alpha', 'Beta', 'rp NEEDLE root', 'wb Zeta', 'rp Mid', 'wb Needle']);
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      expect(Object.keys(res.body).sort()).toEqual(['items', 'pageInfo']);
      const byName = new Map<string, Item>(res.body.items.map((i: Item) => [i.name, i]));
      expect(byName.get('Alpha')).toEqual({
        type: 'FOLDER',
        id: alpha,
        name: 'Alpha',
        deploymentId: dep,
        folderId: null,
        parentId: null,
        position: 0,
        folderPath: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        createdBy: t.admin.userId,
        userId: t.admin.userId,
        user: { id: t.admin.userId, email: t.admin.email, firstName: null, picture: null },
      });
      expect(byName.get('wb Zeta')).toMatchObject({
        type: 'WORKBOOK',
        id: wbZeta,
        folderId: null,
        folderPath: [],
        slug: null,
        updatedAt: '2024-01-03T00:00:00.000Z',
        user: { id: t.admin.userId },
      });
      expect(byName.get('rp NEEDLE root')).toMatchObject({ type: 'REPORT', id: rpRoot, publicId: null });
    });

    it('does not list reports that belong to a workbook', async () => {
      const res = await feed(dep, { search: 'of workbook' });
      expect(res.body.items).toEqual([]);
    });

    it('lists the contents of a folder with its path', async () => {
      const res = await feed(dep, { folderId: alpha });
      expect(names(res.body)).toEqual(['Inner', 'wb in alpha']);
      expect(res.body.items[0]).toMatchObject({ folderId: alpha, parentId: alpha });
      expect(res.body.items[1].folderPath).toEqual([{ id: alpha, name: 'Alpha' }]);
      const deeper = await feed(dep, { folderId: inner });
      expect(names(deeper.body)).toEqual(['Deep needle', 'rp needle deep']);
      expect(deeper.body.items[1].folderPath).toEqual([
        { id: alpha, name: 'Alpha' },
        { id: inner, name: 'Inner' },
      ]);
    });

    it('orders workbooks and reports by name, created_at and the caller’s last view', async () => {
      expect(names((await feed(dep, { orderByField: 'name' })).body)).toEqual([
        'Alpha',
        'Beta',
        'rp Mid',
        'rp NEEDLE root',
        'wb Needle',
        'wb Zeta',
      ]);
      expect(names((await feed(dep, { orderByField: 'name', orderByDirection: 'DESC' })).body)).toEqual([
        'Alpha',
        'Beta',
        'wb Zeta',
        'wb Needle',
        'rp NEEDLE root',
        'rp Mid',
      ]);
      expect(names((await feed(dep, { orderByField: 'created_at', orderByDirection: 'ASC' })).body)).toEqual([
        'Alpha',
        'Beta',
        'wb Zeta',
        'rp Mid',
        'rp NEEDLE root',
        'wb Needle',
      ]);
      const [mid] = await t.sql<{ id: number }>(`SELECT id FROM reports WHERE name = 'rp Mid'`);
      await t.sql(
        `INSERT INTO report_views (report_id, user_id, last_viewed_at) VALUES ($1, $3, '2024-02-02'), ($2, $3, '2024-02-01'),
           ($2, $4, '2025-01-01')`,
        [mid.id, rpRoot, t.admin.userId, viewer.userId],
      );
      expect(names((await feed(dep, { orderByField: 'viewer_last_viewed_at' })).body)).toEqual([
        'Alpha',
        'Beta',
        'rp Mid',
        'rp NEEDLE root',
        'wb Zeta',
        'wb Needle',
      ]);
      expect(
        names((await feed(dep, { orderByField: 'viewer_last_viewed_at', orderByDirection: 'ASC' })).body),
      ).toEqual(['Alpha', 'Beta', 'rp NEEDLE root', 'rp Mid', 'wb Zeta', 'wb Needle']);
    });

    it('filters by types, repeated, comma-separated or single', async () => {
      expect(names((await feed(dep, { types: 'REPORT' })).body)).toEqual(['rp NEEDLE root', 'rp Mid']);
      expect(names((await feed(dep, 'types=FOLDER&types=WORKBOOK')).body)).toEqual([
        'Alpha',
        'Beta',
        'wb Zeta',
        'wb Needle',
      ]);
      expect(names((await feed(dep, { types: 'FOLDER,REPORT' })).body)).toEqual([
        'Alpha',
        'Beta',
        'rp NEEDLE root',
        'rp Mid',
      ]);
    });

    it('searches names case-insensitively across every level, or below folderId', async () => {
      const res = await feed(dep, { search: 'NeEdLe' });
      expect(names(res.body)).toEqual(['Deep needle', 'rp needle deep', 'rp NEEDLE root', 'wb Needle']);
      expect(res.body.items[0]).toMatchObject({
        id: deep,
        folderPath: [
          { id: alpha, name: 'Alpha' },
          { id: inner, name: 'Inner' },
        ],
      });
      expect(names((await feed(dep, { search: 'needle', folderId: alpha })).body)).toEqual([
        'Deep needle',
        'rp needle deep',
      ]);
      expect(names((await feed(dep, { search: 'needle', types: 'WORKBOOK' })).body)).toEqual(['wb Needle']);
      expect((await feed(dep, { search: '%' })).body.items).toEqual([]);
      expect((await feed(dep, { search: '_' })).body.items).toEqual([]);
    });

    it('answers 400 for bad parameters and cursors', async () => {
      const nameCursor = (await feed(dep, { orderByField: 'name', first: 3 })).body.pageInfo.endCursor;
      for (const query of [
        { types: 'NOPE' },
        { types: '' },
        { orderByField: 'size' },
        { orderByDirection: 'UP' },
        { folderId: 'abc' },
        { folderId: -1 },
        { first: 0 },
        { first: 1001 },
        { after: 'nope!' },
        { after: 'WzFd' },
        { after: nameCursor },
        { after: nameCursor, orderByField: 'name', orderByDirection: 'DESC' },
        {
          after: Buffer.from('["name","ASC",1,0,"x",1,99999999999]').toString('base64url'),
          orderByField: 'name',
        },
        { after: Buffer.from('["updated_at","DESC",1,0,"x",1,5]').toString('base64url') },
        { search: 'x'.repeat(256) },
        { color: 'red' },
      ]) {
        const res = await feed(dep, query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400);
      }
      for (const id of BAD_IDS) {
        const res = await t.http().get(`/api/v1/deployments/${id}/workspace`).set(bearer(t.admin.token));
        expect(res.status).toBe(400);
      }
    });

    it('is 404 for another account’s deployment or folder, 401 without a token', async () => {
      const theirs = await feed(otherDeploymentId);
      expect(theirs.status).toBe(404);
      expectErrorShape(theirs.body, 404, 'deployment_not_found');
      const theirFolder = await feed(dep, { folderId: otherFolderId });
      expect(theirFolder.status).toBe(404);
      expectErrorShape(theirFolder.body, 404, 'folder_not_found');
      const anon = await t.http().get(`${base(dep)}/workspace`);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
    });

    it('shows a user with FolderRead on a folder that folder and everything below it only', async () => {
      const role = await t
        .http()
        .post('/api/v1/roles')
        .set(bearer(t.admin.token))
        .send({
          name: 'Alpha readers',
          policies: [{ resourceType: 'Folder', resources: [String(alpha)], actions: ['FolderRead'] }],
        });
      expect(role.status).toBe(200);
      const reader = await newUser(t, t.admin, { defaultRoles: [] });
      expect(
        (
          await t
            .http()
            .put(`/api/v1/roles/${role.body.id}/users/${reader.userId}`)
            .set(bearer(t.admin.token))
        ).status,
      ).toBe(204);
      expect(names((await feed(dep, {}, reader)).body)).toEqual(['Alpha']);
      expect(names((await feed(dep, { folderId: alpha }, reader)).body)).toEqual(['Inner', 'wb in alpha']);
      expect(names((await feed(dep, { folderId: inner }, reader)).body)).toEqual([
        'Deep needle',
        'rp needle deep',
      ]);
      expect(names((await feed(dep, { search: 'needle' }, reader)).body)).toEqual([
        'Deep needle',
        'rp needle deep',
      ]);
      const [beta] = await t.sql<{ id: number }>(
        `SELECT id FROM folders WHERE name = 'Beta' AND deployment_id = $1`,
        [dep],
      );
      const hidden = await feed(dep, { folderId: beta.id }, reader);
      expect(hidden.status).toBe(404);
      expectErrorShape(hidden.body, 404, 'folder_not_found');
      // A Viewer reads everything; a user without roles sees only what they own (nothing here).
      expect(names((await feed(dep, {}, viewer)).body)).toHaveLength(6);
      const nobody = await newUser(t, t.admin, { defaultRoles: [] });
      expect((await feed(dep, {}, nobody)).body.items).toEqual([]);
    });
  });

  describe('pagination', () => {
    let dep: number;
    beforeAll(async () => {
      dep = await createDeployment();
      for (let i = 0; i < 5; i++) await folder(dep, `F${i}`);
      const sameTime = '2024-03-01T10:00:00Z';
      for (let i = 0; i < 6; i++) {
        await workbook(dep, `Item ${i % 3}`, { updatedAt: i % 2 ? sameTime : `2024-03-0${i + 2}T00:00:00Z` });
        const r = await report(dep, `item ${i % 2}`, {
          updatedAt: i % 2 ? sameTime : `2024-02-0${i + 2}T00:00:00Z`,
        });
        if (i % 3 === 0) {
          await t.sql(`INSERT INTO report_views (report_id, user_id, last_viewed_at) VALUES ($1, $2, $3)`, [
            r,
            t.admin.userId,
            i === 0 ? sameTime : '2024-04-01T00:00:00.123456Z',
          ]);
        }
      }
    });

    const orderings: Array<Record<string, string>> = [
      {},
      { orderByField: 'updated_at', orderByDirection: 'ASC' },
      { orderByField: 'name' },
      { orderByField: 'name', orderByDirection: 'DESC' },
      { orderByField: 'created_at' },
      { orderByField: 'viewer_last_viewed_at' },
      { orderByField: 'viewer_last_viewed_at', orderByDirection: 'ASC' },
    ];

    it.each(orderings)('pages %j across pages without gaps or duplicates', async (ordering) => {
      const all = await feed(dep, { ...ordering, first: 1000 });
      expect(all.status).toBe(200);
      const expected = all.body.items.map((i: Item) => `${i.type}:${i.id}`);
      expect(expected).toHaveLength(17);
      expect(all.body.items.slice(0, 5).every((i: Item) => i.type === 'FOLDER')).toBe(true);
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await feed(dep, { ...ordering, first: 4, ...(after ? { after } : {}) });
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(4);
        expect(res.body.pageInfo.hasPreviousPage).toBe(page > 0);
        seen.push(...res.body.items.map((i: Item) => `${i.type}:${i.id}`));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(expected);
    });
  });

  describe('POST /workspace/move', () => {
    let dep: number;
    const move = (body: Record<string, unknown>, actor: Actor = t.admin, d = dep) =>
      t
        .http()
        .post(`${base(d)}/workspace/move`)
        .set(bearer(actor.token))
        .send(body);

    beforeAll(async () => {
      dep = await createDeployment();
    });

    it('moves a folder with its descendants, rewriting their ancestry', async () => {
      const p = await folder(dep, 'P');
      const q = await folder(dep, 'Q');
      const p1 = await folder(dep, 'P1', p);
      const p1a = await folder(dep, 'P1a', p1);
      const res = await move({ type: 'FOLDER', id: p1, folderId: q });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        type: 'FOLDER',
        id: p1,
        parentId: q,
        folderId: q,
        folderPath: [{ id: q, name: 'Q' }],
      });
      expect(await ancestorIds(dep, p1a)).toEqual([q, p1, p1a]);
      const [row] = await t.sql<{ ancestor_ids: number[]; parent_id: number }>(
        `SELECT ancestor_ids, parent_id FROM folders WHERE id = $1`,
        [p1a],
      );
      expect(row).toEqual({ ancestor_ids: [q, p1], parent_id: p1 });

      const toRoot = await move({ type: 'FOLDER', id: p1, folderId: null });
      expect(toRoot.status).toBe(200);
      expect(toRoot.body).toMatchObject({ parentId: null, folderPath: [] });
      expect(await ancestorIds(dep, p1a)).toEqual([p1, p1a]);
      const back = await move({ type: 'FOLDER', id: p1, folderId: p });
      expect(back.status).toBe(200);
      expect(await ancestorIds(dep, p1a)).toEqual([p, p1, p1a]);
    });

    it('refuses moving a folder into itself or a descendant (400)', async () => {
      const a = await folder(dep, 'Cycle A');
      const b = await folder(dep, 'Cycle B', a);
      const c = await folder(dep, 'Cycle C', b);
      for (const target of [a, b, c]) {
        const res = await move({ type: 'FOLDER', id: a, folderId: target });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'folder_into_descendant');
      }
      expect(await ancestorIds(dep, c)).toEqual([a, b, c]);
    });

    it('refuses a move that would nest the deepest sub-folder too deep (400)', async () => {
      let x: number | null = null;
      const xs: number[] = [];
      for (let i = 1; i <= 6; i++) xs.push((x = await folder(dep, `X${i}`, x)));
      let y: number | null = null;
      const ys: number[] = [];
      for (let i = 1; i <= 5; i++) ys.push((y = await folder(dep, `Y${i}`, y)));
      const tooDeep = await move({ type: 'FOLDER', id: ys[0], folderId: xs[5] });
      expect(tooDeep.status).toBe(400);
      expectErrorShape(tooDeep.body, 400, 'folder_too_deep');
      expect(await ancestorIds(dep, ys[4])).toEqual(ys);
      const fits = await move({ type: 'FOLDER', id: ys[0], folderId: xs[4] });
      expect(fits.status).toBe(200);
      expect(await ancestorIds(dep, ys[4])).toEqual([...xs.slice(0, 5), ...ys]);
    });

    it('moves workbooks and reports through their services', async () => {
      const dest = await folder(dep, 'Destination');
      const wb = await workbook(dep, 'Movable workbook');
      const rp = await report(dep, 'Movable report');
      const movedWb = await move({ type: 'WORKBOOK', id: wb, folderId: dest });
      expect(movedWb.status).toBe(200);
      expect(movedWb.body).toMatchObject({ type: 'WORKBOOK', id: wb, folderId: dest });
      const movedRp = await move({ type: 'REPORT', id: rp, folderId: dest });
      expect(movedRp.status).toBe(200);
      expect(movedRp.body).toMatchObject({ type: 'REPORT', id: rp, folderId: dest });
      expect((await t.sql(`SELECT folder_id FROM workbooks WHERE id = $1`, [wb]))[0]).toEqual({
        folder_id: dest,
      });
      expect((await t.sql(`SELECT folder_id FROM reports WHERE id = $1`, [rp]))[0]).toEqual({
        folder_id: dest,
      });
      const back = await move({ type: 'WORKBOOK', id: wb });
      expect(back.status).toBe(200);
      expect((await t.sql(`SELECT folder_id FROM workbooks WHERE id = $1`, [wb]))[0]).toEqual({
        folder_id: null,
      });
    });

    it('is 403 without the actions, 404 for missing or foreign items and destinations', async () => {
      const adminFolder = await folder(dep, 'Admin owned');
      const dest = await folder(dep, 'Open destination');
      for (const actor of [viewer, explorer]) {
        const res = await move({ type: 'FOLDER', id: adminFolder, folderId: dest }, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      const own = await folder(dep, 'Explorer owned', null, explorer);
      expect((await move({ type: 'FOLDER', id: own, folderId: dest }, explorer)).status).toBe(200);
      const cases: Array<Record<string, unknown>> = [
        { type: 'FOLDER', id: otherFolderId, folderId: dest },
        { type: 'FOLDER', id: adminFolder, folderId: otherFolderId },
        { type: 'FOLDER', id: 2_000_000_000, folderId: null },
        { type: 'WORKBOOK', id: 2_000_000_000, folderId: null },
        { type: 'REPORT', id: 2_000_000_000, folderId: null },
      ];
      for (const body of cases) {
        const res = await move(body);
        expect({ body, status: res.status }).toEqual({ body, status: 404 });
        expectErrorShape(res.body, 404);
      }
      const elsewhere = await createDeployment();
      const foreign = await folder(elsewhere, 'Other deployment');
      expect((await move({ type: 'FOLDER', id: foreign, folderId: null })).status).toBe(404);
      const theirDeployment = await move({ type: 'FOLDER', id: adminFolder }, t.admin, otherDeploymentId);
      expect(theirDeployment.status).toBe(404);
      expectErrorShape(theirDeployment.body, 404, 'deployment_not_found');
      const [row] = await t.sql<{ parent_id: number | null }>(`SELECT parent_id FROM folders WHERE id = $1`, [
        adminFolder,
      ]);
      expect(row.parent_id).toBeNull();
    });

    it('answers 400 for bad input and 401 without a token', async () => {
      for (const body of [
        {},
        { type: 'FOLDER' },
        { type: 'DASHBOARD', id: 1 },
        { type: 'FOLDER', id: 'abc' },
        { type: 'FOLDER', id: 0 },
        { type: 'FOLDER', id: 1, folderId: 'x' },
        { type: 'FOLDER', id: 1, color: 'red' },
      ]) {
        const res = await move(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const anon = await t
        .http()
        .post(`${base(dep)}/workspace/move`)
        .send({ type: 'FOLDER', id: 1 });
      expect(anon.status).toBe(401);
    });
  });

  describe('POST /workspace/bulk-move and /workspace/bulk-delete', () => {
    let dep: number;
    const bulk = (action: 'bulk-move' | 'bulk-delete', body: unknown, actor: Actor = explorer, d = dep) =>
      t
        .http()
        .post(`${base(d)}/workspace/${action}`)
        .set(bearer(actor.token))
        .send(body as object);

    beforeAll(async () => {
      dep = await createDeployment();
    });

    it('moves what it may, in order, and reports each refused item', async () => {
      const dest = await folder(dep, 'Bulk destination');
      const own = await folder(dep, 'Explorer folder', null, explorer);
      const ownChild = await folder(dep, 'Explorer child', own, explorer);
      const adminFolder = await folder(dep, 'Admin folder');
      const ownReport = await report(dep, 'Explorer report', { owner: explorer });
      const adminReport = await report(dep, 'Admin report');
      const res = await bulk('bulk-move', {
        folderId: dest,
        items: [
          { type: 'FOLDER', id: own },
          { type: 'FOLDER', id: adminFolder },
          { type: 'FOLDER', id: 2_000_000_000 },
          { type: 'REPORT', id: ownReport },
          { type: 'REPORT', id: adminReport },
          { type: 'FOLDER', id: own },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.moved.map((i: Item) => [i.type, i.id, i.folderId])).toEqual([
        ['FOLDER', own, dest],
        ['REPORT', ownReport, dest],
      ]);
      expect(res.body.failed).toEqual([
        { type: 'FOLDER', id: adminFolder, error: { status: 403, message: expect.any(String) } },
        { type: 'FOLDER', id: 2_000_000_000, error: { status: 404, message: expect.any(String) } },
        { type: 'REPORT', id: adminReport, error: { status: 403, message: expect.any(String) } },
      ]);
      expect(await ancestorIds(dep, ownChild)).toEqual([dest, own, ownChild]);
      expect((await t.sql(`SELECT folder_id FROM reports WHERE id = $1`, [ownReport]))[0]).toEqual({
        folder_id: dest,
      });
      expect((await t.sql(`SELECT parent_id FROM folders WHERE id = $1`, [adminFolder]))[0]).toEqual({
        parent_id: null,
      });

      const cycle = await bulk('bulk-move', { folderId: ownChild, items: [{ type: 'FOLDER', id: own }] });
      expect(cycle.body).toEqual({
        moved: [],
        failed: [{ type: 'FOLDER', id: own, error: { status: 400, message: expect.any(String) } }],
      });
      const foreignDest = await bulk('bulk-move', {
        folderId: otherFolderId,
        items: [{ type: 'FOLDER', id: own }],
      });
      expect(foreignDest.body.failed).toEqual([
        { type: 'FOLDER', id: own, error: { status: 404, message: expect.any(String) } },
      ]);
      const toRoot = await bulk('bulk-move', { items: [{ type: 'WORKBOOK', id: 2_000_000_000 }] });
      expect(toRoot.body.failed[0].error.status).toBe(404);
    });

    it('deletes what it may, in order, and reports each refused item', async () => {
      const empty = await folder(dep, 'Del empty', null, explorer);
      const parent = await folder(dep, 'Del parent', null, explorer);
      const child = await folder(dep, 'Del child', parent, explorer);
      const adminFolder = await folder(dep, 'Del admin');
      const ownReport = await report(dep, 'Del report', { owner: explorer, folderId: empty });
      const ownWorkbook = await workbook(dep, 'Del workbook', { owner: explorer });
      const res = await bulk('bulk-delete', {
        items: [
          { type: 'FOLDER', id: empty },
          { type: 'FOLDER', id: parent },
          { type: 'FOLDER', id: child },
          { type: 'FOLDER', id: adminFolder },
          { type: 'REPORT', id: 2_000_000_000 },
          { type: 'REPORT', id: ownReport },
          { type: 'WORKBOOK', id: ownWorkbook },
          { type: 'FOLDER', id: empty },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.deleted).toEqual([
        { type: 'FOLDER', id: empty },
        { type: 'FOLDER', id: child },
        { type: 'REPORT', id: ownReport },
        { type: 'WORKBOOK', id: ownWorkbook },
      ]);
      expect(res.body.failed).toEqual([
        {
          type: 'FOLDER',
          id: parent,
          error: { status: 400, message: expect.stringContaining('sub-folders') },
        },
        { type: 'FOLDER', id: adminFolder, error: { status: 403, message: expect.any(String) } },
        { type: 'REPORT', id: 2_000_000_000, error: { status: 404, message: expect.any(String) } },
      ]);
      expect(
        await t.sql(`SELECT id FROM folders WHERE id = ANY($1) ORDER BY id`, [
          [empty, parent, child, adminFolder],
        ]),
      ).toEqual([{ id: parent }, { id: adminFolder }]);
      expect(await t.sql(`SELECT 1 FROM reports WHERE id = $1`, [ownReport])).toHaveLength(0);
      expect(await t.sql(`SELECT 1 FROM workbooks WHERE id = $1`, [ownWorkbook])).toHaveLength(0);
      const again = await bulk('bulk-delete', { items: [{ type: 'FOLDER', id: parent }] });
      expect(again.body).toEqual({ deleted: [{ type: 'FOLDER', id: parent }], failed: [] });
    });

    it('answers 400 for malformed batches, 404 for another account’s deployment, 401 without a token', async () => {
      const tooMany = Array.from({ length: 101 }, (_, i) => ({ type: 'FOLDER', id: i + 1 }));
      const exactly100 = Array.from({ length: 100 }, (_, i) => ({ type: 'FOLDER', id: 2_000_000_000 - i }));
      for (const action of ['bulk-move', 'bulk-delete'] as const) {
        for (const body of [
          {},
          { items: [] },
          { items: tooMany },
          { items: 'x' },
          { items: [{ type: 'NOPE', id: 1 }] },
          { items: [{ type: 'FOLDER', id: 'abc' }] },
          { items: [{ type: 'FOLDER' }] },
          { items: [{ type: 'FOLDER', id: 1, extra: true }] },
          { items: [{ type: 'FOLDER', id: 1 }], color: 'red' },
        ]) {
          const res = await bulk(action, body);
          expect({ action, body, status: res.status }).toEqual({ action, body, status: 400 });
          expectErrorShape(res.body, 400, 'validation_failed');
        }
        const full = await bulk(action, { items: exactly100 });
        expect(full.status).toBe(200);
        expect(full.body.failed).toHaveLength(100);
        const theirs = await bulk(
          action,
          { items: [{ type: 'FOLDER', id: otherFolderId }] },
          t.admin,
          otherDeploymentId,
        );
        expect(theirs.status).toBe(404);
        expectErrorShape(theirs.body, 404, 'deployment_not_found');
        const anon = await t
          .http()
          .post(`${base(dep)}/workspace/${action}`)
          .send({ items: [{ type: 'FOLDER', id: 1 }] });
        expect(anon.status).toBe(401);
      }
      const foreign = await bulk('bulk-delete', { items: [{ type: 'FOLDER', id: otherFolderId }] }, t.admin);
      expect(foreign.body.failed).toEqual([
        { type: 'FOLDER', id: otherFolderId, error: { status: 404, message: expect.any(String) } },
      ]);
      expect(await t.sql(`SELECT 1 FROM folders WHERE id = $1`, [otherFolderId])).toHaveLength(1);
    });
  });
});
