import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import {
  createGroup,
  createUser,
  expectScimError,
  expectScimJson,
  GROUP_URN,
  holdingLock,
  patchOp,
  scimClient,
  started,
  uniqueEmail,
  type ScimClient,
  type ScimGroup,
  type ScimUser,
  withoutHost,
} from '../support/scim.js';

describe('SCIM Groups (RFC 7644 section 3 on /api/scim/v2/Groups)', () => {
  let t: TestApp;
  let scim: ScimClient;
  let anonymous: ScimClient;
  let viewer: Actor;
  let viewerScim: ScimClient;
  let globexScim: ScimClient;
  let globexUser: ScimUser;
  let globexGroup: ScimGroup;
  let alice: ScimUser;
  let bob: ScimUser;
  let carol: ScimUser;
  let seq = 0;
  const uniqueName = (prefix = 'Team') => `${prefix} ${++seq}`;

  beforeAll(async () => {
    t = await startApp();
    scim = scimClient(t);
    anonymous = scimClient(t, null);
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    viewerScim = scimClient(t, viewer);
    globexScim = scimClient(t, await newAccount(t, 'globex'));
    globexUser = await createUser(globexScim, uniqueEmail('globex'));
    globexGroup = await createGroup(globexScim, 'Globex team', [globexUser.id]);
    alice = await createUser(scim, uniqueEmail('alice'), { displayName: 'Alice' });
    bob = await createUser(scim, uniqueEmail('bob'));
    carol = await createUser(scim, uniqueEmail('carol'));
  });
  afterAll(() => t.close());

  async function memberIds(groupId: string): Promise<string[]> {
    const rows = await t.sql<{ user_id: number }>(
      `SELECT user_id FROM group_members WHERE group_id = $1 ORDER BY user_id`,
      [Number(groupId)],
    );
    return rows.map((r) => String(r.user_id));
  }

  async function groupRow(id: string) {
    const rows = await t.sql<{ name: string; external_id: string | null; account_id: number }>(
      `SELECT name, external_id, account_id FROM groups WHERE id = $1`,
      [Number(id)],
    );
    return rows[0];
  }

  const groupCount = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM groups`))[0].n;
  const sorted = (...ids: string[]) => [...ids].sort((a, b) => Number(a) - Number(b));

  describe('3.3 Creating Resources: POST /Groups', () => {
    it('creates a group with its members: 201, Location, ETag, the representation', async () => {
      const name = uniqueName('Analysts');
      const res = await scim.post('/Groups', {
        schemas: [GROUP_URN],
        displayName: name,
        externalId: 'okta-grp-1',
        members: [{ value: alice.id, display: 'ignored' }, { value: bob.id }],
      });
      expectScimJson(res, 201);
      const body = withoutHost(res.body as ScimGroup);
      expect(body).toEqual({
        schemas: [GROUP_URN],
        id: expect.stringMatching(/^\d+$/),
        externalId: 'okta-grp-1',
        displayName: name,
        members: [
          { value: alice.id, $ref: `/api/scim/v2/Users/${alice.id}`, display: 'Alice', type: 'User' },
          { value: bob.id, $ref: `/api/scim/v2/Users/${bob.id}`, display: bob.userName, type: 'User' },
        ].sort((a, b) => Number(a.value) - Number(b.value)),
        meta: {
          resourceType: 'Group',
          created: expect.any(String),
          lastModified: expect.any(String),
          location: `/api/scim/v2/Groups/${body.id}`,
          version: expect.stringMatching(/^W\/".+"$/),
        },
      });
      expect(res.headers.location).toBe(res.body.meta.location);
      expect(res.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/scim\/v2\/Groups\/\d+$/);
      expect(res.headers.etag).toBe(body.meta.version);
      expect(await groupRow(body.id)).toEqual({
        name,
        external_id: 'okta-grp-1',
        account_id: t.admin.accountId,
      });
      expect(await memberIds(body.id)).toEqual(sorted(alice.id, bob.id));
      // The same group in the Platform API, and in the members' SCIM representation.
      const platform = await t.http().get(`/api/v1/groups/${body.id}`).set(bearer(t.admin.token));
      expect(platform.body).toMatchObject({ name, externalId: 'okta-grp-1', memberCount: 2 });
      const aliceNow = await scim.get(`/Users/${alice.id}`);
      expect(aliceNow.body.groups).toContainEqual(expect.objectContaining({ value: body.id, display: name }));
    });

    it('creates a group without members', async () => {
      const res = await scim.post('/Groups', { schemas: [GROUP_URN], displayName: uniqueName() });
      expectScimJson(res, 201);
      expect(res.body.members).toBeUndefined();
    });

    it('refuses a taken displayName with 409 uniqueness', async () => {
      const name = uniqueName();
      await createGroup(scim, name);
      const before = await groupCount();
      expectScimError(
        await scim.post('/Groups', { schemas: [GROUP_URN], displayName: name }),
        409,
        'uniqueness',
      );
      expect(await groupCount()).toBe(before);
    });

    it.each([
      ['no schemas', { displayName: 'x' }, 'invalidSyntax'],
      ['no displayName', { schemas: [GROUP_URN] }, 'invalidSyntax'],
      ['a blank displayName', { schemas: [GROUP_URN], displayName: '   ' }, 'invalidValue'],
      [
        'a displayName over 100 characters',
        { schemas: [GROUP_URN], displayName: 'x'.repeat(101) },
        'invalidValue',
      ],
      [
        'members that are not objects',
        { schemas: [GROUP_URN], displayName: 'x', members: ['1'] },
        'invalidSyntax',
      ],
      [
        'a member without value',
        { schemas: [GROUP_URN], displayName: 'x', members: [{ display: 'a' }] },
        'invalidSyntax',
      ],
      [
        'a nested group',
        { schemas: [GROUP_URN], displayName: 'x', members: [{ value: '1', type: 'Group' }] },
        'invalidValue',
      ],
      [
        'an unknown user',
        { schemas: [GROUP_URN], displayName: 'x', members: [{ value: '999999' }] },
        'invalidValue',
      ],
      [
        'a member value that is no id',
        { schemas: [GROUP_URN], displayName: 'x', members: [{ value: 'abc' }] },
        'invalidValue',
      ],
    ])('refuses %s with 400 and creates nothing', async (_, body, scimType) => {
      const before = await groupCount();
      expectScimError(await scim.post('/Groups', body), 400, scimType);
      expect(await groupCount()).toBe(before);
    });

    it("names the members that are not users of the account (another account's user included)", async () => {
      const res = await scim.post('/Groups', {
        schemas: [GROUP_URN],
        displayName: uniqueName(),
        members: [{ value: alice.id }, { value: globexUser.id }, { value: 'nope' }],
      });
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toContain(`"${globexUser.id}"`);
      expect(res.body.detail).toContain('"nope"');
      expect(res.body.detail).not.toContain(`"${alice.id}"`);
    });

    it('makes exactly one group from 5 parallel POSTs of one displayName (one 201, four 409)', async () => {
      const name = uniqueName('Pushed twice');
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          scim.post('/Groups', { schemas: [GROUP_URN], displayName: name, members: [{ value: alice.id }] }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      for (const r of responses.filter((x) => x.status === 409)) expectScimError(r, 409, 'uniqueness');
      expect(await t.sql(`SELECT id FROM groups WHERE name = $1`, [name])).toHaveLength(1);
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      const before = await groupCount();
      expectScimError(await anonymous.post('/Groups', { schemas: [GROUP_URN], displayName: 'x' }), 401);
      expectScimError(await viewerScim.post('/Groups', { schemas: [GROUP_URN], displayName: 'x' }), 403);
      expect(await groupCount()).toBe(before);
    });
  });

  describe('3.4.1 Retrieving a Known Resource: GET /Groups/{id}', () => {
    it('returns the group with its members and ETag; excludedAttributes=members leaves them out', async () => {
      const group = await createGroup(scim, uniqueName(), [carol.id]);
      const res = await scim.get(`/Groups/${group.id}`);
      expectScimJson(res, 200);
      expect(withoutHost(res.body)).toEqual(withoutHost(group));
      expect(res.headers.etag).toBe(group.meta.version);
      const lean = await scim.get(`/Groups/${group.id}?excludedAttributes=members`);
      expect(lean.body.members).toBeUndefined();
      expect(lean.body.displayName).toBe(group.displayName);
      expect(lean.headers.etag).toBe(group.meta.version);
    });

    it("never shows another account's groups or members: lists, filters and a user's groups", async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const list = (filter: string) =>
        scim.get(`/Groups?filter=${encodeURIComponent(filter)}&count=1000`).then((r) => r.body);
      expect((await list(`displayName eq "${globexGroup.displayName}"`)).totalResults).toBe(0);
      expect((await list(`members[value eq "${globexUser.id}"]`)).totalResults).toBe(0);
      expect((await list(`id eq "${globexGroup.id}"`)).totalResults).toBe(0);
      const all = await list('displayName pr');
      expect(all.Resources.map((g: ScimGroup) => g.id)).not.toContain(globexGroup.id);
      const members = all.Resources.flatMap((g: ScimGroup) => (g.members ?? []).map((m) => m.value));
      expect(members).not.toContain(globexUser.id);
      const users = await scim.get(
        `/Users?filter=${encodeURIComponent(`groups.value eq "${globexGroup.id}"`)}`,
      );
      expect(users.body.totalResults).toBe(0);
      const aliceNow = await scim.get(`/Users/${alice.id}`);
      expect(aliceNow.body.groups.map((g: { value: string }) => g.value)).toContain(group.id);
      expect(aliceNow.body.groups.map((g: { value: string }) => g.value)).not.toContain(globexGroup.id);
    });

    it("is 404 for another account's group or an unknown id; 401 without a token; 403 for a non-admin", async () => {
      expectScimError(await scim.get(`/Groups/${globexGroup.id}`), 404);
      expectScimError(await scim.get('/Groups/424242'), 404);
      expectScimError(await scim.get('/Groups/x1'), 404);
      expectScimError(await anonymous.get(`/Groups/${globexGroup.id}`), 401);
      expectScimError(await viewerScim.get(`/Groups/${globexGroup.id}`), 403);
    });
  });

  describe('3.5.1 Replacing with PUT: PUT /Groups/{id}', () => {
    it('replaces the name, the externalId and the whole membership', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id, bob.id], { externalId: 'e1' });
      const name = uniqueName('Renamed');
      const res = await scim.put(`/Groups/${group.id}`, {
        schemas: [GROUP_URN],
        id: group.id,
        displayName: name,
        members: [{ value: bob.id }, { value: carol.id }],
      });
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({ id: group.id, displayName: name });
      expect(res.body.externalId).toBeUndefined();
      expect(res.body.members.map((m: { value: string }) => m.value)).toEqual(sorted(bob.id, carol.id));
      expect(res.headers.etag).not.toBe(group.meta.version);
      expect(await groupRow(group.id)).toMatchObject({ name, external_id: null });
      expect(await memberIds(group.id)).toEqual(sorted(bob.id, carol.id));
    });

    it('refuses a taken name (409) or an unknown member (400), changing nothing', async () => {
      const taken = await createGroup(scim, uniqueName());
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const put = (body: Record<string, unknown>) =>
        scim.put(`/Groups/${group.id}`, { schemas: [GROUP_URN], ...body });
      expectScimError(await put({ displayName: taken.displayName }), 409, 'uniqueness');
      expectScimError(
        await put({ displayName: 'Fine', members: [{ value: '999999' }] }),
        400,
        'invalidValue',
      );
      expectScimError(await put({ members: [] }), 400, 'invalidSyntax');
      expect(await groupRow(group.id)).toMatchObject({ name: group.displayName });
      expect(await memberIds(group.id)).toEqual([alice.id]);
    });

    it("is 404 for another account's group, 401 without a token, 403 for a non-admin", async () => {
      const body = { schemas: [GROUP_URN], displayName: 'Taken over' };
      expectScimError(await scim.put(`/Groups/${globexGroup.id}`, body), 404);
      expectScimError(await anonymous.put(`/Groups/${globexGroup.id}`, body), 401);
      expectScimError(await viewerScim.put(`/Groups/${globexGroup.id}`, body), 403);
      expect((await groupRow(globexGroup.id)).name).toBe('Globex team');
    });
  });

  describe('3.5.2 Modifying with PATCH: PATCH /Groups/{id}', () => {
    it('adds members (path "members"), skipping those already in', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const res = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'Add', path: 'members', value: [{ value: alice.id }, { value: bob.id }] }),
      );
      expectScimJson(res, 200);
      expect(res.body.members.map((m: { value: string }) => m.value)).toEqual(sorted(alice.id, bob.id));
      expect(await memberIds(group.id)).toEqual(sorted(alice.id, bob.id));
    });

    it('changes nothing, not even meta.lastModified or the version, for a PATCH or PUT that changes nothing', async () => {
      const group = await createGroup(scim, uniqueName('Same'), [alice.id], { externalId: 'ext-same' });
      // A date in the past, so a write would be seen whatever the clock does.
      const past = '2020-01-02T03:04:05.678Z';
      await t.sql(`UPDATE groups SET updated_at = $2 WHERE id = $1`, [Number(group.id), past]);
      const current = (await scim.get(`/Groups/${group.id}`)).body as ScimGroup;
      expect(current.meta.lastModified).toBe(past);
      for (const body of [
        patchOp({ op: 'Add', path: 'members', value: [{ value: alice.id }] }),
        patchOp({ op: 'Remove', path: 'members', value: [{ value: bob.id }] }),
        patchOp({ op: 'Replace', path: 'displayName', value: current.displayName }),
        patchOp({ op: 'replace', value: { externalId: 'ext-same' } }),
      ]) {
        const res = await scim.patch(`/Groups/${group.id}`, body);
        expectScimJson(res, 200);
        expect(withoutHost(res.body)).toEqual(withoutHost(current));
        expect(res.headers.etag).toBe(current.meta.version);
      }
      const put = await scim.put(`/Groups/${group.id}`, current);
      expectScimJson(put, 200);
      expect(withoutHost(put.body)).toEqual(withoutHost(current));
      // A change of the membership alone still moves both.
      const changed = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'Add', path: 'members', value: [{ value: bob.id }] }),
      );
      expect(changed.body.meta.lastModified).not.toBe(past);
      expect(changed.body.meta.version).not.toBe(current.meta.version);
    });

    it('removes members: with a value filter, with a value list (Entra), or all of them', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id, bob.id, carol.id]);
      await scim
        .patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: `members[value eq "${alice.id}"]` }))
        .expect(200);
      expect(await memberIds(group.id)).toEqual(sorted(bob.id, carol.id));
      await scim
        .patch(`/Groups/${group.id}`, patchOp({ op: 'Remove', path: 'members', value: [{ value: bob.id }] }))
        .expect(200);
      expect(await memberIds(group.id)).toEqual([carol.id]);
      const all = await scim.patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: 'members' }));
      expectScimJson(all, 200);
      expect(all.body.members).toBeUndefined();
      expect(await memberIds(group.id)).toEqual([]);
    });

    it('removes nothing for a remove of members with an empty value list (never the whole group)', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id, bob.id]);
      for (const value of [[], [{ value: '999999' }]]) {
        const res = await scim.patch(
          `/Groups/${group.id}`,
          patchOp({ op: 'Remove', path: 'members', value }),
        );
        expectScimJson(res, 200);
        expect(await memberIds(group.id)).toEqual(sorted(alice.id, bob.id));
      }
    });

    it('removes the members any filter selects, such as display eq (case-insensitive)', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id, bob.id]);
      const res = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'remove', path: 'members[display eq "alice" or value eq "0"]' }),
      );
      expectScimJson(res, 200);
      expect(await memberIds(group.id)).toEqual([bob.id]);
    });

    it('renames (path and path-less, ignoring the id Okta sends) and replaces the membership', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const first = uniqueName('First');
      await scim
        .patch(`/Groups/${group.id}`, patchOp({ op: 'Replace', path: 'displayName', value: first }))
        .expect(200);
      expect((await groupRow(group.id)).name).toBe(first);
      const second = uniqueName('Second');
      const res = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({
          op: 'replace',
          value: { id: group.id, displayName: second, members: [{ value: carol.id }] },
        }),
      );
      expectScimJson(res, 200);
      expect(res.body.displayName).toBe(second);
      expect(await memberIds(group.id)).toEqual([carol.id]);
    });

    it('applies all operations or none', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const res = await scim.patch(
        `/Groups/${group.id}`,
        patchOp(
          { op: 'replace', path: 'displayName', value: uniqueName('Never') },
          { op: 'add', path: 'members', value: [{ value: bob.id }] },
          { op: 'remove', path: 'members', value: [{ value: alice.id }] },
          { op: 'add', path: 'members', value: [{ value: '999999' }] },
        ),
      );
      expectScimError(res, 400, 'invalidValue');
      expect(res.body.detail).toContain('"999999"');
      expect((await groupRow(group.id)).name).toBe(group.displayName);
      expect(await memberIds(group.id)).toEqual([alice.id]);
    });

    it.each([
      [
        'a filter on members with add',
        patchOp({ op: 'add', path: 'members[value eq "1"]', value: { value: '1' } }),
        'invalidPath',
      ],
      [
        'a member sub-attribute',
        patchOp({ op: 'replace', path: 'members.display', value: 'x' }),
        'mutability',
      ],
      ['removing displayName', patchOp({ op: 'remove', path: 'displayName' }), 'invalidValue'],
      ['a blank displayName', patchOp({ op: 'replace', path: 'displayName', value: ' ' }), 'invalidValue'],
      ['no PatchOp schema', { Operations: [{ op: 'remove', path: 'members' }] }, 'invalidSyntax'],
      ['a bad filter', patchOp({ op: 'remove', path: 'members[value eq]' }), 'invalidPath'],
    ])('refuses %s with 400 and changes nothing', async (_, body, scimType) => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      expectScimError(await scim.patch(`/Groups/${group.id}`, body), 400, scimType);
      expect(await groupRow(group.id)).toMatchObject({ name: group.displayName });
      expect(await memberIds(group.id)).toEqual([alice.id]);
    });

    it('refuses a taken displayName with 409 uniqueness', async () => {
      const taken = await createGroup(scim, uniqueName());
      const group = await createGroup(scim, uniqueName());
      const res = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'replace', path: 'displayName', value: taken.displayName }),
      );
      expectScimError(res, 409, 'uniqueness');
    });

    it('keeps every member of 10 parallel add-member PATCHes for different users', async () => {
      const group = await createGroup(scim, uniqueName('Parallel'));
      const users = await Promise.all(Array.from({ length: 10 }, () => createUser(scim)));
      const responses = await Promise.all(
        users.map((u) =>
          scim.patch(
            `/Groups/${group.id}`,
            patchOp({ op: 'add', path: 'members', value: [{ value: u.id }] }),
          ),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(await memberIds(group.id)).toEqual(sorted(...users.map((u) => u.id)));
      const final = await scim.get(`/Groups/${group.id}`);
      expect(final.body.members).toHaveLength(10);
    });

    it("refuses another account's user as a member, in every form of PATCH and PUT, changing nothing", async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const foreign = [{ value: globexUser.id }];
      const attempts = [
        scim.patch(`/Groups/${group.id}`, patchOp({ op: 'Add', path: 'members', value: foreign })),
        scim.patch(`/Groups/${group.id}`, patchOp({ op: 'replace', path: 'members', value: foreign })),
        scim.patch(`/Groups/${group.id}`, patchOp({ op: 'add', value: { members: foreign } })),
        scim.put(`/Groups/${group.id}`, { schemas: [GROUP_URN], displayName: 'Stolen', members: foreign }),
      ];
      for (const attempt of attempts) {
        const res = await attempt;
        expectScimError(res, 400, 'invalidValue');
        expect(res.body.detail).toContain(`"${globexUser.id}"`);
      }
      expect(await memberIds(group.id)).toEqual([alice.id]);
      expect(await groupRow(group.id)).toMatchObject({ name: group.displayName });
      // Removing them is a no-op, and the other account's group is untouched.
      await scim
        .patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: `members[value eq "${globexUser.id}"]` }))
        .expect(200);
      expect(await memberIds(globexGroup.id)).toEqual([globexUser.id]);
    });

    it("is 404 for another account's group, 401 without a token, 403 for a non-admin", async () => {
      const body = patchOp({ op: 'add', path: 'members', value: [{ value: alice.id }] });
      expectScimError(await scim.patch(`/Groups/${globexGroup.id}`, body), 404);
      expectScimError(await anonymous.patch(`/Groups/${globexGroup.id}`, body), 401);
      expectScimError(await viewerScim.patch(`/Groups/${globexGroup.id}`, body), 403);
      expect(await memberIds(globexGroup.id)).toEqual([globexUser.id]);
    });
  });

  describe('Concurrent membership and user changes (never a 500, never a deadlock)', () => {
    const userPatch = (id: string) =>
      started(scim.patch(`/Users/${id}`, patchOp({ op: 'replace', path: 'title', value: 'Raced' })));
    const groupPost = (members: string[]) =>
      started(
        scim.post('/Groups', {
          schemas: [GROUP_URN],
          displayName: uniqueName('Raced'),
          members: members.map((value) => ({ value })),
        }),
      );

    it('creates a group with members while a PATCH of one of them waits for the account (no deadlock)', async () => {
      // The user PATCH queues for the account row first, then the group POST locks the member
      // and queues too: both must go through, in either order.
      const member = await createUser(scim);
      let patch!: Promise<import('supertest').Response>;
      let post!: Promise<import('supertest').Response>;
      await holdingLock(
        t,
        'SELECT id FROM accounts WHERE id = $1 FOR UPDATE',
        [t.admin.accountId],
        async (blocked) => {
          patch = userPatch(member.id);
          await blocked(1);
          post = groupPost([member.id]);
          await blocked(2);
        },
      );
      const [patched, created] = await Promise.all([patch, post]);
      expectScimJson(patched, 200);
      expectScimJson(created, 201);
      expect(await memberIds(created.body.id)).toEqual([member.id]);
    });

    it('creates a group with a member whose DELETE is ahead of it: 204, then 400 naming them, no group', async () => {
      const member = await createUser(scim);
      const before = await groupCount();
      let remove!: Promise<import('supertest').Response>;
      let post!: Promise<import('supertest').Response>;
      await holdingLock(
        t,
        'SELECT id FROM accounts WHERE id = $1 FOR UPDATE',
        [t.admin.accountId],
        async (blocked) => {
          remove = started(scim.delete(`/Users/${member.id}`));
          await blocked(1);
          post = groupPost([member.id, alice.id]);
          await blocked(2);
        },
      );
      const [removed, created] = await Promise.all([remove, post]);
      expect(removed.status).toBe(204);
      expectScimError(created, 400, 'invalidValue');
      expect(created.body.detail).toContain(`"${member.id}"`);
      expect(await groupCount()).toBe(before);
    });

    it('adds a user being deleted: the DELETE first makes the PATCH a 400 naming them, nothing added', async () => {
      const member = await createUser(scim);
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      let patch!: Promise<import('supertest').Response>;
      let removed!: import('supertest').Response;
      // The group row is held: the PATCH waits for it while the DELETE goes through.
      await holdingLock(
        t,
        'SELECT id FROM groups WHERE id = $1 FOR UPDATE',
        [Number(group.id)],
        async (blocked) => {
          patch = started(
            scim.patch(
              `/Groups/${group.id}`,
              patchOp({ op: 'add', path: 'members', value: [{ value: member.id }] }),
            ),
          );
          await blocked(1);
          removed = await scim.delete(`/Users/${member.id}`);
        },
      );
      expect(removed.status).toBe(204);
      const patched = await patch;
      expectScimError(patched, 400, 'invalidValue');
      expect(patched.body.detail).toContain(`"${member.id}"`);
      expect(await memberIds(group.id)).toEqual([alice.id]);
    });

    it('adds a user being deleted: the PATCH first adds them, then the DELETE removes user and membership', async () => {
      const member = await createUser(scim);
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      let patch!: Promise<import('supertest').Response>;
      let remove!: Promise<import('supertest').Response>;
      // The account row is held: the DELETE waits for it while the PATCH (which needs no account lock) goes through.
      await holdingLock(
        t,
        'SELECT id FROM accounts WHERE id = $1 FOR UPDATE',
        [t.admin.accountId],
        async (blocked) => {
          remove = started(scim.delete(`/Users/${member.id}`));
          await blocked(1);
          patch = started(
            scim.patch(
              `/Groups/${group.id}`,
              patchOp({ op: 'add', path: 'members', value: [{ value: member.id }] }),
            ),
          );
          expectScimJson(await patch, 200);
        },
      );
      expect((await remove).status).toBe(204);
      expect(await memberIds(group.id)).toEqual([alice.id]);
    });

    it('runs user PATCHes and membership PATCHes of the same users in parallel, all applied', async () => {
      const group = await createGroup(scim, uniqueName('Parallel mix'));
      const users = await Promise.all(Array.from({ length: 5 }, () => createUser(scim)));
      const responses = await Promise.all(
        users.flatMap((u) => [
          scim.patch(
            `/Groups/${group.id}`,
            patchOp({ op: 'add', path: 'members', value: [{ value: u.id }] }),
          ),
          scim.patch(
            `/Users/${u.id}`,
            patchOp({ op: 'replace', path: 'displayName', value: `Raced ${u.id}` }),
          ),
        ]),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(await memberIds(group.id)).toEqual(sorted(...users.map((u) => u.id)));
      const final = await scim.get(`/Groups/${group.id}`);
      expect(final.body.members.map((m: { display: string }) => m.display).sort()).toEqual(
        users.map((u) => `Raced ${u.id}`).sort(),
      );
    });
  });

  describe('3.6 Deleting Resources: DELETE /Groups/{id}', () => {
    it('deletes the group (204); its members stay users', async () => {
      const group = await createGroup(scim, uniqueName(), [alice.id]);
      const res = await scim.delete(`/Groups/${group.id}`);
      expect(res.status).toBe(204);
      expect(await groupRow(group.id)).toBeUndefined();
      expect(await memberIds(group.id)).toEqual([]);
      expectScimJson(await scim.get(`/Users/${alice.id}`), 200);
      expectScimError(await scim.get(`/Groups/${group.id}`), 404);
      expectScimError(await scim.delete(`/Groups/${group.id}`), 404);
    });

    it("is 404 for another account's group, 401 without a token, 403 for a non-admin", async () => {
      expectScimError(await scim.delete(`/Groups/${globexGroup.id}`), 404);
      expectScimError(await anonymous.delete(`/Groups/${globexGroup.id}`), 401);
      expectScimError(await viewerScim.delete(`/Groups/${globexGroup.id}`), 403);
      expect(await groupRow(globexGroup.id)).toBeDefined();
    });
  });
});
