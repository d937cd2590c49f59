import { Action, actionsGranting, actionsGrantingThrough } from '../../core/auth/action.js';
import { roleGrantsOnSql } from '../../core/auth/grants.fragments.js';
import { folderChainSql } from '../workspace/workspace.fragments.js';

/**
 * The role grants that give access to the report `r` (in folder `f`): one `SELECT` of
 * `principal_id, action` over the grants on the report, its workbook, the folders above it and
 * account-wide, each branch answered by the policies index `(account_id, resource_type,
 * resource_id)`. Read by the report's one shaping query (`rolesWithAccess`).
 */
export function roleGrantsOnReportSql(): string {
  return `${grantsOn("'Global'", "'*'", GLOBAL_REPORT_ACTIONS)}
    UNION ALL ${grantsOn("'Report'", "ANY(ARRAY[r.id::text, '*'])", GLOBAL_REPORT_ACTIONS)}
    UNION ALL ${grantsOn("'Workbook'", `ANY(ARRAY[r.workbook_id::text, ${ifInside('r.workbook_id')}])`, WORKBOOK_REPORT_ACTIONS)}
    UNION ALL ${grantsOn("'Folder'", `ANY(${folderChainSql('f')}::text[] || ${ifInside('f.id')})`, FOLDER_REPORT_ACTIONS)}`;
}

/**
 * `'*'` (a role's policy on every workbook or folder: `["All"]`) when the report is in a
 * workbook or folder at all, else NULL, which matches nothing.
 */
function ifInside(column: string): string {
  return `CASE WHEN ${column} IS NOT NULL THEN '*' END`;
}

/** Role grants of `actions` on the resources `id` names (`= x` or `= ANY(...)`). */
function grantsOn(type: string, id: string, actions: string): string {
  return roleGrantsOnSql({
    accountId: 'r.account_id',
    resourceType: type,
    resourceIdMatch: `= ${id}`,
    actions: `'{${actions}}'`,
  });
}

/** Actions that, held on a report (or account-wide), give some access to it. */
const GLOBAL_REPORT_ACTIONS = actionsGranting(Action.ReportRead).join(',');
const WORKBOOK_REPORT_ACTIONS = actionsGrantingThrough('Workbook', 'Report', Action.ReportRead).join(',');
const FOLDER_REPORT_ACTIONS = actionsGrantingThrough('Folder', 'Report', Action.ReportRead).join(',');
