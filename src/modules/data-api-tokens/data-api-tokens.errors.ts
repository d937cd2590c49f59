import { errorsOf } from '../../core/errors/api-error.js';

/** This module's own codes (a missing environment is `notFound('Environment', id)`, core). */
export const dataApiTokensError = errorsOf('token_limit_reached');
