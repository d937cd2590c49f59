import { errorsOf } from '../../core/http/api-error.js';

export const usageError = errorsOf('usage_analytics_disabled');
