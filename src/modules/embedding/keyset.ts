import { keysetPredicate, type CursorValue } from '../../core/http/pagination.js';

/** {@link keysetPredicate} with named parameters (`:after1`, `:after2`…) instead of numbered ones. */
export function namedKeyset(
  columns: readonly string[],
  direction: 'ASC' | 'DESC',
  after: CursorValue[] | null,
): { sql: string; params: Record<string, CursorValue> } {
  const { sql, params } = keysetPredicate(columns, direction, after, 1);
  return {
    sql: sql.replace(/\$(\d+)/g, ':after$1'),
    params: Object.fromEntries(params.map((value, i) => [`after${i + 1}`, value])),
  };
}
