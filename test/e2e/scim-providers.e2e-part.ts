import { newAccount, startApp, type TestApp } from '../support/app.js';
import {
  ENTERPRISE_URN,
  expectScimJson,
  GROUP_URN,
  PATCH_URN,
  scimClient,
  USER_URN,
  type ScimClient,
  type ScimGroup,
  type ScimUser,
} from '../support/scim.js';

/**
 * The request sequences Microsoft Entra ID and Okta send when they provision users and groups,
 * as their provisioning documentation records them, replayed with their habits (Entra: op names
 * capitalised, booleans as strings, `$ref: null`, the enterprise extension; Okta: path-less
 * replace values carrying `id`, full PUTs with `password` and `groups`). Each runs in an
 * account of its own, with default settings.
 */
describe('SCIM provider sequences', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  const filterQuery = (filter: string, extra = '') => `?filter=${encodeURIComponent(filter)}${extra}`;

  async function userRow(id: string) {
    const rows = await t.sql<{
      username: string;
      email: string;
      last_name: string | null;
      is_deactivated: boolean;
    }>(`SELECT username, email, last_name, is_deactivated FROM users WHERE id = $1`, [Number(id)]);
    return rows[0];
  }

  async function members(groupId: string): Promise<string[]> {
    const rows = await t.sql<{ user_id: number }>(
      `SELECT user_id FROM group_members WHERE group_id = $1 ORDER BY user_id`,
      [Number(groupId)],
    );
    return rows.map((r) => String(r.user_id));
  }

  describe('Microsoft Entra ID', () => {
    let scim: ScimClient;
    let user: ScimUser;
    let group: ScimGroup;
    const userName = 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1';

    beforeAll(async () => {
      scim = scimClient(t, await newAccount(t, 'entra'));
    });

    it('user: looks the user up by userName, finds nothing, creates it', async () => {
      const lookup = await scim.get(`/Users${filterQuery(`userName eq "${userName}"`)}`);
      expectScimJson(lookup, 200);
      expect(lookup.body.totalResults).toBe(0);
      const created = await scim.post('/Users', {
        schemas: [USER_URN, ENTERPRISE_URN],
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7750edf88b9a',
        userName,
        active: true,
        emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b@testuser.com' }],
        meta: { resourceType: 'User' },
        name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
        roles: [],
        [ENTERPRISE_URN]: { employeeNumber: '42', department: 'Finance' },
      });
      expectScimJson(created, 201);
      user = created.body as ScimUser;
      expect(user).toMatchObject({
        userName,
        active: true,
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7750edf88b9a',
      });
      const found = await scim.get(`/Users${filterQuery(`userName eq "${userName.toLowerCase()}"`)}`);
      expect(found.body.Resources.map((u: ScimUser) => u.id)).toEqual([user.id]);
      const byExternalId = await scim.get(`/Users${filterQuery(`externalId eq "${user.externalId}"`)}`);
      expect(byExternalId.body.totalResults).toBe(1);
    });

    it('user: PATCHes with Replace/Add ops, filtered paths and the enterprise extension', async () => {
      const res = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
          { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
          { op: 'Add', path: 'displayName', value: 'Updated Display' },
          { op: 'Add', path: 'title', value: 'Analyst' },
          { op: 'Add', path: `${ENTERPRISE_URN}:manager`, value: '2819c223-7f76-453a-919d-413861904646' },
          { op: 'Replace', path: 'addresses[type eq "work"].locality', value: 'Seattle' },
          { op: 'Replace', path: 'emails[type eq "work"].primary', value: 'True' },
        ],
      });
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        emails: [{ value: 'updatedemail@microsoft.com', type: 'work', primary: true }],
        name: { familyName: 'updatedFamilyName', givenName: 'givenName' },
        displayName: 'Updated Display',
        title: 'Analyst',
      });
      expect(await userRow(user.id)).toMatchObject({
        email: 'updatedemail@microsoft.com',
        last_name: 'updatedFamilyName',
      });
    });

    it('user: takes an update of every attribute of the default mapping, name.formatted included', async () => {
      // What Entra sends when a user's surname, job title, department, manager and phones change.
      const res = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [
          { op: 'Replace', path: 'name.familyName', value: 'Married' },
          { op: 'Add', path: 'name.givenName', value: 'givenName' },
          { op: 'Replace', path: 'name.formatted', value: 'givenName Married' },
          { op: 'Replace', path: 'title', value: 'Senior Analyst' },
          { op: 'Add', path: 'preferredLanguage', value: 'en-US' },
          { op: 'Replace', path: 'phoneNumbers[type eq "work"].value', value: '+1 555 0100' },
          { op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+1 555 0101' },
          { op: 'Replace', path: 'addresses[type eq "work"].formatted', value: 'Building 1' },
          { op: 'Add', path: `${ENTERPRISE_URN}:employeeNumber`, value: '1042' },
          { op: 'Replace', path: `${ENTERPRISE_URN}:department`, value: 'Finance' },
          { op: 'Replace', path: `${ENTERPRISE_URN}:manager`, value: { value: 'f2b1c8f0-manager' } },
          { op: 'Add', value: { [`${ENTERPRISE_URN}:costCenter`]: 'CC-1', 'name.formatted': 'x' } },
        ],
      });
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        name: { formatted: 'givenName Married', givenName: 'givenName', familyName: 'Married' },
        title: 'Senior Analyst',
      });
      expect(res.body[ENTERPRISE_URN]).toBeUndefined();
      expect((await userRow(user.id)).last_name).toBe('Married');
    });

    it('user: disables with active "False" sent without a path, as a value object', async () => {
      const off = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'Replace', value: { active: 'False' } }],
      });
      expectScimJson(off, 200);
      expect(off.body.active).toBe(false);
      expect((await userRow(user.id)).is_deactivated).toBe(true);
    });

    it('user: disables with active "False", enables with "True", then deletes', async () => {
      const off = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expectScimJson(off, 200);
      expect(off.body.active).toBe(false);
      expect((await userRow(user.id)).is_deactivated).toBe(true);
      const on = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'Replace', value: { active: 'True' } }],
      });
      expect(on.body.active).toBe(true);
      const member = await scim.post('/Users', {
        schemas: [USER_URN],
        userName: 'second.entra@testuser.com',
        active: 'true',
      });
      expectScimJson(member, 201);
      expect((await scim.delete(`/Users/${member.body.id}`)).status).toBe(204);
      expect(await userRow(member.body.id)).toBeUndefined();
    });

    it('group: looks it up, creates it (with the id and empty members Entra sends), reads it without members', async () => {
      const lookup = await scim.get(
        `/Groups${filterQuery('displayName eq "Group1DisplayName"', '&excludedAttributes=members')}`,
      );
      expect(lookup.body.totalResults).toBe(0);
      const created = await scim.post('/Groups', {
        externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
        id: 'c4b3e6d1-3a3c-4b9f-9b0e-9e1a6c1e7d11',
        displayName: 'Group1DisplayName',
        meta: { resourceType: 'Group' },
        members: [],
        schemas: [GROUP_URN],
      });
      expectScimJson(created, 201);
      group = created.body as ScimGroup;
      expect(group.id).toMatch(/^\d+$/);
      const read = await scim.get(`/Groups/${group.id}?excludedAttributes=members`);
      expectScimJson(read, 200);
      expect(read.body).toMatchObject({
        displayName: 'Group1DisplayName',
        externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      });
    });

    it('group: adds and removes a member (with $ref: null), checking membership by filter', async () => {
      const added = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: user.id }] }],
      });
      expectScimJson(added, 200);
      expect(await members(group.id)).toEqual([user.id]);
      const check = `id eq "${group.id}" and members[value eq "${user.id}"]`;
      const contains = await scim.get(`/Groups${filterQuery(check, '&excludedAttributes=members')}`);
      expect(contains.body.totalResults).toBe(1);
      const removed = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: user.id }] }],
      });
      expectScimJson(removed, 200);
      expect(await members(group.id)).toEqual([]);
      expect((await scim.get(`/Groups${filterQuery(check)}`)).body.totalResults).toBe(0);
    });

    it('group: renames it with Replace displayName, then deletes it', async () => {
      const renamed = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [
          {
            op: 'Replace',
            path: 'displayName',
            value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName',
          },
        ],
      });
      expectScimJson(renamed, 200);
      expect(renamed.body.displayName).toBe('1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');
      expect((await scim.delete(`/Groups/${group.id}`)).status).toBe(204);
    });
  });

  describe('Okta', () => {
    let scim: ScimClient;
    let user: ScimUser;
    let group: ScimGroup;

    beforeAll(async () => {
      scim = scimClient(t, await newAccount(t, 'okta'));
    });

    it('user: looks up by userName with startIndex and count, creates with password and groups', async () => {
      const lookup = await scim.get(
        `/Users${filterQuery('userName eq "test.user@okta.local"', '&startIndex=1&count=100')}`,
      );
      expect(lookup.body).toMatchObject({ totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
      const created = await scim.post('/Users', {
        schemas: [USER_URN],
        userName: 'test.user@okta.local',
        name: { givenName: 'Test', familyName: 'User' },
        emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
        displayName: 'Test User',
        locale: 'en-US',
        externalId: '00ujl29u0le5T6Aj10h7',
        groups: [],
        password: '1mz050nq',
        active: true,
      });
      expectScimJson(created, 201);
      user = created.body as ScimUser;
      const stored = await t.sql(`SELECT row_to_json(u)::text AS row FROM users u WHERE id = $1`, [
        Number(user.id),
      ]);
      expect(JSON.stringify(stored)).not.toContain('1mz050nq');
      expectScimJson(await scim.get(`/Users/${user.id}`), 200);
    });

    it('user: replaces it with a full PUT (read-only attributes included)', async () => {
      const current = (await scim.get(`/Users/${user.id}`)).body as ScimUser;
      const res = await scim.put(`/Users/${user.id}`, {
        ...current,
        name: { givenName: 'Another', middleName: 'Middle', familyName: 'User' },
        displayName: 'Another User',
        locale: 'en-US',
        groups: [],
        password: '1mz050nq',
      });
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        id: user.id,
        name: { formatted: 'Another User', givenName: 'Another', familyName: 'User' },
        displayName: 'Another User',
        externalId: '00ujl29u0le5T6Aj10h7',
        active: true,
      });
    });

    it('user: deactivates with a full PUT carrying active false, and reactivates with one carrying true', async () => {
      const current = (await scim.get(`/Users/${user.id}`)).body as ScimUser;
      const off = await scim.put(`/Users/${user.id}`, { ...current, active: false, password: '1mz050nq' });
      expectScimJson(off, 200);
      expect(off.body.active).toBe(false);
      expect((await userRow(user.id)).is_deactivated).toBe(true);
      const on = await scim.put(`/Users/${user.id}`, { ...current, active: true });
      expectScimJson(on, 200);
      expect((await userRow(user.id)).is_deactivated).toBe(false);
    });

    it('user: deactivates and reactivates with a path-less replace', async () => {
      const off = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expectScimJson(off, 200);
      expect(off.body.active).toBe(false);
      expect((await userRow(user.id)).is_deactivated).toBe(true);
      const on = await scim.patch(`/Users/${user.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'replace', value: { active: true } }],
      });
      expect(on.body.active).toBe(true);
    });

    it('group: creates it, renames it with a path-less replace carrying id, pushes members with PUT', async () => {
      const lookup = await scim.get(
        `/Groups${filterQuery('displayName eq "Test SCIMv2"', '&startIndex=1&count=100')}`,
      );
      expect(lookup.body.totalResults).toBe(0);
      const created = await scim.post('/Groups', {
        schemas: [GROUP_URN],
        displayName: 'Test SCIMv2',
        members: [],
      });
      expectScimJson(created, 201);
      group = created.body as ScimGroup;
      const renamed = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'replace', value: { id: group.id, displayName: 'Test SCIMv2 renamed' } }],
      });
      expectScimJson(renamed, 200);
      expect(renamed.body.displayName).toBe('Test SCIMv2 renamed');
      const put = await scim.put(`/Groups/${group.id}`, {
        schemas: [GROUP_URN],
        id: group.id,
        displayName: 'Test SCIMv2 renamed',
        members: [{ value: user.id, display: 'test.user@okta.local' }],
      });
      expectScimJson(put, 200);
      expect(put.body.members).toEqual([
        expect.objectContaining({ value: user.id, display: 'Another User', type: 'User' }),
      ]);
    });

    it('group: removes a member by value filter, adds it back, then deletes the group', async () => {
      const removed = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }],
      });
      expectScimJson(removed, 200);
      expect(await members(group.id)).toEqual([]);
      const added = await scim.patch(`/Groups/${group.id}`, {
        schemas: [PATCH_URN],
        Operations: [
          { op: 'add', path: 'members', value: [{ value: user.id, display: 'test.user@okta.local' }] },
        ],
      });
      expectScimJson(added, 200);
      expect(await members(group.id)).toEqual([user.id]);
      expect((await scim.delete(`/Groups/${group.id}`)).status).toBe(204);
      expect(await userRow(user.id)).toBeDefined();
    });
  });
});
