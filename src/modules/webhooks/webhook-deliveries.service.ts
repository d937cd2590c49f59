import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import type {
  WebhookDeliveriesQueryDto,
  WebhookDeliveryDetailDto,
  WebhookDeliveryDto,
  WebhookEventDto,
} from './dto/webhook-delivery.dto.js';
import { WEBHOOK_DELIVER_JOB } from './webhook-jobs.js';
import { WebhookDeliveriesRepository, type DeliveryRow } from './webhook-deliveries.repository.js';
import { webhooksError } from './webhooks.errors.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** An endpoint's delivery log (newest first), one delivery with its attempts, and redelivery. */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly db: Database,
    private readonly endpoints: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: JobQueue,
  ) {}

  async list(
    actor: Principal,
    endpointId: number,
    query: WebhookDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    await this.requireEndpoint(actor, endpointId);
    const paging = resolvePaging(query, ['number']);
    const after = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.deliveries.page(
      endpointId,
      { status: query.status, eventType: query.eventType },
      after,
      fetchLimit(paging),
    );
    return buildPage(rows, paging, (r) => [Number(r.id)], toDto);
  }

  async get(actor: Principal, endpointId: number, deliveryId: string): Promise<WebhookDeliveryDetailDto> {
    await this.requireEndpoint(actor, endpointId);
    const row = await this.deliveries.find(endpointId, deliveryId);
    if (!row) throw notFound('WebhookDelivery', deliveryId);
    const p = row.payload;
    const event: WebhookEventDto = {
      id: p.id as string,
      type: p.type as string,
      timestamp: p.timestamp as string,
      resource: p.resource as WebhookEventDto['resource'],
      data: (p.data ?? {}) as Record<string, unknown>,
    };
    return { ...toDto(row), event, attemptLog: row.attemptLog };
  }

  /**
   * A new delivery of the same event (same event id, so the same `webhook-id`) to the endpoint,
   * queued now whatever became of the one it repeats. A disabled endpoint refuses it (409).
   */
  async redeliver(actor: Principal, endpointId: number, deliveryId: string): Promise<WebhookDeliveryDto> {
    this.jobs.assertAvailable();
    const id = await this.db.transaction(async () => {
      if (!(await this.endpoints.lock(actor.accountId, endpointId))) throw notFound('Webhook', endpointId);
      const endpoint = await this.endpoints.find(actor.accountId, endpointId);
      if (!endpoint!.enabled) {
        throw webhooksError(
          'webhook_disabled',
          `Webhook endpoint ${endpointId} is disabled; enable it before redelivering`,
        );
      }
      const created = await this.deliveries.redeliver(endpointId, deliveryId);
      if (!created) throw notFound('WebhookDelivery', deliveryId);
      await this.jobs.enqueue(
        WEBHOOK_DELIVER_JOB,
        { deliveryId: created.id },
        { accountId: created.accountId },
      );
      return created.id;
    });
    const row = await this.deliveries.find(endpointId, id);
    return toDto(row!);
  }

  private async requireEndpoint(actor: Principal, endpointId: number): Promise<void> {
    if (!(await this.endpoints.find(actor.accountId, endpointId))) throw notFound('Webhook', endpointId);
  }
}

function toDto(row: DeliveryRow): WebhookDeliveryDto {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType,
    resource: row.resource,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastDurationMs: row.lastDurationMs,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt,
    deliveredAt: row.deliveredAt,
    redeliveryOf: row.redeliveryOf,
    createdAt: row.createdAt,
  };
}
