import { errorsOf } from '../../core/errors/api-error.js';

/**
 * This module's own codes. Missing branches and upload transactions are
 * `notFound('Branch', name)` / `notFound('UploadTransaction', id)` (core).
 */
export const dataModelError = errorsOf(
  'invalid_branch_name',
  'branch_exists',
  'deploy_branch_protected',
  'branch_not_writable',
  'not_in_dev_mode',
  'staging_not_allowed',
  'invalid_path',
  'file_not_found',
  'file_exists',
  'file_too_large',
  'too_many_files',
  'nothing_to_merge',
  'merge_conflict',
  'merge_not_allowed',
  'merge_gate_unmet',
  'merge_gate_override_forbidden',
  'cannot_review_own_change',
  'upload_hash_mismatch',
  'upload_limit_reached',
  'remote_not_connected',
  'remote_failed',
  'service_unavailable',
  'compile_limit_reached',
  'conflict',
  'repository_of_another_installation',
);
