import { ApiError } from '../../src/core/errors/api-error.js';
import type { DirectoryUser } from '../../src/modules/users/directory.service.js';
import { planGroupPatch } from '../../src/modules/scim/patch/group-patch.js';
import {
  applyOperation,
  normalizeResource,
  type ScimDoc,
} from '../../src/modules/scim/patch/patch-engine.js';
import { parsePatchRequest } from '../../src/modules/scim/patch/patch-request.js';
import { userDocument, userInput } from '../../src/modules/scim/scim-users.mapper.js';
import { GROUP_SCHEMA, URN, USER_SCHEMA } from '../../src/modules/scim/scim.schema.js';

function failure(fn: () => unknown): { code: string; message: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, message: String(err.messages) };
  }
}

const user: DirectoryUser = {
  id: 7,
  username: 'jane@example.com',
  email: 'jane@example.com',
  firstName: 'Jane',
  lastName: 'Doe',
  displayName: null,
  title: 'Analyst',
  externalId: 'ext-7',
  isDeactivated: false,
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
};

const patchOp = (...operations: unknown[]) => ({ schemas: [URN.patchOp], Operations: operations });

/** Applies a PatchOp body to the user's document and returns the document. */
function patchUser(...operations: unknown[]): ScimDoc {
  const doc = userDocument(user);
  for (const op of parsePatchRequest(patchOp(...operations))) applyOperation(doc, op, USER_SCHEMA);
  return doc;
}

describe('RFC 7644 3.5.2 PatchOp message', () => {
  it('requires the PatchOp schema (400 invalidSyntax)', () => {
    expect(
      failure(() => parsePatchRequest({ Operations: [{ op: 'add', path: 'title', value: 'x' }] })),
    ).toEqual({
      code: 'invalidSyntax',
      message: expect.stringContaining(URN.patchOp),
    });
    expect(failure(() => parsePatchRequest({ schemas: 'x', Operations: [] }))?.code).toBe('invalidSyntax');
    expect(failure(() => parsePatchRequest([]))?.code).toBe('invalidSyntax');
  });

  it('reads op case-insensitively (Entra sends Add, Replace, Remove)', () => {
    const ops = parsePatchRequest(
      patchOp(
        { op: 'Add', path: 'title', value: 'x' },
        { op: 'REPLACE', value: { active: false } },
        { op: 'Remove', path: 'title' },
      ),
    );
    expect(ops.map((o) => o.op)).toEqual(['add', 'replace', 'remove']);
  });

  it.each([
    [patchOp(), 'invalidSyntax'],
    [{ schemas: [URN.patchOp] }, 'invalidSyntax'],
    [patchOp('add'), 'invalidSyntax'],
    [patchOp({ op: 'move', path: 'title' }), 'invalidSyntax'],
    [patchOp({ op: 'add', path: 'title' }), 'invalidSyntax'],
    [patchOp({ op: 'add', value: 'not an object' }), 'invalidSyntax'],
    [patchOp({ op: 'remove' }), 'noTarget'],
    [patchOp({ op: 'remove', path: '' }), 'noTarget'],
    [patchOp({ op: 'add', path: 'emails[type eq', value: 'x' }), 'invalidPath'],
    [patchOp({ op: 'add', path: 42, value: 'x' }), 'invalidPath'],
  ])('refuses a malformed message (%j) with %s', (body, code) => {
    expect(failure(() => parsePatchRequest(body))?.code).toBe(code);
  });
});

