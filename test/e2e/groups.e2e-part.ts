import type { Response } from 'supertest';
import { bearer, expectErrorShape, newUser, type Actor, type TestApp } from '../support/app.js';
import { setupIdentityApp } from '../support/identity.js';
import { deploymentInput } from '../support/factories.js';

const GROUPS = '/api/v1/groups';
const BAD_IDS = ['abc', '0', '-1', '1.5', '99999999999'];
const MISSING = 2_000_000_000;

interface GroupBody {
  id: number;
  name: string;
  description: string | null;
  externalId: string | null;
  memberCount: number;
  createdAt: string;
  updatedAt: string;
}

interface MemberBody {
  id: number;
  email: string;
  username: string;
  firstName: string | null;
  isDeactivated: boolean;
}

interface Policy {
  resourceType: string;
  actions: string[];
  resources: string[];
}

describe('groups', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  beforeAll(async () => {
    ({ t, viewer, other } = await setupIdentityApp());
  });
  afterAll(() => t.close());

  const admin = () => bearer(t.admin.token);
  /** Turns a supertest request into a plain promise, so it can go into Promise.all. */
  const run = (req: PromiseLike<Response>): Promise<Response> => Promise.resolve(req);

  async function createGroup(body: Record<string, unknown>, token = t.admin.token): Promise<GroupBody> {
    const res = await t.http().post(GROUPS).set(bearer(token)).send(body);
    expect(res.status).toBe(200);
    return res.body as GroupBody;
  }

  async function getGroup(id: number): Promise<GroupBody> {
    const res = await t.http().get(`${GROUPS}/${id}`).set(admin());
    expect(res.status).toBe(200);
    return res.body as GroupBody;
  }

  function addMember(groupId: number, userId: number, token = t.admin.token) {
    return t.http().put(`${GROUPS}/${groupId}/users/${userId}`).set(bearer(token));
  }

  function removeMember(groupId: number, userId: number, token = t.admin.token) {
    return t.http().delete(`${GROUPS}/${groupId}/users/${userId}`).set(bearer(token));
  }

  async function memberRows(groupId: number): Promise<number[]> {
    const rows = await t.sql<{ user_id: number }>(
      `SELECT user_id FROM group_members WHERE group_id = $1 ORDER BY user_id`,
      [groupId],
    );
    return rows.map((r) => r.user_id);
  }

  async function createRole(name: string, policies: Policy[]): Promise<number> {
    const res = await t.http().post('/api/v1/roles').set(admin()).send({ name, policies });
    expect(res.status).toBe(200);
    return res.body.id as number;
  }

  async function createDeployment(name: string, token = t.admin.token): Promise<number> {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(token))
      .send(deploymentInput({ name }));
    expect(res.status).toBe(200);
    return res.body.id as number;
  }

  function groupPolicyRows(groupId: number) {
    return t.sql(`SELECT 1 FROM policies WHERE principal_type = 'group' AND principal_id = $1`, [groupId]);
  }

  describe('POST /api/v1/groups', () => {
    it('creates a group (200), trimming the name, and stores it in the account', async () => {
      const res = await t
        .http()
        .post(GROUPS)
        .set(admin())
        .send({ name: '  Finance  ', description: 'Money people', externalId: 'idp-finance' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Finance',
        description: 'Money people',
        externalId: 'idp-finance',
        memberCount: 0,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const rows = await t.sql(
        `SELECT account_id, name, description, external_id FROM groups WHERE id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([
        {
          account_id: t.admin.accountId,
          name: 'Finance',
          description: 'Money people',
          external_id: 'idp-finance',
        },
      ]);
    });

    it('defaults description and externalId to null', async () => {
      const g = await createGroup({ name: 'Bare' });
      expect(g).toMatchObject({ name: 'Bare', description: null, externalId: null, memberCount: 0 });
    });

    it('answers 409 group_name_taken for a name in use (after trimming), and compares names exactly', async () => {
      await createGroup({ name: 'Marketing' });
      for (const name of ['Marketing', ' Marketing ']) {
        const res = await t.http().post(GROUPS).set(admin()).send({ name });
        expect(res.status).toBe(409);
        expectErrorShape(res.body, 409, 'group_name_taken');
      }
      expect(await t.sql(`SELECT 1 FROM groups WHERE name = 'Marketing'`)).toHaveLength(1);
      // Names are data-model group names, compared exactly: another case is another group.
      const lower = await createGroup({ name: 'marketing' });
      expect(lower.name).toBe('marketing');
    });

    it('creates one group when the same name is posted in parallel', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => run(t.http().post(GROUPS).set(admin()).send({ name: 'Racers' }))),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(7).fill(409)]);
      for (const r of results.filter((x) => x.status === 409)) {
        expectErrorShape(r.body, 409, 'group_name_taken');
      }
      expect(await t.sql(`SELECT 1 FROM groups WHERE name = 'Racers'`)).toHaveLength(1);
    });

    it('lets another account use the same name', async () => {
      const theirs = await createGroup({ name: 'Finance' }, other.token);
      expect(theirs.name).toBe('Finance');
      const mine = await t.http().get(GROUPS).set(admin());
      expect(mine.body.items.map((g: GroupBody) => g.id)).not.toContain(theirs.id);
    });

    it('refuses bad input with 400 and creates nothing', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 5 }, 'name'],
        [{ name: null }, 'name'],
        [{ name: 'x'.repeat(101) }, 'name'],
        [{ name: 'Bad1', description: 'd'.repeat(501) }, 'description'],
        [{ name: 'Bad2', description: 7 }, 'description'],
        [{ name: 'Bad3', externalId: 'e'.repeat(256) }, 'externalId'],
        [{ name: 'Bad4', members: [1] }, 'members'],
      ];
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM groups`);
      for (const [body, field] of cases) {
        const res = await t.http().post(GROUPS).set(admin()).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      const notAnObject = await t.http().post(GROUPS).set(admin()).send(['Bad5']);
      expect(notAnObject.status).toBe(400);
      expectErrorShape(notAnObject.body, 400);
      expect(await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM groups`)).toEqual(before);
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const anon = await t.http().post(GROUPS).send({ name: 'Sneaky' });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().post(GROUPS).set(bearer(viewer.token)).send({ name: 'Sneaky' });
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(await t.sql(`SELECT 1 FROM groups WHERE name = 'Sneaky'`)).toHaveLength(0);
    });
  });

  describe('GET /api/v1/groups', () => {
    let ids: number[];
    beforeAll(async () => {
      ids = [];
      for (const name of ['list-alpha', 'list-beta', 'list-gamma', 'list_100%']) {
        ids.push((await createGroup({ name })).id);
      }
    });

    it('lists the groups of the account by id, with pageInfo', async () => {
      const res = await t.http().get(GROUPS).set(admin());
      expect(res.status).toBe(200);
      const listed = res.body.items.map((g: GroupBody) => g.id);
      expect(listed).toEqual(expect.arrayContaining(ids));
      expect([...listed].sort((a, b) => a - b)).toEqual(listed);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      const theirs = await t.sql<{ id: number }>(`SELECT id FROM groups WHERE account_id = $1`, [
        other.accountId,
      ]);
      expect(theirs.length).toBeGreaterThan(0);
      for (const { id } of theirs) expect(listed).not.toContain(id);
      expect(res.body.items.find((g: GroupBody) => g.id === ids[0])).toEqual(await getGroup(ids[0]));
    });

    it('searches names case-insensitively, treating LIKE wildcards literally', async () => {
      const res = await t.http().get(GROUPS).query({ search: 'LIST-' }).set(admin());
      expect(res.status).toBe(200);
      expect(res.body.items.map((g: GroupBody) => g.id)).toEqual(ids.slice(0, 3));
      const literal = await t.http().get(GROUPS).query({ search: '_100%' }).set(admin());
      expect(literal.body.items.map((g: GroupBody) => g.name)).toEqual(['list_100%']);
      const none = await t.http().get(GROUPS).query({ search: 'list%beta' }).set(admin());
      expect(none.body.items).toEqual([]);
    });

    it('walks pages with first/after', async () => {
      const seen: number[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await t
          .http()
          .get(GROUPS)
          .query({ search: 'list', first: 2, ...(after ? { after } : {}) })
          .set(admin());
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.items.map((g: GroupBody) => g.id));
        expect(res.body.pageInfo.hasPreviousPage).toBe(after !== undefined);
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(ids);
    });

    it('refuses bad query parameters with 400', async () => {
      for (const query of [{ first: 0 }, { first: 'x' }, { after: 'garbage' }, { sort: 'name' }]) {
        const res = await t.http().get(GROUPS).query(query).set(admin());
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400);
      }
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const anon = await t.http().get(GROUPS);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().get(GROUPS).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('GET /api/v1/groups/{id}', () => {
    it('returns the group with its member count', async () => {
      const g = await createGroup({ name: 'Counted' });
      const u1 = await newUser(t, t.admin);
      const u2 = await newUser(t, t.admin);
      expect((await addMember(g.id, u1.userId)).status).toBe(204);
      expect((await addMember(g.id, u2.userId)).status).toBe(204);
      const res = await t.http().get(`${GROUPS}/${g.id}`).set(admin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...g, memberCount: 2 });
    });

    it("is 404 group_not_found for another account's group and a missing one", async () => {
      const theirs = await createGroup({ name: 'Theirs-get' }, other.token);
      for (const id of [theirs.id, MISSING]) {
        const res = await t.http().get(`${GROUPS}/${id}`).set(admin());
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'group_not_found');
      }
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const res = await t.http().get(`${GROUPS}/${id}`).set(admin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const g = await createGroup({ name: 'Private' });
      const anon = await t.http().get(`${GROUPS}/${g.id}`);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().get(`${GROUPS}/${g.id}`).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('PUT /api/v1/groups/{id}', () => {
    it('renames a group keeping its members, roles and grants; omitted fields stay', async () => {
      const g = await createGroup({ name: 'Old name', description: 'Keep me', externalId: 'ext-1' });
      const member = await newUser(t, t.admin);
      expect((await addMember(g.id, member.userId)).status).toBe(204);
      const roleId = await createRole('Renamed group role', []);
      expect((await t.http().put(`/api/v1/roles/${roleId}/groups/${g.id}`).set(admin())).status).toBe(204);
      const grant = await t
        .http()
        .put(`${GROUPS}/${g.id}/policies`)
        .set(admin())
        .send({ policies: [{ resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] }] });
      expect(grant.status).toBe(200);

      await new Promise((r) => setTimeout(r, 5));
      const res = await t.http().put(`${GROUPS}/${g.id}`).set(admin()).send({ name: '  New name ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...g,
        name: 'New name',
        memberCount: 1,
        updatedAt: expect.any(String),
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(g.updatedAt));
      expect(await getGroup(g.id)).toEqual(res.body);
      expect(await memberRows(g.id)).toEqual([member.userId]);
      expect(await t.sql(`SELECT role_id FROM group_roles WHERE group_id = $1`, [g.id])).toEqual([
        { role_id: roleId },
      ]);
      const policies = await t.http().get(`${GROUPS}/${g.id}/policies`).set(admin());
      expect(policies.body.policies).toEqual(grant.body.policies);
      // The member still holds the grant.
      expect((await t.http().get('/api/v1/users/me').set(bearer(member.token))).status).toBe(200);
    });

    it('changes and clears description and externalId', async () => {
      const g = await createGroup({ name: 'Describe me', description: 'before', externalId: 'x' });
      const changed = await t
        .http()
        .put(`${GROUPS}/${g.id}`)
        .set(admin())
        .send({ description: 'after', externalId: 'y' });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ name: 'Describe me', description: 'after', externalId: 'y' });
      const cleared = await t
        .http()
        .put(`${GROUPS}/${g.id}`)
        .set(admin())
        .send({ description: null, externalId: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ name: 'Describe me', description: null, externalId: null });
      const empty = await t.http().put(`${GROUPS}/${g.id}`).set(admin()).send({});
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ name: 'Describe me', description: null, externalId: null });
    });

    it('answers 409 group_name_taken for a name in use, and accepts its own name', async () => {
      await createGroup({ name: 'Taken name' });
      const g = await createGroup({ name: 'Mover' });
      const res = await t.http().put(`${GROUPS}/${g.id}`).set(admin()).send({ name: 'Taken name' });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'group_name_taken');
      expect((await getGroup(g.id)).name).toBe('Mover');
      const same = await t.http().put(`${GROUPS}/${g.id}`).set(admin()).send({ name: 'Mover' });
      expect(same.status).toBe(200);
      expect(same.body.name).toBe('Mover');
    });

    it('refuses bad input with 400 and changes nothing', async () => {
      const g = await createGroup({ name: 'Stable', description: 'stays' });
      for (const body of [
        { name: '' },
        { name: '  ' },
        { name: null },
        { name: 3 },
        { name: 'y'.repeat(101) },
        { description: 'd'.repeat(501) },
        { externalId: 4 },
        { memberCount: 3 },
      ]) {
        const res = await t.http().put(`${GROUPS}/${g.id}`).set(admin()).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(await getGroup(g.id)).toEqual(g);
    });

    it("is 404 for another account's group and a missing one, 400 for bad ids", async () => {
      const theirs = await createGroup({ name: 'Theirs-put' }, other.token);
      for (const id of [theirs.id, MISSING]) {
        const res = await t.http().put(`${GROUPS}/${id}`).set(admin()).send({ name: 'Hijacked' });
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'group_not_found');
      }
      expect(await t.sql(`SELECT name FROM groups WHERE id = $1`, [theirs.id])).toEqual([
        { name: 'Theirs-put' },
      ]);
      for (const id of BAD_IDS) {
        const res = await t.http().put(`${GROUPS}/${id}`).set(admin()).send({ name: 'x' });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const g = await createGroup({ name: 'Guarded-put' });
      const anon = await t.http().put(`${GROUPS}/${g.id}`).send({ name: 'x' });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().put(`${GROUPS}/${g.id}`).set(bearer(viewer.token)).send({ name: 'x' });
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect((await getGroup(g.id)).name).toBe('Guarded-put');
    });
  });

  describe('DELETE /api/v1/groups/{id}', () => {
    it('deletes the group (204): members leave, roles and grants go, users stay', async () => {
      const g = await createGroup({ name: 'Doomed' });
      const member = await newUser(t, t.admin);
      expect((await addMember(g.id, member.userId)).status).toBe(204);
      const roleId = await createRole('Doomed group role', []);
      expect((await t.http().put(`/api/v1/roles/${roleId}/groups/${g.id}`).set(admin())).status).toBe(204);
      const grant = await t
        .http()
        .put(`${GROUPS}/${g.id}/policies`)
        .set(admin())
        .send({ policies: [{ resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] }] });
      expect(grant.status).toBe(200);

      const res = await t.http().delete(`${GROUPS}/${g.id}`).set(admin());
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const get = await t.http().get(`${GROUPS}/${g.id}`).set(admin());
      expect(get.status).toBe(404);
      expectErrorShape(get.body, 404, 'group_not_found');
      expect(await memberRows(g.id)).toEqual([]);
      expect(await t.sql(`SELECT 1 FROM group_roles WHERE group_id = $1`, [g.id])).toHaveLength(0);
      expect(await groupPolicyRows(g.id)).toHaveLength(0);
      // The user and the role stay.
      expect((await t.http().get(`/api/v1/users/${member.userId}`).set(admin())).status).toBe(200);
      expect((await t.http().get('/api/v1/users/me').set(bearer(member.token))).status).toBe(200);
      expect((await t.http().get(`/api/v1/roles/${roleId}`).set(admin())).status).toBe(200);

      const again = await t.http().delete(`${GROUPS}/${g.id}`).set(admin());
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'group_not_found');
    });

    it("is 404 for another account's group and a missing one, 400 for bad ids", async () => {
      const theirs = await createGroup({ name: 'Theirs-delete' }, other.token);
      for (const id of [theirs.id, MISSING]) {
        const res = await t.http().delete(`${GROUPS}/${id}`).set(admin());
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'group_not_found');
      }
      expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [theirs.id])).toHaveLength(1);
      for (const id of BAD_IDS) {
        const res = await t.http().delete(`${GROUPS}/${id}`).set(admin());
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const g = await createGroup({ name: 'Guarded-delete' });
      const anon = await t.http().delete(`${GROUPS}/${g.id}`);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().delete(`${GROUPS}/${g.id}`).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [g.id])).toHaveLength(1);
    });
  });

  describe('membership: /api/v1/groups/{id}/users', () => {
    let group: GroupBody;
    let ann: Actor;
    let bob: Actor;
    beforeAll(async () => {
      group = await createGroup({ name: 'Members' });
      ann = await newUser(t, t.admin, { firstName: 'Ann' });
      bob = await newUser(t, t.admin);
    });

    it('adds (204) idempotently and lists members by user id', async () => {
      for (let i = 0; i < 2; i++) {
        for (const u of [bob, ann]) {
          const res = await addMember(group.id, u.userId);
          expect(res.status).toBe(204);
          expect(res.text).toBe('');
        }
      }
      expect(await memberRows(group.id)).toEqual([ann.userId, bob.userId].sort((a, b) => a - b));
      const rows = await t.sql<{ account_id: number }>(
        `SELECT account_id FROM group_members WHERE group_id = $1`,
        [group.id],
      );
      expect(rows.map((r) => r.account_id)).toEqual([t.admin.accountId, t.admin.accountId]);
      expect((await getGroup(group.id)).memberCount).toBe(2);

      const list = await t.http().get(`${GROUPS}/${group.id}/users`).set(admin());
      expect(list.status).toBe(200);
      expect(list.body.items).toEqual([
        { id: ann.userId, email: ann.email, username: ann.email, firstName: 'Ann', isDeactivated: false },
        { id: bob.userId, email: bob.email, username: bob.email, firstName: null, isDeactivated: false },
      ]);
      expect(list.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('pages members with first/after and shows deactivated members as such', async () => {
      const g = await createGroup({ name: 'Paged members' });
      const users = [await newUser(t, t.admin), await newUser(t, t.admin), await newUser(t, t.admin)];
      for (const u of users) expect((await addMember(g.id, u.userId)).status).toBe(204);
      const off = await t
        .http()
        .put(`/api/v1/users/${users[1].userId}`)
        .set(admin())
        .send({ isDeactivated: true });
      expect(off.status).toBe(200);

      const first = await t.http().get(`${GROUPS}/${g.id}/users`).query({ first: 2 }).set(admin());
      expect(first.status).toBe(200);
      expect(first.body.items.map((m: MemberBody) => m.id)).toEqual([users[0].userId, users[1].userId]);
      expect(first.body.items[1].isDeactivated).toBe(true);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const second = await t
        .http()
        .get(`${GROUPS}/${g.id}/users`)
        .query({ first: 2, after: first.body.pageInfo.endCursor })
        .set(admin());
      expect(second.status).toBe(200);
      expect(second.body.items.map((m: MemberBody) => m.id)).toEqual([users[2].userId]);
      expect(second.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      const bad = await t.http().get(`${GROUPS}/${g.id}/users`).query({ first: 0 }).set(admin());
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'validation_failed');
    });

    it('removes (204) idempotently; the user stays', async () => {
      const g = await createGroup({ name: 'Leavers' });
      const u = await newUser(t, t.admin);
      expect((await addMember(g.id, u.userId)).status).toBe(204);
      for (let i = 0; i < 2; i++) {
        const res = await removeMember(g.id, u.userId);
        expect(res.status).toBe(204);
        expect(await memberRows(g.id)).toEqual([]);
      }
      expect((await getGroup(g.id)).memberCount).toBe(0);
      expect((await t.http().get(`/api/v1/users/${u.userId}`).set(admin())).status).toBe(200);
      // Never a member: still 204.
      expect((await removeMember(g.id, viewer.userId)).status).toBe(204);
    });

    it("is 404 user_not_found for a missing user or another account's user", async () => {
      for (const userId of [other.userId, MISSING]) {
        const res = await addMember(group.id, userId);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'user_not_found');
      }
      expect(await t.sql(`SELECT 1 FROM group_members WHERE user_id = $1`, [other.userId])).toHaveLength(0);
      expect(await memberRows(group.id)).not.toContain(other.userId);
    });

    it("is 404 group_not_found for another account's group and a missing one", async () => {
      const theirs = await createGroup({ name: 'Theirs-members' }, other.token);
      const theirUser = await newUser(t, other);
      expect((await addMember(theirs.id, theirUser.userId, other.token)).status).toBe(204);
      for (const id of [theirs.id, MISSING]) {
        const calls = [
          t.http().get(`${GROUPS}/${id}/users`),
          t.http().put(`${GROUPS}/${id}/users/${ann.userId}`),
          t.http().delete(`${GROUPS}/${id}/users/${ann.userId}`),
          t.http().delete(`${GROUPS}/${id}/users/${theirUser.userId}`),
        ];
        for (const call of calls) {
          const res = await call.set(admin());
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'group_not_found');
        }
      }
      expect(await memberRows(theirs.id)).toEqual([theirUser.userId]);
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const calls = [
        t.http().get(`${GROUPS}/${id}/users`),
        t.http().put(`${GROUPS}/${id}/users/${ann.userId}`),
        t.http().put(`${GROUPS}/${group.id}/users/${id}`),
        t.http().delete(`${GROUPS}/${id}/users/${ann.userId}`),
        t.http().delete(`${GROUPS}/${group.id}/users/${id}`),
      ];
      for (const call of calls) {
        const res = await call.set(admin());
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('is 401 without a token and 403 for a non-admin, changing nothing', async () => {
      const before = await memberRows(group.id);
      const calls = () => [
        t.http().get(`${GROUPS}/${group.id}/users`),
        t.http().put(`${GROUPS}/${group.id}/users/${viewer.userId}`),
        t.http().delete(`${GROUPS}/${group.id}/users/${ann.userId}`),
      ];
      for (const call of calls()) {
        const res = await call;
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401, 'unauthorized');
      }
      for (const call of calls()) {
        const res = await call.set(bearer(viewer.token));
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await memberRows(group.id)).toEqual(before);
    });

    it('a deleted user leaves their groups', async () => {
      const g = await createGroup({ name: 'Loses a member' });
      const u = await newUser(t, t.admin);
      expect((await addMember(g.id, u.userId)).status).toBe(204);
      expect((await t.http().delete(`/api/v1/users/${u.userId}`).set(admin())).status).toBe(200);
      expect(await memberRows(g.id)).toEqual([]);
      expect((await getGroup(g.id)).memberCount).toBe(0);
    });
  });

  describe('membership in parallel', () => {
    it('10 parallel adds of 10 users make 10 members', async () => {
      const g = await createGroup({ name: 'Crowd' });
      const users = await Promise.all(Array.from({ length: 10 }, () => newUser(t, t.admin)));
      const results = await Promise.all(users.map((u) => run(addMember(g.id, u.userId))));
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(204));
      expect((await getGroup(g.id)).memberCount).toBe(10);
      expect(await memberRows(g.id)).toEqual(users.map((u) => u.userId).sort((a, b) => a - b));
    });

    it('5 parallel adds of the same user leave one row; parallel removes leave none', async () => {
      const g = await createGroup({ name: 'Same user' });
      const u = await newUser(t, t.admin);
      const added = await Promise.all(Array.from({ length: 5 }, () => run(addMember(g.id, u.userId))));
      expect(added.map((r) => r.status)).toEqual(Array(5).fill(204));
      expect(await memberRows(g.id)).toEqual([u.userId]);
      const removed = await Promise.all(Array.from({ length: 5 }, () => run(removeMember(g.id, u.userId))));
      expect(removed.map((r) => r.status)).toEqual(Array(5).fill(204));
      expect(await memberRows(g.id)).toEqual([]);
    });

    it('adds racing a group delete answer 204 or 404, never 500, and leave no orphan rows', async () => {
      const users = await Promise.all(Array.from({ length: 6 }, () => newUser(t, t.admin)));
      for (let round = 0; round < 5; round++) {
        const g = await createGroup({ name: `Vanishing ${round}` });
        const adds = users.map((u) => run(addMember(g.id, u.userId)));
        const del = run(t.http().delete(`${GROUPS}/${g.id}`).set(admin()));
        const results = await Promise.all([...adds.slice(0, 3), del, ...adds.slice(3)]);
        for (const r of results) {
          expect([204, 404]).toContain(r.status);
          if (r.status === 404) expectErrorShape(r.body, 404, 'group_not_found');
        }
        expect(results[3].status).toBe(204);
        expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [g.id])).toHaveLength(0);
        expect(await memberRows(g.id)).toEqual([]);
      }
      const orphans = await t.sql(
        `SELECT 1 FROM group_members m WHERE NOT EXISTS (SELECT 1 FROM groups g WHERE g.id = m.group_id)`,
      );
      expect(orphans).toHaveLength(0);
    });

    it('a role assigned to a group racing its delete answers 204 or 404 and leaves no orphan rows', async () => {
      const roleId = await createRole('Racing role', []);
      for (let round = 0; round < 5; round++) {
        const g = await createGroup({ name: `Role race ${round}` });
        const results = await Promise.all([
          run(t.http().put(`/api/v1/roles/${roleId}/groups/${g.id}`).set(admin())),
          run(t.http().delete(`${GROUPS}/${g.id}`).set(admin())),
          run(t.http().put(`/api/v1/roles/${roleId}/groups/${g.id}`).set(admin())),
        ]);
        for (const r of results) expect([204, 404]).toContain(r.status);
        expect(results[1].status).toBe(204);
        expect(await t.sql(`SELECT 1 FROM group_roles WHERE group_id = $1`, [g.id])).toHaveLength(0);
      }
    });
  });

  describe('GET/PUT /api/v1/groups/{id}/policies', () => {
    let group: GroupBody;
    let deployment: number;
    beforeAll(async () => {
      group = await createGroup({ name: 'With grants' });
      deployment = await createDeployment('Group-granted');
    });

    it('starts empty', async () => {
      const res = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ policies: [] });
    });

    it('replaces the policies and reads them back grouped', async () => {
      const policies: Policy[] = [
        { resourceType: 'Global', actions: ['PlaygroundRead', 'BillingRead'], resources: ['All'] },
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(deployment)] },
      ];
      const res = await t.http().put(`${GROUPS}/${group.id}/policies`).set(admin()).send({ policies });
      expect(res.status).toBe(200);
      const expected = [
        { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(deployment)] },
        { resourceType: 'Global', actions: ['BillingRead', 'PlaygroundRead'], resources: ['All'] },
      ];
      expect(res.body.policies).toEqual(expect.arrayContaining(expected));
      expect(res.body.policies).toHaveLength(2);
      const get = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      expect(get.body).toEqual(res.body);
      expect(await groupPolicyRows(group.id)).toHaveLength(3);

      const replaced = await t
        .http()
        .put(`${GROUPS}/${group.id}/policies`)
        .set(admin())
        .send({ policies: [{ resourceType: 'Global', actions: ['APMRead'], resources: [] }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.policies).toEqual([
        { resourceType: 'Global', actions: ['APMRead'], resources: ['All'] },
      ]);
      const cleared = await t
        .http()
        .put(`${GROUPS}/${group.id}/policies`)
        .set(admin())
        .send({ policies: [] });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toEqual({ policies: [] });
      expect(await groupPolicyRows(group.id)).toHaveLength(0);
    });

    it('refuses bad policies with 400 and keeps the old ones', async () => {
      const keep = [{ resourceType: 'Global', actions: ['AlertsRead'], resources: ['All'] }];
      expect(
        (await t.http().put(`${GROUPS}/${group.id}/policies`).set(admin()).send({ policies: keep })).status,
      ).toBe(200);
      const theirDeployment = await createDeployment('Foreign', other.token);
      const cases: Array<[unknown, string]> = [
        [{}, 'validation_failed'],
        [{ policies: 'all' }, 'validation_failed'],
        [{ policies: [], extra: 1 }, 'validation_failed'],
        [
          { policies: [{ resourceType: 'Global', actions: ['Fly'], resources: ['All'] }] },
          'validation_failed',
        ],
        [
          { policies: [{ resourceType: 'Nowhere', actions: ['All'], resources: ['All'] }] },
          'validation_failed',
        ],
        [{ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['1'] }] }, 'unknown_resource'],
        [
          {
            policies: [
              { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(MISSING)] },
            ],
          },
          'unknown_resource',
        ],
        [
          {
            policies: [
              {
                resourceType: 'Deployment',
                actions: ['DeploymentRead'],
                resources: [String(theirDeployment)],
              },
            ],
          },
          'unknown_resource',
        ],
        [
          { policies: [{ resourceType: 'Agent', actions: ['AgentRead'], resources: ['1'] }] },
          'unsupported_resource_type',
        ],
      ];
      for (const [body, code] of cases) {
        const res = await t
          .http()
          .put(`${GROUPS}/${group.id}/policies`)
          .set(admin())
          .send(body as object);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, code);
      }
      const get = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      expect(get.body.policies).toEqual(keep);
    });

    it('keeps one consistent set under parallel replacements', async () => {
      const sets = ['AlertsRead', 'AlertsCreate', 'BillingRead', 'APMRead', 'SqlRunnerRead'].map((a) => [
        { resourceType: 'Global', actions: [a], resources: ['All'] },
      ]);
      const results = await Promise.all(
        sets.map((policies) =>
          run(t.http().put(`${GROUPS}/${group.id}/policies`).set(admin()).send({ policies })),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(5).fill(200));
      const get = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      expect(sets).toContainEqual(get.body.policies);
      expect(await groupPolicyRows(group.id)).toHaveLength(1);
    });

    it("is 404 group_not_found for another account's group and a missing one", async () => {
      const theirs = await createGroup({ name: 'Theirs-policies' }, other.token);
      for (const id of [theirs.id, MISSING]) {
        const get = await t.http().get(`${GROUPS}/${id}/policies`).set(admin());
        expect(get.status).toBe(404);
        expectErrorShape(get.body, 404, 'group_not_found');
        const put = await t
          .http()
          .put(`${GROUPS}/${id}/policies`)
          .set(admin())
          .send({ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] });
        expect(put.status).toBe(404);
        expectErrorShape(put.body, 404, 'group_not_found');
      }
      expect(await groupPolicyRows(theirs.id)).toHaveLength(0);
      expect(await groupPolicyRows(MISSING)).toHaveLength(0);
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      for (const call of [
        t.http().get(`${GROUPS}/${id}/policies`),
        t.http().put(`${GROUPS}/${id}/policies`).send({ policies: [] }),
      ]) {
        const res = await call.set(admin());
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });

    it('is 401 without a token and 403 for a non-admin, changing nothing', async () => {
      const before = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      const body = { policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] };
      const anonGet = await t.http().get(`${GROUPS}/${group.id}/policies`);
      expect(anonGet.status).toBe(401);
      expectErrorShape(anonGet.body, 401, 'unauthorized');
      const anonPut = await t.http().put(`${GROUPS}/${group.id}/policies`).send(body);
      expect(anonPut.status).toBe(401);
      expectErrorShape(anonPut.body, 401, 'unauthorized');
      const get = await t.http().get(`${GROUPS}/${group.id}/policies`).set(bearer(viewer.token));
      expect(get.status).toBe(403);
      expectErrorShape(get.body, 403, 'forbidden');
      const put = await t.http().put(`${GROUPS}/${group.id}/policies`).set(bearer(viewer.token)).send(body);
      expect(put.status).toBe(403);
      expectErrorShape(put.body, 403, 'forbidden');
      const after = await t.http().get(`${GROUPS}/${group.id}/policies`).set(admin());
      expect(after.body).toEqual(before.body);
    });
  });

  describe('PUT/DELETE /api/v1/roles/{roleId}/groups/{groupId}', () => {
    let roleId: number;
    let group: GroupBody;
    const roleRows = () =>
      t.sql<{ account_id: number }>(
        `SELECT account_id FROM group_roles WHERE role_id = $1 AND group_id = $2`,
        [roleId, group.id],
      );
    beforeAll(async () => {
      roleId = await createRole('For groups', []);
      group = await createGroup({ name: 'Role holders' });
    });

    it('assigns (204) idempotently and unassigns (204) idempotently', async () => {
      const url = `/api/v1/roles/${roleId}/groups/${group.id}`;
      for (let i = 0; i < 2; i++) {
        const res = await t.http().put(url).set(admin());
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        expect(await roleRows()).toEqual([{ account_id: t.admin.accountId }]);
      }
      for (let i = 0; i < 2; i++) {
        const res = await t.http().delete(url).set(admin());
        expect(res.status).toBe(204);
        expect(await roleRows()).toEqual([]);
      }
    });

    it('accepts parallel assigns of the same pair, leaving one row', async () => {
      const url = `/api/v1/roles/${roleId}/groups/${group.id}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => run(t.http().put(url).set(admin()))));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(204));
      expect(await roleRows()).toHaveLength(1);
      const removed = await Promise.all(
        Array.from({ length: 4 }, () => run(t.http().delete(url).set(admin()))),
      );
      expect(removed.map((r) => r.status)).toEqual(Array(4).fill(204));
      expect(await roleRows()).toHaveLength(0);
    });

    it('deleting the role takes it from its groups', async () => {
      const doomed = await createRole('Doomed for groups', []);
      expect((await t.http().put(`/api/v1/roles/${doomed}/groups/${group.id}`).set(admin())).status).toBe(
        204,
      );
      expect((await t.http().delete(`/api/v1/roles/${doomed}`).set(admin())).status).toBe(204);
      expect(await t.sql(`SELECT 1 FROM group_roles WHERE role_id = $1`, [doomed])).toHaveLength(0);
      expect((await getGroup(group.id)).id).toBe(group.id);
    });

    it("is 404 role_not_found / group_not_found for another account's or a missing one", async () => {
      const theirGroup = await createGroup({ name: 'Theirs-roles' }, other.token);
      const theirRole = await t
        .http()
        .post('/api/v1/roles')
        .set(bearer(other.token))
        .send({ name: 'Their role', policies: [] });
      expect(theirRole.status).toBe(200);
      for (const method of ['put', 'delete'] as const) {
        for (const id of [theirRole.body.id as number, MISSING]) {
          const res = await t.http()[method](`/api/v1/roles/${id}/groups/${group.id}`).set(admin());
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'role_not_found');
        }
        for (const id of [theirGroup.id, MISSING]) {
          const res = await t.http()[method](`/api/v1/roles/${roleId}/groups/${id}`).set(admin());
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'group_not_found');
        }
      }
      expect(await t.sql(`SELECT 1 FROM group_roles WHERE group_id = $1`, [theirGroup.id])).toHaveLength(0);
      expect(
        await t.sql(`SELECT 1 FROM group_roles WHERE role_id = $1`, [theirRole.body.id as number]),
      ).toHaveLength(0);
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      for (const method of ['put', 'delete'] as const) {
        for (const url of [
          `/api/v1/roles/${id}/groups/${group.id}`,
          `/api/v1/roles/${roleId}/groups/${id}`,
        ]) {
          const res = await t.http()[method](url).set(admin());
          expect(res.status).toBe(400);
          expectErrorShape(res.body, 400, 'validation_failed');
        }
      }
    });

    it('is 401 without a token and 403 for a non-admin, changing nothing', async () => {
      const url = `/api/v1/roles/${roleId}/groups/${group.id}`;
      for (const method of ['put', 'delete'] as const) {
        const anon = await t.http()[method](url);
        expect(anon.status).toBe(401);
        expectErrorShape(anon.body, 401, 'unauthorized');
        const res = await t.http()[method](url).set(bearer(viewer.token));
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await roleRows()).toHaveLength(0);
    });
  });

  // The other inheritance rules are decided without HTTP: test/service/access.service.spec.ts.
  describe('members inherit the group’s roles and grants, at once', () => {
    let member: Actor;
    let group: GroupBody;
    beforeEach(async () => {
      member = await newUser(t, t.admin, { defaultRoles: [] });
      group = await createGroup({ name: `Inheritance ${member.userId}` });
    });

    it('GET /api/v1/users/me lists the policies a member holds through the group', async () => {
      const granted = await createDeployment('Listed in me');
      const grant = await t
        .http()
        .put(`${GROUPS}/${group.id}/policies`)
        .set(admin())
        .send({
          policies: [
            { resourceType: 'Global', actions: ['DeploymentCreate'], resources: ['All'] },
            { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] },
          ],
        });
      expect(grant.status).toBe(200);
      expect((await addMember(group.id, member.userId)).status).toBe(204);
      const me = await t.http().get('/api/v1/users/me').set(bearer(member.token));
      expect(me.status).toBe(200);
      // userPolicies are the caller's effective policies: what their groups grant is part of them.
      expect(me.body.userPolicies).toEqual(
        expect.arrayContaining([
          { resourceType: 'Global', actions: ['DeploymentCreate'], resources: ['All'] },
          { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(granted)] },
        ]),
      );
    });
  });
});
