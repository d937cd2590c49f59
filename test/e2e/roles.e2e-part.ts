import { bearer, expectErrorShape, newUser, type Actor, type TestApp } from '../support/app.js';
import { setupIdentityApp } from '../support/identity.js';
import { deploymentInput } from '../support/factories.js';

const BAD_IDS = ['abc', '0', '-1', '99999999999'];

interface RoleBody {
  id: number;
  name: string;
  policies: Array<{ resourceType: string; actions: string[]; resources: string[] }>;
}

describe('roles', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  beforeAll(async () => {
    ({ t, viewer, other } = await setupIdentityApp());
  });
  afterAll(() => t.close());

  const admin = () => bearer(t.admin.token);

  function createRole(body: Record<string, unknown>, token = t.admin.token) {
    return t.http().post('/api/v1/roles').set(bearer(token)).send(body);
  }

  async function createDeployment(name: string, token = t.admin.token): Promise<number> {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(token))
      .send(deploymentInput({ name }));
    expect(res.status).toBe(200);
    return res.body.id;
  }

  function userRoleRows(userId: number, roleId: number) {
    return t.sql(`SELECT * FROM user_roles WHERE user_id = $1 AND role_id = $2`, [userId, roleId]);
  }

  describe('CRUD', () => {
    it('creates a role (200) with its policies and reads it back', async () => {
      const res = await createRole({
        name: 'Auditors',
        policies: [
          { resourceType: 'Global', actions: ['AuditLogManage', 'BillingRead'], resources: ['All'] },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Auditors',
        policies: [
          { resourceType: 'Global', actions: ['AuditLogManage', 'BillingRead'], resources: ['All'] },
        ],
      });
      const get = await t.http().get(`/api/v1/roles/${res.body.id}`).set(admin());
      expect(get.status).toBe(200);
      expect(get.body).toEqual(res.body);
      const list = await t.http().get('/api/v1/roles').set(admin());
      expect(list.status).toBe(200);
      expect(list.body.items).toContainEqual(res.body);
      expect(list.body.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: false });
      const rows = await t.sql<{ account_id: number; name: string }>(
        `SELECT account_id, name FROM roles WHERE id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([{ account_id: t.admin.accountId, name: 'Auditors' }]);
    });

    it('trims the name and accepts a role without policies', async () => {
      const res = await createRole({ name: '  Empty role  ', policies: [] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Empty role', policies: [] });
    });

    it('answers 409 role_name_taken for an existing name, whatever its case', async () => {
      expect((await createRole({ name: 'Support', policies: [] })).status).toBe(200);
      for (const name of ['Support', 'SUPPORT', ' support ']) {
        const res = await createRole({ name, policies: [] });
        expect(res.status).toBe(409);
        expectErrorShape(res.body, 409, 'role_name_taken');
      }
      const rows = await t.sql(`SELECT 1 FROM roles WHERE lower(name) = 'support'`);
      expect(rows).toHaveLength(1);
    });

    // The reference's built-in names, in any case, and the two former names of this service.
    it.each([
      'Admin',
      'admin',
      ' Developer ',
      'AIBIDeveloper',
      'D3User',
      'aibiuser',
      'AIBIViewer',
      'Guest',
      'EmbedUser',
      'Viewer',
      'EXPLORER',
    ])('answers 400 role_name_reserved for the built-in role name %j', async (name) => {
      const res = await createRole({ name, policies: [] });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'role_name_reserved');
      expect(
        await t.sql(`SELECT 1 FROM roles WHERE lower(trim(name)) = lower(trim($1))`, [name]),
      ).toHaveLength(0);
    });

    it('lets another account use the same name', async () => {
      const res = await createRole({ name: 'Support', policies: [] }, other.token);
      expect(res.status).toBe(200);
      const mine = await t.http().get('/api/v1/roles').set(admin());
      expect(mine.body.items.map((r: RoleBody) => r.id)).not.toContain(res.body.id);
    });

    it('updates the name and replaces the policies', async () => {
      const created = await createRole({
        name: 'Editors',
        policies: [{ resourceType: 'Global', actions: ['ReportEdit'], resources: ['All'] }],
      });
      const id = created.body.id;
      const renamed = await t.http().put(`/api/v1/roles/${id}`).set(admin()).send({ name: 'Writers' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ id, name: 'Writers', policies: created.body.policies });

      const replaced = await t
        .http()
        .put(`/api/v1/roles/${id}`)
        .set(admin())
        .send({ policies: [{ resourceType: 'Global', actions: ['WorkbookEdit'], resources: ['All'] }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toEqual({
        id,
        name: 'Writers',
        policies: [{ resourceType: 'Global', actions: ['WorkbookEdit'], resources: ['All'] }],
      });

      const toBuiltIn = await t.http().put(`/api/v1/roles/${id}`).set(admin()).send({ name: 'Admin' });
      expect(toBuiltIn.status).toBe(400);
      expectErrorShape(toBuiltIn.body, 400, 'role_name_reserved');
      const toTaken = await t.http().put(`/api/v1/roles/${id}`).set(admin()).send({ name: 'auditors' });
      expect(toTaken.status).toBe(409);
      expectErrorShape(toTaken.body, 409, 'role_name_taken');
      expect((await t.http().get(`/api/v1/roles/${id}`).set(admin())).body.name).toBe('Writers');
    });

    it('refuses bad input with 400', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ policies: [] }, 'name'],
        [{ name: '', policies: [] }, 'name'],
        [{ name: 5, policies: [] }, 'name'],
        [{ name: 'NoPolicies' }, 'policies'],
        [{ name: 'X', policies: {} }, 'policies'],
        [{ name: 'X', policies: [], color: 'red' }, 'color'],
        [
          { name: 'X', policies: [{ resourceType: 'Global', actions: ['Fly'], resources: ['All'] }] },
          'actions',
        ],
        [
          { name: 'X', policies: [{ resourceType: 'Nowhere', actions: ['All'], resources: ['All'] }] },
          'resourceType',
        ],
      ];
      for (const [body, field] of cases) {
        const res = await createRole(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      expect(await t.sql(`SELECT 1 FROM roles WHERE name IN ('X', 'NoPolicies')`)).toHaveLength(0);
    });

    it('refuses policies on a nonexistent resource with 400 unknown_resource', async () => {
      const res = await createRole({
        name: 'Ghost',
        policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['987654'] }],
      });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'unknown_resource');
      expect(res.body.message).toContain('987654');
      expect(await t.sql(`SELECT 1 FROM roles WHERE name = 'Ghost'`)).toHaveLength(0);
    });

    it('deletes a role (204) with its policies and assignments', async () => {
      const role = (
        await createRole({
          name: 'Temporary',
          policies: [{ resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] }],
        })
      ).body as RoleBody;
      const user = await newUser(t, t.admin, { defaultRoles: [] });
      expect((await t.http().put(`/api/v1/roles/${role.id}/users/${user.userId}`).set(admin())).status).toBe(
        204,
      );
      const me = await t.http().get('/api/v1/users/me').set(bearer(user.token));
      expect(me.body.userPolicies).toContainEqual({
        resourceType: 'Global',
        actions: ['PlaygroundRead'],
        resources: ['All'],
      });

      const res = await t.http().delete(`/api/v1/roles/${role.id}`).set(admin());
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const get = await t.http().get(`/api/v1/roles/${role.id}`).set(admin());
      expect(get.status).toBe(404);
      expectErrorShape(get.body, 404, 'role_not_found');
      expect(await userRoleRows(user.userId, role.id)).toHaveLength(0);
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'role' AND principal_id = $1`, [role.id]),
      ).toHaveLength(0);
      const after = await t.http().get('/api/v1/users/me').set(bearer(user.token));
      expect(after.status).toBe(200);
      expect(after.body.userPolicies).toEqual([]);

      const again = await t.http().delete(`/api/v1/roles/${role.id}`).set(admin());
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'role_not_found');
    });

    it('pages the list with first/after', async () => {
      const all = (await t.http().get('/api/v1/roles').set(admin())).body.items.map((r: RoleBody) => r.id);
      expect(all.length).toBeGreaterThanOrEqual(3);
      const page1 = await t.http().get('/api/v1/roles').query({ first: 2 }).set(admin());
      expect(page1.body.items.map((r: RoleBody) => r.id)).toEqual(all.slice(0, 2));
      expect(page1.body.pageInfo.hasNextPage).toBe(true);
      const page2 = await t
        .http()
        .get('/api/v1/roles')
        .query({ first: 2, after: page1.body.pageInfo.endCursor })
        .set(admin());
      expect(page2.body.items.map((r: RoleBody) => r.id)).toEqual(all.slice(2, 4));
      expect(page2.body.pageInfo.hasPreviousPage).toBe(true);
      const bad = await t.http().get('/api/v1/roles').query({ after: 'nope!' }).set(admin());
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'invalid_cursor');
    });

    describe('access', () => {
      let roleId: number;
      let theirRoleId: number;
      beforeAll(async () => {
        roleId = (await createRole({ name: 'Guarded', policies: [] })).body.id;
        theirRoleId = (await createRole({ name: 'Theirs', policies: [] }, other.token)).body.id;
      });

      const routes = () => [
        { method: 'get' as const, path: '/api/v1/roles', body: undefined },
        { method: 'post' as const, path: '/api/v1/roles', body: { name: 'Sneaky', policies: [] } },
        { method: 'get' as const, path: `/api/v1/roles/${roleId}`, body: undefined },
        { method: 'put' as const, path: `/api/v1/roles/${roleId}`, body: { name: 'Sneaky' } },
        { method: 'delete' as const, path: `/api/v1/roles/${roleId}`, body: undefined },
        { method: 'put' as const, path: `/api/v1/roles/${roleId}/users/${viewer.userId}`, body: undefined },
        {
          method: 'delete' as const,
          path: `/api/v1/roles/${roleId}/users/${viewer.userId}`,
          body: undefined,
        },
      ];

      it('is 401 without a token on every route', async () => {
        for (const r of routes()) {
          const res = await t.http()[r.method](r.path).send(r.body);
          expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({
            route: `${r.method} ${r.path}`,
            status: 401,
          });
          expectErrorShape(res.body, 401, 'unauthorized');
        }
      });

      it('is 403 for a Viewer on every route, and nothing changes', async () => {
        for (const r of routes()) {
          const res = await t.http()[r.method](r.path).set(bearer(viewer.token)).send(r.body);
          expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({
            route: `${r.method} ${r.path}`,
            status: 403,
          });
          expectErrorShape(res.body, 403, 'forbidden');
        }
        expect(await t.sql(`SELECT name FROM roles WHERE id = $1`, [roleId])).toEqual([{ name: 'Guarded' }]);
        expect(await t.sql(`SELECT 1 FROM roles WHERE name = 'Sneaky'`)).toHaveLength(0);
        expect(await userRoleRows(viewer.userId, roleId)).toHaveLength(0);
      });

      it("is 404 for another account's role", async () => {
        const calls = [
          t.http().get(`/api/v1/roles/${theirRoleId}`),
          t.http().put(`/api/v1/roles/${theirRoleId}`).send({ name: 'Hijacked' }),
          t.http().delete(`/api/v1/roles/${theirRoleId}`),
          t.http().put(`/api/v1/roles/${theirRoleId}/users/${viewer.userId}`),
          t.http().delete(`/api/v1/roles/${theirRoleId}/users/${viewer.userId}`),
        ];
        for (const call of calls) {
          const res = await call.set(admin());
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'role_not_found');
        }
        expect(await t.sql(`SELECT name FROM roles WHERE id = $1`, [theirRoleId])).toEqual([
          { name: 'Theirs' },
        ]);
        expect(await userRoleRows(viewer.userId, theirRoleId)).toHaveLength(0);
      });

      it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
        const calls = [
          t.http().get(`/api/v1/roles/${id}`),
          t.http().put(`/api/v1/roles/${id}`).send({ name: 'x' }),
          t.http().delete(`/api/v1/roles/${id}`),
          t.http().put(`/api/v1/roles/${id}/users/${viewer.userId}`),
          t.http().put(`/api/v1/roles/${roleId}/users/${id}`),
          t.http().delete(`/api/v1/roles/${roleId}/users/${id}`),
        ];
        for (const call of calls) {
          const res = await call.set(admin());
          expect(res.status).toBe(400);
          expectErrorShape(res.body, 400, 'validation_failed');
        }
      });
    });
  });

  describe('assignment', () => {
    let role: RoleBody;
    let user: Actor;
    beforeAll(async () => {
      role = (await createRole({ name: 'Assignable', policies: [] })).body;
      user = await newUser(t, t.admin, { defaultRoles: [] });
    });

    it('assigns (204) idempotently and unassigns (204) idempotently', async () => {
      const url = `/api/v1/roles/${role.id}/users/${user.userId}`;
      for (let i = 0; i < 2; i++) {
        const res = await t.http().put(url).set(admin());
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        expect(await userRoleRows(user.userId, role.id)).toHaveLength(1);
      }
      const rows = await t.sql<{ account_id: number }>(
        `SELECT account_id FROM user_roles WHERE user_id = $1 AND role_id = $2`,
        [user.userId, role.id],
      );
      expect(rows[0].account_id).toBe(t.admin.accountId);
      for (let i = 0; i < 2; i++) {
        const res = await t.http().delete(url).set(admin());
        expect(res.status).toBe(204);
        expect(await userRoleRows(user.userId, role.id)).toHaveLength(0);
      }
    });

    it('accepts parallel assigns of the same pair, leaving exactly one row', async () => {
      const url = `/api/v1/roles/${role.id}/users/${user.userId}`;
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          t
            .http()
            .put(url)
            .set(admin())
            .then((r) => r),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(204));
      expect(await userRoleRows(user.userId, role.id)).toHaveLength(1);
      const unassigned = await Promise.all(
        Array.from({ length: 5 }, () =>
          t
            .http()
            .delete(url)
            .set(admin())
            .then((r) => r),
        ),
      );
      expect(unassigned.map((r) => r.status)).toEqual(Array(5).fill(204));
      expect(await userRoleRows(user.userId, role.id)).toHaveLength(0);
    });

    it("is 404 for a missing user or another account's user", async () => {
      for (const userId of [other.userId, 2_000_000_000]) {
        for (const method of ['put', 'delete'] as const) {
          const res = await t.http()[method](`/api/v1/roles/${role.id}/users/${userId}`).set(admin());
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'user_not_found');
        }
      }
      expect(await t.sql(`SELECT 1 FROM user_roles WHERE user_id = $1`, [other.userId])).toHaveLength(0);
    });

    it('is 404 for a missing role', async () => {
      const res = await t.http().put(`/api/v1/roles/2000000000/users/${user.userId}`).set(admin());
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'role_not_found');
    });
  });

  describe('custom roles grant access', () => {
    it('a Global DeploymentCreate policy lets a user with no built-in roles create a deployment', async () => {
      const creator = await newUser(t, t.admin, { defaultRoles: [] });
      const body = deploymentInput({ name: 'By a custom role' });
      const before = await t.http().post('/build/api/v1/deployments').set(bearer(creator.token)).send(body);
      expect(before.status).toBe(403);
      expectErrorShape(before.body, 403, 'forbidden');
      expect(before.body.message).toContain('DeploymentCreate');

      const role = await createRole({
        name: 'Creators',
        policies: [{ resourceType: 'Global', actions: ['DeploymentCreate'], resources: ['All'] }],
      });
      expect(role.status).toBe(200);
      const assign = await t.http().put(`/api/v1/roles/${role.body.id}/users/${creator.userId}`).set(admin());
      expect(assign.status).toBe(204);

      const res = await t.http().post('/build/api/v1/deployments').set(bearer(creator.token)).send(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        name: 'By a custom role',
        creationStep: 'ready',
      });
      const rows = await t.sql<{ account_id: number }>(`SELECT account_id FROM deployments WHERE id = $1`, [
        res.body.id,
      ]);
      expect(rows).toEqual([{ account_id: t.admin.accountId }]);

      // The role does not make the user an admin.
      const admins = await t
        .http()
        .post('/api/v1/roles')
        .set(bearer(creator.token))
        .send({ name: 'x', policies: [] });
      expect(admins.status).toBe(403);

      // Unassigned, the permission goes away at once.
      expect(
        (await t.http().delete(`/api/v1/roles/${role.body.id}/users/${creator.userId}`).set(admin())).status,
      ).toBe(204);
      const after = await t.http().post('/build/api/v1/deployments').set(bearer(creator.token)).send(body);
      expect(after.status).toBe(403);
      expectErrorShape(after.body, 403, 'forbidden');
    });

    it('an object-level role policy lets its members read that deployment only', async () => {
      const granted = await createDeployment('Role-granted');
      const hidden = await createDeployment('Role-hidden');
      const member = await newUser(t, t.admin, { defaultRoles: [] });
      const role = await createRole({
        name: 'Readers of one',
        policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] }],
      });
      expect(role.status).toBe(200);
      expect(role.body.policies).toEqual([
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] },
      ]);
      expect(
        (await t.http().put(`/api/v1/roles/${role.body.id}/users/${member.userId}`).set(admin())).status,
      ).toBe(204);
      expect((await t.http().get(`/api/v1/deployments/${granted}`).set(bearer(member.token))).status).toBe(
        200,
      );
      const hiddenRes = await t.http().get(`/api/v1/deployments/${hidden}`).set(bearer(member.token));
      expect(hiddenRes.status).toBe(404);
      expectErrorShape(hiddenRes.body, 404);
      const list = await t.http().get('/api/v1/deployments').set(bearer(member.token));
      expect(list.status).toBe(200);
      expect(list.body.items.map((d: { id: number }) => d.id)).toEqual([granted]);
    });
  });

  // The reference documents `["All"]` as the resources of Global policies and of policies on
  // every deployment; it means every resource of the type in the account, later ones included.
  describe('"resources": ["All"]', () => {
    const created = (res: { status: number; body: unknown }) => {
      expect({ status: res.status < 300, body: res.body }).toEqual({ status: true, body: res.body });
      return res.body as { id: number };
    };
    const assignRole = async (roleId: number, user: Actor) =>
      expect((await t.http().put(`/api/v1/roles/${roleId}/users/${user.userId}`).set(admin())).status).toBe(
        204,
      );

    it('is accepted for Global, stored once, and read back as ["All"]; ["*"] and [] read back so too', async () => {
      const res = await createRole({
        name: 'All global',
        policies: [
          { resourceType: 'Global', actions: ['BillingRead'], resources: ['All'] },
          { resourceType: 'Global', actions: ['AlertsRead'], resources: ['*'] },
          { resourceType: 'Global', actions: ['APMRead'], resources: [] },
        ],
      });
      const role = created(res) as RoleBody;
      expect(role.policies).toEqual([
        { resourceType: 'Global', actions: ['APMRead', 'AlertsRead', 'BillingRead'], resources: ['All'] },
      ]);
      expect((await t.http().get(`/api/v1/roles/${role.id}`).set(admin())).body).toEqual(role);
      const rows = await t.sql(
        `SELECT DISTINCT resource_id FROM policies WHERE principal_type = 'role' AND principal_id = $1`,
        [role.id],
      );
      expect(rows).toEqual([{ resource_id: '*' }]);
    });

    it('on Deployment covers every deployment of the account, those created later included', async () => {
      const before = await createDeployment('All-before');
      const member = await newUser(t, t.admin, { defaultRoles: [] });
      // Without any grant the route itself is closed to them.
      expect((await t.http().get(`/api/v1/deployments/${before}`).set(bearer(member.token))).status).toBe(
        403,
      );
      const role = created(
        await createRole({
          name: 'Every deployment reader',
          policies: [
            { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['All', String(before)] },
          ],
        }),
      ) as RoleBody;
      // "All" covers the id sent beside it: one policy on every deployment.
      expect(role.policies).toEqual([
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['All'] },
      ]);
      await assignRole(role.id, member);
      const after = await createDeployment('All-after');
      for (const id of [before, after]) {
        expect((await t.http().get(`/api/v1/deployments/${id}`).set(bearer(member.token))).status).toBe(200);
      }
      const list = await t.http().get('/api/v1/deployments').set(bearer(member.token));
      expect(list.status).toBe(200);
      const all = await t.http().get('/api/v1/deployments').set(admin());
      expect(list.body.items.map((d: { id: number }) => d.id)).toEqual(
        all.body.items.map((d: { id: number }) => d.id),
      );
      expect(list.body.items.map((d: { id: number }) => d.id)).toEqual(
        expect.arrayContaining([before, after]),
      );
      // Read only: the update is refused.
      const update = await t
        .http()
        .put(`/api/v1/deployments/${after}`)
        .set(bearer(member.token))
        .send({ name: 'Renamed' });
      expect(update.status).toBe(403);
      expectErrorShape(update.body, 403, 'forbidden');
      // Another account's deployment stays out of reach.
      const foreign = await createDeployment('Foreign', other.token);
      expect((await t.http().get(`/api/v1/deployments/${foreign}`).set(bearer(member.token))).status).toBe(
        404,
      );
    });

    it('on Folder covers every folder and what is inside one, not the workbooks outside any folder', async () => {
      const deployment = await createDeployment('All-folders');
      const base = `/api/v1/deployments/${deployment}`;
      const folder = created(await t.http().post(`${base}/folders`).set(admin()).send({ name: 'Top' }));
      const inside = created(
        await t.http().post(`${base}/workbooks`).set(admin()).send({ folderId: folder.id }),
      );
      const outside = created(await t.http().post(`${base}/workbooks`).set(admin()).send({}));
      const member = await newUser(t, t.admin, { defaultRoles: [] });
      const role = created(
        await createRole({
          name: 'Every folder reader',
          policies: [
            { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(deployment)] },
            { resourceType: 'Folder', actions: ['FolderRead'], resources: ['All'] },
          ],
        }),
      ) as RoleBody;
      expect(role.policies).toContainEqual({
        resourceType: 'Folder',
        actions: ['FolderRead'],
        resources: ['All'],
      });
      await assignRole(role.id, member);
      const later = created(await t.http().post(`${base}/folders`).set(admin()).send({ name: 'Later' }));
      const folders = await t.http().get(`${base}/folders`).set(bearer(member.token));
      expect(folders.status).toBe(200);
      expect(folders.body.items.map((f: { id: number }) => f.id).sort()).toEqual(
        [folder.id, later.id].sort(),
      );
      expect((await t.http().get(`${base}/workbooks/${inside.id}`).set(bearer(member.token))).status).toBe(
        200,
      );
      expect((await t.http().get(`${base}/workbooks/${outside.id}`).set(bearer(member.token))).status).toBe(
        404,
      );
      const workbooks = await t.http().get(`${base}/workbooks`).set(bearer(member.token));
      expect(workbooks.status).toBe(200);
      expect(workbooks.body.items.map((w: { id: number }) => w.id)).toEqual([inside.id]);
    });

    it('is refused on resource types that take no grants, and never mixed into Global ids', async () => {
      const res = await createRole({
        name: 'All agents',
        policies: [{ resourceType: 'Agent', actions: ['AgentRead'], resources: ['All'] }],
      });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'unsupported_resource_type');
      const global = await createRole({
        name: 'Global with an id',
        policies: [{ resourceType: 'Global', actions: ['BillingRead'], resources: ['All', '12'] }],
      });
      expect(global.status).toBe(400);
      expectErrorShape(global.body, 400, 'unknown_resource');
    });
  });

  describe('object-level grants on a user', () => {
    let granted: number;
    let hidden: number;
    let reader: Actor;
    beforeAll(async () => {
      granted = await createDeployment('Granted');
      hidden = await createDeployment('Hidden');
      reader = await newUser(t, t.admin, { defaultRoles: [] });
    });

    it('a user with no roles and no grants can read no deployment', async () => {
      const list = await t.http().get('/api/v1/deployments').set(bearer(reader.token));
      expect(list.status).toBe(403);
      expectErrorShape(list.body, 403, 'forbidden');
      const get = await t.http().get(`/api/v1/deployments/${granted}`).set(bearer(reader.token));
      expect(get.status).toBe(403);
      expectErrorShape(get.body, 403, 'forbidden');
    });

    it('a DeploymentRead grant shows that deployment only', async () => {
      const put = await t
        .http()
        .put(`/api/v1/users/${reader.userId}/policies`)
        .set(admin())
        .send({
          policies: [
            { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] },
          ],
        });
      expect(put.status).toBe(200);
      expect(put.body.policies).toEqual([
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] },
      ]);

      const get = await t.http().get(`/api/v1/deployments/${granted}`).set(bearer(reader.token));
      expect(get.status).toBe(200);
      expect(get.body).toMatchObject({ id: granted, name: 'Granted' });

      const list = await t.http().get('/api/v1/deployments').set(bearer(reader.token));
      expect(list.status).toBe(200);
      expect(list.body.items.map((d: { id: number }) => d.id)).toEqual([granted]);
      expect(list.body.count).toBe(1);

      const other = await t.http().get(`/api/v1/deployments/${hidden}`).set(bearer(reader.token));
      expect(other.status).toBe(404);
      expectErrorShape(other.body, 404);

      const update = await t
        .http()
        .put(`/api/v1/deployments/${granted}`)
        .set(bearer(reader.token))
        .send({ name: 'Renamed by a reader' });
      expect(update.status).toBe(403);
      expectErrorShape(update.body, 403, 'forbidden');
      const del = await t.http().delete(`/api/v1/deployments/${granted}`).set(bearer(reader.token));
      expect(del.status).toBe(403);
      expectErrorShape(del.body, 403, 'forbidden');
      const rows = await t.sql<{ name: string }>(`SELECT name FROM deployments WHERE id = $1`, [granted]);
      expect(rows).toEqual([{ name: 'Granted' }]);

      // Still no account-wide rights.
      const create = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(reader.token))
        .send(deploymentInput({ name: 'Nope' }));
      expect(create.status).toBe(403);
    });

    it('a DeploymentUpdate grant allows the update of that deployment only', async () => {
      const put = await t
        .http()
        .put(`/api/v1/users/${reader.userId}/policies`)
        .set(admin())
        .send({
          policies: [
            { resourceType: 'Deployment', actions: ['DeploymentUpdate'], resources: [String(granted)] },
          ],
        });
      expect(put.status).toBe(200);
      const ok = await t
        .http()
        .put(`/api/v1/deployments/${granted}`)
        .set(bearer(reader.token))
        .send({ name: 'Granted 2' });
      expect(ok.status).toBe(200);
      expect(ok.body.name).toBe('Granted 2');
      const hiddenUpdate = await t
        .http()
        .put(`/api/v1/deployments/${hidden}`)
        .set(bearer(reader.token))
        .send({ name: 'Hidden 2' });
      expect(hiddenUpdate.status).toBe(404);
      expectErrorShape(hiddenUpdate.body, 404);
      expect(await t.sql(`SELECT name FROM deployments WHERE id = $1`, [hidden])).toEqual([
        { name: 'Hidden' },
      ]);
    });

    it('revoking the grant takes the deployment away', async () => {
      const put = await t
        .http()
        .put(`/api/v1/users/${reader.userId}/policies`)
        .set(admin())
        .send({ policies: [] });
      expect(put.status).toBe(200);
      const get = await t.http().get(`/api/v1/deployments/${granted}`).set(bearer(reader.token));
      expect(get.status).toBe(403);
      expectErrorShape(get.body, 403, 'forbidden');
    });

    it('refuses a grant on a nonexistent or foreign deployment with 400 unknown_resource', async () => {
      const theirs = await createDeployment('Foreign', other.token);
      for (const resources of [['2000000000'], [String(granted), '1999999999'], [String(theirs)]]) {
        const res = await t
          .http()
          .put(`/api/v1/users/${reader.userId}/policies`)
          .set(admin())
          .send({ policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources }] });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unknown_resource');
      }
      const role = await createRole({
        name: 'Foreign readers',
        policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(theirs)] }],
      });
      expect(role.status).toBe(400);
      expectErrorShape(role.body, 400, 'unknown_resource');
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`, [
          reader.userId,
        ]),
      ).toHaveLength(0);
    });
  });
});