describe('RFC 7644 3.5.2.1 add', () => {
  it('sets a simple attribute and a sub-attribute through a path', () => {
    const doc = patchUser(
      { op: 'add', path: 'displayName', value: 'JD' },
      { op: 'add', path: 'name.givenName', value: 'J' },
    );
    expect(doc).toMatchObject({ displayName: 'JD', name: { givenName: 'J', familyName: 'Doe' } });
  });

  it('merges an object of attributes without a path, ignoring read-only and unknown ones', () => {
    const doc = patchUser({
      op: 'add',
      value: {
        id: '999',
        meta: { created: 'x' },
        nickName: 'jd',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'R&D' },
        NAME: { familyName: 'Smith', formatted: 'ignored' },
        'name.givenName': 'Janet',
      },
    });
    // name.formatted is writable (RFC 7643) but derived: userInput never reads it.
    expect(doc).toEqual({
      ...userDocument(user),
      name: { givenName: 'Janet', familyName: 'Smith', formatted: 'ignored' },
    });
  });

  it('reads keys of a path-less value as paths, value filters included', () => {
    const doc = patchUser({
      op: 'replace',
      value: {
        'emails[type eq "work"].value': 'Keyed@Example.com',
        'urn:ietf:params:scim:schemas:core:2.0:User:title': 'T',
      },
    });
    expect(userInput(doc, user)).toMatchObject({ email: 'keyed@example.com', title: 'T' });
  });

  it('appends to a multi-valued attribute; a new primary demotes the old one', () => {
    const doc = patchUser({
      op: 'add',
      path: 'emails',
      value: [{ value: 'j@home.example', type: 'home', primary: true }],
    });
    expect(doc.emails).toEqual([
      { value: 'jane@example.com', type: 'work', primary: false },
      { value: 'j@home.example', type: 'home', primary: true },
    ]);
    expect(userInput(doc, user).email).toBe('j@home.example');
  });

  it('creates the value a filter pins down when none matches (Entra emails[type eq "work"].value)', () => {
    const doc = patchUser({ op: 'add', path: 'emails[type eq "other"].value', value: 'o@example.com' });
    expect(doc.emails).toEqual([
      { value: 'jane@example.com', type: 'work', primary: true },
      { type: 'other', value: 'o@example.com' },
    ]);
  });

  it('ignores attributes of extension schemas and attributes we do not support', () => {
    const doc = patchUser(
      {
        op: 'Add',
        path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
        value: 'R&D',
      },
      { op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+1' },
      { op: 'Add', path: 'name.honorificPrefix', value: 'Dr' },
    );
    expect(doc).toEqual(userDocument(user));
  });
});

describe('RFC 7644 3.5.2.3 replace', () => {
  it('replaces without a path (Okta: {active: false}) and accepts Entra boolean strings', () => {
    expect(userInput(patchUser({ op: 'replace', value: { active: false } }), user).isDeactivated).toBe(true);
    expect(userInput(patchUser({ op: 'Replace', path: 'active', value: 'False' }), user).isDeactivated).toBe(
      true,
    );
    expect(
      userInput(patchUser({ op: 'Replace', path: 'active', value: 'TRUE' }), {
        ...user,
        isDeactivated: true,
      }),
    ).toMatchObject({ isDeactivated: false });
  });

  it('replaces the sub-attribute of the values a filter selects', () => {
    const doc = patchUser({ op: 'replace', path: 'emails[type eq "work"].value', value: 'New@Example.com' });
    expect(userInput(doc, user).email).toBe('new@example.com');
  });

  it('answers noTarget when a filter selects nothing', () => {
    expect(
      failure(() => patchUser({ op: 'replace', path: 'emails[type eq "home"].value', value: 'x@y.z' })),
    ).toEqual({ code: 'noTarget', message: expect.stringContaining('emails[type eq "home"].value') });
  });

  it('replaces a whole multi-valued attribute, and merges a complex one', () => {
    const doc = patchUser(
      { op: 'replace', path: 'emails', value: [{ value: 'a@b.example', type: 'home' }] },
      { op: 'replace', path: 'name', value: { givenName: 'Janet' } },
    );
    expect(doc.emails).toEqual([{ value: 'a@b.example', type: 'home' }]);
    expect(doc.name).toEqual({ givenName: 'Janet', familyName: 'Doe' });
  });

  it('matches attribute names case-insensitively and with the core schema URN', () => {
    const doc = patchUser(
      { op: 'replace', path: 'USERNAME', value: 'janet' },
      { op: 'replace', path: 'urn:ietf:params:scim:schemas:core:2.0:User:title', value: 'Lead' },
    );
    expect(doc).toMatchObject({ userName: 'janet', title: 'Lead' });
  });

  it('refuses read-only attributes named by a path (mutability)', () => {
    for (const path of ['id', 'groups', 'meta.created', 'groups[value eq "1"].display']) {
      expect(failure(() => patchUser({ op: 'replace', path, value: 'x' }))?.code).toBe('mutability');
    }
  });

  it('accepts name.formatted (Entra writes it) without letting it change the stored names', () => {
    const doc = patchUser(
      { op: 'Replace', path: 'name.formatted', value: 'Someone Else' },
      { op: 'add', value: { name: { formatted: 'Another One' } } },
    );
    expect(userInput(doc, user)).toMatchObject({ firstName: 'Jane', lastName: 'Doe' });
  });
});

