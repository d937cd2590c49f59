import type { INestApplicationContext } from '@nestjs/common';
import { NotificationDeliverJob } from '../../src/modules/notifications/notification-deliver.job.js';
import {
  NOTIFICATION_DELIVER_JOB,
  NOTIFICATION_RUN_JOB,
  type NotificationDeliverPayload,
} from '../../src/modules/notifications/notification-jobs.js';
import { NotificationRunJob } from '../../src/modules/notifications/notification-run.job.js';
import { TestJobs } from './job-context.js';

type Sql = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

/**
 * Runs notification jobs without a worker: a `notification.run` by calling its handler on its
 * real run record, and the `notification.deliver` jobs in the order they were recorded in the
 * outbox (test/support/job-context.ts). One per test app: it remembers the last delivery job run.
 */
export class NotificationJobs {
  private lastDeliverJob = '0';

  constructor(
    private readonly app: () => INestApplicationContext,
    private readonly sql: Sql,
  ) {}

  /** One attempt of the `notification.run` job run `jobRunId`, as a worker makes it. */
  runJob(jobRunId: string) {
    return new TestJobs(this.app()).attempt(NOTIFICATION_RUN_JOB, jobRunId, (payload, ctx) =>
      this.app().get(NotificationRunJob).run(payload, ctx),
    );
  }

  /** The `notification.deliver` job of one delivery, retried as its queue would, until it ends. */
  deliver(deliveryId: string) {
    return new TestJobs(this.app()).plain(NOTIFICATION_DELIVER_JOB, { deliveryId }, (payload, ctx) =>
      this.app().get(NotificationDeliverJob).deliver(payload, ctx),
    );
  }

  /** Runs every `notification.deliver` job recorded since the last call; answers how many. */
  async deliverQueued(): Promise<number> {
    const recorded = await this.sql<{ id: string; payload: NotificationDeliverPayload }>(
      `SELECT id, payload FROM job_outbox WHERE name = 'notification.deliver' AND id > $1 ORDER BY id`,
      [this.lastDeliverJob],
    );
    for (const job of recorded) {
      this.lastDeliverJob = job.id;
      await this.deliver(job.payload.deliveryId);
    }
    return recorded.length;
  }
}
