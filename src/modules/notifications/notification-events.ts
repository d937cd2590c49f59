import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../../core/events/domain-events.js';
import type { NotificationDeliveryDto } from './dto/recipient.dto.js';
import type { DeliveryDetail, RunCounts, RunView } from './notification-runs.repository.js';

/** The delivery as the deliveries list shows it. */
export function deliveryDto(row: DeliveryDetail): NotificationDeliveryDto {
  return {
    id: row.id,
    runId: row.runId,
    scheduledFor: row.scheduledFor,
    recipientType: row.recipientType,
    userId: row.userId,
    embedUserId: row.embedUserId,
    email: row.email,
    status: row.status,
    attempts: row.attempts,
    lastError: row.lastError,
    smtpResponse: row.smtpResponse,
    messageId: row.messageId,
    aiSummary: row.aiSummary,
    sentAt: row.sentAt,
    resends: row.resends,
    createdAt: row.createdAt,
  };
}

/**
 * The events of scheduled notifications (docs/notifications.md, Events), each published in the
 * unit of work of the compare-and-set that makes it true, so a job run twice publishes nothing
 * twice:
 * - `notification.delivery_failed`: a delivery ended `failed` (refused for good by the mail
 *   server, out of retries, or never sent because its run made nothing to send); the data is the
 *   delivery as the deliveries list shows it, with `notificationId`;
 * - `notification.run_finished`: every delivery of a run to its recipients has ended; the data is
 *   the run with its counts.
 */
@Injectable()
export class NotificationEvents {
  constructor(private readonly events: DomainEvents) {}

  async deliveryFailed(rows: readonly DeliveryDetail[]): Promise<void> {
    for (const row of rows) {
      await this.events.publish({
        accountId: row.accountId,
        type: 'notification.delivery_failed',
        resource: { type: 'notification_delivery', id: row.id },
        data: { ...deliveryDto(row), notificationId: row.notificationId },
      });
    }
  }

  async runFinished(accountId: number, run: RunView, counts: RunCounts): Promise<void> {
    await this.events.publish({
      accountId,
      type: 'notification.run_finished',
      resource: { type: 'notification_run', id: run.id },
      data: { ...run, counts },
    });
  }
}