describe('RFC 7644 3.5.2.2 remove', () => {
  it('removes an attribute, a sub-attribute and the values a filter selects', () => {
    const doc = patchUser(
      { op: 'remove', path: 'title' },
      { op: 'remove', path: 'name.familyName' },
      { op: 'remove', path: 'emails[type eq "work"]' },
    );
    expect(doc.title).toBeUndefined();
    expect(doc.name).toEqual({ givenName: 'Jane' });
    expect(doc.emails).toBeUndefined();
    // Without emails, no address: never the userName, even one that looks like an address.
    expect(userInput(doc, user).email).toBeNull();
  });

  it('refuses to remove a required attribute', () => {
    expect(failure(() => patchUser({ op: 'remove', path: 'userName' }))?.code).toBe('invalidValue');
    expect(failure(() => patchUser({ op: 'replace', value: { userName: null } }))?.code).toBe('invalidValue');
  });

  it('removes nothing (and fails nothing) when the filter selects no value', () => {
    expect(patchUser({ op: 'remove', path: 'emails[type eq "home"]' })).toEqual(userDocument(user));
  });

  it('removes only the listed values of a multi-valued attribute: none for an empty list', () => {
    expect(patchUser({ op: 'Remove', path: 'emails', value: [] })).toEqual(userDocument(user));
    expect(patchUser({ op: 'remove', path: 'emails', value: [{ value: 'JANE@example.com' }] }).emails).toBe(
      undefined,
    );
    expect(patchUser({ op: 'remove', path: 'emails', value: null }).emails).toBeUndefined();
  });

  it('treats an email left without its value as no email', () => {
    const doc = patchUser({ op: 'Remove', path: 'emails[type eq "work"].value' });
    expect(doc.emails).toEqual([{ type: 'work', primary: true }]);
    expect(userInput(doc, user).email).toBeNull();
    expect(userInput({ ...doc, userName: 'jane' }, user).email).toBeNull();
  });
});

