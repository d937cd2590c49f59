import { compileNamed } from '../../src/core/database/named-params.js';

describe('named SQL parameters', () => {
  it('numbers each name once, in order of first use', () => {
    expect(compileNamed('SELECT * FROM t WHERE a = :a AND b = :b OR a2 = :a', { a: 1, b: 'x' })).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b = $2 OR a2 = $1',
      values: [1, 'x'],
    });
  });

  it('leaves casts, quoted text, identifiers and comments alone', () => {
    const sql = `SELECT :id::int, to_char(x, 'HH24:MI:SS'), "we:ird", E'it\\'s :not' -- :comment
      FROM t WHERE y = :y`;
    const { text, values } = compileNamed(sql, { id: 7, y: null });
    expect(text).toBe(`SELECT $1::int, to_char(x, 'HH24:MI:SS'), "we:ird", E'it\\'s :not' -- :comment
      FROM t WHERE y = $2`);
    expect(values).toEqual([7, null]);
  });

  it('keeps doubled quotes inside a literal', () => {
    expect(compileNamed(`SELECT 'a'':b', :c`, { c: 1 }).text).toBe(`SELECT 'a'':b', $1`);
  });

  it('does not take array slices or words for parameters', () => {
    expect(compileNamed('SELECT arr[1:2], a:b FROM t', {}).text).toBe('SELECT arr[1:2], a:b FROM t');
  });

  it('passes arrays and objects through as values', () => {
    expect(compileNamed('SELECT = ANY(:ids)', { ids: [1, 2] }).values).toEqual([[1, 2]]);
  });

  it('refuses a name with no value and a value with no name', () => {
    expect(() => compileNamed('SELECT :a, :b', { a: 1 })).toThrow('SQL parameter :b has no value');
    expect(() => compileNamed('SELECT :a', { a: 1, typo: 2 })).toThrow('not used in the text: typo');
  });

  it('treats an explicitly undefined value as given (pg sends it as NULL)', () => {
    expect(compileNamed('SELECT :a', { a: undefined }).values).toEqual([undefined]);
  });
});
