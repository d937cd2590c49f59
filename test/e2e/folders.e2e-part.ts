import { MAX_FOLDER_DEPTH } from '../../src/modules/workspace/content.sql.js';
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

interface FolderBody {
  id: number;
  name: string;
  position: number;
  parentId: number | null;
  deploymentId: number;
  folderPath: Array<{ id: number; name: string }>;
  type: string;
}

describe('folders', () => {
  let t: TestApp;
  let viewer: Actor;
  let explorer: Actor;
  let nobody: Actor;
  let other: Actor;
  let deploymentId: number;
  let secondDeploymentId: number;
  let otherDeploymentId: number;
  let otherFolderId: number;

  const base = (dep = deploymentId) => `/api/v1/deployments/${dep}`;

  const createDeployment = async (actor: Actor): Promise<number> => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    if (res.status !== 200) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const post = (body: Record<string, unknown>, actor: Actor = t.admin, dep = deploymentId) =>
    t
      .http()
      .post(`${base(dep)}/folders`)
      .set(bearer(actor.token))
      .send(body);

  const create = async (name: string, parentId: number | null = null, actor: Actor = t.admin) => {
    const res = await post({ name, parentId }, actor);
    if (res.status !== 200) throw new Error(`folder: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as FolderBody;
  };

  const list = (query: Record<string, unknown> = {}, actor: Actor = t.admin, dep = deploymentId) =>
    t
      .http()
      .get(`${base(dep)}/folders`)
      .query(query)
      .set(bearer(actor.token));

  const ancestors = (id: number, actor: Actor = t.admin) =>
    t.http().get(`${base()}/folders/${id}/ancestors`).set(bearer(actor.token));

  const createRole = async (name: string, folderId: number, actions: string[]) => {
    const res = await t
      .http()
      .post('/api/v1/roles')
      .set(bearer(t.admin.token))
      .send({ name, policies: [{ resourceType: 'Folder', resources: [String(folderId)], actions }] });
    if (res.status !== 200) throw new Error(`role: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const assign = async (roleId: number, user: Actor) => {
    const res = await t.http().put(`/api/v1/roles/${roleId}/users/${user.userId}`).set(bearer(t.admin.token));
    expect(res.status).toBe(204);
  };

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    explorer = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
    nobody = await newUser(t, t.admin, { defaultRoles: [] });
    other = await newAccount(t, 'globex');
    deploymentId = await createDeployment(t.admin);
    secondDeploymentId = await createDeployment(t.admin);
    otherDeploymentId = await createDeployment(other);
    const res = await post({ name: 'Theirs' }, other, otherDeploymentId);
    otherFolderId = res.body.id;
  });
  afterAll(() => t.close());

  describe('POST /folders', () => {
    it('creates a root folder (200) owned by the caller, with the Folder shape', async () => {
      const res = await post({ name: '  Sales  ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Sales',
        position: expect.any(Number),
        parentId: null,
        deploymentId,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        updatedAt: expect.any(String),
        createdBy: t.admin.userId,
        updatedBy: null,
        type: 'FOLDER',
        user: { id: t.admin.userId, email: t.admin.email, firstName: null, picture: null },
        folderPath: [],
      });
      const [row] = await t.sql(
        `SELECT account_id, deployment_id, parent_id, ancestor_ids, user_id, created_by FROM folders WHERE id = $1`,
        [res.body.id],
      );
      expect(row).toEqual({
        account_id: t.admin.accountId,
        deployment_id: deploymentId,
        parent_id: null,
        ancestor_ids: [],
        user_id: t.admin.userId,
        created_by: t.admin.userId,
      });
    });

    it('nests folders, keeps the ancestor chain and answers folderPath of the containing folder', async () => {
      const root = await create('Root');
      const child = await create('Child', root.id);
      const grandchild = await create('Grandchild', child.id);
      expect(child).toMatchObject({ parentId: root.id, folderPath: [{ id: root.id, name: 'Root' }] });
      expect(grandchild).toMatchObject({
        parentId: child.id,
        folderPath: [
          { id: root.id, name: 'Root' },
          { id: child.id, name: 'Child' },
        ],
      });
      const [row] = await t.sql<{ ancestor_ids: number[] }>(
        `SELECT ancestor_ids FROM folders WHERE id = $1`,
        [grandchild.id],
      );
      expect(row.ancestor_ids).toEqual([root.id, child.id]);
    });

    it('places a new folder after its last sibling unless a position is given', async () => {
      const parent = await create('Positions');
      const a = await create('A', parent.id);
      const b = await create('B', parent.id);
      expect(a.position).toBe(0);
      expect(b.position).toBe(1);
      const explicit = await post({ name: 'C', parentId: parent.id, position: 7 });
      expect(explicit.body.position).toBe(7);
      const d = await create('D', parent.id);
      expect(d.position).toBe(8);
    });

    it(`refuses nesting deeper than ${MAX_FOLDER_DEPTH} levels with 400 folder_too_deep`, async () => {
      let parent: number | null = null;
      for (let depth = 1; depth <= MAX_FOLDER_DEPTH; depth++) parent = (await create(`L${depth}`, parent)).id;
      const res = await post({ name: 'Too deep', parentId: parent });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'folder_too_deep');
      expect(await t.sql(`SELECT 1 FROM folders WHERE name = 'Too deep'`)).toHaveLength(0);
    });

    it('answers 400 for bad input, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 5 }, 'name'],
        [{ name: 'X', parentId: 'abc' }, 'parentId'],
        [{ name: 'X', parentId: 0 }, 'parentId'],
        [{ name: 'X', position: 1.5 }, 'position'],
        [{ name: 'X', color: 'red' }, 'color'],
      ];
      for (const [body, field] of cases) {
        const res = await post(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect((res.body.message as string[]).join('\n')).toContain(field);
      }
      for (const id of BAD_IDS) {
        const res = await t
          .http()
          .post(`/api/v1/deployments/${id}/folders`)
          .set(bearer(t.admin.token))
          .send({ name: 'X' });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('is 404 for a parent or deployment of another account, or a parent of another deployment', async () => {
      const theirParent = await post({ name: 'X', parentId: otherFolderId });
      expect(theirParent.status).toBe(404);
      expectErrorShape(theirParent.body, 404, 'folder_not_found');
      const theirDeployment = await post({ name: 'X' }, t.admin, otherDeploymentId);
      expect(theirDeployment.status).toBe(404);
      expectErrorShape(theirDeployment.body, 404, 'deployment_not_found');
      const elsewhere = (await post({ name: 'Elsewhere' }, t.admin, secondDeploymentId)).body.id;
      const crossDeployment = await post({ name: 'X', parentId: elsewhere });
      expect(crossDeployment.status).toBe(404);
      const missing = await post({ name: 'X', parentId: 2_000_000_000 });
      expect(missing.status).toBe(404);
    });

    it('is 403 without FolderEdit (a Viewer), and the Explorer role may create', async () => {
      const res = await post({ name: 'Viewer folder' }, viewer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      const parent = await create('Parent for viewer');
      const nested = await post({ name: 'Viewer child', parentId: parent.id }, viewer);
      expect(nested.status).toBe(403);
      expect(await t.sql(`SELECT 1 FROM folders WHERE name LIKE 'Viewer %'`)).toHaveLength(0);
      const ok = await post({ name: 'Explorer folder' }, explorer);
      expect(ok.status).toBe(200);
      expect(ok.body.user.id).toBe(explorer.userId);
    });
  });

  describe('GET /folders', () => {
    let parent: FolderBody;
    let children: FolderBody[];
    beforeAll(async () => {
      parent = await create('Listing');
      children = [];
      for (const [name, position] of [
        ['c2', 2],
        ['c0a', 0],
        ['c1', 1],
        ['c0b', 0],
        ['c3', 3],
      ] as const) {
        children.push((await post({ name, parentId: parent.id, position })).body);
      }
      await create('Grandchild', children[0].id);
    });

    it('lists one level ordered by position then id, with the legacy fields', async () => {
      const res = await list({ parentId: parent.id });
      expect(res.status).toBe(200);
      expect(res.body.items.map((f: FolderBody) => f.name)).toEqual(['c0a', 'c0b', 'c1', 'c2', 'c3']);
      expect(res.body.items[0]).toMatchObject({
        parentId: parent.id,
        type: 'FOLDER',
        folderPath: [{ id: parent.id, name: 'Listing' }],
      });
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(5);
      expect(res.body.pagination).toEqual({ total: 5, offset: 0, limit: 100 });
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('lists the root level without parentId (or with 0), and no sub-folders', async () => {
      const res = await list({ first: 1000 });
      expect(res.status).toBe(200);
      const ids = res.body.items.map((f: FolderBody) => f.id);
      expect(ids).toContain(parent.id);
      expect(ids).not.toContain(children[0].id);
      expect(res.body.items.every((f: FolderBody) => f.parentId === null)).toBe(true);
      expect(res.body.items.every((f: FolderBody) => f.deploymentId === deploymentId)).toBe(true);
      const zero = await list({ first: 1000, parentId: 0 });
      expect(zero.body.items).toEqual(res.body.items);
    });

    it('pages with first/after without gaps or duplicates', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await list({ parentId: parent.id, first: 2, ...(after ? { after } : {}) });
        expect(res.status).toBe(200);
        seen.push(...res.body.items.map((f: FolderBody) => f.name));
        expect(res.body.pageInfo.hasPreviousPage).toBe(page > 0);
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(['c0a', 'c0b', 'c1', 'c2', 'c3']);
    });

    it('answers 400 for bad parameters and cursors', async () => {
      for (const query of [
        { first: 0 },
        { first: 'abc' },
        { parentId: 'abc' },
        { parentId: -1 },
        { after: 'nope!' },
        { after: Buffer.from('[99999999999,1]').toString('base64url') },
        { after: Buffer.from('["a",1]').toString('base64url') },
        { color: 'red' },
      ]) {
        const res = await list(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400);
      }
    });

    it('is 404 for a parent or deployment of another account', async () => {
      expect((await list({ parentId: otherFolderId })).status).toBe(404);
      const res = await list({}, t.admin, otherDeploymentId);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'deployment_not_found');
    });

    it('is 403 for a user without any folder action', async () => {
      const res = await list({}, nobody);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('GET /folders/{folderId}/ancestors', () => {
    it('answers the chain from the root down to the folder itself', async () => {
      const a = await create('Anc A');
      const b = await create('Anc B', a.id);
      const c = await create('Anc C', b.id);
      const res = await ancestors(c.id);
      expect(res.status).toBe(200);
      expect(res.body.map((f: FolderBody) => f.name)).toEqual(['Anc A', 'Anc B', 'Anc C']);
      expect(res.body[2]).toEqual(c);
      expect((await ancestors(a.id)).body).toEqual([a]);
    });

    it('is 404 for another account’s folder, 400 for bad ids', async () => {
      const res = await ancestors(otherFolderId);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'folder_not_found');
      for (const id of BAD_IDS) {
        const bad = await t.http().get(`${base()}/folders/${id}/ancestors`).set(bearer(t.admin.token));
        expect(bad.status).toBe(400);
      }
    });
  });

  describe('PUT /folders/{folderId}', () => {
    const put = (id: number, body: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().put(`${base()}/folders/${id}`).set(bearer(actor.token)).send(body);

    it('renames and reorders, changing only what is sent, and does not move', async () => {
      const parent = await create('Upd parent');
      const folder = await create('Before', parent.id);
      const res = await put(folder.id, { name: '  After  ' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: folder.id,
        name: 'After',
        position: folder.position,
        parentId: parent.id,
        updatedBy: t.admin.userId,
      });
      const moved = await put(folder.id, { position: 42, name: null });
      expect(moved.body).toMatchObject({ name: 'After', position: 42, parentId: parent.id });
      const refused = await put(folder.id, { parentId: null });
      expect(refused.status).toBe(400);
      expect(refused.body.message.join('\n')).toContain('parentId');
    });

    it('answers 400 for bad input, 403 for a Viewer, 404 elsewhere', async () => {
      const folder = await create('Guarded');
      for (const body of [{ name: '' }, { name: '  ' }, { position: 'x' }, { color: 'red' }]) {
        const res = await put(folder.id, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
      const forbidden = await put(folder.id, { name: 'Viewer' }, viewer);
      expect(forbidden.status).toBe(403);
      expectErrorShape(forbidden.body, 403, 'forbidden');
      expect((await put(otherFolderId, { name: 'Mine' })).status).toBe(404);
      const elsewhere = await t
        .http()
        .put(`${base(secondDeploymentId)}/folders/${folder.id}`)
        .set(bearer(t.admin.token))
        .send({ name: 'X' });
      expect(elsewhere.status).toBe(404);
      const [row] = await t.sql<{ name: string }>(`SELECT name FROM folders WHERE id = $1`, [folder.id]);
      expect(row.name).toBe('Guarded');
    });
  });

  describe('DELETE /folders/{folderId}', () => {
    const del = (id: number, actor: Actor = t.admin, dep = deploymentId) =>
      t
        .http()
        .delete(`${base(dep)}/folders/${id}`)
        .set(bearer(actor.token));

    it('refuses a folder with sub-folders (400) and deletes it once empty (200)', async () => {
      const parent = await create('Del parent');
      const child = await create('Del child', parent.id);
      const refused = await del(parent.id);
      expect(refused.status).toBe(400);
      expectErrorShape(refused.body, 400, 'folder_not_empty');
      expect((await del(child.id)).status).toBe(200);
      const res = await del(parent.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await t.sql(`SELECT 1 FROM folders WHERE id = ANY($1)`, [[parent.id, child.id]])).toHaveLength(
        0,
      );
      expect((await ancestors(parent.id)).status).toBe(404);
      expect((await del(parent.id)).status).toBe(404);
    });

    it('returns the workbooks and reports inside to the root and removes grants on the folder', async () => {
      const folder = await create('Has content');
      const [wb] = await t.sql<{ id: number }>(
        `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, user_id, created_by)
         VALUES ($1, $2, $3, 'Inside', $4, $4) RETURNING id`,
        [t.admin.accountId, deploymentId, folder.id, t.admin.userId],
      );
      const [report] = await t.sql<{ id: number }>(
        `INSERT INTO reports (account_id, deployment_id, folder_id, name, user_id, created_by)
         VALUES ($1, $2, $3, 'Inside', $4, $4) RETURNING id`,
        [t.admin.accountId, deploymentId, folder.id, t.admin.userId],
      );
      await createRole('Folder readers', folder.id, ['FolderRead']);
      expect((await del(folder.id)).status).toBe(200);
      expect(
        (
          await t.sql<{ folder_id: number | null }>(`SELECT folder_id FROM workbooks WHERE id = $1`, [wb.id])
        )[0],
      ).toEqual({ folder_id: null });
      expect(
        (
          await t.sql<{ folder_id: number | null }>(`SELECT folder_id FROM reports WHERE id = $1`, [
            report.id,
          ])
        )[0],
      ).toEqual({ folder_id: null });
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE resource_type = 'Folder' AND resource_id = $1`, [
          String(folder.id),
        ]),
      ).toHaveLength(0);
    });

    it('is 403 without FolderManage (Viewer, Explorer on a folder they do not own), 404 elsewhere', async () => {
      const folder = await create('Keep me');
      for (const actor of [viewer, explorer]) {
        const res = await del(folder.id, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect((await del(otherFolderId)).status).toBe(404);
      expect((await del(folder.id, t.admin, otherDeploymentId)).status).toBe(404);
      expect((await del(folder.id, t.admin, secondDeploymentId)).status).toBe(404);
      for (const id of BAD_IDS) expect((await del(id as unknown as number)).status).toBe(400);
      expect(await t.sql(`SELECT 1 FROM folders WHERE id = $1`, [folder.id])).toHaveLength(1);
      expect(await t.sql(`SELECT 1 FROM folders WHERE id = $1`, [otherFolderId])).toHaveLength(1);
    });
  });

  describe('grants on a folder', () => {
    let granted: FolderBody;
    let grantedChild: FolderBody;
    let hidden: FolderBody;
    let reader: Actor;
    let editor: Actor;

    beforeAll(async () => {
      granted = await create('Granted');
      grantedChild = await create('Granted child', granted.id);
      hidden = await create('Hidden');
      await create('Hidden child', hidden.id);
      reader = await newUser(t, t.admin, { defaultRoles: [] });
      editor = await newUser(t, t.admin, { defaultRoles: [] });
      await assign(await createRole('Granted readers', granted.id, ['FolderRead']), reader);
      await assign(await createRole('Granted editors', granted.id, ['FolderEdit']), editor);
    });

    it('shows the granted folder and its sub-folders only', async () => {
      const root = await list({ first: 1000 }, reader);
      expect(root.status).toBe(200);
      expect(root.body.items.map((f: FolderBody) => f.id)).toEqual([granted.id]);
      expect(root.body.count).toBe(1);
      const inside = await list({ parentId: granted.id }, reader);
      expect(inside.body.items.map((f: FolderBody) => f.id)).toEqual([grantedChild.id]);
      const chain = await ancestors(grantedChild.id, reader);
      expect(chain.status).toBe(200);
      expect(chain.body.map((f: FolderBody) => f.id)).toEqual([granted.id, grantedChild.id]);
    });

    it('answers 404 for folders outside the grant', async () => {
      expect((await list({ parentId: hidden.id }, reader)).status).toBe(404);
      const res = await ancestors(hidden.id, reader);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'folder_not_found');
      const rename = await t
        .http()
        .put(`${base()}/folders/${hidden.id}`)
        .set(bearer(editor.token))
        .send({ name: 'Mine' });
      expect(rename.status).toBe(404);
    });

    it('allows reading but not editing with FolderRead', async () => {
      const rename = await t
        .http()
        .put(`${base()}/folders/${granted.id}`)
        .set(bearer(reader.token))
        .send({ name: 'Renamed' });
      expect(rename.status).toBe(403);
      expect((await post({ name: 'Nope', parentId: granted.id }, reader)).status).toBe(403);
    });

    it('allows creating inside (not at the root) and renaming below with FolderEdit', async () => {
      const inside = await post({ name: 'By editor', parentId: grantedChild.id }, editor);
      expect(inside.status).toBe(200);
      expect(inside.body.user.id).toBe(editor.userId);
      const atRoot = await post({ name: 'Editor root' }, editor);
      expect(atRoot.status).toBe(403);
      const rename = await t
        .http()
        .put(`${base()}/folders/${grantedChild.id}`)
        .set(bearer(editor.token))
        .send({ name: 'Renamed child' });
      expect(rename.status).toBe(200);
      const removeGranted = await t
        .http()
        .delete(`${base()}/folders/${grantedChild.id}`)
        .set(bearer(editor.token));
      expect(removeGranted.status).toBe(403);
    });
  });

  it('is 401 without a token on every route', async () => {
    const folder = await create('Auth');
    const routes: Array<['get' | 'post' | 'put' | 'delete', string]> = [
      ['get', `${base()}/folders`],
      ['post', `${base()}/folders`],
      ['put', `${base()}/folders/${folder.id}`],
      ['delete', `${base()}/folders/${folder.id}`],
      ['get', `${base()}/folders/${folder.id}/ancestors`],
    ];
    for (const [method, path] of routes) {
      const res = await t.http()[method](path).send({ name: 'x' });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      expectErrorShape(res.body, 401, 'unauthorized');
    }
    expect(await t.sql(`SELECT 1 FROM folders WHERE id = $1`, [folder.id])).toHaveLength(1);
  });
});