describe('user documents (RFC 7643 4.1) to columns', () => {
  const body = (fields: Record<string, unknown>) =>
    normalizeResource({ schemas: [URN.user], userName: 'sam', ...fields }, USER_SCHEMA);

  it('takes the primary email, else the work one, else the first, else none', () => {
    const emails = [
      { value: 'home@x.example', type: 'home' },
      { value: 'work@x.example', type: 'work' },
      { value: 'Primary@x.example', primary: 'true' },
    ];
    expect(userInput(body({ emails }), null).email).toBe('primary@x.example');
    expect(userInput(body({ emails: emails.slice(0, 2) }), null).email).toBe('work@x.example');
    expect(userInput(body({ emails: emails.slice(0, 1) }), null).email).toBe('home@x.example');
    expect(userInput(body({ userName: 'Sam@X.example' }), null).email).toBeNull();
    expect(userInput(body({}), null).email).toBeNull();
    expect(failure(() => userInput(body({ emails: [{ value: 'user-7@no-email.invalid' }] }), null))).toEqual({
      code: 'invalidValue',
      message: expect.stringContaining('reserved'),
    });
  });

  it('maps names and defaults active to true for a new user, to the current state otherwise', () => {
    const input = userInput(
      body({ name: { givenName: 'Sam', familyName: 'Lee' }, emails: [{ value: 's@x.example' }], title: '' }),
      null,
    );
    expect(input).toEqual({
      username: 'sam',
      email: 's@x.example',
      firstName: 'Sam',
      lastName: 'Lee',
      displayName: null,
      title: null,
      externalId: null,
      isDeactivated: false,
    });
    expect(
      userInput(body({ emails: [{ value: 's@x.example' }] }), { ...user, isDeactivated: true }).isDeactivated,
    ).toBe(true);
  });

  it.each([
    [{ userName: undefined }, 'invalidSyntax'],
    [{ userName: 42 }, 'invalidSyntax'],
    [{ userName: '   ' }, 'invalidValue'],
    [{ userName: 'x'.repeat(256) }, 'invalidValue'],
    [{ active: 'maybe' }, 'invalidSyntax'],
    [{ name: 'Sam Lee' }, 'invalidSyntax'],
    [{ emails: 'a@b.example' }, 'invalidSyntax'],
    [{ emails: [{ value: 7 }] }, 'invalidSyntax'],
    [{ emails: [{ value: 'not an email' }] }, 'invalidValue'],
    [{ emails: [{ value: 'a@b.example', primary: 'yes' }] }, 'invalidSyntax'],
    [{ title: ['x'] }, 'invalidSyntax'],
  ])('refuses %j with %s', (fields, code) => {
    expect(
      failure(() => userInput(body({ emails: [{ value: 's@x.example' }], ...fields }), null))?.code,
    ).toBe(code);
  });
});

describe('group PATCH plans (membership as set operations)', () => {
  const plan = (...operations: unknown[]) => planGroupPatch(parsePatchRequest(patchOp(...operations)));

  it('turns member operations into steps and leaves the rest to the engine', () => {
    const { attributeOps, memberSteps } = plan(
      { op: 'Add', path: 'members', value: [{ value: '1' }, { value: 2 }] },
      { op: 'Remove', path: 'members', value: [{ value: '3' }] },
      { op: 'remove', path: 'members[value eq "4"]' },
      { op: 'Replace', path: 'displayName', value: 'Renamed' },
      { op: 'replace', value: { id: '9', displayName: 'Okta', members: [{ value: '5', display: 'x' }] } },
      { op: 'remove', path: 'members' },
      { op: 'Remove', path: 'members', value: [] },
      { op: 'remove', path: 'members', value: null },
    );
    expect(memberSteps).toEqual([
      { kind: 'add', values: ['1', '2'] },
      { kind: 'remove', values: ['3'] },
      { kind: 'removeWhere', filter: expect.objectContaining({ kind: 'compare', value: '4' }) },
      { kind: 'replace', values: ['5'] },
      { kind: 'removeAll' },
      // An empty value list removes no member; only a remove without a value removes them all.
      { kind: 'remove', values: [] },
      { kind: 'removeAll' },
    ]);
    expect(attributeOps.map((o) => o.value)).toEqual(['Renamed', { id: '9', displayName: 'Okta' }]);
  });

  it.each([
    [{ op: 'add', path: 'members[value eq "1"]', value: { value: '1' } }, 'invalidPath'],
    [{ op: 'replace', path: 'members.display', value: 'x' }, 'mutability'],
    [{ op: 'add', path: 'members', value: [{ display: 'no value' }] }, 'invalidSyntax'],
    [{ op: 'add', path: 'members', value: [{ value: '1', type: 'Group' }] }, 'invalidValue'],
    [{ op: 'add', path: 'members', value: ['1'] }, 'invalidSyntax'],
  ])('refuses %j with %s', (operation, code) => {
    expect(failure(() => plan(operation))?.code).toBe(code);
  });

  it('applies the attribute operations to the group document', () => {
    const doc: ScimDoc = { displayName: 'Team' };
    const { attributeOps } = plan(
      { op: 'replace', path: 'displayName', value: 'Team 2' },
      { op: 'add', path: 'externalId', value: 'g-1' },
    );
    for (const op of attributeOps) applyOperation(doc, op, GROUP_SCHEMA);
    expect(doc).toEqual({ displayName: 'Team 2', externalId: 'g-1' });
  });
});
