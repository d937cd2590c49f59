import { randomInt } from 'node:crypto';
import { ApiError } from '../../src/core/errors/api-error.js';
import { matchesValue } from '../../src/modules/scim/filter/filter-eval.js';
import {
  FILTER_LIMITS,
  parseFilter,
  parsePath,
  type FilterNode,
} from '../../src/modules/scim/filter/filter-parser.js';
import {
  compileFilter,
  GROUP_FILTER_COLUMNS,
  USER_FILTER_COLUMNS,
} from '../../src/modules/scim/filter/filter-sql.js';
import { USER_SCHEMA } from '../../src/modules/scim/scim.schema.js';

/** The SCIM error a call throws (its code and message), or null when it does not throw. */
function scimFailure(fn: () => unknown): { code: string; message: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, message: String(err.messages) };
  }
}

const users = (filter: string) => compileFilter(USER_FILTER_COLUMNS, parseFilter(filter));
const groups = (filter: string) => compileFilter(GROUP_FILTER_COLUMNS, parseFilter(filter));

describe('RFC 7644 3.4.2.2 filter grammar', () => {
  it('parses every comparison operator, case-insensitively', () => {
    for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']) {
      expect(parseFilter(`userName ${op.toUpperCase()} "a"`)).toEqual({
        kind: 'compare',
        path: { uri: null, name: 'userName', sub: null },
        op,
        value: 'a',
      });
    }
    expect(parseFilter('title pr')).toEqual({
      kind: 'present',
      path: { uri: null, name: 'title', sub: null },
    });
  });

  it('reads strings with JSON escapes, numbers, true, false and null', () => {
    const value = (f: string) => (parseFilter(f) as Extract<FilterNode, { kind: 'compare' }>).value;
    expect(value('userName eq "a \\"quoted\\" \\u00e9 \\\\ name"')).toBe('a "quoted" é \\ name');
    expect(value('x eq 42')).toBe(42);
    expect(value('x eq -1.5e3')).toBe(-1500);
    expect(value('active eq True')).toBe(true);
    expect(value('active eq false')).toBe(false);
    expect(value('title eq null')).toBeNull();
  });

  it('gives and precedence over or, and honours grouping and not', () => {
    expect(parseFilter('a pr or b pr and c pr')).toEqual({
      kind: 'or',
      items: [
        { kind: 'present', path: { uri: null, name: 'a', sub: null } },
        {
          kind: 'and',
          items: [
            { kind: 'present', path: { uri: null, name: 'b', sub: null } },
            { kind: 'present', path: { uri: null, name: 'c', sub: null } },
          ],
        },
      ],
    });
    const grouped = parseFilter('(a pr or b pr) and not (c pr)');
    expect(grouped).toMatchObject({
      kind: 'and',
      items: [{ kind: 'or' }, { kind: 'not', item: { kind: 'present' } }],
    });
  });

  it('parses attribute paths: sub-attributes, schema URNs and value filters', () => {
    expect(parseFilter('name.givenName eq "x"')).toMatchObject({
      path: { uri: null, name: 'name', sub: 'givenName' },
    });
    expect(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:name.familyName eq "x"')).toMatchObject({
      path: { uri: 'urn:ietf:params:scim:schemas:core:2.0:User', name: 'name', sub: 'familyName' },
    });
    expect(parseFilter('emails[type eq "work" and value co "@example.com"]')).toMatchObject({
      kind: 'valuePath',
      path: { name: 'emails' },
      filter: { kind: 'and' },
    });
    // The value filter followed by a sub-attribute comparison is the same selection.
    expect(parseFilter('emails[type eq "work"].value co "@x.com"')).toMatchObject({
      kind: 'valuePath',
      filter: { kind: 'and', items: [{ op: 'eq' }, { path: { name: 'value' }, op: 'co', value: '@x.com' }] },
    });
  });

  it('handles the grammar corner cases identity providers and attackers send', () => {
    const compare = (f: string) => parseFilter(f) as Extract<FilterNode, { kind: 'compare' }>;
    // String escapes: \" and \\ inside a value, unicode as is and escaped.
    expect(compare('userName eq "a\\"b\\\\c"').value).toBe('a"b\\c');
    expect(compare('displayName eq "Zoë 名前 \\u00e9"').value).toBe('Zoë 名前 é');
    // true / false / null in any case.
    expect([compare('active eq TRUE').value, compare('active eq False').value]).toEqual([true, false]);
    expect(compare('title eq NULL').value).toBeNull();
    // not( without a space, operators and keywords in any case.
    expect(parseFilter('not(title pr)')).toMatchObject({ kind: 'not', item: { kind: 'present' } });
    expect(parseFilter('title pr AND(userName Eq "x")')).toMatchObject({ kind: 'and' });
    expect(parseFilter('title pr oR NOT(userName eQ "x")')).toMatchObject({ kind: 'or' });
    // A 4 000-character literal is fine: only the whole filter is limited.
    expect(compare(`userName eq "${'é'.repeat(4000)}"`).value).toHaveLength(4000);
  });

  it.each([
    ['', 'is empty'],
    ['userName', 'expected an operator'],
    ['userName eq', 'expected a value'],
    ['userName eq "x', 'unterminated string'],
    ['userName eq "\\q"', 'invalid string'],
    ['userName xx "x"', 'unknown operator'],
    ['userName eq "x" garbage', 'unexpected'],
    ['userName eq "x" and', 'expected an attribute name'],
    ['(userName eq "x"', 'expected ")"'],
    ['not userName eq "x"', 'unknown operator "userName"'],
    ['emails[type eq "work"', 'expected "]"'],
    ['emails[type eq "work" and x[y eq "z"]]', 'cannot nest'],
    ['userName eq 12abc', 'invalid number'],
    ['userName eq unquoted', 'expected a value'],
    ['user#Name eq "x"', 'unexpected character'],
    ['1abc eq "x"', 'invalid number'],
    ['a.b.c eq "x"', 'invalid attribute name'],
  ])('refuses %j with 400 invalidFilter (%s)', (filter, fragment) => {
    const failure = scimFailure(() => parseFilter(filter));
    expect(failure).toEqual({ code: 'invalidFilter', message: expect.stringContaining(fragment) });
  });

  describe('limits against hostile filters', () => {
    it(`allows ${FILTER_LIMITS.maxDepth} levels of nesting and refuses one more`, () => {
      const nested = (n: number) => `${'('.repeat(n)}userName eq "x"${')'.repeat(n)}`;
      expect(parseFilter(nested(FILTER_LIMITS.maxDepth))).toMatchObject({ kind: 'compare' });
      expect(scimFailure(() => parseFilter(nested(FILTER_LIMITS.maxDepth + 1)))).toEqual({
        code: 'invalidFilter',
        message: expect.stringContaining('nested more than 16 levels'),
      });
      const nots = `${'not ('.repeat(17)}a pr${')'.repeat(17)}`;
      expect(scimFailure(() => parseFilter(nots))?.code).toBe('invalidFilter');
    });

    it(`allows ${FILTER_LIMITS.maxComparisons} comparisons and refuses more`, () => {
      const chain = (n: number) => Array.from({ length: n }, (_, i) => `title eq "${i}"`).join(' or ');
      expect(parseFilter(chain(64))).toMatchObject({ kind: 'or' });
      expect(scimFailure(() => parseFilter(chain(65)))?.message).toContain('more than 64 comparisons');
    });

    it('refuses a 10 000-deep nesting and a 100 KB filter at once', () => {
      const started = performance.now();
      expect(scimFailure(() => parseFilter('('.repeat(10_000)))?.code).toBe('invalidFilter');
      expect(scimFailure(() => parseFilter(`userName eq "${'a'.repeat(100_000)}"`))?.message).toContain(
        'longer than 4096',
      );
      // Just under the length limit, but as deep as the length allows.
      const deep = `${'('.repeat(2000)}a pr${')'.repeat(2000)}`;
      expect(scimFailure(() => parseFilter(deep))?.code).toBe('invalidFilter');
      expect(performance.now() - started).toBeLessThan(200);
    });

    it('only ever throws the SCIM error for random input (fuzz)', () => {
      const alphabet = [
        '(',
        ')',
        '[',
        ']',
        '"',
        '\\',
        ' ',
        'a',
        'eq',
        'and',
        'or',
        'not',
        '.',
        ':',
        '-',
        '1',
        'e',
        'pr',
        'urn:',
        '$',
        '\u0000',
        'é',
        '{',
      ];
      const started = performance.now();
      let parsed = 0;
      for (let i = 0; i < 500; i++) {
        const length = randomInt(0, 60);
        const text = Array.from({ length }, () => alphabet[randomInt(0, alphabet.length)]).join(
          ' '.repeat(randomInt(0, 2)),
        );
        try {
          const node = parseFilter(text);
          // Whatever parses also compiles or is refused with the SCIM error.
          scimFailure(() => compileFilter(USER_FILTER_COLUMNS, node));
          parsed += 1;
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).code).toBe('invalidFilter');
          expect((err as ApiError).getStatus()).toBe(400);
        }
      }
      expect(parsed).toBeLessThan(500);
      expect(performance.now() - started).toBeLessThan(2000);
    });
  });
});

