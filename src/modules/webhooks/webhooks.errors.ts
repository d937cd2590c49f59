import { errorsOf } from '../../core/errors/api-error.js';

/**
 * This module's codes. A missing endpoint or delivery is `notFound('Webhook', id)` or
 * `notFound('WebhookDelivery', id)` (core).
 */
export const webhooksError = errorsOf('invalid_webhook_url', 'webhook_limit_reached', 'webhook_disabled');
