import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import {
  createGroup,
  createUser,
  ERROR_URN,
  expectScimError,
  expectScimJson,
  GROUP_URN,
  LIST_URN,
  patchOp,
  SCIM,
  scimClient,
  SEARCH_URN,
  USER_URN,
  userBody,
  type ScimClient,
  type ScimGroup,
  type ScimUser,
} from '../support/scim.js';
import { countRequestQueries } from '../support/request-queries.js';
import { compileNamed } from '../../src/core/database/named-params.js';
import { parseFilter } from '../../src/modules/scim/filter/filter-parser.js';
import {
  compileFilter,
  GROUP_FILTER_COLUMNS,
  USER_FILTER_COLUMNS,
} from '../../src/modules/scim/filter/filter-sql.js';

/**
 * RFC 7644 section by section, on an account of its own (`proto`) whose users are known, so
 * every filter's exact result can be asserted: 3.4.2 (filtering, pagination, attributes),
 * 3.4.3 (.search), 3.12 (errors), 3.14 (versioning); and discovery (RFC 7643 sections 5 to 7).
 */
describe('SCIM protocol (RFC 7644)', () => {
  let t: TestApp;
  let owner: Actor;
  let scim: ScimClient;
  let anonymous: ScimClient;
  let viewerScim: ScimClient;
  let alice: ScimUser;
  let bob: ScimUser;
  let carol: ScimUser;
  let admins: ScimGroup;
  let finance: ScimGroup;

  beforeAll(async () => {
    t = await startApp();
    owner = await newAccount(t, 'proto');
    scim = scimClient(t, owner);
    anonymous = scimClient(t, null);
    viewerScim = scimClient(
      t,
      await newUser(t, owner, { defaultRoles: ['Viewer'], email: 'viewer@proto.test' }),
    );
    // Another account's users never show up here.
    await createUser(scimClient(t), 'alice.filter@example.com');
    alice = await createUser(scim, 'Alice.Filter@example.com', {
      name: { givenName: 'Alice', familyName: 'Archer' },
      title: 'Engineer',
      externalId: 'EXT-1',
      displayName: 'Alice A',
    });
    bob = await createUser(scim, 'bob.filter@example.com', {
      name: { givenName: 'Bob', familyName: 'Baker' },
      title: 'Manager',
      externalId: 'ext-2',
      active: false,
    });
    carol = await createUser(scim, 'carol_filter', {
      name: { givenName: 'Carol', familyName: '100% Cooper' },
      emails: [{ value: 'carol@other.example', type: 'work' }],
    });
    admins = await createGroup(scim, 'Admins', [alice.id, carol.id], { externalId: 'grp-A' });
    finance = await createGroup(scim, 'Finance', [bob.id]);
  });
  afterAll(() => t.close());

  /** The userNames a filter selects, in id order. */
  async function users(filter: string): Promise<string[]> {
    const res = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expectScimJson(res, 200);
    return (res.body.Resources as ScimUser[]).map((u) => u.userName);
  }

  async function groups(filter: string): Promise<string[]> {
    const res = await scim.get(`/Groups?filter=${encodeURIComponent(filter)}&excludedAttributes=members`);
    expectScimJson(res, 200);
    return (res.body.Resources as ScimGroup[]).map((g) => g.displayName);
  }

  const ALICE = 'Alice.Filter@example.com';
  const BOB = 'bob.filter@example.com';
  const CAROL = 'carol_filter';
  const ADMIN = 'admin@proto.test';
  const VIEWER = 'viewer@proto.test';

  describe('3.4.2 Query Resources: GET /Users and /Groups', () => {
    it('answers a ListResponse of every resource, in id order', async () => {
      const res = await scim.get('/Users');
      expectScimJson(res, 200);
      expect(res.body).toEqual({
        schemas: [LIST_URN],
        totalResults: 5,
        itemsPerPage: 5,
        startIndex: 1,
        Resources: expect.any(Array),
      });
      expect(res.body.Resources.map((u: ScimUser) => u.userName)).toEqual([ADMIN, VIEWER, ALICE, BOB, CAROL]);
      expect(res.body.Resources[2]).toEqual(expect.objectContaining({ id: alice.id, schemas: [USER_URN] }));
      const list = await scim.get('/Groups');
      expect(list.body.totalResults).toBe(2);
      expect(list.body.Resources.map((g: ScimGroup) => g.members?.length)).toEqual([2, 1]);
    });

    it('answers an empty ListResponse when nothing matches (what Entra checks before creating)', async () => {
      const res = await scim.get(`/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`);
      expectScimJson(res, 200);
      expect(res.body).toEqual({
        schemas: [LIST_URN],
        totalResults: 0,
        itemsPerPage: 0,
        startIndex: 1,
        Resources: [],
      });
    });

    it('is 401 without a token and 403 for a non-admin', async () => {
      expectScimError(await anonymous.get('/Users'), 401);
      expectScimError(await viewerScim.get('/Users'), 403);
      expectScimError(await anonymous.get('/Groups'), 401);
      expectScimError(await viewerScim.get('/Groups'), 403);
    });
  });

  describe('3.4.2.2 Filtering', () => {
    it('eq: userName compares case-insensitively, externalId exactly', async () => {
      expect(await users('userName eq "alice.filter@EXAMPLE.com"')).toEqual([ALICE]);
      expect(await users('externalId eq "EXT-1"')).toEqual([ALICE]);
      expect(await users('externalId eq "ext-1"')).toEqual([]);
    });

    it('ne, co, sw, ew', async () => {
      expect(await users('title ne "Engineer"')).toEqual([ADMIN, VIEWER, BOB, CAROL]);
      expect(await users('userName co "FILTER"')).toEqual([ALICE, BOB, CAROL]);
      expect(await users('userName sw "b"')).toEqual([BOB]);
      expect(await users('emails.value ew "@other.example"')).toEqual([CAROL]);
      // LIKE wildcards in the value are literal.
      expect(await users('name.familyName co "100%"')).toEqual([CAROL]);
      expect(await users('userName co "_"')).toEqual([CAROL]);
    });

    it('gt, ge, lt, le on strings and dates', async () => {
      expect(await users('name.givenName gt "Alice"')).toEqual([BOB, CAROL]);
      expect(await users('name.givenName ge "Bob"')).toEqual([BOB, CAROL]);
      expect(await users('name.givenName lt "bob"')).toEqual([ALICE]);
      expect(await users('name.givenName le "BOB"')).toEqual([ALICE, BOB]);
      expect(
        await users(`meta.created ge "${alice.meta.created}" and meta.created le "${bob.meta.created}"`),
      ).toEqual([ALICE, BOB]);
      expect(await users(`meta.lastModified gt "2999-01-01T00:00:00Z"`)).toEqual([]);
      expect(await users(`meta.created eq "${carol.meta.created}"`)).toEqual([CAROL]);
    });

    it('pr, and booleans', async () => {
      expect(await users('title pr')).toEqual([ALICE, BOB]);
      expect(await users('active eq false')).toEqual([BOB]);
      expect(await users('active ne false and name pr')).toEqual([ALICE, CAROL]);
    });

    it('and, or, not and grouping, with and binding tighter than or', async () => {
      expect(await users('title eq "Engineer" or title eq "Manager" and active eq true')).toEqual([ALICE]);
      expect(await users('(title eq "Engineer" or title eq "Manager") and active eq false')).toEqual([BOB]);
      expect(await users('userName co "filter" and not (title pr)')).toEqual([CAROL]);
      expect(await users('not (userName co "filter") and not (userName sw "viewer")')).toEqual([ADMIN]);
    });

    it('complex attribute filters and multi-valued attributes', async () => {
      expect(await users('emails[type eq "work" and value co "other"]')).toEqual([CAROL]);
      expect(await users('emails[type eq "work"].value co "example.com"')).toEqual([ALICE, BOB]);
      expect(await users(`groups.value eq "${admins.id}"`)).toEqual([ALICE, CAROL]);
      expect(await users('groups[display eq "Finance"]')).toEqual([BOB]);
      expect(await users('groups pr')).toEqual([ALICE, BOB, CAROL]);
      expect(await users(`id eq "${carol.id}" or id eq "not-a-number"`)).toEqual([CAROL]);
    });

    it('accepts any casing of operators and attribute names, and schema URN prefixes', async () => {
      expect(await users('USERNAME EQ "bob.filter@example.com"')).toEqual([BOB]);
      expect(await users(`${USER_URN}:name.familyName Eq "archer"`)).toEqual([ALICE]);
      expect(await users('Title Pr AND Active eQ TRUE')).toEqual([ALICE]);
    });

    it('filters groups by displayName (exactly), externalId and members', async () => {
      expect(await groups('displayName eq "Admins"')).toEqual(['Admins']);
      expect(await groups('displayName eq "admins"')).toEqual([]);
      expect(await groups('externalId eq "grp-A"')).toEqual(['Admins']);
      expect(await groups(`members.value eq "${bob.id}"`)).toEqual(['Finance']);
      expect(await groups('members[display co "alice"]')).toEqual(['Admins']);
      // Entra's membership check.
      expect(await groups(`id eq "${admins.id}" and members[value eq "${carol.id}"]`)).toEqual(['Admins']);
      expect(await groups(`id eq "${finance.id}" and members[value eq "${carol.id}"]`)).toEqual([]);
    });

    it.each([
      ['bad syntax', 'userName eq'],
      ['an unknown operator', 'userName like "x"'],
      ['an unknown attribute', 'nickName eq "x"'],
      [
        'an extension attribute',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "x"',
      ],
      ['a wrong value type', 'active eq "yes"'],
      ['a bad date', 'meta.created gt "last week"'],
      ['nesting over 16 levels', `${'('.repeat(17)}title pr${')'.repeat(17)}`],
      ['over 64 comparisons', Array.from({ length: 65 }, () => 'title pr').join(' or ')],
      ['a boolean compared with gt', 'active gt false'],
      ['a NUL character written as a JSON escape', 'userName eq "a\\u0000b"'],
      ['a date PostgreSQL cannot store (year 0)', 'meta.lastModified gt "0000-01-01T00:00:00Z"'],
      ['an injection attempt in a sub-attribute name', 'emails[value)or(1=1 eq "x"]'],
    ])('refuses %s with 400 invalidFilter', async (_, filter) => {
      expectScimError(await scim.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    });

    it('refuses hostile filters: 10 000 nested parentheses, a huge filter (GET and .search)', async () => {
      const deep = await scim.get(`/Users?filter=${'('.repeat(10_000)}`);
      expectScimError(deep, 400, 'invalidFilter');
      const nestedWithinLength = `${'('.repeat(2000)}title pr${')'.repeat(2000)}`;
      expectScimError(
        await scim.get(`/Users?filter=${encodeURIComponent(nestedWithinLength)}`),
        400,
        'invalidFilter',
      );
      const huge = `userName eq "${'a'.repeat(100_000)}"`;
      const searched = await scim.post('/Users/.search', { schemas: [SEARCH_URN], filter: huge });
      expectScimError(searched, 400, 'invalidFilter');
      // Node's HTTP parser refuses a 100 KB URL before the application: 431, and since Node 22
      // it may reset the connection while the client is still sending it. Never a 500.
      const viaUrl = await scim.get(`/Users?filter=${encodeURIComponent(huge)}`).then(
        (res) => res.status,
        (err: NodeJS.ErrnoException) => err.code,
      );
      expect([400, 414, 431, 'ECONNRESET', 'EPIPE']).toContain(viaUrl);
    });

    it('takes the corner cases of the grammar: escapes, unicode, not( without a space, any-case keywords', async () => {
      expect(await users('userName eq "carol_filter" and not(title pr)')).toEqual([CAROL]);
      expect(await users('userName Eq "BOB.FILTER@example.com" OR userName EQ "a\\"b\\\\c"')).toEqual([BOB]);
      expect(await users('name.familyName eq "Zoë \\u540d\\ud800"')).toEqual([]);
      expect(await users(`meta.lastModified gt "2026-01-01T00:00:00Z" and userName sw "alice"`)).toEqual(
        new Date(alice.meta.lastModified) > new Date('2026-01-01T00:00:00Z') ? [ALICE] : [],
      );
      expect(await users('emails[type eq "work" and value co "@"] and emails pr and title pr')).toEqual([
        ALICE,
        BOB,
      ]);
      expect(await users(`userName eq "${'x'.repeat(4000)}"`)).toEqual([]);
    });

    it("serves identity providers' lookups (userName eq, displayName eq) from the unique indexes", async () => {
      const plan = async (table: string, columns: typeof USER_FILTER_COLUMNS, filter: string) => {
        const where = compileFilter(columns, parseFilter(filter));
        const alias = table === 'users' ? 'u' : 'g';
        const explain = compileNamed(
          `EXPLAIN SELECT ${alias}.id FROM ${table} ${alias} WHERE ${alias}.account_id = :accountId AND ${where.sql}`,
          { ...where.params, accountId: owner.accountId },
        );
        return t.dataSource.transaction(async (m) => {
          // On a few rows a scan is cheapest; forbid it to see which index the condition can use.
          await m.query('SET LOCAL enable_seqscan = off');
          const rows: Array<{ 'QUERY PLAN': string }> = await m.query(explain.text, explain.values);
          return rows.map((r) => r['QUERY PLAN']).join('\n');
        });
      };
      // The comparison itself is an index condition, not a filter over every user of the account.
      expect(await plan('users', USER_FILTER_COLUMNS, 'userName eq "Alice.Filter@EXAMPLE.com"')).toMatch(
        /Index Scan using uq_users_account_username_ci .*\n.*Index Cond: \(\(account_id = \d+\) AND \(lower\(\(username\)::text\) = /,
      );
      expect(await plan('groups', GROUP_FILTER_COLUMNS, 'displayName eq "Admins"')).toMatch(
        /Index Scan using uq_groups_account_name .*\n.*Index Cond: \(\(account_id = \d+\) AND \(\(name\)::text = /,
      );
    });

    it('refuses a filter given twice', async () => {
      expectScimError(await scim.get('/Users?filter=title%20pr&filter=title%20pr'), 400, 'invalidFilter');
    });
  });

  describe('3.4.2.4 Pagination', () => {
    it('pages with startIndex and count', async () => {
      const page = await scim.get('/Users?startIndex=2&count=2');
      expect(page.body).toMatchObject({ totalResults: 5, itemsPerPage: 2, startIndex: 2 });
      expect(page.body.Resources.map((u: ScimUser) => u.userName)).toEqual([VIEWER, ALICE]);
      const last = await scim.get('/Users?startIndex=5&count=2');
      expect(last.body).toMatchObject({ totalResults: 5, itemsPerPage: 1, startIndex: 5 });
      const beyond = await scim.get('/Users?startIndex=50');
      expect(beyond.body).toMatchObject({ totalResults: 5, itemsPerPage: 0, startIndex: 50, Resources: [] });
    });

    it('treats startIndex below 1 as 1, a negative count as 0, and count 0 as totalResults only', async () => {
      for (const startIndex of ['0', '-5']) {
        const res = await scim.get(`/Users?startIndex=${startIndex}&count=1`);
        expect(res.body).toMatchObject({ startIndex: 1, itemsPerPage: 1 });
        expect(res.body.Resources[0].userName).toBe(ADMIN);
      }
      for (const count of ['0', '-3']) {
        const res = await scim.get(
          `/Users?count=${count}&filter=${encodeURIComponent('userName co "filter"')}`,
        );
        expect(res.body).toEqual({
          schemas: [LIST_URN],
          totalResults: 3,
          itemsPerPage: 0,
          startIndex: 1,
          Resources: [],
        });
      }
      const capped = await scim.get('/Users?count=5000');
      expect(capped.body.itemsPerPage).toBe(5);
    });

    it('lists 1 000 of 2 000 users with a filter in a fixed number of queries, never one per user', async () => {
      const bulk = await newAccount(t, 'bulk');
      await t.sql(
        `INSERT INTO users (account_id, username, email, default_roles)
         SELECT $1, 'bulk' || i, 'bulk' || i || '@x' || (i % 7) || '.example', '{Viewer}'
         FROM generate_series(1, 2000) i`,
        [bulk.accountId],
      );
      const [group] = await t.sql<{ id: number }>(
        `INSERT INTO groups (account_id, name) VALUES ($1, 'Bulk') RETURNING id`,
        [bulk.accountId],
      );
      await t.sql(
        `INSERT INTO group_members (group_id, user_id, account_id)
         SELECT $1, id, $2 FROM users WHERE account_id = $2 AND id % 2 = 0`,
        [group.id, bulk.accountId],
      );
      // Only this request's own queries count: the outbox relay polls on the same pool meanwhile.
      const { result: res, queries } = await countRequestQueries(t, (header) =>
        scimClient(t, bulk).get(
          `/Users?count=1000&filter=${encodeURIComponent('emails.value co "x"')}`,
          header,
        ),
      );
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({ totalResults: 2000, itemsPerPage: 1000 });
      expect(res.body.Resources.filter((u: ScimUser) => u.groups?.length === 1).length).toBeGreaterThan(400);
      // Authentication and its last-use stamp (this token's first use), the count, the page and
      // the page's memberships.
      expect(queries).toHaveLength(5);
    });

    it.each(['abc', '1.5', '1e3', '99999999999999999999'])(
      'refuses startIndex or count %s with 400 invalidValue',
      async (v) => {
        expectScimError(await scim.get(`/Users?startIndex=${v}`), 400, 'invalidValue');
        expectScimError(await scim.get(`/Groups?count=${v}`), 400, 'invalidValue');
      },
    );
  });

  describe('3.4.2.5 Attributes', () => {
    it('returns only the attributes asked for, always with id and schemas', async () => {
      const res = await scim.get(`/Users/${alice.id}?attributes=userName,name.givenName,emails.value`);
      expect(res.body).toEqual({
        schemas: [USER_URN],
        id: alice.id,
        userName: ALICE,
        name: { givenName: 'Alice' },
        emails: [{ value: ALICE.toLowerCase() }],
      });
      const list = await scim.get(
        `/Users?attributes=${USER_URN}:userName&filter=${encodeURIComponent('title pr')}`,
      );
      expect(list.body.Resources).toEqual([
        { schemas: [USER_URN], id: alice.id, userName: ALICE },
        { schemas: [USER_URN], id: bob.id, userName: BOB },
      ]);
    });

    it('leaves out excluded attributes, never id or schemas', async () => {
      const res = await scim.get(
        `/Users/${alice.id}?excludedAttributes=emails,meta,name.familyName,id,groups`,
      );
      expect(res.body).toEqual({
        schemas: [USER_URN],
        id: alice.id,
        externalId: 'EXT-1',
        userName: ALICE,
        name: { formatted: 'Alice Archer', givenName: 'Alice' },
        displayName: 'Alice A',
        title: 'Engineer',
        active: true,
      });
      const group = await scim.get(`/Groups/${admins.id}?excludedAttributes=members`);
      expect(Object.keys(group.body)).toEqual(['schemas', 'id', 'externalId', 'displayName', 'meta']);
    });

    it('applies to the responses of writes too', async () => {
      const res = await scim.patch(
        `/Users/${carol.id}?attributes=title`,
        patchOp({ op: 'add', path: 'title', value: 'Lead' }),
      );
      expect(res.body).toEqual({ schemas: [USER_URN], id: carol.id, title: 'Lead' });
      await scim.patch(`/Users/${carol.id}`, patchOp({ op: 'remove', path: 'title' })).expect(200);
    });
  });

  describe('3.4.3 Querying Resources Using HTTP POST: /.search', () => {
    it('takes the list parameters in a SearchRequest body', async () => {
      const res = await scim.post('/Users/.search', {
        schemas: [SEARCH_URN],
        filter: 'userName co "filter"',
        attributes: ['userName'],
        startIndex: 2,
        count: 1,
      });
      expectScimJson(res, 200);
      expect(res.body).toEqual({
        schemas: [LIST_URN],
        totalResults: 3,
        itemsPerPage: 1,
        startIndex: 2,
        Resources: [{ schemas: [USER_URN], id: bob.id, userName: BOB }],
      });
      const g = await scim.post('/Groups/.search', {
        schemas: [SEARCH_URN],
        excludedAttributes: ['members'],
      });
      expect(g.body.Resources.map((x: ScimGroup) => x.members)).toEqual([undefined, undefined]);
    });

    it('refuses a body without the SearchRequest schema or with bad parameters (400)', async () => {
      expectScimError(await scim.post('/Users/.search', { filter: 'title pr' }), 400, 'invalidSyntax');
      expectScimError(
        await scim.post('/Users/.search', { schemas: [SEARCH_URN], count: 'ten' }),
        400,
        'invalidValue',
      );
      expectScimError(
        await scim.post('/Groups/.search', { schemas: [SEARCH_URN], filter: 42 }),
        400,
        'invalidFilter',
      );
      expectScimError(await anonymous.post('/Users/.search', { schemas: [SEARCH_URN] }), 401);
      expectScimError(await viewerScim.post('/Groups/.search', { schemas: [SEARCH_URN] }), 403);
    });
  });

  describe('3.12 HTTP Status and Error Response Handling', () => {
    it('answers 401 without a token and 403 for a non-admin on every SCIM route, changing nothing', async () => {
      const before = await t.sql(
        `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM groups)::int AS groups,
           (SELECT count(*) FROM group_members)::int AS members, (SELECT max(updated_at) FROM users) AS changed`,
      );
      const routes: Array<[string, (c: ScimClient) => PromiseLike<import('supertest').Response>]> = [
        ['GET /Users', (c) => c.get('/Users')],
        ['POST /Users/.search', (c) => c.post('/Users/.search', { schemas: [SEARCH_URN] })],
        ['POST /Users', (c) => c.post('/Users', userBody('intruder@example.com'))],
        ['GET /Users/{id}', (c) => c.get(`/Users/${alice.id}`)],
        ['PUT /Users/{id}', (c) => c.put(`/Users/${alice.id}`, userBody(ALICE, { title: 'Hacked' }))],
        [
          'PATCH /Users/{id}',
          (c) => c.patch(`/Users/${alice.id}`, patchOp({ op: 'add', path: 'title', value: 'x' })),
        ],
        ['DELETE /Users/{id}', (c) => c.delete(`/Users/${alice.id}`)],
        ['GET /Groups', (c) => c.get('/Groups')],
        ['POST /Groups/.search', (c) => c.post('/Groups/.search', { schemas: [SEARCH_URN] })],
        ['POST /Groups', (c) => c.post('/Groups', { schemas: [GROUP_URN], displayName: 'Intruders' })],
        ['GET /Groups/{id}', (c) => c.get(`/Groups/${admins.id}`)],
        [
          'PUT /Groups/{id}',
          (c) => c.put(`/Groups/${admins.id}`, { schemas: [GROUP_URN], displayName: 'x' }),
        ],
        [
          'PATCH /Groups/{id}',
          (c) =>
            c.patch(
              `/Groups/${admins.id}`,
              patchOp({ op: 'add', path: 'members', value: [{ value: bob.id }] }),
            ),
        ],
        ['DELETE /Groups/{id}', (c) => c.delete(`/Groups/${admins.id}`)],
        ['GET /ServiceProviderConfig', (c) => c.get('/ServiceProviderConfig')],
        ['GET /ResourceTypes', (c) => c.get('/ResourceTypes')],
        ['GET /Schemas', (c) => c.get('/Schemas')],
      ];
      for (const [name, send] of routes) {
        const denied = await send(anonymous);
        const forbidden = await send(viewerScim);
        expect([name, denied.status, forbidden.status]).toEqual([name, 401, 403]);
        expectScimError(denied, 401);
        expectScimError(forbidden, 403);
      }
      expect(
        await t.sql(
          `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM groups)::int AS groups,
             (SELECT count(*) FROM group_members)::int AS members, (SELECT max(updated_at) FROM users) AS changed`,
        ),
      ).toEqual(before);
    });

    it('answers errors in the SCIM error schema, as application/scim+json', async () => {
      const res = await scim.get('/Users/424242');
      expectScimError(res, 404);
      expect(res.body).toEqual({ schemas: [ERROR_URN], status: '404', detail: 'User 424242 was not found' });
      const conflict = await scim.post(
        '/Users',
        userBody(ALICE.toUpperCase(), { emails: [{ value: 'free@example.com' }] }),
      );
      expect(conflict.body).toEqual({
        schemas: [ERROR_URN],
        status: '409',
        scimType: 'uniqueness',
        detail: expect.stringContaining('userName'),
      });
    });

    it('answers malformed JSON and unknown SCIM routes (/Bulk, /Me) in the same form', async () => {
      const malformed = await t
        .http()
        .post(`${SCIM}/Users`)
        .set({ ...bearer(owner.token), 'Content-Type': 'application/scim+json' })
        .send('{"userName": ');
      expectScimError(malformed, 400, 'invalidSyntax');
      for (const path of ['/Bulk', '/Me', '/Users/1/extra']) {
        expectScimError(await scim.get(path), 404);
      }
      expectScimError(
        await scim.post('/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'] }),
        404,
      );
    });

    it('accepts application/json bodies as well', async () => {
      const res = await t
        .http()
        .post(`${SCIM}/Users`)
        .set(bearer(owner.token))
        .send(userBody('json.client@example.com'));
      expectScimJson(res, 201);
      await scim.delete(`/Users/${res.body.id}`).expect(204);
    });
  });

  describe('3.14 Versioning Resources', () => {
    it('sends the version as a weak ETag on every single-resource response, the same as meta.version', async () => {
      const res = await scim.get(`/Users/${bob.id}`);
      expect(res.headers.etag).toMatch(/^W\/"[\w-]+"$/);
      expect(res.headers.etag).toBe(res.body.meta.version);
      const group = await scim.get(`/Groups/${finance.id}`);
      expect(group.headers.etag).toBe(group.body.meta.version);
    });

    it('answers 304 without a body when If-None-Match names the current version', async () => {
      const current = await scim.get(`/Users/${bob.id}`);
      const cached = await scim.get(`/Users/${bob.id}`, { 'If-None-Match': current.headers.etag });
      expect(cached.status).toBe(304);
      expect(cached.text).toBe('');
      expect(cached.headers.etag).toBe(current.headers.etag);
      expect((await scim.get(`/Users/${bob.id}`, { 'If-None-Match': 'W/"other"' })).status).toBe(200);
      const group = await scim.get(`/Groups/${finance.id}`);
      expect((await scim.get(`/Groups/${finance.id}`, { 'If-None-Match': group.headers.etag })).status).toBe(
        304,
      );
    });

    it('applies PUT and PATCH only when If-Match names the current version (else 412, nothing changed)', async () => {
      const user = await createUser(scim, 'versioned@example.com');
      const stale = user.meta.version;
      const patched = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'add', path: 'title', value: 'v2' }),
        { 'If-Match': stale },
      );
      expectScimJson(patched, 200);
      expect(patched.headers.etag).not.toBe(stale);
      const refused = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'add', path: 'title', value: 'v3' }),
        { 'If-Match': stale },
      );
      expectScimError(refused, 412);
      const put = await scim.put(`/Users/${user.id}`, userBody(user.userName, { title: 'v3' }), {
        'If-Match': stale,
      });
      expectScimError(put, 412);
      expect((await scim.get(`/Users/${user.id}`)).body.title).toBe('v2');
      // A strong form of the same tag, a list containing it, and * all match.
      const strong = String(patched.headers.etag).replace(/^W\//, '');
      for (const header of [strong, `W/"nope", ${patched.headers.etag}`]) {
        const ok = await scim.put(`/Users/${user.id}`, userBody(user.userName, { title: 'v2' }), {
          'If-Match': header,
        });
        expectScimJson(ok, 200);
      }
      expectScimJson(
        await scim.patch(`/Users/${user.id}`, patchOp({ op: 'remove', path: 'title' }), { 'If-Match': '*' }),
        200,
      );
    });

    it('lets exactly one of 5 parallel PATCHes with the same If-Match through (the others 412)', async () => {
      const user = await createUser(scim, 'race.versioned@example.com');
      const responses = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          scim.patch(`/Users/${user.id}`, patchOp({ op: 'replace', path: 'title', value: `T${n}` }), {
            'If-Match': user.meta.version,
          }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412]);
      const winner = responses.find((r) => r.status === 200)!;
      expect((await scim.get(`/Users/${user.id}`)).body.title).toBe(winner.body.title);
    });

    it('deletes only when If-Match names the current version', async () => {
      const user = await createUser(scim, 'deleted.versioned@example.com');
      expectScimError(await scim.delete(`/Users/${user.id}`, { 'If-Match': 'W/"stale"' }), 412);
      expectScimJson(await scim.get(`/Users/${user.id}`), 200);
      expect((await scim.delete(`/Users/${user.id}`, { 'If-Match': user.meta.version })).status).toBe(204);
      const group = await createGroup(scim, 'Versioned group');
      expectScimError(await scim.delete(`/Groups/${group.id}`, { 'If-Match': 'W/"stale"' }), 412);
      expect((await scim.delete(`/Groups/${group.id}`, { 'If-Match': group.meta.version })).status).toBe(204);
    });

    it("changes a group's version when its membership changes, and guards group writes with If-Match", async () => {
      const group = await createGroup(scim, 'Versioned members', [alice.id]);
      const added = await scim.patch(
        `/Groups/${group.id}`,
        patchOp({ op: 'add', path: 'members', value: [{ value: bob.id }] }),
        { 'If-Match': group.meta.version },
      );
      expectScimJson(added, 200);
      expect(added.headers.etag).not.toBe(group.meta.version);
      const stale = await scim.patch(`/Groups/${group.id}`, patchOp({ op: 'remove', path: 'members' }), {
        'If-Match': group.meta.version,
      });
      expectScimError(stale, 412);
      const put = await scim.put(
        `/Groups/${group.id}`,
        { schemas: [GROUP_URN], displayName: 'x' },
        { 'If-Match': group.meta.version },
      );
      expectScimError(put, 412);
      const now = await scim.get(`/Groups/${group.id}`);
      expect(now.body.members).toHaveLength(2);
      expect(now.headers.etag).toBe(added.headers.etag);
    });

    it('ignores If-None-Match on lists and discovery: always 200 with the body', async () => {
      const list = await scim.get('/Users?count=1');
      for (const header of ['*', String(list.headers.etag), 'W/"x", *']) {
        for (const path of [
          '/Users?count=1',
          '/Groups',
          '/ServiceProviderConfig',
          '/Schemas',
          '/ResourceTypes',
        ]) {
          const res = await scim.get(path, { 'If-None-Match': header });
          expectScimJson(res, 200);
          expect(res.body.schemas).toBeDefined();
        }
      }
      // A single resource still answers 304 to its own version, and to *.
      const user = await scim.get(`/Users/${alice.id}`);
      expect((await scim.get(`/Users/${alice.id}`, { 'If-None-Match': user.headers.etag })).status).toBe(304);
      expect((await scim.get(`/Users/${alice.id}`, { 'If-None-Match': '*' })).status).toBe(304);
    });

    it("changes a user's version when one of its groups is renamed (groups[].display is part of it)", async () => {
      const member = await createUser(scim, 'renamed.member@example.com');
      const group = await createGroup(scim, 'Renamed group', [member.id]);
      const before = (await scim.get(`/Users/${member.id}`)).body as ScimUser;
      await scim
        .patch(`/Groups/${group.id}`, patchOp({ op: 'replace', path: 'displayName', value: 'Renamed again' }))
        .expect(200);
      const after = await scim.get(`/Users/${member.id}`, { 'If-None-Match': before.meta.version });
      expectScimJson(after, 200);
      expect(after.body.groups[0].display).toBe('Renamed again');
      expect(after.body.meta.version).not.toBe(before.meta.version);
      await scim.delete(`/Groups/${group.id}`).expect(204);
      await scim.delete(`/Users/${member.id}`).expect(204);
    });
  });

  describe('RFC 7643 sections 5 to 7 and RFC 7644 section 4: discovery', () => {
    it('GET /ServiceProviderConfig: what is supported', async () => {
      const res = await scim.get('/ServiceProviderConfig');
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
        patch: { supported: true },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
        filter: { supported: true, maxResults: 1000 },
        changePassword: { supported: false },
        sort: { supported: false },
        etag: { supported: true },
        authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken', primary: true })],
        meta: {
          resourceType: 'ServiceProviderConfig',
          location: expect.stringMatching(/\/ServiceProviderConfig$/),
        },
      });
    });

    it('GET /ResourceTypes and /ResourceTypes/{id}: User and Group', async () => {
      const res = await scim.get('/ResourceTypes');
      expectScimJson(res, 200);
      expect(res.body).toMatchObject({
        schemas: [LIST_URN],
        totalResults: 2,
        itemsPerPage: 2,
        startIndex: 1,
      });
      expect(res.body.Resources).toEqual([
        expect.objectContaining({ id: 'User', name: 'User', endpoint: '/Users', schema: USER_URN }),
        expect.objectContaining({ id: 'Group', name: 'Group', endpoint: '/Groups', schema: GROUP_URN }),
      ]);
      const one = await scim.get('/ResourceTypes/Group');
      expectScimJson(one, 200);
      expect(one.body).toEqual(
        expect.objectContaining({
          id: 'Group',
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
        }),
      );
      expectScimError(await scim.get('/ResourceTypes/Device'), 404);
    });

    it('GET /Schemas and /Schemas/{urn}: the attributes supported, with their characteristics', async () => {
      const res = await scim.get('/Schemas');
      expectScimJson(res, 200);
      expect(res.body.Resources.map((s: { id: string }) => s.id)).toEqual([USER_URN, GROUP_URN]);
      const user = await scim.get(`/Schemas/${USER_URN}`);
      expectScimJson(user, 200);
      const attrs = user.body.attributes as Array<Record<string, unknown>>;
      expect(attrs.map((a) => a.name)).toEqual([
        'userName',
        'name',
        'displayName',
        'title',
        'active',
        'emails',
        'groups',
      ]);
      expect(attrs[0]).toEqual({
        name: 'userName',
        type: 'string',
        multiValued: false,
        description: expect.any(String),
        required: true,
        caseExact: false,
        mutability: 'readWrite',
        returned: 'default',
        uniqueness: 'server',
      });
      expect(attrs.find((a) => a.name === 'groups')).toMatchObject({
        mutability: 'readOnly',
        multiValued: true,
      });
      const group = await scim.get(`/Schemas/${GROUP_URN}`);
      expect(group.body.attributes[0]).toMatchObject({
        name: 'displayName',
        caseExact: true,
        required: true,
      });
      expectScimError(
        await scim.get('/Schemas/urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'),
        404,
      );
    });

    it.each([
      '/ServiceProviderConfig',
      '/ResourceTypes',
      '/ResourceTypes/User',
      '/Schemas',
      `/Schemas/${USER_URN}`,
    ])('GET %s is 401 without a token and 403 for a non-admin', async (path) => {
      expectScimError(await anonymous.get(path), 401);
      expectScimError(await viewerScim.get(path), 403);
    });

    it.each([
      '/ServiceProviderConfig',
      '/ResourceTypes',
      '/ResourceTypes/User',
      '/Schemas',
      `/Schemas/${USER_URN}`,
    ])('GET %s ignores query parameters, and answers a filter 403 (section 4)', async (path) => {
      // One Host for both, so the locations compare.
      const host = { Host: 'idp-test.example' };
      const plain = await scim.get(path, host);
      const ignored = await scim.get(
        `${path}?attributes=id&excludedAttributes=meta&count=1&startIndex=2&x=1`,
        host,
      );
      expectScimJson(ignored, 200);
      expect(ignored.body).toEqual(plain.body);
      const filtered = await scim.get(`${path}?filter=${encodeURIComponent('id eq "User"')}&x=1`);
      expectScimError(filtered, 403);
      expect(filtered.body.detail).toMatch(/filter/);
      // The token and the admin check still come first.
      expectScimError(await anonymous.get(`${path}?filter=x`), 401);
      expectScimError(await viewerScim.get(`${path}?filter=x`), 403);
    });

    it('keeps refusing undeclared query parameters everywhere else in SCIM', async () => {
      expectScimError(await scim.get('/Users?x=1'), 400);
      expectScimError(await scim.get(`/Users/${alice.id}?filter=${encodeURIComponent('userName pr')}`), 400);
      expectScimError(await scim.get('/Groups?startIndex=1&dryRun=true'), 400);
    });
  });
});
