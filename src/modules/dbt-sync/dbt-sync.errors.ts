import { notFound } from '../../core/errors/not-found.js';
import { errorsOf } from '../../core/errors/api-error.js';

/**
 * This module's codes. A missing branch is `notFound('Branch', name)` (core); `branch_exists`,
 * `invalid_branch_name` and `invalid_path` are the data model's codes, used here with the same
 * meaning for the branch a sync writes and the project directory of a dbt repository.
 */
export const dbtSyncError = errorsOf(
  'dbt_integration_not_found',
  'invalid_dbt_repository_url',
  'invalid_dbt_ref',
  'dbt_integration_not_configured',
  'invalid_manifest',
  'dbt_sync_finished',
  'dbt_sync_not_completed',
  'dbt_sync_files_on_branch',
  'invalid_branch_name',
  'branch_exists',
  'invalid_path',
);

/** 404 for a sync id that names no sync of the deployment (any string: ids are not validated apart). */
export const syncNotFound = (id: string) => notFound('DbtSync', id.slice(0, 100));
