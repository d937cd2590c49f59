import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import {
  PRUNE_CRON,
  PRUNE_SCHEDULE_OWNER,
  RETRY_CRON,
  RETRY_SCHEDULE_OWNER,
  WEBHOOK_DELIVER_JOB,
  WEBHOOK_PRUNE_JOB,
  WEBHOOK_RETRY_JOB,
} from './webhook-jobs.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** Most deliveries one sweep queues; the next sweep takes the rest. */
const SWEEP_LIMIT = 1000;

/**
 * The two schedules of the module: the retry sweep (every 30 s) and the prune (daily). They are
 * made by the first endpoint created in a process, or the first retry it schedules (processes
 * doing so together make one of each).
 */
@Injectable()
export class WebhookMaintenance {
  private readonly logger = new Logger('Webhooks');
  private scheduled: Promise<void> | null = null;

  constructor(
    private readonly db: Database,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: JobQueue,
    private readonly schedules: JobSchedules,
    private readonly config: AppConfig,
  ) {}

  /** Queues `webhook.deliver` for every due delivery (one job per delivery at a time: dedupe key). */
  @JobHandler(WEBHOOK_RETRY_JOB)
  async retryDue(): Promise<void> {
    const due = await this.deliveries.due(SWEEP_LIMIT);
    if (due.length === 0) return;
    await this.db.transaction(async () => {
      for (const d of due) {
        await this.jobs.enqueue(WEBHOOK_DELIVER_JOB, { deliveryId: d.id }, { accountId: d.accountId });
      }
    });
  }

  /** Deletes events and finished deliveries older than `WEBHOOK_RETENTION_DAYS`. */
  @JobHandler(WEBHOOK_PRUNE_JOB)
  async prune(): Promise<void> {
    const pruned = await this.deliveries.prune(this.config.webhooks.retentionDays);
    if (pruned.deliveries + pruned.events > 0) {
      this.logger.log(pruned, 'pruned old webhook deliveries and events');
    }
  }

  /** Makes sure both schedules exist; a failure is logged and tried again by the next caller. */
  ensureScheduled(): Promise<void> {
    this.scheduled ??= (async () => {
      await this.schedules.ensure({
        owner: RETRY_SCHEDULE_OWNER,
        job: WEBHOOK_RETRY_JOB,
        cron: RETRY_CRON,
        payload: {},
      });
      await this.schedules.ensure({
        owner: PRUNE_SCHEDULE_OWNER,
        job: WEBHOOK_PRUNE_JOB,
        cron: PRUNE_CRON,
        payload: {},
      });
    })().catch((err: unknown) => {
      this.scheduled = null;
      this.logger.warn({ err }, 'could not schedule the webhook retry sweep and prune');
    });
    return this.scheduled;
  }
}
