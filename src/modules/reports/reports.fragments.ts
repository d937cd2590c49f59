/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */

/**
 * The `reportSnapshots` of the dashboard joined as `d`, as a JSON array (ReportSnapshot shapes, in
 * the order they were taken): the reports of its workbook as its last publish took them.
 */
export const reportSnapshotsJsonSql = (d: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('id', rs.id, 'reportId', rs.report_id,
     'versionNumber', rs.version_number, 'name', rs.name, 'title', rs.title, 'description', rs.description,
     'kind', NULL, 'sqlQuery', rs.sql_query, 'pythonCode', rs.python_code, 'meta', rs.meta) ORDER BY rs.id)
   FROM report_snapshots rs WHERE rs.dashboard_id = ${d}.id), '[]'::json)`;
