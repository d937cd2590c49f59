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
import { TENANTS, type EmbedUser } from '../support/embedding.js';

const GROUPS = '/api/v1/groups';
const SYNTHETIC_LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

type Method = 'get' | 'post' | 'patch' | 'delete';
type Body = Record<string, unknown>;

/** One request to `app`, as `actor` (no Authorization header for null). */
const api = (app: TestApp, method: Method, path: string, actor: Actor | null, body?: Body) => {
  const req = app.http()[method](path);
  if (actor) void req.set(bearer(actor.token));
  return body ? req.send(body) : req;
};

/** True for a syntactically valid address: one '@', a dot-atom local part of at most 64 characters. */
const isValidAddress = (email: string): boolean => {
  const parts = email.split('@');
  return (
    parts.length === 2 && parts[0].length >= 1 && parts[0].length <= 64 && SYNTHETIC_LOCAL.test(parts[0])
  );
};

describe('embed tenants, embed user provisioning and account-wide groups', () => {
  let t: TestApp;
  let other: Actor;
  let noRole: Actor;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const call = (method: Method, path: string, body?: Body, actor: Actor | null = t.admin) =>
    api(t, method, path, actor, body);
  const tenantPath = (name: string) => `${TENANTS}/${encodeURIComponent(name)}`;
  const provision = (tenant: string, body: Body) => call('post', `${tenantPath(tenant)}/user`, body);
  const provisionOk = async (tenant: string, body: Body): Promise<EmbedUser> => {
    const res = await provision(tenant, body);
    if (res.status !== 200) throw new Error(`provision: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as EmbedUser;
  };
  const bulk = (tenant: string, users: Body[]) => call('post', `${tenantPath(tenant)}/users`, { users });
  const listUsers = (tenant: string, query: Record<string, string | number> = {}, actor: Actor = t.admin) =>
    call('get', `${tenantPath(tenant)}/users`, undefined, actor).query(query);
  const listTenants = (query: Record<string, string | number> = {}, actor: Actor = t.admin) =>
    call('get', TENANTS, undefined, actor).query(query);

  const createGroup = async (name: string) => {
    const res = await call('post', GROUPS, { name });
    if (res.status !== 200) throw new Error(`group: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };
  const createTenantGroup = async (tenant: string, name: string) => {
    const res = await call('post', `${tenantPath(tenant)}/groups`, { name });
    if (res.status !== 200) throw new Error(`tenant group: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const tenantRows = (name: string, accountId = t.admin.accountId) =>
    t.sql<{ id: number }>(`SELECT id FROM embed_tenants WHERE account_id = $1 AND name = $2`, [
      accountId,
      name,
    ]);
  const userRows = (tenant: string, externalId?: string) =>
    t.sql<{ id: number; email: string; display_name: string | null; picture: string | null }>(
      `SELECT u.id, u.email, u.display_name, u.picture FROM embed_users u JOIN embed_tenants te ON te.id = u.tenant_id
       WHERE te.account_id = $3 AND te.name = $1 AND ($2::text IS NULL OR u.external_id = $2) ORDER BY u.id`,
      [tenant, externalId ?? null, t.admin.accountId],
    );
  const groupsOf = async (userId: number) =>
    (
      await t.sql<{ name: string }>(
        `SELECT g.name FROM embed_user_groups ug JOIN groups g ON g.id = ug.group_id
         WHERE ug.embed_user_id = $1 ORDER BY g.name`,
        [userId],
      )
    ).map((r) => r.name);
  const tenantGroupsOf = async (userId: number) =>
    (
      await t.sql<{ name: string }>(
        `SELECT g.name FROM embed_group_members gm JOIN embed_groups g ON g.id = gm.group_id
         WHERE gm.embed_user_id = $1 ORDER BY g.name`,
        [userId],
      )
    ).map((r) => r.name);

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'other');
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
  });
  afterAll(() => t.close());

  describe('Provision an embed user: the five rules', () => {
    it('rule 1: provisioning an existing externalId updates that user instead of failing', async () => {
      const tenant = uid('r1');
      const first = await provisionOk(tenant, { externalId: 'ann', email: 'ann@one.test' });
      const again = await provision(tenant, { externalId: 'ann', email: 'ann@two.test' });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.id);
      expect(again.body.email).toBe('ann@two.test');
      expect(await userRows(tenant)).toHaveLength(1);
    });

    it('rule 2: email, displayName and picture are overwritten when supplied and preserved when omitted', async () => {
      const tenant = uid('r2');
      const created = await provisionOk(tenant, {
        externalId: 'bob',
        email: 'Bob@Example.TEST',
        userProfile: { displayName: 'Bob', picture: 'https://img.test/bob.png' },
      });
      expect(created).toMatchObject({ email: 'bob@example.test', firstName: 'Bob', username: 'bob' });

      const changed = await provisionOk(tenant, {
        externalId: 'bob',
        email: 'robert@example.test',
        userProfile: { displayName: 'Robert', picture: 'https://img.test/robert.png' },
      });
      expect(changed).toMatchObject({ id: created.id, email: 'robert@example.test', firstName: 'Robert' });
      expect(await userRows(tenant, 'bob')).toEqual([
        expect.objectContaining({ display_name: 'Robert', picture: 'https://img.test/robert.png' }),
      ]);

      // Omitted entirely, then only one profile field supplied: the others keep their value.
      expect(await provisionOk(tenant, { externalId: 'bob' })).toMatchObject({
        email: 'robert@example.test',
        firstName: 'Robert',
      });
      await provisionOk(tenant, { externalId: 'bob', userProfile: { picture: 'https://img.test/new.png' } });
      await provisionOk(tenant, { externalId: 'bob', email: null, userProfile: null });
      expect(await userRows(tenant, 'bob')).toEqual([
        {
          id: created.id,
          email: 'robert@example.test',
          display_name: 'Robert',
          picture: 'https://img.test/new.png',
        },
      ]);
    });

    it('rule 2: a null displayName or picture counts as omitted and keeps the stored value', async () => {
      const tenant = uid('r2n');
      await provisionOk(tenant, {
        externalId: 'nul',
        userProfile: { displayName: 'Nul', picture: 'https://p/n' },
      });
      const res = await provisionOk(tenant, {
        externalId: 'nul',
        userProfile: { displayName: null, picture: null },
      });
      expect(res.firstName).toBe('Nul');
      expect(await userRows(tenant, 'nul')).toEqual([
        expect.objectContaining({ display_name: 'Nul', picture: 'https://p/n' }),
      ]);
    });

    it('rule 3: groups and tenantGroups are each replaced when supplied, preserved when omitted, cleared by []', async () => {
      const tenant = uid('r3');
      const [ga, gb] = [uid('ga'), uid('gb')];
      await createGroup(ga);
      await createGroup(gb);
      await createTenantGroup(tenant, 'ta');
      await createTenantGroup(tenant, 'tb');

      const u = await provisionOk(tenant, { externalId: 'cat', groups: [ga], tenantGroups: ['ta'] });
      expect(await groupsOf(u.id)).toEqual([ga]);
      expect(await tenantGroupsOf(u.id)).toEqual(['ta']);

      await provisionOk(tenant, { externalId: 'cat', groups: [gb] });
      expect(await groupsOf(u.id)).toEqual([gb]);
      expect(await tenantGroupsOf(u.id)).toEqual(['ta']);

      await provisionOk(tenant, { externalId: 'cat', tenantGroups: ['tb', 'ta'] });
      expect(await groupsOf(u.id)).toEqual([gb]);
      expect(await tenantGroupsOf(u.id)).toEqual(['ta', 'tb']);

      await provisionOk(tenant, { externalId: 'cat', email: 'cat@x.test' });
      expect(await groupsOf(u.id)).toEqual([gb]);
      expect(await tenantGroupsOf(u.id)).toEqual(['ta', 'tb']);

      await provisionOk(tenant, { externalId: 'cat', groups: [] });
      expect(await groupsOf(u.id)).toEqual([]);
      expect(await tenantGroupsOf(u.id)).toEqual(['ta', 'tb']);

      await provisionOk(tenant, { externalId: 'cat', tenantGroups: [] });
      expect(await tenantGroupsOf(u.id)).toEqual([]);
    });

    it('rule 4: the embed tenant is created on demand', async () => {
      const tenant = uid('r4');
      expect(await tenantRows(tenant)).toHaveLength(0);
      const res = await provision(tenant, { externalId: 'dan' });
      expect(res.status).toBe(200);
      expect(await tenantRows(tenant)).toHaveLength(1);
      const list = await listTenants({ search: tenant });
      expect(list.status).toBe(200);
      expect(list.body.items).toEqual([
        {
          id: expect.any(Number),
          name: tenant,
          userCount: 1,
          displayName: null,
          createdAt: expect.any(String),
        },
      ]);
    });

    it('rule 5: a later generate-session for the same externalId re-applies what it carries', async () => {
      const dep = await call('post', '/build/api/v1/deployments', deploymentInput());
      expect(dep.status).toBe(200);
      const tenant = uid('r5');
      const [ga, gb] = [uid('sa'), uid('sb')];
      await createGroup(ga);
      await createGroup(gb);
      await createTenantGroup(tenant, 'ta');
      await createTenantGroup(tenant, 'tb');
      const u = await provisionOk(tenant, {
        externalId: 'Eve',
        groups: [ga],
        tenantGroups: ['ta'],
        userProfile: { displayName: 'Eve' },
      });
      const session = (body: Body) =>
        call('post', '/api/v1/embed/generate-session', {
          deploymentId: dep.body.id,
          embedTenantName: tenant,
          ...body,
        });

      const s1 = await session({
        externalId: ' EVE ',
        groups: [gb],
        tenantGroups: ['tb'],
        creatorMode: true,
        userProfile: { displayName: 'Eve S.' },
      });
      expect(s1.status).toBe(200);
      expect(await userRows(tenant)).toEqual([expect.objectContaining({ id: u.id, display_name: 'Eve S.' })]);
      expect(await groupsOf(u.id)).toEqual([gb]);
      expect(await tenantGroupsOf(u.id)).toEqual(['tb']);

      const s2 = await session({ externalId: 'eve' });
      expect(s2.status).toBe(200);
      expect(await groupsOf(u.id)).toEqual([gb]);
      expect(await tenantGroupsOf(u.id)).toEqual(['tb']);
      expect(await userRows(tenant)).toEqual([expect.objectContaining({ id: u.id, display_name: 'Eve S.' })]);
    });
  });

  describe('decisions: synthetic email, missing groups, concurrency', () => {
    it('gives a user provisioned without email a valid address under the reserved .invalid TLD', async () => {
      const tenant = uid('syn');
      const plain = await provisionOk(tenant, { externalId: 'Frank' });
      expect(plain.email).toBe('frank@embed-users.invalid');

      const odd = await provisionOk(tenant, { externalId: 'Jane Doe@Corp' });
      const spaced = await provisionOk(tenant, { externalId: 'jane  doe@corp' });
      const long = await provisionOk(tenant, { externalId: 'x'.repeat(200) });
      for (const u of [plain, odd, spaced, long]) {
        expect(u.email.endsWith('@embed-users.invalid')).toBe(true);
        expect(isValidAddress(u.email)).toBe(true);
      }
      expect(odd.externalId).toBe('jane doe@corp');
      expect(new Set([odd.email, spaced.email, long.email]).size).toBe(3);
    });

    it('replaces the synthetic email when one is supplied later and keeps the real one when omitted again', async () => {
      const tenant = uid('syn2');
      const u = await provisionOk(tenant, { externalId: 'gus' });
      expect(u.email).toBe('gus@embed-users.invalid');
      expect((await provisionOk(tenant, { externalId: 'gus', email: 'Gus@Real.test' })).email).toBe(
        'gus@real.test',
      );
      expect((await provisionOk(tenant, { externalId: 'gus' })).email).toBe('gus@real.test');
      expect(await userRows(tenant)).toEqual([expect.objectContaining({ id: u.id, email: 'gus@real.test' })]);
    });

    it('rejects unknown groups with 400 naming them and creates neither the tenant nor the user', async () => {
      const known = uid('known');
      await createGroup(known);
      const tenant = uid('miss');
      const res = await provision(tenant, { externalId: 'hal', groups: [known, 'nope-1', 'nope-2'] });
      expectErrorShape(res.body, 400, 'unknown_groups');
      expect(res.body.message).toContain('nope-1');
      expect(res.body.message).toContain('nope-2');
      expect(res.body.message).not.toContain(known);
      expect(await tenantRows(tenant)).toHaveLength(0);
      expect(await userRows(tenant)).toHaveLength(0);
    });

    it('rejects unknown tenantGroups with 400 naming them and creates nothing', async () => {
      const tenant = uid('miss-tg');
      const res = await provision(tenant, { externalId: 'ida', tenantGroups: ['ghost-a', 'ghost-b'] });
      expectErrorShape(res.body, 400, 'unknown_tenant_groups');
      expect(res.body.message).toContain('ghost-a');
      expect(res.body.message).toContain('ghost-b');
      expect(await tenantRows(tenant)).toHaveLength(0);

      // The tenant exists now, but the user must still not be created.
      await createTenantGroup(tenant, 'real');
      const again = await provision(tenant, { externalId: 'ida', tenantGroups: ['real', 'ghost-a'] });
      expectErrorShape(again.body, 400, 'unknown_tenant_groups');
      expect(again.body.message).toContain('ghost-a');
      expect(await userRows(tenant)).toHaveLength(0);
    });

    it('leaves an existing user untouched (email and memberships) when a named group is missing', async () => {
      const tenant = uid('keep');
      const g = uid('kg');
      await createGroup(g);
      await createTenantGroup(tenant, 'kt');
      const u = await provisionOk(tenant, {
        externalId: 'jo',
        email: 'jo@a.test',
        groups: [g],
        tenantGroups: ['kt'],
      });

      const r1 = await provision(tenant, {
        externalId: 'jo',
        email: 'jo@b.test',
        groups: [],
        tenantGroups: ['nx'],
      });
      expectErrorShape(r1.body, 400, 'unknown_tenant_groups');
      const r2 = await provision(tenant, {
        externalId: 'jo',
        email: 'jo@c.test',
        groups: ['gx'],
        tenantGroups: [],
      });
      expectErrorShape(r2.body, 400, 'unknown_groups');
      expect(r2.body.message).toContain('gx');

      expect(await userRows(tenant)).toEqual([expect.objectContaining({ id: u.id, email: 'jo@a.test' })]);
      expect(await groupsOf(u.id)).toEqual([g]);
      expect(await tenantGroupsOf(u.id)).toEqual(['kt']);
    });

    it('makes exactly one user from 20 parallel requests for one externalId in any casing', async () => {
      const tenant = uid('race');
      const casings = ['Ann', 'ANN', ' ann ', 'aNn', 'ann', 'AnN ', ' aNN', 'anN'];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => provision(tenant, { externalId: casings[i % casings.length] })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(results.every((r) => r.body.externalId === 'ann')).toBe(true);
      expect(await userRows(tenant)).toHaveLength(1);
      expect(await tenantRows(tenant)).toHaveLength(1);
    });
  });

  describe('input rules', () => {
    it('trims and lowercases externalId; a blank one is a 400', async () => {
      const tenant = uid('norm');
      const u = await provisionOk(tenant, { externalId: '  BoB ' });
      expect(u).toMatchObject({ externalId: 'bob', username: 'bob', lastLogin: null });
      expect((await provisionOk(tenant, { externalId: 'bob' })).id).toBe(u.id);

      for (const externalId of ['   ', '']) {
        const res = await provision(tenant, { externalId });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400);
      }
      expectErrorShape((await provision(tenant, { externalId: '  \t ' })).body, 400, 'invalid_external_id');
      expect(await userRows(tenant)).toHaveLength(1);
    });

    it('rejects a malformed email with 400 validation_failed', async () => {
      const tenant = uid('mail');
      await provisionOk(tenant, { externalId: 'kim', email: 'kim@ok.test' });
      for (const email of ['not-an-email', 'a@', '@b.test']) {
        expectErrorShape(
          (await provision(tenant, { externalId: 'kim', email })).body,
          400,
          'validation_failed',
        );
      }
      expect(await userRows(tenant)).toEqual([expect.objectContaining({ email: 'kim@ok.test' })]);
    });

    it('rejects invalid tenant names with 400 and creates nothing', async () => {
      for (const name of ['-bad', 'a', 'x'.repeat(40), 'has space', 'bad-']) {
        const res = await provision(name, { externalId: 'lee' });
        expectErrorShape(res.body, 400, 'invalid_embed_tenant_name');
      }
      const [{ n }] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_tenants WHERE name IN ('-bad', 'a', 'has space', 'bad-', $1)`,
        ['x'.repeat(40)],
      );
      expect(n).toBe(0);
    });

    it("treats 'Acme-Co' in the path as the tenant 'acme-co'", async () => {
      const a = await provisionOk('Acme-Co', { externalId: 'mo' });
      const b = await provisionOk('acme-co', { externalId: 'MO' });
      expect(b.id).toBe(a.id);
      expect(await tenantRows('acme-co')).toHaveLength(1);
      expect(await tenantRows('Acme-Co')).toHaveLength(0);
      const list = await listUsers('ACME-CO');
      expect(list.status).toBe(200);
      expect(list.body.items.map((u: EmbedUser) => u.id)).toEqual([a.id]);
    });
  });

  describe('bulk provisioning', () => {
    it('applies users in order and reports a failed one without undoing the others', async () => {
      const tenant = uid('bulk');
      const res = await bulk(tenant, [
        { externalId: 'one' },
        { externalId: '  Two ', groups: ['no-such-group'] },
        { externalId: 'three', email: 'three@x.test' },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.succeeded.map((u: EmbedUser) => u.externalId)).toEqual(['one', 'three']);
      expect(res.body.failed).toEqual([
        { externalId: 'two', error: { status: 400, message: expect.stringContaining('no-such-group') } },
      ]);
      expect((await userRows(tenant)).map((u) => u.email)).toEqual([
        'one@embed-users.invalid',
        'three@x.test',
      ]);
    });

    it('rejects an empty batch or one of 101 users with 400', async () => {
      const tenant = uid('bulk-size');
      expectErrorShape((await bulk(tenant, [])).body, 400);
      const many = Array.from({ length: 101 }, (_, i) => ({ externalId: `u${i}` }));
      expectErrorShape((await bulk(tenant, many)).body, 400);
      expect(await userRows(tenant)).toHaveLength(0);
      expect(await tenantRows(tenant)).toHaveLength(0);
    });

    it('lets the last entry win when one externalId repeats in a batch', async () => {
      const tenant = uid('bulk-dup');
      const res = await bulk(tenant, [
        { externalId: 'pat', email: 'first@x.test', userProfile: { displayName: 'First' } },
        { externalId: 'PAT', email: 'last@x.test' },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.failed).toEqual([]);
      expect(res.body.succeeded[0].id).toBe(res.body.succeeded[1].id);
      expect(await userRows(tenant)).toEqual([
        expect.objectContaining({ email: 'last@x.test', display_name: 'First' }),
      ]);
    });
  });

  describe('listing embed users', () => {
    const tenant = 'list-users';
    beforeAll(async () => {
      await bulk(tenant, [
        { externalId: 'Ann', email: 'Zed.Ann@Example.test' },
        { externalId: 'joanna', email: 'joanna@other.test' },
        { externalId: 'carl', email: 'carl@example.test' },
        { externalId: 'beth' },
        { externalId: 'dora', email: 'dora@other.test' },
      ]);
    });

    it('searches email and externalId case-insensitively by substring', async () => {
      const byId = await listUsers(tenant, { search: 'ANN' });
      expect(byId.status).toBe(200);
      expect(byId.body.items.map((u: EmbedUser) => u.externalId).sort()).toEqual(['ann', 'joanna']);
      const byEmail = await listUsers(tenant, { search: 'EXAMPLE.T' });
      expect(byEmail.body.items.map((u: EmbedUser) => u.externalId)).toEqual(['carl', 'ann']);
      const none = await listUsers(tenant, { search: '%' });
      expect(none.body.items).toEqual([]);
    });

    it('orders by email and walks all users with cursor paging without duplicates', async () => {
      const all = await listUsers(tenant);
      const emails = all.body.items.map((u: EmbedUser) => u.email);
      expect(emails).toHaveLength(5);
      expect(emails).toEqual([...emails].sort());
      expect(emails[0]).toBe('beth@embed-users.invalid');

      const seen: number[] = [];
      let after: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await listUsers(tenant, after ? { first: 2, after } : { first: 2 });
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.items.map((u: EmbedUser) => u.id));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(all.body.items.map((u: EmbedUser) => u.id));
      expect(new Set(seen).size).toBe(5);
    });

    it('answers 404 for an unknown tenant', async () => {
      expectErrorShape((await listUsers('never-made')).body, 404, 'embed_tenant_not_found');
    });
  });

  describe('embed tenants', () => {
    it('lists tenants by name with search and cursor paging', async () => {
      for (const n of ['tl-c', 'tl-a', 'tl-b']) await provisionOk(n, { externalId: 'x' });
      const first = await listTenants({ search: 'TL-', first: 2 });
      expect(first.status).toBe(200);
      expect(first.body.items.map((x: { name: string }) => x.name)).toEqual(['tl-a', 'tl-b']);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const second = await listTenants({ search: 'tl-', first: 2, after: first.body.pageInfo.endCursor });
      expect(second.body.items.map((x: { name: string }) => x.name)).toEqual(['tl-c']);
      expect(second.body.pageInfo.hasNextPage).toBe(false);
    });

    it('deletes a tenant with its users, groups and memberships; idempotent; refuses non-canonical names', async () => {
      const tenant = uid('gone');
      const g = uid('gg');
      const gid = await createGroup(g);
      await createTenantGroup(tenant, 'team');
      await provisionOk(tenant, { externalId: 'u1', groups: [g], tenantGroups: ['team'] });
      await provisionOk(tenant, { externalId: 'u2', groups: [g] });
      const [{ id }] = await tenantRows(tenant);
      const counts = async () =>
        (
          await t.sql<{ users: number; groups: number; members: number; ug: number }>(
            `SELECT (SELECT count(*) FROM embed_users WHERE tenant_id = $1)::int AS users,
                    (SELECT count(*) FROM embed_groups WHERE tenant_id = $1)::int AS groups,
                    (SELECT count(*) FROM embed_group_members m JOIN embed_groups eg ON eg.id = m.group_id
                      WHERE eg.tenant_id = $1)::int AS members,
                    (SELECT count(*) FROM embed_user_groups WHERE group_id = $2)::int AS ug`,
            [id, gid],
          )
        )[0];
      expect(await counts()).toEqual({ users: 2, groups: 1, members: 1, ug: 2 });

      const upper = tenant.replace('gone', 'Gone');
      expectErrorShape((await call('delete', tenantPath(upper))).body, 400, 'invalid_embed_tenant_name');
      expect(await tenantRows(tenant)).toHaveLength(1);
      expect(await counts()).toEqual({ users: 2, groups: 1, members: 1, ug: 2 });

      expect((await call('delete', tenantPath(tenant))).status).toBe(204);
      expect(await tenantRows(tenant)).toHaveLength(0);
      expect(await counts()).toEqual({ users: 0, groups: 0, members: 0, ug: 0 });
      expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [gid])).toHaveLength(1);
      expect((await call('delete', tenantPath(tenant))).status).toBe(204);
    });
  });

  describe('access control', () => {
    const tenant = 'guarded';
    let groupId: number;
    let tenantGroupId: number;
    beforeAll(async () => {
      await provisionOk(tenant, { externalId: 'guard' });
      tenantGroupId = await createTenantGroup(tenant, 'crew');
      groupId = await createGroup(uid('guarded'));
    });

    const routes = (): [Method, string, Body?][] => [
      ['get', TENANTS],
      ['delete', `${TENANTS}/${tenant}`],
      ['get', `${TENANTS}/${tenant}/users`],
      ['post', `${TENANTS}/${tenant}/user`, { externalId: 'intruder' }],
      ['post', `${TENANTS}/${tenant}/users`, { users: [{ externalId: 'intruder' }] }],
      ['get', `${TENANTS}/${tenant}/groups`],
      ['post', `${TENANTS}/${tenant}/groups`, { name: 'intruders' }],
      ['get', `${TENANTS}/${tenant}/groups/${tenantGroupId}`],
      ['patch', `${TENANTS}/${tenant}/groups/${tenantGroupId}`, { description: 'x' }],
      ['delete', `${TENANTS}/${tenant}/groups/${tenantGroupId}`],
      ['get', `${TENANTS}/${tenant}/groups/${tenantGroupId}/users`],
      [
        'post',
        `${TENANTS}/${tenant}/groups/${tenantGroupId}/users`,
        { members: [{ externalId: 'intruder' }] },
      ],
      [
        'delete',
        `${TENANTS}/${tenant}/groups/${tenantGroupId}/users`,
        { members: [{ externalId: 'guard' }] },
      ],
      ['get', GROUPS],
      ['post', GROUPS, { name: 'intruders' }],
      ['delete', `${GROUPS}/${groupId}`],
    ];
    const stateUnchanged = async () => {
      expect(await userRows(tenant)).toHaveLength(1);
      expect(await t.sql(`SELECT 1 FROM embed_groups WHERE id = $1`, [tenantGroupId])).toHaveLength(1);
      expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [groupId])).toHaveLength(1);
      expect(await t.sql(`SELECT 1 FROM groups WHERE name = 'intruders'`)).toHaveLength(0);
    };

    it('answers 401 on every embed-tenants and groups route without a token', async () => {
      for (const [method, path, body] of routes()) {
        const res = await call(method, path, body, null);
        expect([method, path, res.status]).toEqual([method, path, 401]);
        expectErrorShape(res.body, 401);
      }
      await stateUnchanged();
    });

    it('answers 403 on every embed-tenants and groups route for a user without a role', async () => {
      for (const [method, path, body] of routes()) {
        const res = await call(method, path, body, noRole);
        expect([method, path, res.status]).toEqual([method, path, 403]);
        expectErrorShape(res.body, 403);
      }
      await stateUnchanged();
    });

    it("keeps another account's admin away from this account's tenant", async () => {
      expectErrorShape((await listUsers(tenant, {}, other)).body, 404, 'embed_tenant_not_found');
      const list = await listTenants({}, other);
      expect(list.status).toBe(200);
      expect(list.body.items).toEqual([]);
      const groups = await call('get', GROUPS, undefined, other);
      expect(groups.body.items).toEqual([]);
      expect((await call('delete', `${GROUPS}/${groupId}`, undefined, other)).status).toBe(404);
      expect((await call('delete', `${TENANTS}/${tenant}`, undefined, other)).status).toBe(204);
      await stateUnchanged();
      expect(await tenantRows(tenant)).toHaveLength(1);
    });
  });

  describe('account-wide groups', () => {
    it('creates, lists and deletes groups; a duplicate name is 409 and an unknown id 404', async () => {
      const name = uid('team');
      const created = await call('post', GROUPS, { name, description: 'The team' });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name,
        description: 'The team',
        externalId: null,
        memberCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      expectErrorShape((await call('post', GROUPS, { name })).body, 409, 'group_name_taken');

      const list = await call('get', GROUPS);
      expect(list.status).toBe(200);
      expect(list.body.items).toContainEqual(created.body);
      expect(list.body.items.filter((g: { name: string }) => g.name === name)).toHaveLength(1);

      expect((await call('delete', `${GROUPS}/${created.body.id}`)).status).toBe(204);
      expect(await t.sql(`SELECT 1 FROM groups WHERE id = $1`, [created.body.id])).toHaveLength(0);
      const again = await call('delete', `${GROUPS}/${created.body.id}`);
      expectErrorShape(again.body, 404, 'group_not_found');
      expectErrorShape((await call('delete', `${GROUPS}/999999`)).body, 404, 'group_not_found');
    });
  });
});

