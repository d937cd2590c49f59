import { isoSql } from '../../core/database/sql-text.js';
import { deploymentInAccountSql } from '../deployments/deployments.fragments.js';
import { resourceOwnerSql, roleJoin, userJoin } from '../users/users.fragments.js';
import { folderJoin, folderPathSql } from '../workspace/workspace.fragments.js';
import { roleGrantsOnReportSql } from './report-grants.sql.js';

/**
 * The one query that shapes reports: the row, its owner, who refreshed it, its folder path, its
 * placements and the custom roles with access, in a single round trip. `where` filters `r`;
 * `tail` adds ORDER BY and LIMIT. Parameters are named (`:name`). The bench baseline runs this
 * very text.
 */
export function reportSelectSql(where: string, tail = ''): string {
  return `
SELECT r.id, r.public_id AS "publicId", r.deployment_id AS "deploymentId", r.user_id AS "userId",
  ${resourceOwnerSql('o')} AS "user", ${resourceOwnerSql('rb')} AS "refreshedByUser",
  r.name, r.created_at AS "createdAt", r.updated_at AS "updatedAt", r.created_by AS "createdBy",
  r.description, r.title, r.json_query AS "jsonQuery", r.sql_query AS "sqlQuery", r.python_code AS "pythonCode", r.meta,
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
         FROM (${roleGrantsOnReportSql()}) g
         ${roleJoin('g.principal_id', 'ro')}
         GROUP BY ro.id, ro.name) ra) AS "rolesWithAccess"
FROM reports r
${userJoin('r.user_id', 'o', 'INNER')}
${userJoin('r.refreshed_by', 'rb')}
${folderJoin('r.folder_id', 'f')}
WHERE ${where}
${tail}`;
}

/** One report (`:reportId` of `:deploymentId` in `:accountId`). */
export const READ_REPORT_SQL = reportSelectSql(
  'r.id = :reportId AND r.deployment_id = :deploymentId AND r.account_id = :accountId',
);

/**
 * The number of reports of `:deploymentId` without counting them: its row of `report_counts`,
 * which statement triggers on `reports` keep exact in the writers' own transactions (migration
 * 1764300000000). Also whether the deployment is in `:accountId`.
 */
export const REPORT_COUNT_SQL = `SELECT COALESCE((SELECT c.n FROM report_counts c WHERE c.deployment_id = :deploymentId), 0) AS n,
  ${deploymentInAccountSql(':deploymentId', ':accountId')} AS "deploymentExists"`;
