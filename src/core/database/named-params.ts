/**
 * Named parameters for raw SQL: `:name` in the text becomes `$n` for pg, the same name always the
 * same `$n`, so nobody counts `$19` by hand. Text inside quotes ('…', "…", E'…'), comments and
 * casts (`::int`) is left alone, and a name must start with a letter or `_`.
 *
 * Every name in the text needs a value and every value a place in the text: either mistake is a
 * programming error and throws before the query reaches the database.
 */
export type SqlParams = Readonly<Record<string, unknown>>;

export interface CompiledSql {
  readonly text: string;
  readonly values: unknown[];
}

const cache = new Map<string, { text: string; names: string[] }>();
const CACHE_LIMIT = 2_000;

export function compileNamed(sql: string, params: SqlParams = {}): CompiledSql {
  let parsed = cache.get(sql);
  if (!parsed) {
    parsed = parse(sql);
    if (cache.size < CACHE_LIMIT) cache.set(sql, parsed);
  }
  const values = parsed.names.map((name) => {
    if (!Object.hasOwn(params, name)) throw new Error(`SQL parameter :${name} has no value`);
    return params[name];
  });
  if (Object.keys(params).length !== parsed.names.length) {
    const unused = Object.keys(params).filter((name) => !parsed.names.includes(name));
    if (unused.length > 0) throw new Error(`SQL parameters not used in the text: ${unused.join(', ')}`);
  }
  return { text: parsed.text, values };
}

function parse(sql: string): { text: string; names: string[] } {
  const names: string[] = [];
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = closingQuote(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === ':' && sql[i + 1] === ':') {
      out += '::';
      i += 2;
    } else if (c === ':' && /[A-Za-z_]/.test(sql[i + 1] ?? '') && !/\w/.test(sql[i - 1] ?? '')) {
      const match = /^[A-Za-z_]\w*/.exec(sql.slice(i + 1))!;
      const name = match[0];
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      out += `$${index + 1}`;
      i += 1 + name.length;
    } else {
      out += c;
      i += 1;
    }
  }
  return { text: out, names };
}

/** The index just past the quote that closes the one at `start` (a doubled quote escapes itself). */
function closingQuote(sql: string, start: number, quote: string): number {
  const backslashEscapes = quote === "'" && /[eE]/.test(sql[start - 1] ?? '');
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i += 1;
    }
  }
  return sql.length;
}
