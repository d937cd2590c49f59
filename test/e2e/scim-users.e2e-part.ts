import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import {
  createUser,
  ENTERPRISE_URN,
  expectScimError,
  expectScimJson,
  patchOp,
  scimClient,
  uniqueEmail,
  userBody,
  USER_URN,
  withoutHost,
  type ScimClient,
  type ScimUser,
} from '../support/scim.js';

interface UserRow {
  username: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  display_name: string | null;
  title: string | null;
  external_id: string | null;
  is_deactivated: boolean;
  default_roles: string[];
}

describe('SCIM Users (RFC 7644 section 3 on /api/scim/v2/Users)', () => {
  let t: TestApp;
  let scim: ScimClient;
  let anonymous: ScimClient;
  let viewer: Actor;
  let viewerScim: ScimClient;
  let globexScim: ScimClient;
  let globexUser: ScimUser;

  beforeAll(async () => {
    t = await startApp();
    scim = scimClient(t);
    anonymous = scimClient(t, null);
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    viewerScim = scimClient(t, viewer);
    globexScim = scimClient(t, await newAccount(t, 'globex'));
    globexUser = await createUser(globexScim, uniqueEmail('globex'));
  });
  afterAll(() => t.close());

  async function row(id: string | number): Promise<UserRow | undefined> {
    const rows = await t.sql<UserRow>(
      `SELECT username, email, first_name, last_name, display_name, title, external_id, is_deactivated,
         default_roles FROM users WHERE id = $1`,
      [Number(id)],
    );
    return rows[0];
  }

  const userCount = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM users`))[0].n;

  describe('3.3 Creating Resources: POST /Users', () => {
    it('creates a console user: 201, Location, ETag, application/scim+json, the new representation', async () => {
      const userName = uniqueEmail('Created');
      const res = await scim.post(
        '/Users',
        userBody(userName, { externalId: 'okta-00u1', displayName: 'Jane D.', title: 'Analyst' }),
      );
      expectScimJson(res, 201);
      const body = res.body as ScimUser;
      expect(body).toEqual({
        schemas: [USER_URN],
        id: expect.stringMatching(/^\d+$/),
        externalId: 'okta-00u1',
        userName,
        name: { formatted: 'Jane Doe', givenName: 'Jane', familyName: 'Doe' },
        displayName: 'Jane D.',
        title: 'Analyst',
        active: true,
        emails: [{ value: userName.toLowerCase(), type: 'work', primary: true }],
        meta: {
          resourceType: 'User',
          created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          lastModified: expect.any(String),
          location: expect.stringMatching(
            new RegExp(`^http://127\\.0\\.0\\.1:\\d+/api/scim/v2/Users/${body.id}$`),
          ),
          version: expect.stringMatching(/^W\/".+"$/),
        },
      });
      expect(res.headers.location).toBe(body.meta.location);
      expect(res.headers.etag).toBe(body.meta.version);
      expect(await row(body.id)).toEqual({
        username: userName,
        email: userName.toLowerCase(),
        first_name: 'Jane',
        last_name: 'Doe',
        display_name: 'Jane D.',
        title: 'Analyst',
        external_id: 'okta-00u1',
        is_deactivated: false,
        default_roles: ['AIBIViewer'],
      });
    });

    it('accepts what Entra ID sends: extension schema, string booleans, unknown and read-only attributes', async () => {
      const userName = uniqueEmail('entra');
      const res = await scim.post('/Users', {
        schemas: [USER_URN, ENTERPRISE_URN],
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7750edf88b9a',
        userName,
        active: 'True',
        addresses: [{ type: 'work', formatted: '1 Main St', primary: 'true' }],
        displayName: 'Entra User',
        emails: [{ primary: 'True', type: 'work', value: userName }],
        meta: { resourceType: 'User' },
        name: { formatted: 'Ignored Formatted', familyName: 'User', givenName: 'Entra' },
        phoneNumbers: [{ type: 'mobile', value: '+1 555' }],
        roles: [],
        password: 'never stored',
        id: '999999',
        groups: [{ value: '1' }],
        [ENTERPRISE_URN]: { department: 'Finance', manager: { value: 'x' } },
      });
      expectScimJson(res, 201);
      expect(res.body).toMatchObject({
        userName,
        active: true,
        name: { formatted: 'Entra User', givenName: 'Entra', familyName: 'User' },
        displayName: 'Entra User',
      });
      expect(res.body.id).not.toBe('999999');
      expect(res.body.groups).toBeUndefined();
      expect(res.body[ENTERPRISE_URN]).toBeUndefined();
    });

    it('creates a deactivated user when active is false (or "False")', async () => {
      const res = await scim.post('/Users', userBody(uniqueEmail(), { active: 'False' }));
      expectScimJson(res, 201);
      expect(res.body.active).toBe(false);
      expect((await row(res.body.id))?.is_deactivated).toBe(true);
    });

    // RFC 7643 requires only userName; /Schemas publishes emails as optional.
    it.each([
      ['a userName that is no address', 'no-email-user'],
      ['a userName that is an address', 'NoEmails@example.com'],
    ])('creates a user with only %s, and returns no emails, then or later', async (_, name) => {
      const userName = `${name}.${Date.now().toString(36)}`;
      const res = await scim.post('/Users', { schemas: [USER_URN], userName });
      expectScimJson(res, 201);
      expect(res.body).toEqual({
        schemas: [USER_URN],
        id: expect.any(String),
        userName,
        active: true,
        meta: expect.objectContaining({ resourceType: 'User' }),
      });
      const got = await scim.get(`/Users/${res.body.id}`);
      expectScimJson(got, 200);
      expect(withoutHost(got.body)).toEqual(withoutHost(res.body));
      // Inside, a placeholder that can never be delivered keeps users' addresses unique.
      expect((await row(res.body.id))?.email).toBe(`user-${res.body.id}@no-email.invalid`);
      const found = await scim.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
      expect(withoutHost(found.body.Resources)).toEqual([withoutHost(res.body)]);
      // A filter on emails sees none.
      const withEmails = await scim.get(
        `/Users?filter=${encodeURIComponent(`userName eq "${userName}" and emails pr`)}`,
      );
      expect(withEmails.body.totalResults).toBe(0);
      const withoutEmails = await scim.get(
        `/Users?filter=${encodeURIComponent(`userName eq "${userName}" and not (emails pr)`)}`,
      );
      expect(withoutEmails.body.totalResults).toBe(1);
      const placeholder = await scim.get(
        `/Users?filter=${encodeURIComponent('emails co "no-email.invalid"')}`,
      );
      expect(placeholder.body.totalResults).toBe(0);
    });

    it('makes several users without an address, each with its own placeholder, and gives one an address later', async () => {
      const a = await scim.post('/Users', { schemas: [USER_URN], userName: `first.${Date.now()}` });
      const b = await scim.post('/Users', { schemas: [USER_URN], userName: `second.${Date.now()}` });
      expectScimJson(a, 201);
      expectScimJson(b, 201);
      const email = uniqueEmail('Later');
      const patched = await scim.patch(
        `/Users/${a.body.id}`,
        patchOp({ op: 'add', path: 'emails[type eq "work"].value', value: email }),
      );
      expectScimJson(patched, 200);
      expect(patched.body.emails).toEqual([{ value: email.toLowerCase(), type: 'work', primary: true }]);
      expect((await row(a.body.id))?.email).toBe(email.toLowerCase());
    });

    it('takes the primary email, else the work one, else the first', async () => {
      const res = await scim.post('/Users', {
        schemas: [USER_URN],
        userName: 'picker',
        emails: [
          { value: 'home@picker.example', type: 'home' },
          { value: 'Work@Picker.example', type: 'work' },
        ],
      });
      expectScimJson(res, 201);
      expect(res.body.emails).toEqual([{ value: 'work@picker.example', type: 'work', primary: true }]);
    });

    it.each([
      ['a body that is not an object', [1, 2], 'invalidSyntax'],
      ['no schemas', { userName: 'x@example.com' }, 'invalidSyntax'],
      [
        'the Group schema',
        { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], userName: 'x@e.com' },
        'invalidSyntax',
      ],
      ['no userName', { schemas: [USER_URN], emails: [{ value: 'a@example.com' }] }, 'invalidSyntax'],
      ['a numeric userName', { schemas: [USER_URN], userName: 5 }, 'invalidSyntax'],
      [
        'a blank userName',
        { schemas: [USER_URN], userName: '  ', emails: [{ value: 'a@b.example' }] },
        'invalidValue',
      ],
      ['a userName over 255 characters', userBody(`${'x'.repeat(250)}@example.com`), 'invalidValue'],
      ['active that is no boolean', userBody('y@example.com', { active: 'yes' }), 'invalidSyntax'],
      [
        'emails that is not an array of objects',
        userBody('y@example.com', { emails: 'y@example.com' }),
        'invalidSyntax',
      ],
      [
        'an invalid email',
        userBody('y@example.com', { emails: [{ value: 'not-an-email' }] }),
        'invalidValue',
      ],
      [
        'an address in the domain reserved for users without one',
        userBody('y@example.com', { emails: [{ value: 'user-1@no-email.invalid' }] }),
        'invalidValue',
      ],
      ['name that is no object', userBody('y@example.com', { name: 'Jane Doe' }), 'invalidSyntax'],
    ])('refuses %s with 400 and creates nothing', async (_, body, scimType) => {
      const before = await userCount();
      const res = await scim.post('/Users', body);
      expectScimError(res, 400, scimType);
      expect(await userCount()).toBe(before);
    });

    it('refuses a userName taken in another casing, or a taken email, with 409 uniqueness', async () => {
      const existing = await createUser(scim, uniqueEmail('taken'));
      const before = await userCount();
      const sameName = await scim.post(
        '/Users',
        userBody(existing.userName.toUpperCase(), { emails: [{ value: 'other@example.com' }] }),
      );
      expectScimError(sameName, 409, 'uniqueness');
      const sameEmail = await scim.post(
        '/Users',
        userBody('someone-else', { emails: [{ value: existing.emails[0].value.toUpperCase() }] }),
      );
      expectScimError(sameEmail, 409, 'uniqueness');
      expect(await userCount()).toBe(before);
    });

    it('makes exactly one user from 5 parallel POSTs of the same userName (one 201, four 409)', async () => {
      const userName = uniqueEmail('race');
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => scim.post('/Users', userBody(userName))),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      for (const r of responses.filter((x) => x.status === 409)) expectScimError(r, 409, 'uniqueness');
      const rows = await t.sql(`SELECT id FROM users WHERE lower(username) = lower($1)`, [userName]);
      expect(rows).toHaveLength(1);
    });

    it('never grants a role from SCIM: roles and entitlements are ignored, new users are Viewers', async () => {
      const admin = [
        { value: 'Admin', display: 'Admin', primary: 'True', type: 'WindowsAzureActiveDirectoryRole' },
      ];
      const res = await scim.post(
        '/Users',
        userBody(uniqueEmail('role'), {
          roles: admin,
          entitlements: [{ value: 'Admin' }],
          x509Certificates: [],
        }),
      );
      expectScimJson(res, 201);
      expect(res.body.roles).toBeUndefined();
      const id = res.body.id as string;
      // Entra's app-role mapping and Okta's profile push, with and without a path.
      const patched = await scim.patch(
        `/Users/${id}`,
        patchOp(
          { op: 'Add', path: 'roles', value: admin },
          { op: 'Replace', path: 'roles[primary eq "True"].value', value: 'Admin' },
          { op: 'replace', value: { roles: admin, entitlements: [{ value: 'Admin' }], userType: 'Admin' } },
        ),
      );
      expectScimJson(patched, 200);
      expectScimJson(await scim.put(`/Users/${id}`, { ...res.body, roles: admin }), 200);
      expect((await row(id))?.default_roles).toEqual(['AIBIViewer']);
      expect(await t.sql(`SELECT role_id FROM user_roles WHERE user_id = $1`, [Number(id)])).toEqual([]);
      // Their token would not pass the admin check either.
      expect(
        await t.sql(`SELECT 1 FROM users WHERE id = $1 AND 'Admin' = ANY(default_roles)`, [Number(id)]),
      ).toEqual([]);
    });

    it('is 401 without a token and 403 for a non-admin, in the SCIM error form', async () => {
      const before = await userCount();
      const missing = await anonymous.post('/Users', userBody(uniqueEmail()));
      expectScimError(missing, 401);
      // RFC 7644 section 2 and RFC 6750 section 3: the challenge, naming the refused token when one came.
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
      const refused = await t
        .http()
        .get('/api/scim/v2/Users')
        .set(bearer('pat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
      expectScimError(refused, 401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
      const forbidden = await viewerScim.get('/Users');
      expect(forbidden.status).toBe(403);
      expect(forbidden.headers['www-authenticate']).toBeUndefined();
      expectScimError(await viewerScim.post('/Users', userBody(uniqueEmail())), 403);
      expect(await userCount()).toBe(before);
    });
  });

  describe('3.4.1 Retrieving a Known Resource: GET /Users/{id}', () => {
    it('returns the user with its ETag and the groups it belongs to', async () => {
      const user = await createUser(scim);
      const group = await t
        .http()
        .post('/api/v1/groups')
        .set(bearer(t.admin.token))
        .send({ name: 'Readers' });
      expect(group.status).toBe(200);
      await t
        .http()
        .put(`/api/v1/groups/${group.body.id}/users/${user.id}`)
        .set(bearer(t.admin.token))
        .expect(204);
      const res = await scim.get(`/Users/${user.id}`);
      expectScimJson(res, 200);
      expect(res.body.groups).toEqual([
        {
          value: String(group.body.id),
          $ref: expect.stringMatching(new RegExp(`/api/scim/v2/Groups/${group.body.id}$`)),
          display: 'Readers',
          type: 'direct',
        },
      ]);
      expect(res.headers.etag).toBe(res.body.meta.version);
      // Group membership is part of the representation: the version changed.
      expect(res.body.meta.version).not.toBe(user.meta.version);
    });

    it.each(['999999', 'abc', '0', '-1', '1.5', '99999999999'])('is 404 for the id %s', async (id) => {
      expectScimError(await scim.get(`/Users/${id}`), 404);
    });

    it("is 404 for another account's user", async () => {
      expectScimError(await scim.get(`/Users/${globexUser.id}`), 404);
      expectScimJson(await globexScim.get(`/Users/${globexUser.id}`), 200);
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      expectScimError(await anonymous.get(`/Users/${viewer.userId}`), 401);
      expectScimError(await viewerScim.get(`/Users/${viewer.userId}`), 403);
    });
  });

  describe('3.5.1 Replacing with PUT: PUT /Users/{id}', () => {
    it('replaces every writable attribute, clears omitted ones, keeps active, ignores read-only ones', async () => {
      const user = await createUser(scim, uniqueEmail('put'), { title: 'Old title', displayName: 'Old' });
      const newName = uniqueEmail('renamed');
      const res = await scim.put(`/Users/${user.id}`, {
        schemas: [USER_URN],
        id: '12345',
        userName: newName,
        name: { givenName: 'Janet' },
        emails: [{ value: newName, type: 'work', primary: true }],
        groups: [{ value: '1' }],
        meta: { version: 'W/"whatever"' },
      });
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        id: user.id,
        userName: newName,
        name: { givenName: 'Janet' },
        active: true,
      });
      expect(res.body.title).toBeUndefined();
      expect(res.body.displayName).toBeUndefined();
      expect(res.headers.etag).toBe(res.body.meta.version);
      expect(res.body.meta.version).not.toBe(user.meta.version);
      expect(await row(user.id)).toMatchObject({
        username: newName,
        email: newName.toLowerCase(),
        first_name: 'Janet',
        last_name: null,
        title: null,
        display_name: null,
        is_deactivated: false,
      });
    });

    it("deactivates with active false (the user's tokens stop working) and reactivates with true", async () => {
      const member = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await t.http().get('/api/v1/users/me').set(bearer(member.token))).status).toBe(200);
      const current = (await scim.get(`/Users/${member.userId}`)).body as ScimUser;
      const off = await scim.put(`/Users/${member.userId}`, { ...current, active: false });
      expectScimJson(off, 200);
      expect(off.body.active).toBe(false);
      expect((await t.http().get('/api/v1/users/me').set(bearer(member.token))).status).toBe(401);
      const on = await scim.put(`/Users/${member.userId}`, { ...current, active: true });
      expect(on.body.active).toBe(true);
      expect((await t.http().get('/api/v1/users/me').set(bearer(member.token))).status).toBe(200);
    });

    it('refuses to deactivate yourself with 403 and changes nothing', async () => {
      const me = (await scim.get(`/Users/${t.admin.userId}`)).body as ScimUser;
      const res = await scim.put(`/Users/${t.admin.userId}`, { ...me, active: false, title: 'Changed' });
      expectScimError(res, 403);
      expect(await row(t.admin.userId)).toMatchObject({ is_deactivated: false, title: null });
    });

    it('refuses a taken userName with 409 uniqueness and bad input with 400, changing nothing', async () => {
      const a = await createUser(scim);
      const b = await createUser(scim);
      const before = await row(b.id);
      expectScimError(
        await scim.put(`/Users/${b.id}`, userBody(a.userName.toUpperCase())),
        409,
        'uniqueness',
      );
      expectScimError(
        await scim.put(`/Users/${b.id}`, { schemas: [USER_URN], name: {} }),
        400,
        'invalidSyntax',
      );
      expectScimError(
        await scim.put(`/Users/${b.id}`, userBody(b.userName, { emails: [{ value: 'x' }] })),
        400,
        'invalidValue',
      );
      expect(await row(b.id)).toEqual(before);
    });

    it("is 404 for another account's user or an unknown id, 401 without a token, 403 for a non-admin", async () => {
      expectScimError(await scim.put(`/Users/${globexUser.id}`, userBody(globexUser.userName)), 404);
      expectScimError(await scim.put('/Users/999999', userBody(uniqueEmail())), 404);
      expectScimError(await anonymous.put(`/Users/${viewer.userId}`, userBody(viewer.email)), 401);
      expectScimError(await viewerScim.put(`/Users/${viewer.userId}`, userBody(viewer.email)), 403);
      expect((await row(globexUser.id))?.username).toBe(globexUser.userName);
    });
  });

  describe('3.5.2 Modifying with PATCH: PATCH /Users/{id}', () => {
    it('applies add, replace and remove, with and without paths, and answers 200 with the user', async () => {
      const user = await createUser(scim, uniqueEmail('patch'), { title: 'Analyst' });
      const res = await scim.patch(
        `/Users/${user.id}`,
        patchOp(
          { op: 'add', path: 'displayName', value: 'JD' },
          { op: 'replace', value: { name: { familyName: 'Smith' }, externalId: 'ext-1' } },
          { op: 'remove', path: 'title' },
          { op: 'replace', path: 'name.givenName', value: 'Janet' },
        ),
      );
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        id: user.id,
        displayName: 'JD',
        externalId: 'ext-1',
        name: { formatted: 'Janet Smith', givenName: 'Janet', familyName: 'Smith' },
      });
      expect(res.body.title).toBeUndefined();
      expect(res.headers.etag).toBe(res.body.meta.version);
      expect(await row(user.id)).toMatchObject({
        display_name: 'JD',
        external_id: 'ext-1',
        first_name: 'Janet',
        last_name: 'Smith',
        title: null,
      });
    });

    it('follows value filters in paths: emails[type eq "work"].value', async () => {
      const user = await createUser(scim);
      const email = uniqueEmail('New');
      const res = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'replace', path: 'emails[type eq "work"].value', value: email }),
      );
      expectScimJson(res, 200);
      expect(res.body.emails).toEqual([{ value: email.toLowerCase(), type: 'work', primary: true }]);
      expect((await row(user.id))?.email).toBe(email.toLowerCase());
    });

    it('deactivates with Okta\'s path-less {active: false} and Entra\'s "False"; reactivates', async () => {
      const user = await createUser(scim);
      const okta = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'replace', value: { active: false } }),
      );
      expect(okta.body.active).toBe(false);
      expect((await row(user.id))?.is_deactivated).toBe(true);
      const back = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'Replace', path: 'active', value: 'True' }),
      );
      expect(back.body.active).toBe(true);
      const entra = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'Replace', path: 'active', value: 'False' }),
      );
      expect(entra.body.active).toBe(false);
    });

    it('applies all operations or none: a failing operation leaves the user untouched', async () => {
      const user = await createUser(scim);
      const before = await row(user.id);
      const res = await scim.patch(
        `/Users/${user.id}`,
        patchOp(
          { op: 'replace', path: 'displayName', value: 'Changed' },
          { op: 'replace', path: 'emails[type eq "home"].value', value: 'h@example.com' },
        ),
      );
      expectScimError(res, 400, 'noTarget');
      expect(await row(user.id)).toEqual(before);
    });

    it("accepts name.formatted (as Entra's default mapping sends it) and keeps deriving it", async () => {
      const user = await createUser(scim);
      const before = await row(user.id);
      for (const body of [
        patchOp({ op: 'Replace', path: 'name.formatted', value: 'Someone Else' }),
        patchOp({ op: 'Add', value: { 'name.formatted': 'Someone Else' } }),
        patchOp({ op: 'replace', path: 'name', value: { formatted: 'Someone Else' } }),
        patchOp({ op: 'remove', path: 'name.formatted' }),
      ]) {
        const res = await scim.patch(`/Users/${user.id}`, body);
        expectScimJson(res, 200);
        expect(res.body.name).toEqual({ formatted: 'Jane Doe', givenName: 'Jane', familyName: 'Doe' });
      }
      expect(await row(user.id)).toEqual(before);
    });

    it('removes no email for a remove of emails with an empty value list', async () => {
      const user = await createUser(scim, uniqueEmail('kept'), {
        emails: [{ value: 'kept.elsewhere@example.com', type: 'work', primary: true }],
      });
      const res = await scim.patch(`/Users/${user.id}`, patchOp({ op: 'Remove', path: 'emails', value: [] }));
      expectScimJson(res, 200);
      expect((await row(user.id))?.email).toBe('kept.elsewhere@example.com');
    });

    it("leaves the user without an address when Entra removes the work email's value", async () => {
      for (const userName of [uniqueEmail('Removed'), `plain-name.${Date.now()}`]) {
        const user = await createUser(scim, userName, {
          emails: [{ value: uniqueEmail('other'), type: 'work', primary: true }],
        });
        const remove = patchOp({ op: 'Remove', path: 'emails[type eq "work"].value' });
        const res = await scim.patch(`/Users/${user.id}`, remove);
        expectScimJson(res, 200);
        expect(res.body.emails).toBeUndefined();
        expect((await scim.get(`/Users/${user.id}`)).body.emails).toBeUndefined();
        expect((await row(user.id))?.email).toBe(`user-${user.id}@no-email.invalid`);
      }
    });

    it('changes nothing, not even meta.lastModified or the version, for a PATCH or PUT that changes nothing', async () => {
      const user = await createUser(scim, uniqueEmail('same'), { title: 'Analyst' });
      // A date in the past, so a write would be seen whatever the clock does.
      await t.sql(`UPDATE users SET updated_at = '2020-01-02T03:04:05.678Z' WHERE id = $1`, [
        Number(user.id),
      ]);
      const current = (await scim.get(`/Users/${user.id}`)).body as ScimUser;
      expect(current.meta.lastModified).toBe('2020-01-02T03:04:05.678Z');
      for (const body of [
        patchOp({ op: 'replace', path: 'title', value: 'Analyst' }),
        patchOp({ op: 'replace', value: { active: true, 'name.givenName': 'Jane' } }),
        patchOp({ op: 'add', path: 'emails', value: [{ value: current.emails[0].value, type: 'work' }] }),
        patchOp({ op: 'remove', path: 'displayName' }),
      ]) {
        const res = await scim.patch(`/Users/${user.id}`, body);
        expectScimJson(res, 200);
        expect(withoutHost(res.body)).toEqual(withoutHost(current));
        expect(res.headers.etag).toBe(current.meta.version);
      }
      const put = await scim.put(`/Users/${user.id}`, current);
      expectScimJson(put, 200);
      expect(withoutHost(put.body)).toEqual(withoutHost(current));
      const [{ updated_at: stamp }] = await t.sql<{ updated_at: Date }>(
        `SELECT updated_at FROM users WHERE id = $1`,
        [Number(user.id)],
      );
      expect(stamp.toISOString()).toBe('2020-01-02T03:04:05.678Z');
      // A real change still moves both.
      const changed = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'replace', path: 'title', value: 'Lead' }),
      );
      expect(changed.body.meta.lastModified).not.toBe(current.meta.lastModified);
      expect(changed.body.meta.version).not.toBe(current.meta.version);
    });

    it('ignores unknown and extension attributes, refuses read-only ones (mutability)', async () => {
      const user = await createUser(scim);
      const ignored = await scim.patch(
        `/Users/${user.id}`,
        patchOp(
          { op: 'add', path: `${ENTERPRISE_URN}:department`, value: 'R&D' },
          { op: 'add', path: 'phoneNumbers[type eq "work"].value', value: '+1' },
        ),
      );
      expectScimJson(ignored, 200);
      expectScimError(
        await scim.patch(`/Users/${user.id}`, patchOp({ op: 'replace', path: 'id', value: '1' })),
        400,
        'mutability',
      );
      expectScimError(
        await scim.patch(
          `/Users/${user.id}`,
          patchOp({ op: 'add', path: 'groups', value: [{ value: '1' }] }),
        ),
        400,
        'mutability',
      );
    });

    it.each([
      ['no PatchOp schema', { Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'invalidSyntax'],
      ['an unknown op', patchOp({ op: 'move', path: 'title', value: 'x' }), 'invalidSyntax'],
      ['remove without a path', patchOp({ op: 'remove' }), 'noTarget'],
      ['a malformed path', patchOp({ op: 'add', path: 'emails[type eq', value: 'x' }), 'invalidPath'],
      ['removing userName', patchOp({ op: 'remove', path: 'userName' }), 'invalidValue'],
      // Unassigned would keep the state and answer 200: a client meaning "deactivate" must know.
      ['removing active', patchOp({ op: 'remove', path: 'active' }), 'invalidValue'],
      ['replacing active with null', patchOp({ op: 'replace', value: { active: null } }), 'invalidValue'],
      ['a wrong type', patchOp({ op: 'replace', path: 'title', value: 7 }), 'invalidSyntax'],
      [
        'an invalid email',
        patchOp({ op: 'replace', path: 'emails[type eq "work"].value', value: 'x' }),
        'invalidValue',
      ],
    ])('refuses %s with 400 and changes nothing', async (_, body, scimType) => {
      const user = await createUser(scim);
      const before = await row(user.id);
      expectScimError(await scim.patch(`/Users/${user.id}`, body), 400, scimType);
      expect(await row(user.id)).toEqual(before);
    });

    it('refuses a userName taken by another user with 409 uniqueness', async () => {
      const a = await createUser(scim);
      const b = await createUser(scim);
      const res = await scim.patch(
        `/Users/${b.id}`,
        patchOp({ op: 'replace', path: 'userName', value: a.userName }),
      );
      expectScimError(res, 409, 'uniqueness');
      expect((await row(b.id))?.username).toBe(b.userName);
    });

    it('loses no change from 5 parallel PATCHes of different attributes of one user', async () => {
      const user = await createUser(scim);
      const ops = [
        { op: 'replace', path: 'displayName', value: 'D' },
        { op: 'replace', path: 'title', value: 'T' },
        { op: 'replace', path: 'externalId', value: 'E' },
        { op: 'replace', path: 'name.givenName', value: 'G' },
        { op: 'replace', path: 'name.familyName', value: 'F' },
      ];
      const responses = await Promise.all(ops.map((op) => scim.patch(`/Users/${user.id}`, patchOp(op))));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(await row(user.id)).toMatchObject({
        display_name: 'D',
        title: 'T',
        external_id: 'E',
        first_name: 'G',
        last_name: 'F',
      });
    });

    it('refuses to deactivate yourself with 403', async () => {
      const res = await scim.patch(
        `/Users/${t.admin.userId}`,
        patchOp({ op: 'replace', value: { active: false } }),
      );
      expectScimError(res, 403);
      expect((await row(t.admin.userId))?.is_deactivated).toBe(false);
    });

    it("is 404 for another account's user, 401 without a token, 403 for a non-admin", async () => {
      const body = patchOp({ op: 'replace', path: 'title', value: 'x' });
      expectScimError(await scim.patch(`/Users/${globexUser.id}`, body), 404);
      expectScimError(await anonymous.patch(`/Users/${viewer.userId}`, body), 401);
      expectScimError(await viewerScim.patch(`/Users/${viewer.userId}`, body), 403);
      expect((await row(globexUser.id))?.title).toBeNull();
    });
  });

  describe('3.6 Deleting Resources: DELETE /Users/{id}', () => {
    it('deletes the user: 204, then 404', async () => {
      const user = await createUser(scim);
      const res = await scim.delete(`/Users/${user.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await row(user.id)).toBeUndefined();
      expectScimError(await scim.get(`/Users/${user.id}`), 404);
      expectScimError(await scim.delete(`/Users/${user.id}`), 404);
    });

    it('refuses to delete yourself (400)', async () => {
      expectScimError(await scim.delete(`/Users/${t.admin.userId}`), 400);
      expect(await row(t.admin.userId)).toBeDefined();
    });

    it("is 404 for another account's user, 401 without a token, 403 for a non-admin", async () => {
      const user = await createUser(scim);
      expectScimError(await scim.delete(`/Users/${globexUser.id}`), 404);
      expectScimError(await anonymous.delete(`/Users/${user.id}`), 401);
      expectScimError(await viewerScim.delete(`/Users/${user.id}`), 403);
      expect(await row(globexUser.id)).toBeDefined();
      expect(await row(user.id)).toBeDefined();
    });
  });
});
