import { bearer, expectErrorShape, newUser, type Actor, type TestApp } from '../support/app.js';
import { setupIdentityApp } from '../support/identity.js';
import { deploymentInput } from '../support/factories.js';

interface UserBody {
  id: number;
  email: string;
  username: string;
  firstName: string | null;
  isAdmin: boolean;
  isDeactivated: boolean | null;
  defaultRoles: string[] | null;
  settings: Record<string, unknown> | null;
}

const BAD_IDS = ['abc', '0', '-1', '1.5', '99999999999'];

describe('users', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  beforeAll(async () => {
    ({ t, viewer, other } = await setupIdentityApp());
  });
  afterAll(() => t.close());

  const asAdmin = (token = t.admin.token) => bearer(token);

  async function createUser(body: Record<string, unknown>, token = t.admin.token) {
    return t.http().post('/api/v1/users').set(bearer(token)).send(body);
  }

  describe('GET /api/v1/users', () => {
    let alpha: UserBody;
    let beta: UserBody;
    let gamma: UserBody;
    beforeAll(async () => {
      const make = async (body: Record<string, unknown>) => {
        const res = await createUser(body);
        expect(res.status).toBe(200);
        return res.body as UserBody;
      };
      alpha = await make({
        email: 'zed.one@acme.test',
        username: 'searchable_alpha',
        firstName: 'Marguerite',
      });
      beta = await make({ email: 'BETA.Person@Acme.test', username: 'searchable_beta', firstName: 'Bob' });
      gamma = await make({ email: 'gamma@acme.test', username: 'gamma_user', firstName: 'Quixote%' });
    });

    it('is 401 without a token', async () => {
      const res = await t.http().get('/api/v1/users');
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('lists the users of the account with items, pageInfo and the legacy fields', async () => {
      const res = await t.http().get('/api/v1/users').set(asAdmin());
      expect(res.status).toBe(200);
      const ids = res.body.items.map((u: UserBody) => u.id);
      expect(ids).toEqual(
        expect.arrayContaining([t.admin.userId, viewer.userId, alpha.id, beta.id, gamma.id]),
      );
      expect(ids).not.toContain(other.userId);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids); // ordered by id
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(ids.length);
      expect(res.body.pagination).toEqual({ total: ids.length, offset: 0, limit: 100 });
      const me = res.body.items.find((u: UserBody) => u.id === t.admin.userId);
      expect(me).toMatchObject({ email: 'admin@acme.test', isAdmin: true, defaultRoles: ['Admin'] });
    });

    it('is readable by a non-admin (Viewer)', async () => {
      const res = await t.http().get('/api/v1/users').set(bearer(viewer.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((u: UserBody) => u.id)).toContain(t.admin.userId);
    });

    it('walks pages with first/after', async () => {
      const all = (await t.http().get('/api/v1/users').set(asAdmin())).body.items.map((u: UserBody) => u.id);
      expect(all.length).toBeGreaterThanOrEqual(5);

      const page1 = await t.http().get('/api/v1/users').query({ first: 2 }).set(asAdmin());
      expect(page1.status).toBe(200);
      expect(page1.body.items.map((u: UserBody) => u.id)).toEqual(all.slice(0, 2));
      expect(page1.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      expect(page1.body.count).toBe(all.length);
      expect(page1.body.pagination).toEqual({ total: all.length, offset: 0, limit: 2 });

      const page2 = await t
        .http()
        .get('/api/v1/users')
        .query({ first: 2, after: page1.body.pageInfo.endCursor })
        .set(asAdmin());
      expect(page2.status).toBe(200);
      expect(page2.body.items.map((u: UserBody) => u.id)).toEqual(all.slice(2, 4));
      expect(page2.body.pageInfo.hasPreviousPage).toBe(true);
      expect(page2.body.pageInfo.hasNextPage).toBe(all.length > 4);

      // Walk to the end: every user once, in order.
      const seen: number[] = [];
      let after: string | undefined;
      for (let i = 0; i < 20; i++) {
        const res = await t
          .http()
          .get('/api/v1/users')
          .query(after ? { first: 2, after } : { first: 2 })
          .set(asAdmin());
        expect(res.status).toBe(200);
        seen.push(...res.body.items.map((u: UserBody) => u.id));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
    });

    it('supports the legacy limit/offset', async () => {
      const all = (await t.http().get('/api/v1/users').set(asAdmin())).body.items.map((u: UserBody) => u.id);
      const res = await t.http().get('/api/v1/users').query({ limit: 2, offset: 1 }).set(asAdmin());
      expect(res.status).toBe(200);
      expect(res.body.items.map((u: UserBody) => u.id)).toEqual(all.slice(1, 3));
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.pagination).toEqual({ total: all.length, offset: 1, limit: 2 });
      expect(res.body.count).toBe(all.length);
      expect(res.body.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: all.length > 3 });

      const past = await t.http().get('/api/v1/users').query({ offset: 1000 }).set(asAdmin());
      expect(past.status).toBe(200);
      expect(past.body.items).toEqual([]);
      expect(past.body.pageInfo).toMatchObject({ hasNextPage: false, startCursor: null, endCursor: null });
    });

    it.each([[{ first: 2, offset: 1 }], [{ first: 2, limit: 1 }], [{ after: 'WzFd', limit: 1 }]])(
      'refuses to mix cursor and offset paging (%o) with 400 pagination_conflict',
      async (query) => {
        const res = await t.http().get('/api/v1/users').query(query).set(asAdmin());
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'pagination_conflict');
      },
    );

    it.each([
      ['not base64', '!!!'],
      ['base64 of non-JSON', Buffer.from('hello').toString('base64url')],
      ['wrong arity', Buffer.from('[1,2]').toString('base64url')],
      ['wrong type', Buffer.from('["1"]').toString('base64url')],
      ['an object', Buffer.from('{"id":1}').toString('base64url')],
    ])('refuses a bad cursor (%s) with 400 invalid_cursor', async (_, after) => {
      const res = await t.http().get('/api/v1/users').query({ after }).set(asAdmin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_cursor');
    });

    it.each([
      [{ first: 0 }],
      [{ first: 1001 }],
      [{ first: 'ten' }],
      [{ limit: -1 }],
      [{ offset: -1 }],
      [{ offset: 'x' }],
      [{ unknown: '1' }],
    ])('refuses bad paging input (%o) with 400', async (query) => {
      const res = await t.http().get('/api/v1/users').query(query).set(asAdmin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  describe('GET /api/v1/users/me', () => {
    it('is 401 without a token', async () => {
      const res = await t.http().get('/api/v1/users/me');
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('returns the caller with effective policies', async () => {
      const res = await t.http().get('/api/v1/users/me').set(asAdmin());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: t.admin.userId, email: 'admin@acme.test', isAdmin: true });
      expect(res.body.userPolicies).toEqual([
        { resourceType: 'Global', actions: ['All'], resources: ['All'] },
      ]);
    });

    it("returns a Viewer's own record and built-in actions", async () => {
      const res = await t.http().get('/api/v1/users/me').set(bearer(viewer.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: viewer.userId, email: viewer.email, isAdmin: false });
      expect(res.body.userPolicies).toHaveLength(1);
      expect(res.body.userPolicies[0].actions.sort()).toEqual(
        ['DeploymentRead', 'FolderRead', 'ReportRead', 'WorkbookRead'].sort(),
      );
    });
  });

  describe('GET /api/v1/users/{id}', () => {
    it('returns a user of the account', async () => {
      const res = await t.http().get(`/api/v1/users/${viewer.userId}`).set(asAdmin());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: viewer.userId,
        email: viewer.email,
        defaultRoles: ['AIBIViewer'],
      });
      expect(res.body.userPolicies).toBeUndefined();
    });

    it('is 401 without a token', async () => {
      const res = await t.http().get(`/api/v1/users/${viewer.userId}`);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it("is 404 for another account's user and for a missing one", async () => {
      for (const id of [other.userId, 2_000_000_000]) {
        const res = await t.http().get(`/api/v1/users/${id}`).set(asAdmin());
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'user_not_found');
      }
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const res = await t.http().get(`/api/v1/users/${id}`).set(asAdmin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('id');
    });
  });

  describe('POST /api/v1/users', () => {
    it('creates a user (200), lower-casing the email and defaulting to AIBIViewer', async () => {
      const res = await createUser({ email: 'Mixed.Case@ACME.test', username: 'mixed', firstName: 'Mix' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        email: 'mixed.case@acme.test',
        username: 'mixed',
        firstName: 'Mix',
        isAdmin: false,
        isDeactivated: false,
        defaultRoles: ['AIBIViewer'],
        settings: {},
        createdAt: expect.any(String),
      });
      const rows = await t.sql<{ email: string; account_id: number }>(
        `SELECT email, account_id FROM users WHERE id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([{ email: 'mixed.case@acme.test', account_id: t.admin.accountId }]);
    });

    it('refuses an address in the reserved placeholder domain, creating nothing', async () => {
      const res = await createUser({ email: 'user-1@No-Email.invalid', username: 'squatter' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(res.body.message).toEqual([expect.stringContaining('no-email.invalid is reserved')]);
      expect(await t.sql(`SELECT id FROM users WHERE username = 'squatter'`)).toEqual([]);
    });

    it('makes an admin with isAdmin', async () => {
      const res = await createUser({
        email: 'boss@acme.test',
        username: 'boss',
        isAdmin: true,
        defaultRoles: [],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ isAdmin: true, defaultRoles: ['Admin'] });
    });

    it('answers 409 email_taken for a duplicate email, whatever its case', async () => {
      expect((await createUser({ email: 'dup@acme.test', username: 'dup1' })).status).toBe(200);
      const res = await createUser({ email: 'DUP@acme.test', username: 'dup2' });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'email_taken');
    });

    it('creates one user when the same email is posted in parallel', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => createUser({ email: 'race@acme.test', username: `race${i}` })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expectErrorShape(r.body, 409, 'email_taken');
      expect(await t.sql(`SELECT 1 FROM users WHERE email = 'race@acme.test'`)).toHaveLength(1);
    });

    it('answers 409 username_taken for a duplicate username', async () => {
      expect((await createUser({ email: 'uname1@acme.test', username: 'SameName' })).status).toBe(200);
      const res = await createUser({ email: 'uname2@acme.test', username: 'samename' });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'username_taken');
    });

    it('lets another account reuse an email', async () => {
      const res = await createUser({ email: 'dup@acme.test', username: 'dup-in-globex' }, other.token);
      expect(res.status).toBe(200);
      expect(res.body.email).toBe('dup@acme.test');
    });

    it('refuses an unknown field with a message naming it', async () => {
      const res = await createUser({ email: 'unk@acme.test', username: 'unk', favouriteColour: 'red' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('favouriteColour');
    });

    it('refuses an unknown nested settings field naming its path', async () => {
      const res = await createUser({
        email: 'unk2@acme.test',
        username: 'unk2',
        settings: { colour: 'red' },
      });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('colour');
    });

    it.each([
      ['email not a string', { email: 42, username: 'x' }, 'email'],
      ['email not an email', { email: 'not-an-email', username: 'x' }, 'email'],
      ['missing email', { username: 'x' }, 'email'],
      ['missing username', { email: 'a@acme.test' }, 'username'],
      ['empty username', { email: 'a@acme.test', username: '' }, 'username'],
      ['username a number', { email: 'a@acme.test', username: 7 }, 'username'],
      ['isAdmin a string', { email: 'a@acme.test', username: 'a', isAdmin: 'yes' }, 'isAdmin'],
      [
        'defaultRoles not an array',
        { email: 'a@acme.test', username: 'a', defaultRoles: 'Admin' },
        'defaultRoles',
      ],
      [
        'unknown built-in role',
        { email: 'a@acme.test', username: 'a', defaultRoles: ['Owner'] },
        'defaultRoles',
      ],
      ['settings a string', { email: 'a@acme.test', username: 'a', settings: 'dark' }, 'settings'],
      [
        'settings.theme a number',
        { email: 'a@acme.test', username: 'a', settings: { theme: 3 } },
        'settings.theme',
      ],
      [
        'settings.defaultDeploymentId a string',
        { email: 'a@acme.test', username: 'a', settings: { defaultDeploymentId: '5' } },
        'settings.defaultDeploymentId',
      ],
    ])('refuses wrong input (%s) with 400 naming the field', async (_, body, field) => {
      const res = await createUser(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain(field);
      const rows = await t.sql(`SELECT 1 FROM users WHERE email = 'a@acme.test'`);
      expect(rows).toHaveLength(0);
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await t
        .http()
        .post('/api/v1/users')
        .set(asAdmin())
        .send([{ email: 'a@acme.test' }]);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400);
    });

    it('is 401 without a token and 403 for a Viewer', async () => {
      const body = { email: 'nope@acme.test', username: 'nope' };
      const anon = await t.http().post('/api/v1/users').send(body);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await createUser(body, viewer.token);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(await t.sql(`SELECT 1 FROM users WHERE email = 'nope@acme.test'`)).toHaveLength(0);
    });

    it('accepts a settings object and merges it key by key on PUT', async () => {
      const created = await createUser({
        email: 'settings@acme.test',
        username: 'settings',
        settings: { locale: 'en-US', theme: 'dark', alternatingRowColors: true },
      });
      expect(created.status).toBe(200);
      expect(created.body.settings).toEqual({ locale: 'en-US', theme: 'dark', alternatingRowColors: true });

      const upd = await t
        .http()
        .put(`/api/v1/users/${created.body.id}`)
        .set(asAdmin())
        .send({ settings: { theme: 'light', timezone: 'Europe/Berlin' } });
      expect(upd.status).toBe(200);
      expect(upd.body.settings).toEqual({
        locale: 'en-US',
        theme: 'light',
        alternatingRowColors: true,
        timezone: 'Europe/Berlin',
      });

      // A PUT without settings leaves them alone.
      const other = await t
        .http()
        .put(`/api/v1/users/${created.body.id}`)
        .set(asAdmin())
        .send({ title: 'Analyst' });
      expect(other.status).toBe(200);
      expect(other.body.settings).toEqual(upd.body.settings);

      const stored = await t.sql<{ settings: unknown }>(`SELECT settings FROM users WHERE id = $1`, [
        created.body.id,
      ]);
      expect(stored[0].settings).toEqual(upd.body.settings);
    });
  });

  describe('PUT /api/v1/users/{id}', () => {
    let target: Actor;
    beforeAll(async () => {
      target = await newUser(t, t.admin, { defaultRoles: ['Viewer'], firstName: 'Before' });
    });
    const put = (id: number | string, body: Record<string, unknown>, token = t.admin.token) =>
      t.http().put(`/api/v1/users/${id}`).set(bearer(token)).send(body);

    it('updates the given fields and leaves the others alone', async () => {
      const res = await put(target.userId, {
        firstName: 'After',
        title: 'Engineer',
        defaultRoles: ['Developer'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: target.userId,
        email: target.email,
        firstName: 'After',
        title: 'Engineer',
        defaultRoles: ['Developer'],
        isAdmin: false,
      });
      const again = await t.http().get(`/api/v1/users/${target.userId}`).set(asAdmin());
      expect(again.body).toMatchObject({
        firstName: 'After',
        title: 'Engineer',
        defaultRoles: ['Developer'],
      });
      // The new role applies to the user's own token.
      const me = await t.http().get('/api/v1/users/me').set(bearer(target.token));
      expect(me.body.userPolicies[0].actions).toContain('DeploymentsManage');
    });

    it('clears a nullable field with null', async () => {
      const res = await put(target.userId, { title: null });
      expect(res.status).toBe(200);
      expect(res.body.title).toBeNull();
      expect(res.body.firstName).toBe('After');
    });

    it('grants and removes admin with isAdmin', async () => {
      const up = await put(target.userId, { isAdmin: true });
      expect(up.status).toBe(200);
      expect(up.body.isAdmin).toBe(true);
      expect(up.body.defaultRoles).toEqual(['Admin', 'Developer']);
      const down = await put(target.userId, { isAdmin: false });
      expect(down.status).toBe(200);
      expect(down.body).toMatchObject({ isAdmin: false, defaultRoles: ['Developer'] });
    });

    it('refuses an unknown field and wrong types with 400', async () => {
      for (const [body, field] of [
        [{ email: 'changed@acme.test' }, 'email'],
        [{ nickname: 'x' }, 'nickname'],
        [{ isDeactivated: 'true' }, 'isDeactivated'],
        [{ firstName: 5 }, 'firstName'],
        [{ settings: [] }, 'settings'],
      ] as const) {
        const res = await put(target.userId, body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
    });

    it('is 401 without a token and 403 for a Viewer', async () => {
      const anon = await t.http().put(`/api/v1/users/${target.userId}`).send({ firstName: 'Hacked' });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await put(target.userId, { firstName: 'Hacked' }, viewer.token);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      // A Viewer cannot promote themselves either.
      const self = await put(viewer.userId, { isAdmin: true }, viewer.token);
      expect(self.status).toBe(403);
      const rows = await t.sql<{ first_name: string }>(`SELECT first_name FROM users WHERE id = $1`, [
        target.userId,
      ]);
      expect(rows[0].first_name).toBe('After');
    });

    it("is 404 for another account's user", async () => {
      const res = await put(other.userId, { firstName: 'Hacked' });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'user_not_found');
      const rows = await t.sql<{ first_name: string | null }>(`SELECT first_name FROM users WHERE id = $1`, [
        other.userId,
      ]);
      expect(rows[0].first_name).toBeNull();
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const res = await put(id, { firstName: 'x' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('lets an admin edit their own profile', async () => {
      const res = await put(t.admin.userId, { firstName: 'Ada', settings: { theme: 'dark' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ firstName: 'Ada', settings: { theme: 'dark' }, isAdmin: true });
    });

    it('lets an admin by a Global All policy (no built-in Admin role) edit their own profile', async () => {
      const policyAdmin = await newUser(t, t.admin, { defaultRoles: [] });
      const grant = await t
        .http()
        .put(`/api/v1/users/${policyAdmin.userId}/policies`)
        .set(asAdmin())
        .send({ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] });
      expect(grant.status).toBe(200);
      const res = await put(policyAdmin.userId, { title: 'Ops lead' }, policyAdmin.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: policyAdmin.userId, title: 'Ops lead', defaultRoles: [] });
      // Deactivating themselves is still refused.
      const off = await put(policyAdmin.userId, { isDeactivated: true }, policyAdmin.token);
      expect(off.status).toBe(403);
      expectErrorShape(off.body, 403, 'cannot_deactivate_self');
    });
  });

  describe('DELETE /api/v1/users/{id}', () => {
    it('deletes a user; their token stops working', async () => {
      const victim = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await t.http().get('/api/v1/users/me').set(bearer(victim.token))).status).toBe(200);
      const res = await t.http().delete(`/api/v1/users/${victim.userId}`).set(asAdmin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      const me = await t.http().get('/api/v1/users/me').set(bearer(victim.token));
      expect(me.status).toBe(401);
      expectErrorShape(me.body, 401, 'unauthorized');
      const get = await t.http().get(`/api/v1/users/${victim.userId}`).set(asAdmin());
      expect(get.status).toBe(404);
      expect(await t.sql(`SELECT 1 FROM api_keys WHERE user_id = $1`, [victim.userId])).toHaveLength(0);
      const again = await t.http().delete(`/api/v1/users/${victim.userId}`).set(asAdmin());
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404, 'user_not_found');
    });

    it("hands the deleted user's workspace content to the admin who deletes them", async () => {
      const author = await newUser(t, t.admin, { defaultRoles: ['Explorer'] });
      const deployment = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(asAdmin())
        .send(deploymentInput({ name: 'Authored' }));
      const base = `/api/v1/deployments/${deployment.body.id}/reports`;
      const report = await t.http().post(base).set(bearer(author.token)).send({ name: 'Theirs' });
      expect(report.status).toBe(200);
      expect(report.body.userId).toBe(author.userId);
      const res = await t.http().delete(`/api/v1/users/${author.userId}`).set(asAdmin());
      expect(res.status).toBe(200);
      const after = await t.http().get(`${base}/${report.body.id}`).set(asAdmin());
      expect(after.status).toBe(200);
      expect(after.body.userId).toBe(t.admin.userId);
      expect(after.body.user.email).toBe(t.admin.email);
    });

    it('is 401 without a token and 403 for a Viewer', async () => {
      const target = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const anon = await t.http().delete(`/api/v1/users/${target.userId}`);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await t.http().delete(`/api/v1/users/${target.userId}`).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(await t.sql(`SELECT 1 FROM users WHERE id = $1`, [target.userId])).toHaveLength(1);
    });

    it("is 404 for another account's user", async () => {
      const res = await t.http().delete(`/api/v1/users/${other.userId}`).set(asAdmin());
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'user_not_found');
      expect(await t.sql(`SELECT 1 FROM users WHERE id = $1`, [other.userId])).toHaveLength(1);
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const res = await t.http().delete(`/api/v1/users/${id}`).set(asAdmin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  describe('GET/PUT /api/v1/users/{id}/policies', () => {
    let target: Actor;
    let deploymentId: number;
    beforeAll(async () => {
      target = await newUser(t, t.admin, { defaultRoles: [] });
      const dep = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(asAdmin())
        .send(deploymentInput({ name: 'Policy target' }));
      expect(dep.status).toBe(200);
      deploymentId = dep.body.id;
    });

    it('starts empty', async () => {
      const res = await t.http().get(`/api/v1/users/${target.userId}/policies`).set(asAdmin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ policies: [] });
    });

    it('replaces the policies and reads them back grouped', async () => {
      const res = await t
        .http()
        .put(`/api/v1/users/${target.userId}/policies`)
        .set(asAdmin())
        .send({
          policies: [
            { resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] },
            {
              resourceType: 'Deployment',
              actions: ['DeploymentUpdate', 'DeploymentRead'],
              resources: [String(deploymentId)],
            },
          ],
        });
      expect(res.status).toBe(200);
      const expected = [
        {
          resourceType: 'Deployment',
          actions: ['DeploymentRead', 'DeploymentUpdate'],
          resources: [String(deploymentId)],
        },
        { resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] },
      ];
      expect(res.body.policies).toEqual(expect.arrayContaining(expected));
      expect(res.body.policies).toHaveLength(2);
      const get = await t.http().get(`/api/v1/users/${target.userId}/policies`).set(asAdmin());
      expect(get.body.policies).toEqual(res.body.policies);

      // Replacing, not adding.
      const replaced = await t
        .http()
        .put(`/api/v1/users/${target.userId}/policies`)
        .set(asAdmin())
        .send({ policies: [{ resourceType: 'Global', actions: ['SqlRunnerRead'], resources: [] }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.policies).toEqual([
        { resourceType: 'Global', actions: ['SqlRunnerRead'], resources: ['All'] },
      ]);
      const rows = await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`, [
        target.userId,
      ]);
      expect(rows).toHaveLength(1);

      const cleared = await t
        .http()
        .put(`/api/v1/users/${target.userId}/policies`)
        .set(asAdmin())
        .send({ policies: [] });
      expect(cleared.body).toEqual({ policies: [] });
    });

    it('refuses bad policies with 400', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'validation_failed'],
        [{ policies: 'all' }, 'validation_failed'],
        [
          { policies: [{ resourceType: 'Planet', actions: ['All'], resources: ['All'] }] },
          'validation_failed',
        ],
        [
          { policies: [{ resourceType: 'Global', actions: ['Fly'], resources: ['All'] }] },
          'validation_failed',
        ],
        [
          { policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'], extra: 1 }] },
          'validation_failed',
        ],
        [{ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['1'] }] }, 'unknown_resource'],
        [
          { policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['abc'] }] },
          'unknown_resource',
        ],
        [
          { policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [] }] },
          'unknown_resource',
        ],
        [
          { policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['999999'] }] },
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
          .put(`/api/v1/users/${target.userId}/policies`)
          .set(asAdmin())
          .send(body as object);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, code);
      }
      const rows = await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`, [
        target.userId,
      ]);
      expect(rows).toHaveLength(0);
    });

    it("refuses a grant on another account's deployment as unknown_resource", async () => {
      const theirs = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(other.token))
        .send(deploymentInput({ name: 'Theirs' }));
      expect(theirs.status).toBe(200);
      const res = await t
        .http()
        .put(`/api/v1/users/${target.userId}/policies`)
        .set(asAdmin())
        .send({
          policies: [
            { resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(theirs.body.id)] },
          ],
        });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'unknown_resource');
    });

    it('is 401 without a token and 403 for a Viewer', async () => {
      const body = { policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] };
      for (const req of [
        () => t.http().get(`/api/v1/users/${target.userId}/policies`),
        () => t.http().put(`/api/v1/users/${target.userId}/policies`).send(body),
      ]) {
        const res = await req();
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401, 'unauthorized');
        const forbidden = await req().set(bearer(viewer.token));
        expect(forbidden.status).toBe(403);
        expectErrorShape(forbidden.body, 403, 'forbidden');
      }
      // The Viewer cannot grant themselves All.
      const self = await t
        .http()
        .put(`/api/v1/users/${viewer.userId}/policies`)
        .set(bearer(viewer.token))
        .send(body);
      expect(self.status).toBe(403);
      expect(await t.sql(`SELECT 1 FROM policies WHERE principal_id = $1`, [viewer.userId])).toHaveLength(0);
    });

    it("is 404 for another account's user", async () => {
      const get = await t.http().get(`/api/v1/users/${other.userId}/policies`).set(asAdmin());
      expect(get.status).toBe(404);
      expectErrorShape(get.body, 404, 'user_not_found');
      const put = await t
        .http()
        .put(`/api/v1/users/${other.userId}/policies`)
        .set(asAdmin())
        .send({ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] });
      expect(put.status).toBe(404);
      expectErrorShape(put.body, 404, 'user_not_found');
      expect(await t.sql(`SELECT 1 FROM policies WHERE principal_id = $1`, [other.userId])).toHaveLength(0);
    });

    it.each(BAD_IDS)('is 400 for the id %s', async (id) => {
      const get = await t.http().get(`/api/v1/users/${id}/policies`).set(asAdmin());
      expect(get.status).toBe(400);
      expectErrorShape(get.body, 400, 'validation_failed');
      const put = await t.http().put(`/api/v1/users/${id}/policies`).set(asAdmin()).send({ policies: [] });
      expect(put.status).toBe(400);
      expectErrorShape(put.body, 400, 'validation_failed');
    });
  });
});
