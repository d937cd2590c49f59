import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { TENANTS, type EmbedUser } from '../support/embedding.js';

interface EmbedGroup {
  id: number;
  name: string;
  description: string | null;
  userCount: number;
}
interface PageBody<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}
type Member = { externalId?: string | null; embedUserId?: number | null };

describe('embed tenant groups and their members', () => {
  let t: TestApp;
  let other: Actor;
  let noRole: Actor;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const groupsPath = (tenant: string) => `${TENANTS}/${encodeURIComponent(tenant)}/groups`;
  const groupPath = (tenant: string, id: number | string) => `${groupsPath(tenant)}/${id}`;
  const membersPath = (tenant: string, id: number | string) => `${groupPath(tenant, id)}/users`;

  const createGroup = (tenant: string, body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().post(groupsPath(tenant)).set(bearer(actor.token)).send(body);
  const groupOk = async (tenant: string, name: string, description?: string): Promise<EmbedGroup> => {
    const res = await createGroup(tenant, { name, description });
    if (res.status !== 200) throw new Error(`group: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as EmbedGroup;
  };
  const getGroup = (tenant: string, id: number | string, actor: Actor = t.admin) =>
    t.http().get(groupPath(tenant, id)).set(bearer(actor.token));
  const patchGroup = (tenant: string, id: number, body: Record<string, unknown>) =>
    t.http().patch(groupPath(tenant, id)).set(bearer(t.admin.token)).send(body);
  const deleteGroup = (tenant: string, id: number | string, actor: Actor = t.admin) =>
    t.http().delete(groupPath(tenant, id)).set(bearer(actor.token));
  const listGroups = (tenant: string, query: Record<string, string | number> = {}) =>
    t.http().get(groupsPath(tenant)).query(query).set(bearer(t.admin.token));
  const add = (tenant: string, id: number, members: Member[], actor: Actor = t.admin) =>
    t.http().post(membersPath(tenant, id)).set(bearer(actor.token)).send({ members });
  const addOk = async (tenant: string, id: number, members: Member[]) => {
    const res = await add(tenant, id, members);
    if (res.status !== 200) throw new Error(`add: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { addedMembers: EmbedUser[]; unchangedMembers: EmbedUser[] };
  };
  const remove = (tenant: string, id: number, members: Member[], actor: Actor = t.admin) =>
    t.http().delete(membersPath(tenant, id)).set(bearer(actor.token)).send({ members });
  const listMembers = (tenant: string, id: number, query: Record<string, string | number> = {}) =>
    t.http().get(membersPath(tenant, id)).query(query).set(bearer(t.admin.token));
  const provisionOk = async (tenant: string, body: Record<string, unknown>): Promise<EmbedUser> => {
    const res = await t.http().post(`${TENANTS}/${tenant}/user`).set(bearer(t.admin.token)).send(body);
    if (res.status !== 200) throw new Error(`provision: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as EmbedUser;
  };
  const ext = (...ids: string[]): Member[] => ids.map((externalId) => ({ externalId }));

  /** Follows `endCursor` with first=1 and returns every item seen, in order. */
  const walk = async <T>(
    fetch: (q: Record<string, string | number>) => Promise<{ status: number; body: PageBody<T> }>,
  ) => {
    const seen: T[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await fetch(after ? { first: 1, after } : { first: 1 });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...res.body.items);
      if (!res.body.pageInfo.hasNextPage) return seen;
      after = res.body.pageInfo.endCursor ?? undefined;
    }
    throw new Error('paging did not end');
  };

  /** The external ids of the group's members, sorted, straight from the database. */
  const memberRows = async (groupId: number) =>
    (
      await t.sql<{ external_id: string }>(
        `SELECT u.external_id FROM embed_group_members gm JOIN embed_users u ON u.id = gm.embed_user_id
         WHERE gm.group_id = $1 ORDER BY u.external_id`,
        [groupId],
      )
    ).map((r) => r.external_id);
  const usersOf = (tenant: string) =>
    t.sql<{ id: number; external_id: string; email: string }>(
      `SELECT u.id, u.external_id, u.email FROM embed_users u JOIN embed_tenants tn ON tn.id = u.tenant_id
       WHERE tn.name = $1 AND tn.account_id = $2 ORDER BY u.external_id`,
      [tenant, t.admin.accountId],
    );
  const orphanMembers = async () =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_group_members gm
         LEFT JOIN embed_groups g ON g.id = gm.group_id LEFT JOIN embed_users u ON u.id = gm.embed_user_id
         WHERE g.id IS NULL OR u.id IS NULL`,
      )
    )[0].n;

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'other');
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
  });
  afterAll(() => t.close());

  describe('creating a group', () => {
    it('answers the group with no members and creates the tenant on demand', async () => {
      const tenant = uid('new');
      expect(await t.sql(`SELECT 1 FROM embed_tenants WHERE name = $1`, [tenant])).toHaveLength(0);
      const res = await createGroup(tenant, { name: 'Sales', description: 'The sales team' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Sales',
        description: 'The sales team',
        userCount: 0,
      });
      expect(await t.sql(`SELECT account_id FROM embed_tenants WHERE name = $1`, [tenant])).toEqual([
        { account_id: t.admin.accountId },
      ]);
      const noDescription = await createGroup(tenant, { name: 'Ops' });
      expect(noDescription.body).toMatchObject({ name: 'Ops', description: null, userCount: 0 });
    });

    it('refuses a name already taken in the same tenant, but allows it in another tenant', async () => {
      const [a, b] = [uid('dup'), uid('dup')];
      const first = await groupOk(a, 'team');
      const again = await createGroup(a, { name: 'team' });
      expect(again.status).toBe(400);
      expectErrorShape(again.body, 400, 'embed_group_name_taken');
      const elsewhere = await createGroup(b, { name: 'team' });
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.body.id).not.toBe(first.id);
      expect(await t.sql(`SELECT count(*)::int AS n FROM embed_groups WHERE name = 'team'`)).toEqual([
        { n: 2 },
      ]);
    });

    it.each(['system:x', 'SYSTEM:x', 'System:Admins'])('refuses the reserved name %s', async (name) => {
      const tenant = uid('res');
      const res = await createGroup(tenant, { name });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'embed_group_name_reserved');
      expect(await t.sql(`SELECT 1 FROM embed_groups WHERE lower(name) LIKE 'system:%'`)).toHaveLength(0);
    });

    it('refuses a name over 100 characters and a description over 500, accepting the limits', async () => {
      const tenant = uid('len');
      const longName = await createGroup(tenant, { name: 'n'.repeat(101) });
      expect(longName.status).toBe(400);
      expectErrorShape(longName.body, 400, 'validation_failed');
      const longDescription = await createGroup(tenant, { name: 'ok', description: 'd'.repeat(501) });
      expect(longDescription.status).toBe(400);
      expectErrorShape(longDescription.body, 400, 'validation_failed');
      const limits = await createGroup(tenant, { name: 'n'.repeat(100), description: 'd'.repeat(500) });
      expect(limits.status).toBe(200);
      expect(await t.sql(`SELECT name FROM embed_groups WHERE name = 'ok'`)).toHaveLength(0);
    });
  });

  describe('listing and reading groups', () => {
    it('lists newest first with member counts, and first=1 walks every group', async () => {
      const tenant = uid('list');
      const g1 = await groupOk(tenant, 'one');
      const g2 = await groupOk(tenant, 'two');
      const g3 = await groupOk(tenant, 'three');
      await addOk(tenant, g2.id, ext('a', 'b'));
      const res = await listGroups(tenant);
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([
        { id: g3.id, name: 'three', description: null, userCount: 0 },
        { id: g2.id, name: 'two', description: null, userCount: 2 },
        { id: g1.id, name: 'one', description: null, userCount: 0 },
      ]);
      expect(res.body.pageInfo.hasNextPage).toBe(false);
      const walked = await walk<EmbedGroup>((q) => listGroups(tenant, q));
      expect(walked.map((g) => g.id)).toEqual([g3.id, g2.id, g1.id]);
    });

    it('answers 404 embed_tenant_not_found for an unknown tenant', async () => {
      const res = await listGroups(uid('ghost'));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'embed_tenant_not_found');
    });

    it('gets a group of the tenant, but not one of another tenant under this path', async () => {
      const [a, b] = [uid('get'), uid('get')];
      const ga = await groupOk(a, 'mine', 'desc');
      const gb = await groupOk(b, 'theirs');
      expect((await getGroup(a, ga.id)).body).toEqual({ ...ga, description: 'desc' });
      const foreign = await getGroup(a, gb.id);
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'embed_group_not_found');
      for (const bad of ['abc', '1.5', '0', '-1']) {
        const res = await getGroup(a, bad);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
    });
  });

  describe('updating a group', () => {
    it('updates the description; empty string and null clear it; omitting it leaves it', async () => {
      const tenant = uid('upd');
      const g = await groupOk(tenant, 'g', 'first');
      const updated = await patchGroup(tenant, g.id, { description: 'second' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id: g.id, name: 'g', description: 'second', userCount: 0 });
      expect((await patchGroup(tenant, g.id, {})).body.description).toBe('second');
      expect((await patchGroup(tenant, g.id, { description: '' })).body.description).toBeNull();
      await patchGroup(tenant, g.id, { description: 'third' });
      expect((await patchGroup(tenant, g.id, { description: null })).body.description).toBeNull();
      expect(await t.sql(`SELECT description FROM embed_groups WHERE id = $1`, [g.id])).toEqual([
        { description: null },
      ]);
    });

    it('refuses a body with a name and keeps the name', async () => {
      const tenant = uid('ren');
      const g = await groupOk(tenant, 'fixed', 'keep');
      const res = await patchGroup(tenant, g.id, { name: 'renamed', description: 'changed' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect((await getGroup(tenant, g.id)).body).toMatchObject({ name: 'fixed', description: 'keep' });
    });
  });

  describe('deleting a group', () => {
    it('deletes an empty group (204), refuses one with members (400) and answers 404 for an unknown one', async () => {
      const tenant = uid('del');
      const empty = await groupOk(tenant, 'empty');
      const full = await groupOk(tenant, 'full');
      await addOk(tenant, full.id, ext('m'));

      expect((await deleteGroup(tenant, empty.id)).status).toBe(204);
      expect(await t.sql(`SELECT 1 FROM embed_groups WHERE id = $1`, [empty.id])).toHaveLength(0);

      const refused = await deleteGroup(tenant, full.id);
      expect(refused.status).toBe(400);
      expectErrorShape(refused.body, 400, 'embed_group_has_members');
      expect((await getGroup(tenant, full.id)).body).toMatchObject({ id: full.id, userCount: 1 });

      const unknown = await deleteGroup(tenant, empty.id);
      expect(unknown.status).toBe(404);
      expectErrorShape(unknown.body, 404, 'embed_group_not_found');

      await remove(tenant, full.id, ext('m'));
      expect((await deleteGroup(tenant, full.id)).status).toBe(204);
      expect(await usersOf(tenant)).toEqual([expect.objectContaining({ external_id: 'm' })]);
    });
  });

  describe('adding members', () => {
    it('provisions an unknown externalId with a synthetic email and adds an existing user by embedUserId', async () => {
      const tenant = uid('add');
      const g = await groupOk(tenant, 'g');
      const known = await provisionOk(tenant, { externalId: 'known', email: 'known@x.test' });
      const res = await add(tenant, g.id, [{ externalId: '  New User ' }, { embedUserId: known.id }]);
      expect(res.status).toBe(200);
      expect(res.body.unchangedMembers).toEqual([]);
      expect(res.body.addedMembers).toEqual([
        expect.objectContaining({ externalId: 'new user', username: 'new user', lastLogin: null }),
        { ...known },
      ]);
      const users = await usersOf(tenant);
      expect(users).toHaveLength(2);
      const created = users.find((u) => u.external_id === 'new user')!;
      expect(created.email).toMatch(/^new-user\.[0-9a-f]{16}@embed-users\.invalid$/);
      expect(res.body.addedMembers[0]).toMatchObject({ id: created.id, email: created.email });
      expect(await memberRows(g.id)).toEqual(['known', 'new user']);
      expect((await getGroup(tenant, g.id)).body.userCount).toBe(2);
    });

    it('puts members already in the group into unchangedMembers, and a repeated add changes nothing', async () => {
      const tenant = uid('again');
      const g = await groupOk(tenant, 'g');
      const first = await addOk(tenant, g.id, ext('a', 'b'));
      expect(first.addedMembers.map((u) => u.externalId)).toEqual(['a', 'b']);
      const mixed = await addOk(tenant, g.id, ext('b', 'c'));
      expect(mixed.addedMembers.map((u) => u.externalId)).toEqual(['c']);
      expect(mixed.unchangedMembers.map((u) => u.externalId)).toEqual(['b']);
      const again = await addOk(tenant, g.id, [
        ...ext('A', 'b', 'c'),
        { embedUserId: first.addedMembers[0].id },
      ]);
      expect(again.addedMembers).toEqual([]);
      expect(again.unchangedMembers.map((u) => u.externalId)).toEqual(['a', 'b', 'c']);
      expect(await memberRows(g.id)).toEqual(['a', 'b', 'c']);
      expect(await usersOf(tenant)).toHaveLength(3);
    });

    it('answers 404 embed_user_not_found for an unknown embedUserId and adds or provisions nobody', async () => {
      const tenant = uid('unk');
      const g = await groupOk(tenant, 'g');
      const known = await provisionOk(tenant, { externalId: 'known' });
      const res = await add(tenant, g.id, [
        { embedUserId: known.id },
        { externalId: 'fresh' },
        { embedUserId: 2_000_000 },
      ]);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'embed_user_not_found');
      expect(await memberRows(g.id)).toEqual([]);
      expect((await usersOf(tenant)).map((u) => u.external_id)).toEqual(['known']);
    });

    it('answers 404 for the embedUserId of a user of another tenant, and changes nothing', async () => {
      const [a, b] = [uid('ta'), uid('tb')];
      const g = await groupOk(a, 'g');
      const foreigner = await provisionOk(b, { externalId: 'foreigner' });
      const res = await add(a, g.id, [{ embedUserId: foreigner.id }]);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'embed_user_not_found');
      expect(await memberRows(g.id)).toEqual([]);
    });

    it('refuses a member with both fields or neither as invalid_member, and 0 or 1001 members', async () => {
      const tenant = uid('inv');
      const g = await groupOk(tenant, 'g');
      const known = await provisionOk(tenant, { externalId: 'known' });
      for (const members of [
        [{ externalId: 'known', embedUserId: known.id }],
        [{}],
        [{ externalId: null, embedUserId: null }],
        [{ externalId: 'ok' }, { externalId: '   ' }],
      ]) {
        const res = await add(tenant, g.id, members);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'invalid_member');
      }
      for (const members of [[], ext(...Array.from({ length: 1001 }, (_, i) => `m${i}`))]) {
        const res = await add(tenant, g.id, members);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(await memberRows(g.id)).toEqual([]);
      expect((await usersOf(tenant)).map((u) => u.external_id)).toEqual(['known']);
    });

    it("leaves the user's account-wide groups untouched", async () => {
      const tenant = uid('acct');
      const wide = await t
        .http()
        .post('/api/v1/groups')
        .set(bearer(t.admin.token))
        .send({ name: uid('wide') });
      expect(wide.status).toBe(200);
      const user = await provisionOk(tenant, { externalId: 'u', groups: [wide.body.name] });
      const g = await groupOk(tenant, 'g');
      await addOk(tenant, g.id, [{ embedUserId: user.id }]);
      await remove(tenant, g.id, [{ embedUserId: user.id }]);
      await addOk(tenant, g.id, ext('u'));
      expect(
        await t.sql(`SELECT group_id FROM embed_user_groups WHERE embed_user_id = $1`, [user.id]),
      ).toEqual([{ group_id: wide.body.id }]);
    });
  });

  describe('listing and removing members', () => {
    it('lists the most recently added first and pages with first=1', async () => {
      const tenant = uid('lm');
      const g = await groupOk(tenant, 'g');
      await addOk(tenant, g.id, ext('first'));
      await addOk(tenant, g.id, ext('second'));
      const batch = await addOk(tenant, g.id, ext('third-a', 'third-b'));
      const res = await listMembers(tenant, g.id);
      expect(res.status).toBe(200);
      const batchDesc = batch.addedMembers
        .map((u) => u)
        .sort((x, y) => y.id - x.id)
        .map((u) => u.externalId);
      expect(res.body.items.map((u: EmbedUser) => u.externalId)).toEqual([...batchDesc, 'second', 'first']);
      expect(res.body.items[0]).toEqual({
        id: expect.any(Number),
        username: batchDesc[0],
        createdAt: expect.any(String),
        email: `${batchDesc[0]}@embed-users.invalid`,
        externalId: batchDesc[0],
        firstName: null,
        lastLogin: null,
      });
      const walked = await walk<EmbedUser>((q) => listMembers(tenant, g.id, q));
      expect(walked.map((u) => u.externalId)).toEqual([...batchDesc, 'second', 'first']);
    });

    it('removes members (204), idempotently, ignoring unknown externalIds without provisioning them', async () => {
      const tenant = uid('rm');
      const g = await groupOk(tenant, 'g');
      const keep = await groupOk(tenant, 'keep');
      const added = await addOk(tenant, g.id, ext('a', 'b', 'c'));
      await addOk(tenant, keep.id, ext('a'));
      const res = await remove(tenant, g.id, [
        { externalId: 'A' },
        { embedUserId: added.addedMembers[1].id },
        { externalId: 'nobody' },
      ]);
      expect(res.status).toBe(204);
      expect(await memberRows(g.id)).toEqual(['c']);
      const again = await remove(tenant, g.id, ext('a', 'nobody'));
      expect(again.status).toBe(204);
      expect(await memberRows(g.id)).toEqual(['c']);
      expect(await memberRows(keep.id)).toEqual(['a']);
      expect((await usersOf(tenant)).map((u) => u.external_id)).toEqual(['a', 'b', 'c']);
      const bad = await remove(tenant, g.id, [{}]);
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'invalid_member');
    });
  });

  describe('parallel changes', () => {
    it('30 parallel adds of different new externalIds all succeed and none is lost', async () => {
      const tenant = uid('par');
      const g = await groupOk(tenant, 'g');
      const ids = Array.from({ length: 30 }, (_, i) => `p${i}`);
      const results = await Promise.all(ids.map((id) => add(tenant, g.id, ext(id))));
      expect(results.map((r) => r.status)).toEqual(ids.map(() => 200));
      expect(await memberRows(g.id)).toEqual([...ids].sort());
      expect(await usersOf(tenant)).toHaveLength(30);
      expect((await getGroup(tenant, g.id)).body.userCount).toBe(30);
    });

    it('20 parallel adds of one externalId in different casings make one user and one membership', async () => {
      const tenant = uid('case');
      const g = await groupOk(tenant, 'g');
      const casings = ['Ann', 'ANN', 'ann', ' ann ', 'aNn', 'AnN', 'anN', 'ANn', 'aNN', 'Ann '];
      const results = await Promise.all([...casings, ...casings].map((c) => add(tenant, g.id, ext(c))));
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      expect(results.filter((r) => r.body.addedMembers.length === 1)).toHaveLength(1);
      expect(
        new Set(results.map((r) => [...r.body.addedMembers, ...r.body.unchangedMembers][0].id)).size,
      ).toBe(1);
      expect((await usersOf(tenant)).map((u) => u.external_id)).toEqual(['ann']);
      expect(await memberRows(g.id)).toEqual(['ann']);
    });

    it('parallel adds and removes of different members end in exactly the expected set', async () => {
      const tenant = uid('mix');
      const g = await groupOk(tenant, 'g');
      const old = Array.from({ length: 10 }, (_, i) => `old${i}`);
      const fresh = Array.from({ length: 10 }, (_, i) => `new${i}`);
      await addOk(tenant, g.id, ext(...old));
      const results = await Promise.all([
        ...old.slice(0, 5).map((id) => remove(tenant, g.id, ext(id))),
        ...fresh.map((id) => add(tenant, g.id, ext(id))),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), ...Array(5).fill(204)]);
      expect(await memberRows(g.id)).toEqual([...old.slice(5), ...fresh].sort());
    });

    it('a group deleted while members are being added never keeps orphans nor answers 500', async () => {
      for (let round = 0; round < 3; round++) {
        const tenant = uid('race');
        const g = await groupOk(tenant, 'g');
        const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
        const requests = ids.map((id) => add(tenant, g.id, ext(id)));
        requests.splice(round * 5, 0, deleteGroup(tenant, g.id));
        const results = await Promise.all(requests);
        const del = results[round * 5];
        const adds = results.filter((r) => r !== del);
        expect([204, 400]).toContain(del.status);
        for (const r of adds) expect([200, 404]).toContain(r.status);
        const okIds = adds
          .filter((r) => r.status === 200)
          .map((r) => r.body.addedMembers[0].externalId as string);
        const exists = (await t.sql(`SELECT 1 FROM embed_groups WHERE id = $1`, [g.id])).length === 1;
        if (del.status === 204) {
          expect(exists).toBe(false);
          expect(okIds).toEqual([]);
        } else {
          expectErrorShape(del.body, 400, 'embed_group_has_members');
          expect(exists).toBe(true);
          expect(await memberRows(g.id)).toEqual([...okIds].sort());
        }
        // A refused add provisioned nobody: exactly the accepted ones exist as users.
        expect((await usersOf(tenant)).map((u) => u.external_id)).toEqual([...okIds].sort());
        expect(await orphanMembers()).toBe(0);
      }
    });
  });

  describe('tenant groups through provisioning and tenant deletion', () => {
    it('shows members provisioned with tenantGroups, and deleting the tenant removes groups and memberships', async () => {
      const tenant = uid('prov');
      const g1 = await groupOk(tenant, 'analysts');
      const g2 = await groupOk(tenant, 'viewers');
      const ann = await provisionOk(tenant, { externalId: 'ann', tenantGroups: ['analysts', 'viewers'] });
      const bob = await provisionOk(tenant, { externalId: 'bob', tenantGroups: ['analysts'] });
      const members = await listMembers(tenant, g1.id);
      expect(members.body.items.map((u: EmbedUser) => u.id).sort()).toEqual([ann.id, bob.id].sort());
      expect((await listMembers(tenant, g2.id)).body.items).toEqual([ann]);
      expect((await getGroup(tenant, g1.id)).body.userCount).toBe(2);

      await provisionOk(tenant, { externalId: 'ann', tenantGroups: [] });
      expect((await listMembers(tenant, g2.id)).body.items).toEqual([]);
      expect(await memberRows(g1.id)).toEqual(['bob']);

      const del = await t.http().delete(`${TENANTS}/${tenant}`).set(bearer(t.admin.token));
      expect(del.status).toBe(204);
      expect(
        await t.sql(`SELECT 1 FROM embed_groups WHERE id = ANY($1::int[])`, [[g1.id, g2.id]]),
      ).toHaveLength(0);
      expect(
        await t.sql(
          `SELECT 1 FROM embed_group_members WHERE group_id = ANY($1::int[]) OR embed_user_id = ANY($2::int[])`,
          [
            [g1.id, g2.id],
            [ann.id, bob.id],
          ],
        ),
      ).toHaveLength(0);
      const gone = await getGroup(tenant, g1.id);
      expect(gone.status).toBe(404);
      expectErrorShape(gone.body, 404, 'embed_tenant_not_found');
    });
  });

  describe('access', () => {
    let tenant: string;
    let g: EmbedGroup;
    beforeAll(async () => {
      tenant = uid('auth');
      g = await groupOk(tenant, 'private');
      await addOk(tenant, g.id, ext('member'));
    });

    it('answers 401 without a token', async () => {
      for (const res of [
        await t.http().get(groupsPath(tenant)),
        await t.http().post(groupsPath(tenant)).send({ name: 'x' }),
        await t
          .http()
          .post(membersPath(tenant, g.id))
          .send({ members: ext('x') }),
        await t.http().delete(groupPath(tenant, g.id)),
      ]) {
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401);
      }
    });

    it('answers 403 to a user without a role', async () => {
      for (const res of [
        await t.http().get(groupsPath(tenant)).set(bearer(noRole.token)),
        await createGroup(tenant, { name: 'x' }, noRole),
        await getGroup(tenant, g.id, noRole),
        await add(tenant, g.id, ext('x'), noRole),
        await remove(tenant, g.id, ext('member'), noRole),
        await deleteGroup(tenant, g.id, noRole),
      ]) {
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403);
      }
      expect(await memberRows(g.id)).toEqual(['member']);
    });

    it("answers 404 to another account's admin for this tenant's group routes, changing nothing", async () => {
      for (const res of [
        await getGroup(tenant, g.id, other),
        await t.http().get(membersPath(tenant, g.id)).set(bearer(other.token)),
        await t.http().patch(groupPath(tenant, g.id)).set(bearer(other.token)).send({ description: 'x' }),
        await add(tenant, g.id, ext('intruder'), other),
        await remove(tenant, g.id, ext('member'), other),
        await deleteGroup(tenant, g.id, other),
      ]) {
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404);
      }
      expect(await memberRows(g.id)).toEqual(['member']);
      expect((await getGroup(tenant, g.id)).body).toEqual({ ...g, userCount: 1 });
      expect(await t.sql(`SELECT 1 FROM embed_users WHERE account_id = $1`, [other.accountId])).toHaveLength(
        0,
      );
    });
  });
});
