import { errorsOf } from '../../core/errors/api-error.js';

/** This module's codes. A missing notification is `notFound('Notification', id)` (core). */
export const notificationsError = errorsOf(
  'unsupported_recipient_type',
  'invalid_notification_recipient',
  'notification_recipient_limit_reached',
  'notification_run_in_progress',
  'delivery_not_failed',
  'delivery_not_resendable',
  'notification_delivery_limit_reached',
);
