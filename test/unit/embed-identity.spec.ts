import {
  canonicalTenantName,
  normalizeExternalId,
  normalizeTenantName,
  syntheticEmail,
  tenantGroupContextName,
} from '../../src/modules/embedding/embed-identity.js';

/** A strict address: one '@', an RFC 5322 dot-atom local part of 1..64 characters, our domain. */
const STRICT_EMAIL =
  /^(?=[^@]{1,64}@)[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@embed-users\.invalid$/;
/** The hashed form: an optional readable prefix, then 16 hex characters. */
const HASHED = /^(?:([a-z0-9_-]+)\.)?([0-9a-f]{16})@embed-users\.invalid$/;

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
};
const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return JSON.stringify((e as { getResponse(): unknown }).getResponse());
  }
  return '';
};

describe('normalizeTenantName', () => {
  it.each(['ab', 'a1', 'a-b', 'acme-corp-2', 'a'.repeat(36), `a${'-'.repeat(34)}b`])(
    'accepts the valid name %s unchanged',
    (name) => {
      expect(normalizeTenantName(name)).toBe(name);
    },
  );

  it('trims and lowercases before checking', () => {
    expect(normalizeTenantName('  Acme-Corp ')).toBe('acme-corp');
    expect(normalizeTenantName(`\t${'A'.repeat(36)}\n`)).toBe('a'.repeat(36));
  });

  it.each([
    ['one character', 'a'],
    ['37 characters', 'a'.repeat(37)],
    ['a leading digit', '1abc'],
    ['a leading hyphen', '-abc'],
    ['a trailing hyphen', 'abc-'],
    ['an underscore', 'a_b'],
    ['a dot', 'a.b'],
    ['an inner space', 'a b'],
    ['a non-ASCII letter', 'café'],
    ['the empty string', ''],
    ['only blanks', '   '],
  ])('rejects a name with %s as invalid_embed_tenant_name', (_, name) => {
    expect(codeOf(() => normalizeTenantName(name))).toBe('invalid_embed_tenant_name');
  });
});

describe('canonicalTenantName', () => {
  it('returns a canonical name as is, at both length limits', () => {
    expect(canonicalTenantName('ab')).toBe('ab');
    expect(canonicalTenantName('a'.repeat(36))).toBe('a'.repeat(36));
    expect(canonicalTenantName('acme-1')).toBe('acme-1');
  });

  it('refuses upper case instead of lowercasing it, naming the lowercase form in the message', () => {
    expect(codeOf(() => canonicalTenantName('Acme'))).toBe('invalid_embed_tenant_name');
    expect(messageOf(() => canonicalTenantName('Acme'))).toContain('\\"acme\\"');
    expect(messageOf(() => canonicalTenantName('ACME-Corp'))).toContain('\\"acme-corp\\"');
  });

  it('refuses surrounding blanks rather than trimming them', () => {
    expect(codeOf(() => canonicalTenantName(' acme '))).toBe('invalid_embed_tenant_name');
    expect(messageOf(() => canonicalTenantName(' acme '))).toContain('\\"acme\\"');
  });

  it.each(['a', 'a'.repeat(37), '1abc', 'abc-', 'A', 'a_b', ''])(
    'rejects %p, which no lowercasing would fix, with the general rule',
    (name) => {
      expect(codeOf(() => canonicalTenantName(name))).toBe('invalid_embed_tenant_name');
      expect(messageOf(() => canonicalTenantName(name))).toContain('2 to 36 characters');
    },
  );
});

describe('normalizeExternalId', () => {
  it('trims and lowercases', () => {
    expect(normalizeExternalId('  BoB ')).toBe('bob');
    expect(normalizeExternalId('User@Example.COM')).toBe('user@example.com');
    expect(normalizeExternalId('ÉMILE')).toBe('émile');
  });

  it('keeps inner spaces and punctuation', () => {
    expect(normalizeExternalId(' Jane Doe / 42 ')).toBe('jane doe / 42');
  });

  it.each(['', ' ', '\t\n  '])('rejects the blank id %p as invalid_external_id', (raw) => {
    expect(codeOf(() => normalizeExternalId(raw))).toBe('invalid_external_id');
  });

  it('accepts 255 characters (after trimming) and rejects 256', () => {
    expect(normalizeExternalId(`  ${'x'.repeat(255)}  `)).toBe('x'.repeat(255));
    expect(codeOf(() => normalizeExternalId('x'.repeat(256)))).toBe('invalid_external_id');
  });
});

