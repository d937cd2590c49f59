import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { DispatchableJob } from './dispatcher.js';
import type { JobName, JobPayloads } from './jobs.js';
import { JOB_QUEUES } from './jobs.js';
import { queryRows } from '../database/sql.js';

/** Seconds a freshly recorded job waits before the relay may pick it up. */
const DISPATCH_GRACE_SECONDS = 15;
export const MAX_ATTEMPTS = 5;

/** SQL over `job_outbox`; see {@link OutboxJob}. */
@Injectable()
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  async record<N extends JobName>(
    manager: EntityManager,
    name: N,
    payload: JobPayloads[N],
  ): Promise<DispatchableJob<N>> {
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO job_outbox (queue, name, payload, available_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING id`,
      [JOB_QUEUES[name], name, JSON.stringify(payload), DISPATCH_GRACE_SECONDS],
    );
    return { id: rows[0].id, name, payload };
  }

  /** Claims due pending jobs for this relay pass, leasing them so no other replica takes them. */
  async claimDue(limit: number, leaseSeconds: number): Promise<DispatchableJob[]> {
    return queryRows<DispatchableJob>(
      this.dataSource,
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => $2)
       WHERE id IN (
         SELECT id FROM job_outbox WHERE status = 'pending' AND available_at <= now()
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, name, payload`,
      [limit, leaseSeconds],
    );
  }

  async lease(id: string, seconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => $2) WHERE id = $1 AND status = 'pending'`,
      [id, seconds],
    );
  }

  async markDispatched(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET status = 'dispatched', dispatched_at = now() WHERE id = $1 AND status = 'pending'`,
      [id],
    );
  }

  async markDone(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET status = 'done', completed_at = now(), attempts = attempts + 1, last_error = NULL
       WHERE id = $1`,
      [id],
    );
  }

  /** Records a failure; the job is retried with back-off until {@link MAX_ATTEMPTS}. */
  async markFailed(id: string, error: string, retry: boolean): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET attempts = attempts + 1, last_error = left($2, 2000),
         status = CASE WHEN $3 AND attempts + 1 < $4 THEN 'pending' ELSE 'failed' END,
         available_at = now() + make_interval(secs => power(2, attempts + 1)::int * 5)
       WHERE id = $1`,
      [id, error, retry, MAX_ATTEMPTS],
    );
  }

  /** Notes a failed attempt of a job whose retries the queue itself schedules. */
  async noteAttempt(id: string, error: string, final: boolean): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET attempts = attempts + 1, last_error = left($2, 2000),
         status = CASE WHEN $3 THEN 'failed' ELSE status END
       WHERE id = $1`,
      [id, error, final],
    );
  }
}
