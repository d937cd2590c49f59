import { Action, actionsGranting, actionsGrantingThrough } from '../../core/auth/action.js';
import { folderChainSql, folderPathSql, isoSql, ownerSql } from '../workspace/content.sql.js';

/**
 * The one query that shapes reports: the row, its owner, who refreshed it, its folder path, its
 * placements and the custom roles with access, in a single round trip. `where` filters `r`;
 * `tail` adds ORDER BY and LIMIT. The bench baseline runs this very text.
 */
export function reportSelectSql(where: string, tail = ''): string {
  return `
SELECT r.id, r.public_id AS "publicId", r.deployment_id AS "deploymentId", r.user_id AS "userId",
  ${ownerSql('o')} AS "user", ${ownerSql('rb')} AS "refreshedByUser",
  r.name, r.created_at AS "createdAt", r.updated_at AS "updatedAt", r.created_by AS "createdBy",
  r.description, r.title, r.json_query AS "jsonQuery", r.sql_query AS "sqlQuery", r.meta,
  r.pivot_items AS "pivotItems", r.refreshed_by AS "refreshedBy", r.source, r.version,
  r.workbook_id AS "workbookId", r.folder_id AS "folderId",
  ${folderPathSql('f')} AS "folderPath",
  (SELECT json_agg(json_build_object('id', p.placement_id, 'workbookId', p.external_workbook_id,
      'resultLocation', p.result_location, 'anchorCell', p.anchor_cell, 'endResultCell', p.end_result_cell,
      'host', p.host, 'sheetId', p.sheet_id, 'sheetName', p.sheet_name, 'workbookName', p.workbook_name,
      'placedAt', ${isoSql('p.placed_at')}, 'placedByUserId', p.placed_by_user_id,
      'refreshedAt', ${isoSql('p.refreshed_at')}, 'refreshedByUserId', p.refreshed_by_user_id) ORDER BY p.row_id)
   FROM report_placements p WHERE p.report_id = r.id) AS placements,
  (SELECT json_agg(json_build_object('id', ra.id, 'name', ra.name, 'actions', ra.actions) ORDER BY ra.id)
   FROM (SELECT ro.id, ro.name, array_agg(DISTINCT g.action ORDER BY g.action) AS actions
         FROM (${grantsOn("'Global'", "'*'", GLOBAL_REPORT_ACTIONS)}
               UNION ALL ${grantsOn("'Report'", "ANY(ARRAY[r.id::text, '*'])", GLOBAL_REPORT_ACTIONS)}
               UNION ALL ${grantsOn("'Workbook'", `ANY(ARRAY[r.workbook_id::text, ${ifInside('r.workbook_id')}])`, WORKBOOK_REPORT_ACTIONS)}
               UNION ALL ${grantsOn("'Folder'", `ANY(${folderChainSql('f')}::text[] || ${ifInside('f.id')})`, FOLDER_REPORT_ACTIONS)}) g
         JOIN roles ro ON ro.id = g.principal_id
         GROUP BY ro.id, ro.name) ra) AS "rolesWithAccess"
FROM reports r
JOIN users o ON o.id = r.user_id
LEFT JOIN users rb ON rb.id = r.refreshed_by
LEFT JOIN folders f ON f.id = r.folder_id
WHERE ${where}
${tail}`;
}

/**
 * `'*'` (a role's policy on every workbook or folder: `["All"]`) when the report is in a
 * workbook or folder at all, else NULL, which matches nothing.
 */
function ifInside(column: string): string {
  return `CASE WHEN ${column} IS NOT NULL THEN '*' END`;
}

/**
 * Role grants of `actions` on the resources `id` names (`= x` or `= ANY(...)`), as one branch
 * that the policies index `(account_id, resource_type, resource_id)` answers.
 */
function grantsOn(type: string, id: string, actions: string): string {
  return `SELECT pol.principal_id, pol.action FROM policies pol
    WHERE pol.account_id = r.account_id AND pol.resource_type = ${type} AND pol.resource_id = ${id}
      AND pol.principal_type = 'role' AND pol.action = ANY('{${actions}}')`;
}

/** Actions that, held on a report (or account-wide), give some access to it. */
const GLOBAL_REPORT_ACTIONS = actionsGranting(Action.ReportRead).join(',');
const WORKBOOK_REPORT_ACTIONS = actionsGrantingThrough('Workbook', 'Report', Action.ReportRead).join(',');
const FOLDER_REPORT_ACTIONS = actionsGrantingThrough('Folder', 'Report', Action.ReportRead).join(',');

/** One report (`$1` report, `$2` deployment, `$3` account). */
export const READ_REPORT_SQL = reportSelectSql('r.id = $1 AND r.deployment_id = $2 AND r.account_id = $3');