/*
 * These tests boot apps of their own and run after the main app is closed: two apps alive in
 * one process share passport's strategy registry, so closing one would break the other.
 */
describe('the embed-user cap (EMBED_USERS_MAX=3)', () => {
  it('refuses a 4th user with 429 at a cap of 3 but still updates existing ones, also in bulk', async () => {
    const cap = await startApp({ EMBED_USERS_MAX: '3' });
    try {
      const post = (body: Body) => api(cap, 'post', `${TENANTS}/capped/user`, cap.admin, body);
      for (const externalId of ['c1', 'c2']) expect((await post({ externalId })).status).toBe(200);
      // The third seat is taken in another tenant: the cap is per account.
      const third = await api(cap, 'post', `${TENANTS}/capped-2/user`, cap.admin, { externalId: 'c3' });
      expect(third.status).toBe(200);
      const fourth = await post({ externalId: 'c4' });
      expectErrorShape(fourth.body, 429, 'embed_user_limit_reached');
      const update = await post({ externalId: 'C1', email: 'c1@x.test' });
      expect(update.status).toBe(200);
      expect(update.body.email).toBe('c1@x.test');

      const res = await api(cap, 'post', `${TENANTS}/capped/users`, cap.admin, {
        users: [{ externalId: 'c2', email: 'c2@x.test' }, { externalId: 'C5' }],
      });
      expect(res.status).toBe(200);
      expect(res.body.succeeded.map((u: EmbedUser) => u.email)).toEqual(['c2@x.test']);
      expect(res.body.failed).toEqual([
        { externalId: 'c5', error: { status: 429, message: expect.any(String) } },
      ]);
      const [{ n }] = await cap.sql<{ n: number }>(`SELECT count(*)::int AS n FROM embed_users`);
      expect(n).toBe(3);
    } finally {
      await cap.close();
    }
  });

  it('never exceeds the cap when 10 new users are provisioned in parallel', async () => {
    const cap = await startApp({ EMBED_USERS_MAX: '3' });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api(cap, 'post', `${TENANTS}/${i % 2 ? 'par-a' : 'par-b'}/user`, cap.admin, {
            externalId: `p${i}`,
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(7);
      for (const r of results.filter((x) => x.status === 429)) {
        expectErrorShape(r.body, 429, 'embed_user_limit_reached');
      }
      const [{ n }] = await cap.sql<{ n: number }>(`SELECT count(*)::int AS n FROM embed_users`);
      expect(n).toBe(3);
    } finally {
      await cap.close();
    }
  });
});
