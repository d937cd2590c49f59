import {
  decodeCursor,
  encodeCursor,
  keysetPredicate,
  resolvePaging,
} from '../../src/core/http/pagination.js';

describe('pagination primitives', () => {
  it('round-trips a cursor', () => {
    const cursor = encodeCursor(['2026-01-01T00:00:00.000Z', 42]);
    expect(decodeCursor(cursor, ['date', 'number'])).toEqual(['2026-01-01T00:00:00.000Z', 42]);
  });

  it.each([
    ['not base64!', ['number']],
    [Buffer.from('{"a":1}').toString('base64url'), ['number']],
    [encodeCursor(['x']), ['number']],
    [encodeCursor([1, 2]), ['number']],
    [encodeCursor(['not a date', 1]), ['date', 'number']],
    [encodeCursor([1.5]), ['number']],
  ] as const)('rejects the foreign cursor %s', (cursor, kinds) => {
    expect(() => decodeCursor(cursor, kinds)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
  });

  it('refuses to mix cursor and offset parameters', () => {
    expect(() => resolvePaging({ first: 10, offset: 5 }, ['number'])).toThrow(
      expect.objectContaining({ code: 'pagination_conflict' }),
    );
    expect(resolvePaging({ limit: 10, offset: 5 }, ['number'])).toEqual({
      mode: 'offset',
      limit: 10,
      offset: 5,
    });
    expect(resolvePaging({}, ['number'])).toEqual({ mode: 'cursor', first: 100, after: null });
  });

  it('builds a keyset predicate in the sort direction, never an offset', () => {
    expect(keysetPredicate(['a', 'id'], 'DESC', ['x', 3])).toEqual({
      sql: '(a, id) < (:after1, :after2)',
      params: { after1: 'x', after2: 3 },
    });
    expect(keysetPredicate(['id'], 'ASC', null)).toEqual({ sql: 'TRUE', params: {} });
  });
});
