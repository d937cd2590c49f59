import { Injectable, Logger } from '@nestjs/common';
import { defineJob, JobHandler } from '../../queue/job-definition.js';
import { JobSchedules } from '../../queue/job-schedules.service.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/** Deletes expired idempotency keys; fired by a schedule (hourly). */
export const IDEMPOTENCY_PRUNE_JOB = defineJob<{ scheduledFor?: string }>('idempotency.prune', {
  queue: 'default',
  attempts: 3,
  backoffMs: 10_000,
  timeoutMs: 5 * 60_000,
  concurrency: 1,
  dedupeKey: () => 'idempotency.prune',
});

export const PRUNE_SCHEDULE_OWNER = 'idempotency:prune';
/** Every hour, at minute 17 (off the hour, when other hourly work fires). */
export const PRUNE_CRON = '17 * * * *';

/**
 * The prune of expired keys. A claim replaces an expired key anyway; the prune only keeps the
 * table from growing with keys nobody sends again. The schedule is made by the first request of
 * a process that uses a key (once per process; processes starting together make one).
 */
@Injectable()
export class IdempotencyPrune {
  private readonly logger = new Logger(IdempotencyPrune.name);
  private scheduled: Promise<void> | null = null;

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly schedules: JobSchedules,
  ) {}

  @JobHandler(IDEMPOTENCY_PRUNE_JOB)
  async run(): Promise<void> {
    const pruned = await this.keys.prune();
    if (pruned > 0) this.logger.log(`Deleted ${pruned} expired idempotency keys`);
  }

  /** Makes sure the prune is scheduled; a failure is logged and tried again by the next request. */
  ensureScheduled(): Promise<void> {
    this.scheduled ??= this.schedules
      .ensure({ owner: PRUNE_SCHEDULE_OWNER, job: IDEMPOTENCY_PRUNE_JOB, cron: PRUNE_CRON, payload: {} })
      .then(
        () => undefined,
        (err: unknown) => {
          this.scheduled = null;
          this.logger.warn({ err }, 'could not schedule the prune of idempotency keys');
        },
      );
    return this.scheduled;
  }
}
