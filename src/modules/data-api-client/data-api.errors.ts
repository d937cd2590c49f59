import { errorsOf } from '../../core/errors/api-error.js';

/**
 * What a query to a deployment's Core Data API fails with, besides `notFound('Deployment')`: no
 * data API configured (409: the installation names none, or the deployment has no secret to sign
 * its tokens with; the message names the setting), a data API out of reach or too slow to answer
 * (503, with the cause), one still computing past the wait bound (504), one that fails, refuses
 * our token or answers something unreadable or too large (502), and a query it refuses (400, with
 * its reason).
 */
export const dataApiError = errorsOf(
  'data_api_not_configured',
  'data_api_unavailable',
  'data_api_timeout',
  'data_api_failed',
  'data_api_query_invalid',
);
