import { errorsOf } from '../../core/http/api-error.js';

/** Codes of the folders and workspace endpoints. */
export const workspaceError = errorsOf(
  'deployment_not_found',
  'folder_not_found',
  'workbook_not_found',
  'report_not_found',
  'folder_not_empty',
  'folder_too_deep',
  'folder_into_descendant',
);
