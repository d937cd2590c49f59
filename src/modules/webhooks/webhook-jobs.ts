import { defineJob } from '../../core/queue/job-definition.js';

/** The first retry waits this long, each further one twice as long, up to {@link MAX_BACKOFF_SECONDS}. */
export const FIRST_BACKOFF_SECONDS = 30;
export const MAX_BACKOFF_SECONDS = 3600;

/** Seconds to wait after attempt `attempt` (from 1) failed: 30 s, doubled each time, at most 1 h. */
export function backoffSeconds(attempt: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** Math.min(attempt - 1, 20));
}

export interface WebhookDeliverPayload {
  deliveryId: string;
}

/**
 * One attempt of one delivery (`webhook-deliver.job.ts`): POSTs it when it is due and not waiting
 * behind an older delivery of the same endpoint and resource, and records the answer. An HTTP
 * failure is recorded, not thrown: the next attempt is queued by the retry sweep when it is due
 * (`next_attempt_at`). What throws (the database lost) is retried by the queue. One job per
 * delivery is queued at a time (dedupe key).
 */
export const WEBHOOK_DELIVER_JOB = defineJob<WebhookDeliverPayload>('webhook.deliver', {
  queue: 'default',
  attempts: 3,
  backoffMs: 5_000,
  timeoutMs: 2 * 60_000,
  concurrency: 8,
  dedupeKey: (p) => `webhook.deliver:${p.deliveryId}`,
});

/**
 * Queues `webhook.deliver` for the deliveries that are due (a retry's time came, or an attempt's
 * worker died and its lease ran out) and not waiting behind an older one. Fired every 30 seconds.
 */
export const WEBHOOK_RETRY_JOB = defineJob<{ scheduledFor?: string }>('webhook.retry', {
  queue: 'default',
  attempts: 2,
  backoffMs: 5_000,
  timeoutMs: 60_000,
  concurrency: 1,
  dedupeKey: () => 'webhook.retry',
});

/** Deletes events and finished deliveries older than `WEBHOOK_RETENTION_DAYS`; fired daily. */
export const WEBHOOK_PRUNE_JOB = defineJob<{ scheduledFor?: string }>('webhook.prune', {
  queue: 'default',
  attempts: 3,
  backoffMs: 10_000,
  timeoutMs: 10 * 60_000,
  concurrency: 1,
  dedupeKey: () => 'webhook.prune',
});

export const RETRY_SCHEDULE_OWNER = 'webhooks:retry';
/** Every 30 seconds: a retry waits at most that long past its time. */
export const RETRY_CRON = '*/30 * * * * *';
export const PRUNE_SCHEDULE_OWNER = 'webhooks:prune';
/** Daily at 03:41 UTC (off the hour, when other daily work fires). */
export const PRUNE_CRON = '41 3 * * *';
