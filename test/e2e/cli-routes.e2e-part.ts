/**
 * The routes the reference command-line tool calls that the reference OpenAPI document lacks
 * (docs/command-line-tool.md), each mapped onto what this service already holds. Each answer is
 * checked for the fields the tool reads from it.
 */
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
import { deploymentInput, Factories } from '../support/factories.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BAD_IDS = ['abc', '0', '-1', '1.5', '99999999999'];

describe('routes of the command-line tool', () => {
  let t: TestApp;
  let fake: DataApiFake;
  let make: Factories;
  let viewer: Actor;
  /** A console user without any role: holds no action anywhere. */
  let nobody: Actor;
  let other: Actor;

  beforeAll(async () => {
    fake = await startDataApiFake({ secret: 'cli-routes-secret-'.repeat(3) });
    t = await startApp(fake.env());
    make = new Factories(t.app, t.admin);
    [viewer, nobody, other] = await Promise.all([
      newUser(t, t.admin, { defaultRoles: ['Viewer'] }),
      newUser(t, t.admin, { defaultRoles: [] }),
      newAccount(t, 'globex'),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const as = (actor: Actor) => bearer(actor.token);

  async function deployment(by: Actor = t.admin): Promise<number> {
    return (await make.deployment({ by })).id;
  }

  async function report(
    deploymentId: number,
    fields: { folderId?: number; workbookId?: number } = {},
    by: Actor = t.admin,
  ): Promise<number> {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${deploymentId}/reports`)
      .set(as(by))
      .send({ name: `Report ${Math.random().toString(36).slice(2, 8)}`, ...fields });
    if (res.status !== 200) throw new Error(`report: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  }

  describe('POST /api/v1/deployments (created without a scaffold)', () => {
    const PATH = '/api/v1/deployments';

    it('answers 401 without a token, 403 without DeploymentCreate', async () => {
      const anonymous = await t.http().post(PATH).send(deploymentInput());
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401, 'unauthorized');
      const res = await t.http().post(PATH).set(as(viewer)).send(deploymentInput());
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('refuses bad input and unknown fields with 400, creating nothing', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      for (const body of [
        deploymentInput({ name: undefined }),
        deploymentInput({ isManaged: 'yes' }),
        deploymentInput({ creationStep: 'nowhere' }),
        deploymentInput({ bootstrap: true }),
      ]) {
        const res = await t.http().post(PATH).set(as(t.admin)).send(body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const unknownRegion = await t
        .http()
        .post(PATH)
        .set(as(t.admin))
        .send(deploymentInput({ region: 'mars-north-1' }));
      expect(unknownRegion.status).toBe(400);
      expectErrorShape(unknownRegion.body, 400, 'unknown_region');
      expect(await t.sql(`SELECT count(*)::int AS n FROM deployments`)).toEqual(before);
    });

    it('creates the deployment with the fields the tool reads, no starter project and no build', async () => {
      const res = await t
        .http()
        .post(PATH)
        .set(as(t.admin))
        .send(deploymentInput({ name: 'Bare', creationStep: 'project' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Bare',
        deploymentUrl: expect.any(String),
        creationStep: 'project',
      });
      const id = res.body.id as number;
      expect(
        await t.sql(`SELECT count(*)::int AS n FROM deployment_builds WHERE deployment_id = $1`, [id]),
      ).toEqual([{ n: 0 }]);
      // The production environment exists, as for any deployment.
      expect(await t.sql(`SELECT type FROM environments WHERE deployment_id = $1 ORDER BY id`, [id])).toEqual(
        [{ type: 'production' }],
      );
      // Its deploy branch exists and holds no file.
      const files = await t.http().get(`/build/api/v1/deployments/${id}/data-model/files`).set(as(t.admin));
      expect(files.status).toBe(200);
      expect(files.body.items).toEqual([]);
      const status = await t.http().get(`/api/v1/deployments/${id}/build-status`).set(as(t.admin));
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ branchName: 'master', status: 'none' });
      // The deployment is the caller's account's: another account does not see it.
      const foreign = await t.http().get(`/api/v1/deployments/${id}`).set(as(other));
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
    });

    it('gives a deploy branch that takes code: dev mode opens on it and a commit builds', async () => {
      const res = await t
        .http()
        .post(PATH)
        .set(as(t.admin))
        .send(deploymentInput({ name: 'Bare too' }));
      expect(res.status).toBe(200);
      const base = `/build/api/v1/deployments/${res.body.id}`;
      const dev = await t.http().post(`${base}/dev-mode`).set(as(t.admin)).send({});
      expect(dev.status).toBe(200);
      const write = await t
        .http()
        .put(`${base}/data-model/files`)
        .set(as(t.admin))
        .send({ files: [{ path: 'model/cubes/a.yml', content: 'cubes: []\n' }] });
      expect(write.status).toBe(200);
      const commit = await t.http().post(`${base}/commit`).set(as(t.admin)).send({ message: 'First' });
      expect(commit.status).toBe(200);
      const files = await t
        .http()
        .get(`${base}/data-model/files`)
        .query({ branchName: dev.body.branchName })
        .set(as(t.admin));
      expect(JSON.stringify(files.body.items)).toContain('a.yml');
      expect(JSON.stringify(files.body.items)).not.toContain('orders');
    });

    it('takes its first code from the upload `cube deploy` makes, which queues the first build', async () => {
      const res = await t
        .http()
        .post(PATH)
        .set(as(t.admin))
        .send(deploymentInput({ name: 'Deployed' }));
      const id = res.body.id as number;
      const base = `/build/api/v1/deployments/${id}/data-model`;
      const hashes = await t.http().get(`${base}/file-hashes`).set(as(t.admin));
      expect(hashes.status).toBe(200);
      expect(hashes.body.files ?? hashes.body).toEqual({});
      // The tool's body of upload/start without --branch: an empty object.
      const start = await t.http().post(`${base}/upload/start`).set(as(t.admin)).send({});
      expect(start.status).toBe(200);
      const content = 'cubes:\n  - name: orders\n    sql_table: orders\n';
      const part = await t
        .http()
        .post(`${base}/upload/file`)
        .set(as(t.admin))
        .field('transaction', JSON.stringify(start.body.transaction))
        .field('fileName', 'model/cubes/orders.yml')
        .attach('file', Buffer.from(content), 'orders.yml');
      expect(part.status).toBe(200);
      const finish = await t
        .http()
        .post(`${base}/upload/finish`)
        .set(as(t.admin))
        .send({
          transaction: start.body.transaction,
          files: { 'model/cubes/orders.yml': { hash: part.body.hash } },
          autoRemoveFiles: true,
          commitMessage: 'First deploy',
        });
      expect(finish.status).toBe(200);
      expect(
        await t.sql(`SELECT count(*)::int AS n FROM deployment_builds WHERE deployment_id = $1`, [id]),
      ).toEqual([{ n: 1 }]);
      const after = await t.http().get(`${base}/file-hashes`).set(as(t.admin));
      expect(Object.keys(after.body.files ?? after.body)).toEqual(['model/cubes/orders.yml']);
    });

    it('is the build-served create less the scaffold: that one starts with the starter project', async () => {
      const res = await t.http().post('/build/api/v1/deployments').set(as(t.admin)).send(deploymentInput());
      expect(res.status).toBe(200);
      const builds = await t.sql(
        `SELECT count(*)::int AS n FROM deployment_builds WHERE deployment_id = $1`,
        [res.body.id],
      );
      expect(builds).toEqual([{ n: 1 }]);
      const files = await t
        .http()
        .get(`/build/api/v1/deployments/${res.body.id}/data-model/files`)
        .set(as(t.admin));
      expect(files.body.items.length).toBeGreaterThan(0);
    });
  });

  describe('GET /api/v1/deployments/{id}/report-folders', () => {
    let d: number;
    let a: number;
    let b: number;
    let c: number;

    beforeAll(async () => {
      d = await deployment();
      a = (await make.folder(d, { name: 'Sales' })).id;
      b = (await make.folder(d, { name: 'EMEA', parentId: a })).id;
      c = (await make.folder(d, { name: 'Empty' })).id;
      const workbook = (await make.workbook(d, { folderId: a })).id;
      await report(d, { folderId: a });
      await report(d, { folderId: a });
      await report(d, { folderId: b });
      await report(d);
      await report(d, { workbookId: workbook });
    });

    const path = (id: number | string = d) => `/api/v1/deployments/${id}/report-folders`;

    it('answers 401 without a token, 403 to a caller who may read no folder', async () => {
      const anonymous = await t.http().get(path());
      expect(anonymous.status).toBe(401);
      const res = await t.http().get(path()).set(as(nobody));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('answers 404 for another account’s deployment or an unknown one', async () => {
      const foreign = await deployment(other);
      for (const id of [foreign, 2_000_000_000]) {
        const res = await t.http().get(path(id)).set(as(t.admin));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });

    it('refuses a bad id, bad paging and unknown parameters with 400', async () => {
      for (const id of BAD_IDS) {
        const res = await t.http().get(path(id)).set(as(t.admin));
        expect(res.status).toBe(400);
      }
      for (const query of [{ first: 0 }, { first: 'x' }, { after: 'nonsense' }, { parentId: a }]) {
        const res = await t.http().get(path()).query(query).set(as(t.admin));
        expect(res.status).toBe(400);
      }
    });

    it('lists every folder, all levels, by id, with the reports directly in each (the tool’s columns)', async () => {
      const res = await t.http().get(path()).set(as(t.admin));
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        { id: a, name: 'Sales', parentId: null, position: expect.any(Number), reportsCount: 2 },
        { id: b, name: 'EMEA', parentId: a, position: expect.any(Number), reportsCount: 1 },
        { id: c, name: 'Empty', parentId: null, position: expect.any(Number), reportsCount: 0 },
      ]);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('pages by cursor', async () => {
      const first = await t.http().get(path()).query({ first: 2 }).set(as(t.admin));
      expect(first.body.items.map((f: { id: number }) => f.id)).toEqual([a, b]);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const next = await t
        .http()
        .get(path())
        .query({ first: 2, after: first.body.pageInfo.endCursor })
        .set(as(t.admin));
      expect(next.body.items.map((f: { id: number }) => f.id)).toEqual([c]);
      expect(next.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    });

    it('shows a caller only the folders and reports they can read', async () => {
      const guest = await make.user({ role: 'Guest' });
      await make.grant(guest, [{ resourceType: 'Folder', actions: ['FolderRead'], resources: [String(b)] }]);
      const res = await t.http().get(path()).set(as(guest));
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        { id: b, name: 'EMEA', parentId: a, position: expect.any(Number), reportsCount: 1 },
      ]);
      // The same reports the report list shows them in that folder.
      const reports = await t
        .http()
        .get(`/api/v1/deployments/${d}/reports`)
        .query({ folderId: b })
        .set(as(guest));
      expect(reports.body.items).toHaveLength(1);
    });
  });

  describe('resource policies: GET /api/v1/resource-policies/, PUT .../user and .../group', () => {
    const BASE = '/api/v1/resource-policies';
    let d: number;
    let workbook: number;
    let folder: number;
    let user: Actor;
    let groupId: number;

    beforeAll(async () => {
      d = await deployment();
      folder = (await make.folder(d)).id;
      workbook = (await make.workbook(d)).id;
      user = await make.user({ role: 'Guest' });
      groupId = (await make.group({ name: 'Analysts' })).id;
    });

    const read = (query: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().get(`${BASE}/`).query(query).set(as(actor));
    const setUser = (body: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().put(`${BASE}/user`).set(as(actor)).send(body);
    const setGroup = (body: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().put(`${BASE}/group`).set(as(actor)).send(body);

    it('answers 401 without a token and 403 to a non-admin, on each route', async () => {
      const query = { resourceType: 'Workbook', resourceId: workbook };
      const body = { resourceType: 'Workbook', resourceId: workbook, userId: user.userId, groupId };
      expect((await t.http().get(`${BASE}/`).query(query)).status).toBe(401);
      expect((await t.http().put(`${BASE}/user`).send(body)).status).toBe(401);
      expect((await t.http().put(`${BASE}/group`).send(body)).status).toBe(401);
      for (const res of [
        await read(query, viewer),
        await setUser({ resourceType: 'Workbook', resourceId: workbook, userId: user.userId }, viewer),
        await setGroup({ resourceType: 'Workbook', resourceId: workbook, groupId }, viewer),
      ]) {
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
    });

    it('refuses bad input and unknown fields with 400, changing nothing', async () => {
      for (const query of [
        {},
        { resourceType: 'Workbook' },
        { resourceType: 'Nothing', resourceId: 1 },
        { resourceType: 'Workbook', resourceId: -1 },
        { resourceType: 'Workbook', resourceId: 'x' },
        { resourceType: 'Workbook', resourceId: workbook, extra: 1 },
      ]) {
        const res = await read(query);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const ok = { resourceType: 'Workbook', resourceId: workbook, userId: user.userId };
      for (const body of [
        { ...ok, action: 'Fly' },
        { ...ok, userId: 0 },
        { ...ok, userId: 'me' },
        { resourceType: 'Workbook', resourceId: workbook },
        { ...ok, note: 'x' },
      ]) {
        const res = await setUser(body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const group = await setGroup({ resourceType: 'Workbook', resourceId: workbook, groupId, userId: 1 });
      expect(group.status).toBe(400);
      for (const type of ['Dashboard', 'Agent', 'ReportFolder']) {
        const res = await read({ resourceType: type, resourceId: 1 });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unsupported_resource_type');
      }
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`, [
          user.userId,
        ]),
      ).toEqual([]);
    });

    it('answers 404 for another account’s resource, user or group, and for unknown ones', async () => {
      const foreignDeployment = await deployment(other);
      const foreignWorkbook = (await make.workbook(foreignDeployment, { by: other })).id;
      const foreignGroup = (await make.group({ by: other })).id;
      const foreignUser = await newUser(t, other);
      const cases: Array<[Promise<{ status: number; body: unknown }>, string]> = [
        [read({ resourceType: 'Workbook', resourceId: foreignWorkbook }), 'workbook_not_found'],
        [read({ resourceType: 'Deployment', resourceId: foreignDeployment }), 'deployment_not_found'],
        [read({ resourceType: 'Folder', resourceId: 2_000_000_000 }), 'folder_not_found'],
        [read({ resourceType: 'Report', resourceId: 0 }), 'report_not_found'],
        [
          setUser({
            resourceType: 'Workbook',
            resourceId: foreignWorkbook,
            userId: user.userId,
            action: 'WorkbookRead',
          }),
          'workbook_not_found',
        ],
        [
          setUser({
            resourceType: 'Workbook',
            resourceId: workbook,
            userId: foreignUser.userId,
            action: 'WorkbookRead',
          }),
          'user_not_found',
        ],
        [
          setGroup({
            resourceType: 'Workbook',
            resourceId: workbook,
            groupId: foreignGroup,
            action: 'WorkbookRead',
          }),
          'group_not_found',
        ],
      ];
      for (const [req, code] of cases) {
        const res = await req;
        expect({ status: res.status, code }).toEqual({ status: 404, code });
        expectErrorShape(res.body, 404, code);
      }
      expect(await t.sql(`SELECT 1 FROM policies WHERE account_id = $1`, [other.accountId])).toEqual([]);
    });

    it('sets, replaces and clears a user’s policy on one resource, keeping their other grants', async () => {
      await make.grant(user, [
        { resourceType: 'Folder', actions: ['FolderRead'], resources: [String(folder)] },
      ]);
      const hidden = await t.http().get(`/api/v1/deployments/${d}/workbooks/${workbook}`).set(as(user));
      expect(hidden.status).toBe(404);

      const set = await setUser({
        resourceType: 'Workbook',
        resourceId: workbook,
        userId: user.userId,
        action: 'WorkbookRead',
      });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({
        resourceType: 'Workbook',
        resourceId: workbook,
        userPolicies: [{ userId: user.userId, actions: ['WorkbookRead'] }],
        groupPolicies: [],
      });
      // The grant is the one the user's policies hold, and it works.
      const policies = await t.http().get(`/api/v1/users/${user.userId}/policies`).set(as(t.admin));
      expect(policies.body.policies).toEqual(
        expect.arrayContaining([
          { resourceType: 'Folder', actions: ['FolderRead'], resources: [String(folder)] },
          { resourceType: 'Workbook', actions: ['WorkbookRead'], resources: [String(workbook)] },
        ]),
      );
      const seen = await t.http().get(`/api/v1/deployments/${d}/workbooks/${workbook}`).set(as(user));
      expect(seen.status).toBe(200);

      const replaced = await setUser({
        resourceType: 'Workbook',
        resourceId: workbook,
        userId: user.userId,
        action: 'WorkbookEdit',
      });
      expect(replaced.body.userPolicies).toEqual([{ userId: user.userId, actions: ['WorkbookEdit'] }]);

      const cleared = await setUser({ resourceType: 'Workbook', resourceId: workbook, userId: user.userId });
      expect(cleared.status).toBe(200);
      expect(cleared.body.userPolicies).toEqual([]);
      const after = await t.http().get(`/api/v1/users/${user.userId}/policies`).set(as(t.admin));
      expect(after.body.policies).toEqual([
        { resourceType: 'Folder', actions: ['FolderRead'], resources: [String(folder)] },
      ]);
      const gone = await t.http().get(`/api/v1/deployments/${d}/workbooks/${workbook}`).set(as(user));
      expect(gone.status).toBe(404);
    });

    it('sets and clears a group’s policy, which its members then hold; null clears too', async () => {
      const member = await make.user({ role: 'Guest' });
      const group = await make.group({ members: [member] });
      const set = await setGroup({
        resourceType: 'Workbook',
        resourceId: workbook,
        groupId: group.id,
        action: 'WorkbookRead',
      });
      expect(set.status).toBe(200);
      expect(set.body.groupPolicies).toEqual([{ groupId: group.id, actions: ['WorkbookRead'] }]);
      const groupPolicies = await t.http().get(`/api/v1/groups/${group.id}/policies`).set(as(t.admin));
      expect(groupPolicies.body.policies).toEqual([
        { resourceType: 'Workbook', actions: ['WorkbookRead'], resources: [String(workbook)] },
      ]);
      const seen = await t.http().get(`/api/v1/deployments/${d}/workbooks/${workbook}`).set(as(member));
      expect(seen.status).toBe(200);

      const listed = await read({ resourceType: 'Workbook', resourceId: workbook });
      expect(listed.status).toBe(200);
      expect(listed.body.groupPolicies).toEqual([{ groupId: group.id, actions: ['WorkbookRead'] }]);

      const cleared = await setGroup({
        resourceType: 'Workbook',
        resourceId: workbook,
        groupId: group.id,
        action: null,
      });
      expect(cleared.body.groupPolicies).toEqual([]);
      // The member holds WorkbookRead nowhere any more.
      const hidden = await t.http().get(`/api/v1/deployments/${d}/workbooks/${workbook}`).set(as(member));
      expect(hidden.status).toBe(403);
    });

    it('reads the policies of a resource with or without the trailing slash, users and groups by id', async () => {
      const second = await make.user({ role: 'Guest' });
      await setUser({
        resourceType: 'Folder',
        resourceId: folder,
        userId: second.userId,
        action: 'FolderEdit',
      });
      await setGroup({ resourceType: 'Folder', resourceId: folder, groupId, action: 'FolderRead' });
      for (const route of [BASE, `${BASE}/`]) {
        const res = await t
          .http()
          .get(route)
          .query({ resourceType: 'Folder', resourceId: folder })
          .set(as(t.admin));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          resourceType: 'Folder',
          resourceId: folder,
          userPolicies: [
            { userId: user.userId, actions: ['FolderRead'] },
            { userId: second.userId, actions: ['FolderEdit'] },
          ].sort((x, y) => x.userId - y.userId),
          groupPolicies: [{ groupId, actions: ['FolderRead'] }],
        });
      }
    });

    it('sets a Global policy, which the user’s policies read back as on every resource', async () => {
      const global = await make.user({ role: 'Guest' });
      const res = await setUser({
        resourceType: 'Global',
        resourceId: 0,
        userId: global.userId,
        action: 'DeploymentRead',
      });
      expect(res.status).toBe(200);
      expect(res.body.userPolicies).toEqual(
        expect.arrayContaining([{ userId: global.userId, actions: ['DeploymentRead'] }]),
      );
      const policies = await t.http().get(`/api/v1/users/${global.userId}/policies`).set(as(t.admin));
      expect(policies.body.policies).toEqual([
        { resourceType: 'Global', actions: ['DeploymentRead'], resources: ['All'] },
      ]);
      const deployments = await t.http().get('/api/v1/deployments').set(as(global));
      expect(deployments.status).toBe(200);
      expect(deployments.body.items.length).toBeGreaterThan(0);
    });
  });

  describe('GET /api/v1/user-groups/', () => {
    let first: number;
    let second: number;

    beforeAll(async () => {
      const members = await Promise.all([make.user(), make.user()]);
      first = (await make.group({ name: 'CLI one', description: 'First', members })).id;
      second = (await make.group({ name: 'CLI two' })).id;
      await make.group({ name: 'Theirs', by: other });
    });

    it('answers 401 without a token and 403 to a non-admin', async () => {
      expect((await t.http().get('/api/v1/user-groups/')).status).toBe(401);
      const res = await t.http().get('/api/v1/user-groups/').set(as(viewer));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('refuses bad paging and unknown parameters with 400', async () => {
      for (const query of [{ first: 0 }, { first: 1001 }, { after: '???' }, { limit: 5 }]) {
        const res = await t.http().get('/api/v1/user-groups/').query(query).set(as(t.admin));
        expect(res.status).toBe(400);
      }
    });

    it('lists the account’s groups with the columns the tool reads (id, name, userCount, description)', async () => {
      for (const route of ['/api/v1/user-groups/', '/api/v1/user-groups']) {
        const res = await t.http().get(route).query({ search: 'CLI' }).set(as(t.admin));
        expect(res.status).toBe(200);
        expect(res.body.items).toEqual([
          expect.objectContaining({
            id: first,
            name: 'CLI one',
            description: 'First',
            userCount: 2,
            memberCount: 2,
          }),
          expect.objectContaining({
            id: second,
            name: 'CLI two',
            description: null,
            userCount: 0,
            memberCount: 0,
          }),
        ]);
        expect(res.body.items[0].createdAt).toMatch(ISO);
      }
      const all = await t.http().get('/api/v1/user-groups/').set(as(t.admin));
      expect(all.body.items.map((g: { name: string }) => g.name)).not.toContain('Theirs');
      const plain = await t.http().get('/api/v1/groups').set(as(t.admin));
      expect(all.body.items.map((g: { id: number }) => g.id)).toEqual(
        plain.body.items.map((g: { id: number }) => g.id),
      );
    });

    it('pages by cursor as GET /groups does', async () => {
      const page = await t
        .http()
        .get('/api/v1/user-groups/')
        .query({ search: 'CLI', first: 1 })
        .set(as(t.admin));
      expect(page.body.items.map((g: { id: number }) => g.id)).toEqual([first]);
      const next = await t
        .http()
        .get('/api/v1/user-groups/')
        .query({ search: 'CLI', first: 1, after: page.body.pageInfo.endCursor })
        .set(as(t.admin));
      expect(next.body.items.map((g: { id: number }) => g.id)).toEqual([second]);
    });
  });

  describe('DELETE /api/v1/user-attributes/{id}', () => {
    const create = async (name: string, actor: Actor = t.admin): Promise<number> => {
      const res = await t
        .http()
        .post('/api/v1/user-attributes')
        .set(as(actor))
        .send({ name, type: 'string' });
      if (res.status !== 200) throw new Error(`attribute: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as number;
    };

    it('answers 401 without a token, 403 to a non-admin, 400 for a bad id', async () => {
      const id = await create('cli_keep');
      expect((await t.http().delete(`/api/v1/user-attributes/${id}`)).status).toBe(401);
      const forbidden = await t.http().delete(`/api/v1/user-attributes/${id}`).set(as(viewer));
      expect(forbidden.status).toBe(403);
      expectErrorShape(forbidden.body, 403, 'forbidden');
      for (const bad of BAD_IDS) {
        const res = await t.http().delete(`/api/v1/user-attributes/${bad}`).set(as(t.admin));
        expect(res.status).toBe(400);
      }
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE id = $1`, [id])).toHaveLength(1);
    });

    it('answers 404 for another account’s attribute and an unknown one', async () => {
      const foreign = await create('cli_theirs', other);
      for (const id of [foreign, 2_000_000_000]) {
        const res = await t.http().delete(`/api/v1/user-attributes/${id}`).set(as(t.admin));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'user_attribute_not_found');
      }
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE id = $1`, [foreign])).toHaveLength(1);
    });

    it('deletes the attribute with every value of it (204); the name is free again', async () => {
      const id = await create('cli_region');
      const holder = await make.user();
      const value = await t
        .http()
        .post('/api/v1/user-attribute-values')
        .set(as(t.admin))
        .send({ userId: holder.userId, userAttributeId: id, value: 'north' });
      expect(value.status).toBe(200);

      const res = await t.http().delete(`/api/v1/user-attributes/${id}`).set(as(t.admin));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await t.sql(`SELECT 1 FROM user_attribute_values WHERE user_attribute_id = $1`, [id])).toEqual(
        [],
      );
      const values = await t.http().get(`/api/v1/user-attribute-values/${holder.userId}`).set(as(t.admin));
      expect(JSON.stringify(values.body)).not.toContain('cli_region');
      const again = await t.http().delete(`/api/v1/user-attributes/${id}`).set(as(t.admin));
      expect(again.status).toBe(404);
      expect(await create('cli_region')).toEqual(expect.any(Number));
    });
  });

  describe('GET /api/v1/app-theme and GET /api/v1/users/embed-theme', () => {
    const THEME = {
      palette: { accent: { hue: 210, saturation: 60 }, base: { color: '#112233' } },
      logoUrl: 'https://cdn.acme.test/logo.svg',
    };

    it('answer 401 without a token and 400 for an unknown parameter', async () => {
      for (const route of ['/api/v1/app-theme', '/api/v1/users/embed-theme']) {
        expect((await t.http().get(route)).status).toBe(401);
        const res = await t.http().get(route).query({ x: 1 }).set(as(viewer));
        expect(res.status).toBe(400);
      }
    });

    it('answer the account’s theme to any of its users, and only theirs', async () => {
      const before = await t.http().get('/api/v1/app-theme').set(as(viewer));
      expect(before.status).toBe(200);
      expect(before.body).toEqual({ appTheme: null, applyThemeGlobally: false });

      const put = await t
        .http()
        .put('/api/v1/app-config')
        .set(as(t.admin))
        .send({ appTheme: THEME, applyThemeGlobally: true });
      expect(put.status).toBe(200);
      const config = await t.http().get('/api/v1/app-config').set(as(viewer));
      const theme = await t.http().get('/api/v1/app-theme').set(as(viewer));
      expect(theme.body).toEqual({ appTheme: config.body.appTheme, applyThemeGlobally: true });
      expect(theme.body.appTheme).not.toBeNull();

      const theirs = await t.http().get('/api/v1/app-theme').set(as(other));
      expect(theirs.body).toEqual({ appTheme: null, applyThemeGlobally: false });
    });

    it('answers the caller’s own theme with the account’s, not as a user id', async () => {
      const me = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const app = await t.http().get('/api/v1/app-theme').set(as(me));
      const unset = await t.http().get('/api/v1/users/embed-theme').set(as(me));
      expect(unset.status).toBe(200);
      expect(unset.body).toEqual({
        appTheme: app.body.appTheme,
        applyThemeGlobally: app.body.applyThemeGlobally,
        theme: null,
      });
      const patch = await t.http().patch('/api/v1/users/me/settings').set(as(me)).send({ theme: 'dark' });
      expect(patch.status).toBe(200);
      const dark = await t.http().get('/api/v1/users/embed-theme').set(as(me));
      expect(dark.body).toEqual({ ...app.body, theme: 'dark' });
      // Another user's choice is theirs.
      const others = await t.http().get('/api/v1/users/embed-theme').set(as(viewer));
      expect(others.body.theme).toBeNull();
      // A user id still reaches the user.
      const byId = await t.http().get(`/api/v1/users/${me.userId}`).set(as(t.admin));
      expect(byId.status).toBe(200);
    });
  });

  describe('POST /api/v1/meta/', () => {
    let d: number;
    const CUBES = [
      { name: 'orders', title: 'Orders', measures: [{ name: 'orders.count' }], dimensions: [] },
      { name: 'customers', title: 'Customers', measures: [], dimensions: [{ name: 'customers.id' }] },
    ];

    beforeAll(async () => {
      d = await deployment();
      const vars = await t
        .http()
        .put(`/api/v1/deployments/${d}/env-vars`)
        .set(as(t.admin))
        .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: fake.secret }] });
      expect(vars.status).toBe(200);
      fake.onMeta(() => ({ cubes: CUBES }));
    });

    const meta = (body: unknown, actor?: Actor) => {
      const req = t.http().post('/api/v1/meta/');
      return (actor ? req.set(as(actor)) : req).send(body as object);
    };

    it('answers 401 without a token and 403 without SchemaRead', async () => {
      expect((await meta({ selectors: { deploymentId: d } })).status).toBe(401);
      const res = await meta({ selectors: { deploymentId: d } }, viewer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('refuses bad selectors and unknown fields with 400, asking the data API nothing', async () => {
      const asked = fake.requests.length;
      for (const body of [
        {},
        { selectors: [] },
        { selectors: 'orders' },
        { selectors: {} },
        { selectors: { deploymentId: 'one' } },
        { selectors: { deploymentId: d, cubes: 'orders' } },
        { selectors: { deploymentId: d, branch: 'main' } },
        { selectors: { deploymentId: d }, extra: true },
      ]) {
        const res = await meta(body, t.admin);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(fake.requests.length).toBe(asked);
    });

    it('answers 404 for another account’s deployment and an unknown one', async () => {
      const foreign = await deployment(other);
      for (const id of [foreign, 2_000_000_000]) {
        const res = await meta({ selectors: { deploymentId: id } }, t.admin);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });

    it('answers the cubes and views of the deployment’s /v1/meta, read with an empty security context', async () => {
      const res = await meta({ selectors: { deploymentId: d } }, t.admin);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ cubes: CUBES });
      const last = fake.requests[fake.requests.length - 1];
      expect(last).toMatchObject({
        path: '/cubejs-api/v1/meta',
        deploymentId: d,
        auth: 'ok',
        securityContext: {},
      });
      const plain = await t
        .http()
        .post('/api/v1/meta')
        .set(as(t.admin))
        .send({ selectors: { deploymentId: d } });
      expect(plain.status).toBe(200);
    });

    it('keeps only the cubes and views named', async () => {
      const res = await meta({ selectors: { deploymentId: d, cubes: ['customers', 'nothing'] } }, t.admin);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ cubes: [CUBES[1]] });
    });

    it('answers 409 for a deployment without CUBEJS_API_SECRET', async () => {
      const bare = await deployment();
      const res = await meta({ selectors: { deploymentId: bare } }, t.admin);
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'data_api_not_configured');
    });
  });

  describe('GET /api/v1/api-keys/{id}', () => {
    it('answers 401 without a token, 400 for a bad id', async () => {
      const key = await make.apiKey();
      expect((await t.http().get(`/api/v1/api-keys/${key.id}`)).status).toBe(401);
      for (const bad of BAD_IDS) {
        const res = await t.http().get(`/api/v1/api-keys/${bad}`).set(as(t.admin));
        expect(res.status).toBe(400);
      }
    });

    it('answers one of the caller’s live keys, without its secret', async () => {
      const key = await make.apiKey(t.admin, { name: 'ci' });
      const res = await t.http().get(`/api/v1/api-keys/${key.id}`).set(as(t.admin));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: key.id,
        name: 'ci',
        prefix: key.prefix,
        userId: t.admin.userId,
        createdAt: expect.stringMatching(ISO),
        lastUsedAt: null,
        expiresAt: null,
      });
    });

    it('answers 404 for another user’s key, another account’s and a revoked one', async () => {
      const mine = await make.apiKey(viewer);
      const theirs = await make.apiKey(other);
      const revoked = await make.apiKey(t.admin);
      expect((await t.http().delete(`/api/v1/api-keys/${revoked.id}`).set(as(t.admin))).status).toBe(204);
      for (const id of [mine.id, theirs.id, revoked.id, 2_000_000_000]) {
        const res = await t.http().get(`/api/v1/api-keys/${id}`).set(as(t.admin));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'api_key_not_found');
      }
    });
  });

  describe('the paths the tool spells with a trailing slash, and those it calls that are not served', () => {
    it('are the routes without the slash', async () => {
      for (const path of [
        '/api/v1/deployments/',
        '/api/v1/users/',
        '/api/v1/user-attributes/',
        '/api/v1/oidc-token-configs/',
        '/api/v1/oauth-integrations/',
        '/api/v1/user-oauth-tokens/',
      ]) {
        const slash = await t.http().get(path).set(as(t.admin));
        const plain = await t.http().get(path.slice(0, -1)).set(as(t.admin));
        expect({ path, status: slash.status }).toEqual({ path, status: 200 });
        expect(slash.body.items).toEqual(plain.body.items);
      }
      const created = await t
        .http()
        .post('/api/v1/user-attributes/')
        .set(as(t.admin))
        .send({ name: 'cli_slash', type: 'number' });
      expect(created.status).toBe(200);
    });

    it('answer 404 not_found where the tool calls a route this service does not have', async () => {
      const d = await deployment();
      for (const path of [`/api/v1/deployments/${d}/agents`, '/api/v1/ai-engineer/settings']) {
        const res = await t.http().get(path).set(as(t.admin));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'not_found');
      }
    });
  });

  describe('DELETE /api/v1/embed-tenants/{name}/ (the tool’s trailing slash)', () => {
    it('deletes the tenant as the route without the slash does', async () => {
      const provision = await t
        .http()
        .post('/api/v1/embed-tenants/cli-co/user')
        .set(as(t.admin))
        .send({ externalId: 'someone' });
      expect(provision.status).toBe(200);
      expect((await t.http().delete('/api/v1/embed-tenants/cli-co/')).status).toBe(401);
      const forbidden = await t.http().delete('/api/v1/embed-tenants/cli-co/').set(as(viewer));
      expect(forbidden.status).toBe(403);
      const bad = await t.http().delete('/api/v1/embed-tenants/Cli-Co/').set(as(t.admin));
      expect(bad.status).toBe(400);

      const res = await t.http().delete('/api/v1/embed-tenants/cli-co/').set(as(t.admin));
      expect(res.status).toBe(204);
      const users = await t.http().get('/api/v1/embed-tenants/cli-co/users').set(as(t.admin));
      expect(users.status).toBe(404);
      expectErrorShape(users.body, 404, 'embed_tenant_not_found');
      const list = await t.http().get('/api/v1/embed-tenants').set(as(t.admin));
      expect(list.body.items.map((x: { name: string }) => x.name)).not.toContain('cli-co');
    });
  });
});
