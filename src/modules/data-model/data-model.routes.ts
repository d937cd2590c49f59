import type { Page } from '../../core/http/pagination.js';

/** What the data-model controllers share: the base path, the bare success answer, error lists. */
export const DATA_MODEL_ROUTES = 'build/api/v1/deployments/:deploymentId';

export const OK = { success: true } as const;

export const WRITE_ERRORS = [
  'validation_failed',
  'deployment_not_found',
  'branch_not_found',
  'branch_not_writable',
  'not_in_dev_mode',
  'invalid_path',
  'invalid_branch_name',
] as const;

export const MERGE_ERRORS = [
  'validation_failed',
  'deployment_not_found',
  'branch_not_found',
  'not_in_dev_mode',
  'invalid_branch_name',
  'branch_not_writable',
  'nothing_to_merge',
  'merge_conflict',
  'merge_not_allowed',
  'merge_gate_unmet',
  'merge_gate_override_forbidden',
  'compiler_unavailable',
  'compile_limit_reached',
  'remote_failed',
  'queue_unavailable',
] as const;

/** Paging of a list whose items are served whole: `items` and the deprecated `data`. */
export function legacy<T>(page: Page<T>): Page<T> & { data: T[] } {
  return { ...page, data: page.items };
}
