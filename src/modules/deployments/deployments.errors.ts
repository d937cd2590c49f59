import { errorsOf } from '../../core/http/api-error.js';

/** This module's own codes; a missing deployment is `notFound('Deployment', id)` (core). */
export const deploymentsError = errorsOf(
  'unknown_region',
  'release_version_invalid',
  'creation_step_invalid',
);
