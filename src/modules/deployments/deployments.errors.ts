import { errorsOf } from '../../core/errors/api-error.js';

/** This module's own codes; a missing deployment is `notFound('Deployment', id)` (core). */
export const deploymentsError = errorsOf(
  'unknown_region',
  'release_version_invalid',
  'creation_step_invalid',
  'invalid_env_var_name',
  'duplicate_env_var_name',
  'env_var_placeholder',
  'too_many_env_vars',
);
