import { errorsOf } from '../../core/http/api-error.js';

export const deploymentsError = errorsOf('deployment_not_found', 'unknown_region', 'release_version_invalid');
