import { errorsOf } from '../../core/errors/api-error.js';

export const usageError = errorsOf('usage_analytics_disabled');
