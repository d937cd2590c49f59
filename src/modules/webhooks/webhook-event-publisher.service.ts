import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { DomainEvents, type DomainEvent } from '../../core/events/domain-events.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { WEBHOOK_DELIVER_JOB } from './webhook-jobs.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** The body every delivery of an event POSTs, in this field order. */
export interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  resource: { type: string; id: string | number };
  data: Record<string, unknown>;
}

/** The exact text POSTed for a stored event payload (its fields in a fixed order). */
export function eventBodyText(payload: Record<string, unknown>): string {
  const body: EventBody = {
    id: payload.id as string,
    type: payload.type as string,
    timestamp: payload.timestamp as string,
    resource: payload.resource as EventBody['resource'],
    data: (payload.data ?? {}) as Record<string, unknown>,
  };
  return JSON.stringify(body);
}

/**
 * {@link DomainEvents} for the whole application (provided globally by the webhooks module): an
 * event is recorded in the unit of work of the change, with one delivery per enabled endpoint of
 * the account subscribed to it, in one statement, and a `webhook.deliver` job per delivery
 * (handed to the queue after the commit). An account without endpoints pays for that one insert.
 */
@Injectable()
export class WebhookEventPublisher extends DomainEvents {
  constructor(
    private readonly db: Database,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: JobQueue,
  ) {
    super();
  }

  async publish(event: DomainEvent): Promise<void> {
    const timestamp = new Date().toISOString();
    const id = `evt_${randomUUID().replace(/-/g, '')}`;
    const body: EventBody = {
      id,
      type: event.type,
      timestamp,
      resource: { type: event.resource.type, id: event.resource.id },
      data: event.data,
    };
    await this.db.transaction(async () => {
      const recorded = await this.deliveries.recordEvent({
        publicId: id,
        accountId: event.accountId,
        type: event.type,
        resourceType: event.resource.type,
        resourceId: String(event.resource.id),
        payload: JSON.stringify(body),
        occurredAt: timestamp,
      });
      for (const delivery of recorded.deliveries) {
        await this.jobs.enqueue(
          WEBHOOK_DELIVER_JOB,
          { deliveryId: delivery.id },
          { accountId: delivery.accountId },
        );
      }
    });
  }
}
