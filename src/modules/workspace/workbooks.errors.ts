import { errorsOf } from '../../core/errors/api-error.js';

/** Codes of the workbooks and dashboards endpoints. */
export const workbooksError = errorsOf(
  'folder_not_found',
  'dashboard_not_found',
  'slug_taken',
  'upsert_branch_changed',
  'workbook_id_mismatch',
  'nothing_to_publish',
  'shared_workspace_unavailable',
);