describe('RFC 7644 3.4.2.2 filter to SQL', () => {
  it('compares userName case-insensitively through its lower() index, with bound values', () => {
    expect(users('userName eq "Jane@Example.com"')).toEqual({
      sql: '(lower(u.username) = lower(:f1))',
      params: { f1: 'Jane@Example.com' },
    });
  });

  it('keeps externalId case-exact and names its parameters in order', () => {
    const { sql, params } = compileFilter(
      USER_FILTER_COLUMNS,
      parseFilter('externalId eq "A" and title ne "B"'),
    );
    expect(sql).toBe(
      '(COALESCE(u.external_id = :f1, FALSE) AND (lower(u.title) IS DISTINCT FROM lower(:f2)))',
    );
    expect(params).toEqual({ f1: 'A', f2: 'B' });
  });

  it('escapes LIKE wildcards in co, sw and ew', () => {
    expect(users('userName co "50%_\\\\x"').params).toEqual({ f1: '%50\\%\\_\\\\x%' });
    expect(users('userName sw "a"').params).toEqual({ f1: 'a%' });
    expect(users('userName ew "a"').params).toEqual({ f1: '%a' });
    expect(users('userName co "a"').sql).toContain('ILIKE');
    expect(users('externalId co "a"').sql).toContain(' LIKE ');
  });

  it('maps emails (one per user) and groups (through memberships)', () => {
    // A user without an address (its placeholder) has no emails.
    expect(users('emails.value eq "A@B.C"').sql).toBe(
      `(u.email NOT LIKE '%@no-email.invalid' AND (u.email = lower(:f1)))`,
    );
    expect(users('emails eq "a@b.c"').sql).toBe(
      `(u.email NOT LIKE '%@no-email.invalid' AND (u.email = lower(:f1)))`,
    );
    expect(users('emails[type eq "work" and primary eq true]').sql).toContain("'work'");
    expect(users('groups.value eq "7"')).toEqual({
      sql: expect.stringMatching(
        /^EXISTS \(SELECT 1 FROM group_members gm .* AND \(gm\.group_id = :f1::int\)\)$/,
      ),
      params: { f1: 7 },
    });
    expect(groups('members[value eq "3" or display co "x"]').sql).toMatch(
      /^EXISTS .*gm\.group_id = g\.id AND \(/,
    );
  });

  it('answers FALSE for an id that cannot exist instead of failing', () => {
    expect(users('id eq "abc"')).toEqual({ sql: 'FALSE', params: {} });
    expect(users('id ne "abc"')).toEqual({ sql: 'TRUE', params: {} });
    expect(users('id eq "12"')).toEqual({ sql: '(u.id = :f1::int)', params: { f1: 12 } });
  });

  it('compares dates at millisecond precision and accepts schema-qualified names', () => {
    const { sql, params } = users('meta.lastModified gt "2024-01-02T03:04:05.678Z"');
    expect(sql).toContain("date_trunc('milliseconds', u.updated_at) > :f1::timestamptz");
    expect(params).toEqual({ f1: '2024-01-02T03:04:05.678Z' });
    expect(users('urn:ietf:params:scim:schemas:core:2.0:User:USERNAME pr').sql).toContain('u.username');
  });

  it('leaves NOT NULL columns bare so the unique indexes serve Entra and Okta lookups', () => {
    // `userName eq` (every Entra and Okta lookup) and a group's `displayName eq` use the
    // (account_id, lower(username)) and (account_id, name) indexes only without COALESCE.
    expect(users('userName eq "Jane@Example.com"').sql).toBe('(lower(u.username) = lower(:f1))');
    expect(users('emails.value eq "Jane@Example.com"').sql).toBe(
      `(u.email NOT LIKE '%@no-email.invalid' AND (u.email = lower(:f1)))`,
    );
    expect(groups('displayName eq "Admins"').sql).toBe('(g.name = :f1)');
    // Nullable columns keep COALESCE, so not (...) also matches unassigned values.
    expect(users('title eq "x"').sql).toBe('COALESCE(lower(u.title) = lower(:f1), FALSE)');
  });

  it('never puts filter text into the SQL, whatever the attribute, sub-attribute or value (injection)', () => {
    const evil = `x'); DROP TABLE users; --`;
    const attempts = [
      `userName eq "${evil}"`,
      `emails[value co "${evil}"]`,
      `groups[display eq "${evil}"].value pr`,
      `meta.lastModified gt "2026-01-01T00:00:00Z') OR ('1'='1"`,
      `id eq "1 OR 1=1"`,
      `id gt "${evil}"`,
      `userName eq "\\'; SELECT pg_sleep(10); --"`,
      `emails.value sw "%' OR '1'='1"`,
      `name.givenName) OR (1=1 eq "x"`,
      `emails[value)or(1=1 eq "x"]`,
      `emails[type eq "x"].value;drop eq "y"`,
      `emails[type eq "x"].value--x eq "y"`,
      `urn:x:y:userName eq "x"`,
      `members.display eq "x"`,
    ];
    let compiledCount = 0;
    for (const filter of attempts) {
      let compiled: { sql: string; params: Readonly<Record<string, unknown>> } | null = null;
      const failure = scimFailure(() => {
        compiled = users(filter);
      });
      if (failure) {
        expect(failure.code).toBe('invalidFilter');
        continue;
      }
      compiledCount += 1;
      const sql = compiled!.sql;
      for (const fragment of ['DROP', 'pg_sleep', "'1'='1", '1=1', 'OR 1', ';', '--']) {
        expect(sql).not.toContain(fragment);
      }
    }
    // Most of them are valid filters: their hostile text travels as bound parameters.
    expect(compiledCount).toBe(6);
  });

  it.each([
    ['a NUL character written as an escape', 'userName eq "a\\u0000b"', 'NUL'],
    ['a year PostgreSQL cannot store', 'meta.created gt "0000-01-01T00:00:00Z"', 'date-time'],
  ])('refuses %s with 400 invalidFilter before it reaches PostgreSQL', (_, filter, fragment) => {
    expect(scimFailure(() => users(filter))).toEqual({
      code: 'invalidFilter',
      message: expect.stringContaining(fragment),
    });
  });

  it.each([
    ['nickName eq "x"', 'Unknown attribute'],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "x"', 'Unknown attribute'],
    ['active eq "yes"', 'boolean'],
    ['active gt true', 'boolean'],
    ['userName eq 1', 'string'],
    ['userName gt null', 'null'],
    ['meta.created eq "yesterday"', 'date-time'],
    ['meta.created co "2024"', 'date-time'],
    ['name eq "x"', 'complex'],
    ['userName[value eq "x"]', 'not a complex attribute'],
    ['emails[nope eq "x"]', 'not a supported sub-attribute'],
    ['meta.location eq "x"', 'Cannot filter'],
  ])('refuses %j with 400 invalidFilter', (filter, fragment) => {
    expect(scimFailure(() => users(filter))).toEqual({
      code: 'invalidFilter',
      message: expect.stringContaining(fragment),
    });
  });
});

describe('RFC 7644 3.5.2 PATCH paths', () => {
  it('parses attr, attr.sub, urn-qualified, attr[filter] and attr[filter].sub', () => {
    expect(parsePath('title')).toEqual({
      attr: { uri: null, name: 'title', sub: null },
      filter: null,
      sub: null,
    });
    expect(parsePath('name.givenName').attr).toEqual({ uri: null, name: 'name', sub: 'givenName' });
    expect(
      parsePath('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value').attr,
    ).toEqual({
      uri: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      name: 'manager',
      sub: 'value',
    });
    expect(parsePath('emails[type eq "work"].value')).toMatchObject({
      attr: { name: 'emails' },
      filter: { kind: 'compare', op: 'eq', value: 'work' },
      sub: 'value',
    });
    expect(parsePath('members[value eq "42"]')).toMatchObject({ sub: null, filter: { value: '42' } });
  });

  it.each([
    '',
    'emails[type eq "work"',
    'emails[type eq "work"].',
    'name.givenName[x eq "y"]',
    'a b',
    'emails[]',
  ])('refuses %j with 400 invalidPath', (path) => {
    expect(scimFailure(() => parsePath(path))?.code).toBe('invalidPath');
  });

  it('evaluates a value filter against one value, with each sub-attribute case rule', () => {
    const emails = USER_SCHEMA.attributes.find((a) => a.name === 'emails')!;
    const work = { value: 'Jane@Example.com', type: 'work', primary: 'True' };
    expect(matchesValue(parseFilter('type eq "WORK"'), work, emails)).toBe(true);
    expect(matchesValue(parseFilter('value ew "example.com" and primary eq true'), work, emails)).toBe(true);
    expect(matchesValue(parseFilter('not (type eq "work")'), work, emails)).toBe(false);
    expect(matchesValue(parseFilter('(type sw "ho") or value sw "x"'), work, emails)).toBe(false);
    expect(scimFailure(() => matchesValue(parseFilter('display pr'), work, emails))?.message).toContain(
      'no sub-attribute',
    );
    expect(scimFailure(() => matchesValue(parseFilter('primary eq "x"'), work, emails))?.code).toBe(
      'invalidFilter',
    );
  });
});
