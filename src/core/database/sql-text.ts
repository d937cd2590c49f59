/** SQL text helpers with no framework in them (the bench baseline loads them through src/hot-paths.ts). */

/** A timestamptz expression as an ISO 8601 instant in UTC with milliseconds, in SQL. */
export const isoSql = (expr: string): string =>
  `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