describe('syntheticEmail', () => {
  it.each(['bob', 'jane.doe', 'user_42', "o'hara+tag", 'a'.repeat(64)])(
    'keeps the plain id %s as the local part',
    (id) => {
      expect(syntheticEmail(id)).toBe(`${id}@embed-users.invalid`);
      expect(syntheticEmail(id)).toMatch(STRICT_EMAIL);
    },
  );

  it.each([
    ['a space', 'jane doe', 'jane-doe'],
    ['an @', 'user@example.com', 'user-example-com'],
    ['unicode', 'josé', 'jos'],
    ['65 characters', 'a'.repeat(65), 'a'.repeat(40)],
    ['a leading dot', '.bob', 'bob'],
    ['two dots in a row', 'a..b', 'a-b'],
    ['a trailing dot', 'bob.', 'bob'],
  ])('hashes an id with %s into <readable>.<16 hex>', (_, id, readable) => {
    const email = syntheticEmail(id);
    const match = HASHED.exec(email);
    expect(match).not.toBeNull();
    expect(match![1]).toBe(readable);
    expect(email).toMatch(STRICT_EMAIL);
  });

  it('uses "user" as the readable prefix when nothing readable remains', () => {
    const email = syntheticEmail('@@@');
    expect(email).toMatch(/^user\.[0-9a-f]{16}@embed-users\.invalid$/);
    expect(email).toMatch(STRICT_EMAIL);
  });

  it('is deterministic', () => {
    for (const id of ['bob', 'jane doe', 'ünïcödé', 'x'.repeat(255)]) {
      expect(syntheticEmail(id)).toBe(syntheticEmail(id));
    }
  });

  it('gives different ids different addresses, even when their readable parts are equal', () => {
    const ids = [
      'jane doe',
      'jane  doe',
      'jane@doe',
      'jane/doe',
      'jane-doe',
      `${'a'.repeat(65)}`,
      `${'a'.repeat(66)}`,
    ];
    const emails = ids.map(syntheticEmail);
    expect(new Set(emails).size).toBe(ids.length);
    // Same 40-character readable prefix, different tails.
    expect(syntheticEmail(`${'b'.repeat(40)} one`)).not.toBe(syntheticEmail(`${'b'.repeat(40)} two`));
  });

  it('never gives a plain id the address an id that needed hashing already has', () => {
    const hashed = syntheticEmail('foo bar');
    const crafted = hashed.split('@')[0];
    expect(crafted).not.toBe('foo bar');
    expect(syntheticEmail(crafted)).not.toBe(hashed);
  });

  it('always produces a strict address with a local part of at most 64 characters', () => {
    const ids = [
      'x'.repeat(255),
      `${'y'.repeat(63)}!`,
      'a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9',
      '中文用户',
      '"quoted"',
      'tab\tand\nnewline',
      '-leading-and-trailing-',
      `${'z'.repeat(39)}-${'z'.repeat(30)} x`,
      'émile@école.fr',
    ];
    for (const id of ids) {
      const email = syntheticEmail(id);
      expect(email).toMatch(STRICT_EMAIL);
      expect(email.split('@')[0].length).toBeLessThanOrEqual(64);
      expect(email.endsWith('@embed-users.invalid')).toBe(true);
    }
  });
});

describe('tenantGroupContextName', () => {
  it('namespaces a tenant group apart from any account-wide group of that name', () => {
    expect(tenantGroupContextName('acme', 'sales')).toBe('system:tenant:acme:group:sales');
    expect(tenantGroupContextName('acme', 'sales')).not.toBe('sales');
    expect(tenantGroupContextName('a-1', 'Group With Spaces')).toBe(
      'system:tenant:a-1:group:Group With Spaces',
    );
  });
});
