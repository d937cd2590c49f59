import { inspectJson, MAX_JSON_DEPTH, urlIsUtf8 } from '../../src/core/http/input-guards.js';

const nested = (levels: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
};

describe('inspectJson', () => {
  it('accepts nesting up to the limit, counting the body itself as level 1', () => {
    expect(inspectJson(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(inspectJson(nested(MAX_JSON_DEPTH + 1))).toBe('too_deep');
  });

  it('walks 100,000 levels without recursion', () => {
    expect(inspectJson(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)))).toBe('too_deep');
  });

  it('finds a lone surrogate in a value or a key, at any place', () => {
    expect(inspectJson({ a: [{ b: 'x\ud800' }] })).toBe('ill_formed');
    expect(inspectJson({ a: { '\udc00': 1 } })).toBe('ill_formed');
    expect(inspectJson({ a: ['\ud83d\ude00', 'é', null, 1, true] })).toBeNull();
    expect(inspectJson(undefined)).toBeNull();
  });
});

describe('urlIsUtf8', () => {
  it.each([
    '/api/v1/users',
    '/api/v1/users?search=%C3%A9',
    '/api/v1/users?search=%F0%9F%98%80',
    '/api/v1/users?after=%%%',
    '/api/v1/users?search=100%',
    '/api/v1/users?search=%2',
  ])('accepts %s', (url) => expect(urlIsUtf8(url)).toBe(true));

  it.each([
    '/api/v1/users/%ED%A0%80',
    '/api/v1/users?search=%C3',
    '/api/v1/users?search=%FF',
    '/api/v1/users?search=%C0%AF',
  ])('refuses %s', (url) => expect(urlIsUtf8(url)).toBe(false));
});
