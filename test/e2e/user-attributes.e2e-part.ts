import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';

const ATTRIBUTES = '/api/v1/user-attributes';
const VALUES = '/api/v1/user-attribute-values';
const BAD_IDS = ['abc', '0', '-1', '1.5', '99999999999'];

interface Attribute {
  id: number;
  name: string;
  type: string;
  displayName: string | null;
  description: string | null;
  defaultValue: string | null;
}

interface ListBody {
  items: Attribute[];
  data: Attribute[];
  count: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
}

describe('user attributes and their values', () => {
  let t: TestApp;
  let viewer: Actor;
  let member: Actor;
  let other: Actor;
  let otherUser: Actor;
  let seq = 0;
  /** A fresh attribute name per call. */
  const uname = (prefix = 'attr') => `${prefix}_${++seq}`;

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    member = await newUser(t, t.admin, { defaultRoles: [] });
    other = await newAccount(t, 'globex');
    otherUser = await newUser(t, other, { defaultRoles: ['Viewer'] });
  });
  afterAll(() => t.close());

  const create = (body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .post(ATTRIBUTES)
      .set(bearer(actor.token))
      .send(body as object);
  const createOk = async (body: Record<string, unknown>, actor: Actor = t.admin): Promise<Attribute> => {
    const res = await create(body, actor);
    if (res.status !== 200) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Attribute;
  };
  const update = (id: number | string, body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .put(`${ATTRIBUTES}/${id}`)
      .set(bearer(actor.token))
      .send(body as object);
  const list = (query: Record<string, string | number> = {}, actor: Actor = t.admin) =>
    t.http().get(ATTRIBUTES).query(query).set(bearer(actor.token));
  const upsert = (body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .post(VALUES)
      .set(bearer(actor.token))
      .send(body as object);
  const values = (userId: number | string, actor: Actor = t.admin) =>
    t.http().get(`${VALUES}/${userId}`).set(bearer(actor.token));
  const attributeRow = async (id: number) =>
    (await t.sql<Record<string, unknown>>(`SELECT * FROM user_attributes WHERE id = $1`, [id]))[0];
  const valueRows = (userId: number, attributeId: number) =>
    t.sql<{ value: unknown }>(
      `SELECT value FROM user_attribute_values WHERE user_id = $1 AND user_attribute_id = $2`,
      [userId, attributeId],
    );

  describe('POST /api/v1/user-attributes', () => {
    it('answers 401 without a token and 403 to non-admins, creating nothing', async () => {
      const name = uname();
      const anon = await t.http().post(ATTRIBUTES).send({ name, type: 'string' });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      for (const actor of [viewer, member]) {
        const res = await create({ name, type: 'string' }, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE name = $1`, [name])).toHaveLength(0);
    });

    it('creates attributes of each type (200) with a default that parses as the type', async () => {
      const cases: Array<[string, string | null]> = [
        ['string', 'EMEA'],
        ['string', ''],
        ['number', '42'],
        ['number', '-0.5'],
        ['number', '1e3'],
        ['boolean', 'false'],
        ['string_array', '["a", "b c"]'],
        ['string_array', '[]'],
        ['number_array', '[1, 2.5, -3]'],
        ['number', null],
      ];
      for (const [type, defaultValue] of cases) {
        const name = uname(type);
        const res = await create({
          name,
          type,
          defaultValue,
          displayName: `The ${type}`,
          description: 'Why',
        });
        expect({ type, defaultValue, status: res.status }).toEqual({ type, defaultValue, status: 200 });
        expect(res.body).toEqual({
          id: expect.any(Number),
          name,
          type,
          displayName: `The ${type}`,
          description: 'Why',
          defaultValue,
        });
        expect(await attributeRow(res.body.id)).toMatchObject({
          account_id: t.admin.accountId,
          name,
          type,
          default_value: defaultValue,
        });
      }
    });

    it('leaves display name, description and default null when omitted', async () => {
      const name = uname();
      const res = await create({ name, type: 'boolean' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name,
        type: 'boolean',
        displayName: null,
        description: null,
        defaultValue: null,
      });
    });

    it('answers 409 for a name the account already has; another account may use it', async () => {
      const name = uname('dup');
      await createOk({ name, type: 'string' });
      const res = await create({ name, type: 'number' });
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'user_attribute_name_taken');
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE name = $1`, [name])).toHaveLength(1);
      const theirs = await create({ name, type: 'number' }, other);
      expect(theirs.status).toBe(200);
    });

    it('creates one attribute when the same name is posted in parallel', async () => {
      const name = uname('race');
      const results = await Promise.all(Array.from({ length: 6 }, () => create({ name, type: 'string' })));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of results.filter((r) => r.status !== 200)) {
        expect(r.status).toBe(409);
        expectErrorShape(r.body, 409, 'user_attribute_name_taken');
      }
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE name = $1`, [name])).toHaveLength(1);
    });

    it('refuses bad names, types and fields with 400, creating nothing', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ type: 'string' }, 'name'],
        [{ name: '', type: 'string' }, 'name'],
        [{ name: '1abc', type: 'string' }, 'name'],
        [{ name: 'a-b', type: 'string' }, 'name'],
        [{ name: 'a b', type: 'string' }, 'name'],
        [{ name: 'régión', type: 'string' }, 'name'],
        [{ name: `a${'b'.repeat(64)}`, type: 'string' }, 'name'],
        [{ name: 5, type: 'string' }, 'name'],
        [{ name: 'bad_type' }, 'type'],
        [{ name: 'bad_type', type: 'date' }, 'type'],
        [{ name: 'bad_type', type: 'String' }, 'type'],
        [{ name: 'bad_field', type: 'string', color: 'red' }, 'color'],
        [{ name: 'bad_display', type: 'string', displayName: 'x'.repeat(256) }, 'displayName'],
        [{ name: 'bad_default', type: 'string', defaultValue: 42 }, 'defaultValue'],
      ];
      for (const [body, field] of cases) {
        const res = await create(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      const names = cases.map(([b]) => b.name).filter((n): n is string => typeof n === 'string');
      expect(await t.sql(`SELECT 1 FROM user_attributes WHERE name = ANY($1)`, [names])).toHaveLength(0);
      // The longest allowed name is fine.
      expect((await create({ name: `a${'b'.repeat(63)}`, type: 'string' })).status).toBe(200);
    });

    it('refuses a default value that does not parse as the type (400), creating nothing', async () => {
      const cases: Array<[string, string]> = [
        ['number', 'abc'],
        ['number', ''],
        ['number', ' 1'],
        ['number', '0x10'],
        ['number', 'Infinity'],
        ['number', '1e999'],
        ['number', '1,5'],
        ['boolean', 'TRUE'],
        ['boolean', 'yes'],
        ['boolean', '1'],
        ['string', 'x'.repeat(1001)],
        ['string_array', 'a,b'],
        ['string_array', '["a", 1]'],
        ['string_array', '{"a": 1}'],
        ['string_array', JSON.stringify(Array.from({ length: 101 }, (_, i) => `v${i}`))],
        ['number_array', '[1, "2"]'],
        ['number_array', '[1e999]'],
        ['number_array', '1'],
      ];
      for (const [type, defaultValue] of cases) {
        const name = uname('bad_default');
        const res = await create({ name, type, defaultValue });
        expect({ type, defaultValue, status: res.status }).toEqual({ type, defaultValue, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_default_value');
        expect(res.body.message).toContain(type);
        expect(await t.sql(`SELECT 1 FROM user_attributes WHERE name = $1`, [name])).toHaveLength(0);
      }
    });
  });

  describe('GET /api/v1/user-attributes', () => {
    let globex: Actor;
    let made: Attribute[];
    beforeAll(async () => {
      // An account of its own, so the list holds exactly these.
      globex = await newAccount(t, 'listing');
      made = [];
      for (const [i, type] of ['string', 'number', 'string', 'boolean', 'string'].entries()) {
        made.push(await createOk({ name: `list_${i}`, type }, globex));
      }
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get(ATTRIBUTES);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('lists the account’s attributes newest first, for any user, with the legacy fields', async () => {
      const reader = await newUser(t, globex, { defaultRoles: [] });
      const res = await list({}, reader);
      expect(res.status).toBe(200);
      const body = res.body as ListBody;
      expect(body.items.map((a) => a.id)).toEqual(made.map((a) => a.id).reverse());
      expect(body.items[0]).toEqual(made[made.length - 1]);
      expect(body.data).toEqual(body.items);
      expect(body.count).toBe(5);
      expect(body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      // Nothing of another account.
      const mine = (await list()).body as ListBody;
      expect(mine.items.map((a) => a.id)).not.toContain(made[0].id);
    });

    it('pages with first/after without gaps or repeats', async () => {
      const seen: number[] = [];
      let after: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = await list(after ? { first: 2, after } : { first: 2 }, globex);
        expect(res.status).toBe(200);
        const body = res.body as ListBody;
        expect(body.count).toBe(5);
        expect(body.pageInfo.hasPreviousPage).toBe(after !== undefined);
        seen.push(...body.items.map((a) => a.id));
        if (!body.pageInfo.hasNextPage) break;
        after = body.pageInfo.endCursor!;
      }
      expect(seen).toEqual(made.map((a) => a.id).reverse());
    });

    it('keeps a cursor stable when newer attributes are added meanwhile', async () => {
      const first = (await list({ first: 2 }, globex)).body as ListBody;
      const added = await createOk({ name: uname('later'), type: 'string' }, globex);
      const next = (await list({ first: 2, after: first.pageInfo.endCursor! }, globex)).body as ListBody;
      expect(next.items.map((a) => a.id)).toEqual([made[2].id, made[1].id]);
      expect(next.items.map((a) => a.id)).not.toContain(added.id);
      made.push(added);
    });

    it('filters by exact name and by type', async () => {
      const byName = (await list({ name: 'list_1' }, globex)).body as ListBody;
      expect(byName.items).toEqual([made[1]]);
      expect(byName.count).toBe(1);
      expect(((await list({ name: 'list' }, globex)).body as ListBody).items).toEqual([]);
      const strings = (await list({ type: 'string' }, globex)).body as ListBody;
      expect(strings.items.every((a) => a.type === 'string')).toBe(true);
      expect(strings.count).toBe(strings.items.length);
      expect(strings.items.map((a) => a.id)).toEqual(
        made
          .filter((a) => a.type === 'string')
          .map((a) => a.id)
          .reverse(),
      );
    });

    it('still takes the legacy offset and limit', async () => {
      const res = await list({ offset: 1, limit: 2 }, globex);
      expect(res.status).toBe(200);
      const all = ((await list({}, globex)).body as ListBody).items.map((a) => a.id);
      expect((res.body as ListBody).items.map((a) => a.id)).toEqual(all.slice(1, 3));
      expect(res.body.pagination).toEqual({ total: all.length, offset: 1, limit: 2 });
    });

    it('refuses bad query parameters with 400', async () => {
      const cases: Array<[Record<string, string | number>, string]> = [
        [{ first: 0 }, 'validation_failed'],
        [{ first: 1001 }, 'validation_failed'],
        [{ first: 'many' }, 'validation_failed'],
        [{ after: 'not-a-cursor' }, 'invalid_cursor'],
        [{ first: 2, offset: 1 }, 'pagination_conflict'],
        [{ type: 'date' }, 'validation_failed'],
        [{ sort: 'name' }, 'validation_failed'],
      ];
      for (const [query, code] of cases) {
        const res = await list(query, globex);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectErrorShape(res.body, 400, code);
      }
    });
  });

  describe('PUT /api/v1/user-attributes/{id}', () => {
    it('answers 401 without a token and 403 to non-admins, changing nothing', async () => {
      const attr = await createOk({ name: uname(), type: 'string', displayName: 'Before' });
      const anon = await t.http().put(`${ATTRIBUTES}/${attr.id}`).send({ displayName: 'After' });
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      const res = await update(attr.id, { displayName: 'After' }, viewer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect((await attributeRow(attr.id)).display_name).toBe('Before');
    });

    it('answers 404 for an unknown attribute or another account’s, changing nothing', async () => {
      const theirs = await createOk({ name: uname('theirs'), type: 'string', displayName: 'Theirs' }, other);
      for (const id of [theirs.id, 2147483647]) {
        const res = await update(id, { displayName: 'Mine now' });
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'user_attribute_not_found');
      }
      expect((await attributeRow(theirs.id)).display_name).toBe('Theirs');
    });

    it.each(BAD_IDS)('answers 400 for the id %j', async (id) => {
      const res = await update(id, { displayName: 'x' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });

    it('updates the fields sent; omitted fields stay and null clears', async () => {
      const attr = await createOk({
        name: uname(),
        type: 'number',
        displayName: 'Quota',
        description: 'Monthly quota',
        defaultValue: '10',
      });
      const first = await update(attr.id, { defaultValue: '12.5' });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ ...attr, defaultValue: '12.5' });
      const second = await update(attr.id, { displayName: 'Monthly quota', description: null });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        ...attr,
        defaultValue: '12.5',
        displayName: 'Monthly quota',
        description: null,
      });
      const third = await update(attr.id, { defaultValue: null });
      expect(third.body.defaultValue).toBeNull();
      expect(await attributeRow(attr.id)).toMatchObject({
        name: attr.name,
        type: 'number',
        display_name: 'Monthly quota',
        description: null,
        default_value: null,
      });
    });

    it('accepts the current type but refuses another with 400 attribute_type_immutable', async () => {
      const attr = await createOk({ name: uname(), type: 'string_array' });
      const same = await update(attr.id, { type: 'string_array', displayName: 'Teams' });
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ type: 'string_array', displayName: 'Teams' });
      for (const type of ['string', 'number_array']) {
        const res = await update(attr.id, { type, displayName: 'Changed' });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'attribute_type_immutable');
      }
      expect(await attributeRow(attr.id)).toMatchObject({ type: 'string_array', display_name: 'Teams' });
    });

    it('refuses a name change, unknown fields and defaults that do not parse as the type (400)', async () => {
      const attr = await createOk({ name: uname(), type: 'boolean', defaultValue: 'true' });
      const renamed = await update(attr.id, { name: 'renamed' });
      expect(renamed.status).toBe(400);
      expectErrorShape(renamed.body, 400, 'validation_failed');
      expect(JSON.stringify(renamed.body.message)).toContain('name');
      const unknownType = await update(attr.id, { type: 'date' });
      expect(unknownType.status).toBe(400);
      expectErrorShape(unknownType.body, 400, 'validation_failed');
      for (const defaultValue of ['yes', '1', '["true"]']) {
        const res = await update(attr.id, { defaultValue });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'invalid_default_value');
      }
      expect(await attributeRow(attr.id)).toMatchObject({ name: attr.name, default_value: 'true' });
    });
  });

  describe('POST /api/v1/user-attribute-values', () => {
    it('answers 401 without a token and 403 to non-admins, storing nothing', async () => {
      const attr = await createOk({ name: uname(), type: 'string' });
      const body = { userId: viewer.userId, userAttributeId: attr.id, value: 'x' };
      const anon = await t.http().post(VALUES).send(body);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      for (const actor of [viewer, member]) {
        const res = await upsert(body, actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await valueRows(viewer.userId, attr.id)).toHaveLength(0);
    });

    it('stores a value of each type and answers with it and its display form', async () => {
      const cases: Array<[string, unknown, string]> = [
        ['string', 'EMEA', 'EMEA'],
        ['string', '', ''],
        ['number', 42.5, '42.5'],
        ['number', -3, '-3'],
        ['boolean', false, 'false'],
        ['string_array', ['sales', 'north america'], 'sales, north america'],
        ['string_array', [], ''],
        ['number_array', [1, 2.5, 3], '1, 2.5, 3'],
      ];
      for (const [type, value, formattedValue] of cases) {
        const attr = await createOk({ name: uname(type), type, displayName: 'Shown', description: 'Said' });
        const res = await upsert({ userId: member.userId, userAttributeId: attr.id, value });
        expect({ type, value, status: res.status }).toEqual({ type, value, status: 200 });
        expect(res.body).toEqual({
          userId: member.userId,
          userAttributeId: attr.id,
          name: attr.name,
          displayName: 'Shown',
          description: 'Said',
          type,
          value,
          formattedValue,
          isDefault: false,
        });
        expect(await valueRows(member.userId, attr.id)).toEqual([{ value }]);
      }
    });

    it('takes user and attribute ids as integers or as strings of integers', async () => {
      const attr = await createOk({ name: uname(), type: 'number' });
      const asStrings = await upsert({
        userId: String(member.userId),
        userAttributeId: String(attr.id),
        value: 1,
      });
      expect(asStrings.status).toBe(200);
      expect(asStrings.body).toMatchObject({ userId: member.userId, userAttributeId: attr.id, value: 1 });
      const asNumbers = await upsert({ userId: member.userId, userAttributeId: attr.id, value: 2 });
      expect(asNumbers.status).toBe(200);
      expect(await valueRows(member.userId, attr.id)).toEqual([{ value: 2 }]);
    });

    it('refuses bad ids with 400, storing nothing', async () => {
      const attr = await createOk({ name: uname(), type: 'string' });
      const ok = { userId: member.userId, userAttributeId: attr.id, value: 'x' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...ok, userId: '0' }, 'userId'],
        [{ ...ok, userId: '-1' }, 'userId'],
        [{ ...ok, userId: 'abc' }, 'userId'],
        [{ ...ok, userId: '01' }, 'userId'],
        [{ ...ok, userId: ' 1' }, 'userId'],
        [{ ...ok, userId: 0 }, 'userId'],
        [{ ...ok, userId: 1.5 }, 'userId'],
        [{ ...ok, userId: '99999999999' }, 'userId'],
        [{ ...ok, userId: 2147483648 }, 'userId'],
        [{ ...ok, userId: null }, 'userId'],
        [{ userAttributeId: attr.id, value: 'x' }, 'userId'],
        [{ ...ok, userAttributeId: '' }, 'userAttributeId'],
        [{ ...ok, userAttributeId: true }, 'userAttributeId'],
        [{ ...ok, extra: 1 }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const res = await upsert(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      expect(await valueRows(member.userId, attr.id)).toHaveLength(0);
    });

    it('refuses a value that does not match the attribute’s type (400), storing nothing', async () => {
      const cases: Array<[string, unknown]> = [
        ['string', 5],
        ['string', true],
        ['string', ['a']],
        ['string', 'x'.repeat(1001)],
        ['string', { a: 1 }],
        ['number', '5'],
        ['number', true],
        ['number', [1]],
        ['boolean', 'true'],
        ['boolean', 'false'],
        ['boolean', 'True'],
        ['boolean', 1],
        ['string_array', 'a'],
        ['string_array', ['a', 1]],
        ['string_array', ['x'.repeat(1001)]],
        ['string_array', Array.from({ length: 101 }, (_, i) => `v${i}`)],
        ['number_array', [1, '2']],
        ['number_array', 1],
        ['number_array', Array.from({ length: 101 }, (_, i) => i)],
        ['number_array', [[1]]],
      ];
      for (const [type, value] of cases) {
        const attr = await createOk({ name: uname(type), type });
        const res = await upsert({ userId: member.userId, userAttributeId: attr.id, value });
        expect({ type, value, status: res.status }).toEqual({ type, value, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_attribute_value');
        expect(res.body.message).toContain(attr.name);
        expect(await valueRows(member.userId, attr.id)).toHaveLength(0);
      }
      // The limits themselves are fine.
      const list = await createOk({ name: uname(), type: 'string_array' });
      const full = Array.from({ length: 100 }, () => 'x'.repeat(1000));
      const res = await upsert({ userId: member.userId, userAttributeId: list.id, value: full });
      expect(res.status).toBe(200);
    });

    it('answers 404 for an unknown user or attribute, or another account’s, storing nothing', async () => {
      const mine = await createOk({ name: uname(), type: 'string' });
      const theirs = await createOk({ name: uname(), type: 'string' }, other);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ userId: 2147483647, userAttributeId: mine.id }, 'user_not_found'],
        [{ userId: otherUser.userId, userAttributeId: mine.id }, 'user_not_found'],
        [{ userId: member.userId, userAttributeId: 2147483647 }, 'user_attribute_not_found'],
        [{ userId: member.userId, userAttributeId: theirs.id }, 'user_attribute_not_found'],
        [{ userId: String(otherUser.userId), userAttributeId: String(theirs.id) }, 'user_not_found'],
      ];
      for (const [ids, code] of cases) {
        const res = await upsert({ ...ids, value: 'x' });
        expect({ ids, status: res.status }).toEqual({ ids, status: 404 });
        expectErrorShape(res.body, 404, code);
      }
      expect(
        await t.sql(`SELECT 1 FROM user_attribute_values WHERE user_attribute_id = ANY($1) OR user_id = $2`, [
          [mine.id, theirs.id],
          otherUser.userId,
        ]),
      ).toHaveLength(0);
    });

    it('replaces a value, and removes it with null (then the default is the effective value)', async () => {
      const attr = await createOk({ name: uname(), type: 'string', defaultValue: 'EMEA' });
      await upsert({ userId: member.userId, userAttributeId: attr.id, value: 'APAC' });
      const replaced = await upsert({ userId: member.userId, userAttributeId: attr.id, value: 'AMER' });
      expect(replaced.body).toMatchObject({ value: 'AMER', isDefault: false });
      expect(await valueRows(member.userId, attr.id)).toEqual([{ value: 'AMER' }]);
      const removed = await upsert({ userId: member.userId, userAttributeId: attr.id, value: null });
      expect(removed.status).toBe(200);
      expect(removed.body).toMatchObject({ value: 'EMEA', formattedValue: 'EMEA', isDefault: true });
      expect(await valueRows(member.userId, attr.id)).toHaveLength(0);
      // Removing what is not there is fine too; without a default the value is null.
      const bare = await createOk({ name: uname(), type: 'number' });
      const none = await upsert({ userId: member.userId, userAttributeId: bare.id, value: null });
      expect(none.status).toBe(200);
      expect(none.body).toMatchObject({ value: null, formattedValue: null, isDefault: false });
    });

    it('takes the body `cube attributes values set` sends: the ids as strings and no value, which removes the user’s value', async () => {
      // The tool's body (rust/cube-cli/src/commands/attributes.rs, `ValuesCmd::Set { user, attribute }`,
      // both `String`): `json!({ "userId": user, "userAttributeId": attribute })`, never a `value`.
      const attr = await createOk({ name: uname(), type: 'string', defaultValue: 'EMEA' });
      const tool = { userId: String(member.userId), userAttributeId: String(attr.id) };
      // A user without a value of their own: nothing to remove, the default applies.
      const bound = await upsert(tool);
      expect(bound.status).toBe(200);
      expect(bound.body).toEqual({
        userId: member.userId,
        userAttributeId: attr.id,
        name: attr.name,
        displayName: null,
        description: null,
        type: 'string',
        value: 'EMEA',
        formattedValue: 'EMEA',
        isDefault: true,
      });
      expect(await valueRows(member.userId, attr.id)).toHaveLength(0);
      // A value of their own is removed, as `value: null` removes it.
      expect((await upsert({ ...tool, value: 'APAC' })).body).toMatchObject({
        value: 'APAC',
        isDefault: false,
      });
      expect(await valueRows(member.userId, attr.id)).toEqual([{ value: 'APAC' }]);
      const cleared = await upsert(tool);
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ value: 'EMEA', isDefault: true });
      expect(await valueRows(member.userId, attr.id)).toHaveLength(0);
      const read = await t.http().get(`${VALUES}/${member.userId}`).set(bearer(t.admin.token));
      expect(read.body).toContainEqual(
        expect.objectContaining({ userAttributeId: attr.id, value: 'EMEA', isDefault: true }),
      );
      // Without a default the effective value is null; the ids are still checked.
      const bare = await createOk({ name: uname(), type: 'number' });
      const none = await upsert({ userId: String(member.userId), userAttributeId: String(bare.id) });
      expect(none.status).toBe(200);
      expect(none.body).toMatchObject({ value: null, formattedValue: null, isDefault: false });
      const unknown = await upsert({ userId: String(member.userId), userAttributeId: '2147483647' });
      expect(unknown.status).toBe(404);
      expectErrorShape(unknown.body, 404, 'user_attribute_not_found');
      const foreign = await upsert({ userId: String(otherUser.userId), userAttributeId: String(attr.id) });
      expect(foreign.status).toBe(404);
      expectErrorShape(foreign.body, 404, 'user_not_found');
      const forbidden = await upsert(tool, member);
      expect(forbidden.status).toBe(403);
    });

    it('ends with one row when the same pair is written in parallel', async () => {
      const attr = await createOk({ name: uname(), type: 'number' });
      const sent = Array.from({ length: 10 }, (_, i) => i + 1);
      const results = await Promise.all(
        sent.map((value) => upsert({ userId: viewer.userId, userAttributeId: attr.id, value })),
      );
      expect(results.map((r) => r.status)).toEqual(sent.map(() => 200));
      const rows = await valueRows(viewer.userId, attr.id);
      expect(rows).toHaveLength(1);
      expect(sent).toContain(rows[0].value);
    });

    it('is removed with its user', async () => {
      const gone = await newUser(t, t.admin, { defaultRoles: [] });
      const attr = await createOk({ name: uname(), type: 'boolean' });
      await upsert({ userId: gone.userId, userAttributeId: attr.id, value: true });
      expect(await valueRows(gone.userId, attr.id)).toHaveLength(1);
      const del = await t.http().delete(`/api/v1/users/${gone.userId}`).set(bearer(t.admin.token));
      expect(del.status).toBe(200);
      expect(await valueRows(gone.userId, attr.id)).toHaveLength(0);
    });
  });

  describe('GET /api/v1/user-attribute-values/{userId}', () => {
    let reader: Actor;
    let peer: Actor;
    let account: Actor;
    beforeAll(async () => {
      account = await newAccount(t, 'values');
      reader = await newUser(t, account, { defaultRoles: ['Viewer'] });
      peer = await newUser(t, account, { defaultRoles: [] });
      const region = await createOk({ name: 'region', type: 'string', defaultValue: 'EMEA' }, account);
      const teams = await createOk({ name: 'Teams', type: 'string_array', displayName: 'Teams' }, account);
      await createOk({ name: 'quota', type: 'number' }, account);
      await createOk({ name: 'beta', type: 'boolean', defaultValue: 'false' }, account);
      const scores = await createOk(
        { name: 'scores', type: 'number_array', defaultValue: '[1, 2]' },
        account,
      );
      for (const [userAttributeId, value] of [
        [teams.id, ['red', 'blue']],
        [region.id, 'APAC'],
        [scores.id, [3]],
      ] as const) {
        const res = await upsert({ userId: reader.userId, userAttributeId, value }, account);
        expect(res.status).toBe(200);
      }
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get(`${VALUES}/${reader.userId}`);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('gives the effective values by attribute name: own values, else defaults', async () => {
      const res = await values(reader.userId, account);
      expect(res.status).toBe(200);
      const base = { userId: reader.userId, userAttributeId: expect.any(Number), description: null };
      expect(res.body).toEqual([
        {
          ...base,
          name: 'Teams',
          displayName: 'Teams',
          type: 'string_array',
          value: ['red', 'blue'],
          formattedValue: 'red, blue',
          isDefault: false,
        },
        {
          ...base,
          name: 'beta',
          displayName: null,
          type: 'boolean',
          value: false,
          formattedValue: 'false',
          isDefault: true,
        },
        {
          ...base,
          name: 'region',
          displayName: null,
          type: 'string',
          value: 'APAC',
          formattedValue: 'APAC',
          isDefault: false,
        },
        {
          ...base,
          name: 'scores',
          displayName: null,
          type: 'number_array',
          value: [3],
          formattedValue: '3',
          isDefault: false,
        },
      ]);
      // A user with no values of their own sees the defaults only.
      const peerValues = await values(peer.userId, account);
      expect(peerValues.status).toBe(200);
      expect(
        (peerValues.body as Array<{ name: string; value: unknown; isDefault: boolean }>).map((v) => [
          v.name,
          v.value,
          v.isDefault,
        ]),
      ).toEqual([
        ['beta', false, true],
        ['region', 'EMEA', true],
        ['scores', [1, 2], true],
      ]);
    });

    it('lets users read their own values, but not another user’s (403)', async () => {
      const own = await values(reader.userId, reader);
      expect(own.status).toBe(200);
      expect(own.body).toEqual((await values(reader.userId, account)).body);
      const res = await values(reader.userId, peer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('answers 404 for an unknown user or another account’s, to admins and users alike', async () => {
      for (const actor of [account, reader]) {
        for (const userId of [2147483647, otherUser.userId, t.admin.userId]) {
          const res = await values(userId, actor);
          expect({ userId, status: res.status }).toEqual({ userId, status: 404 });
          expectErrorShape(res.body, 404, 'user_not_found');
        }
      }
    });

    it.each(BAD_IDS)('answers 400 for the user id %j', async (id) => {
      const res = await values(id, account);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });
});
