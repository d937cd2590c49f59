import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { DispatchableJob } from './dispatcher.js';
import type { JobName, JobPayloads } from './jobs.js';
import { JOB_QUEUES } from './jobs.js';
import { queryRows } from '../database/sql.js';

/** Seconds a freshly recorded job waits before the relay may pick it up. */
const DISPATCH_GRACE_SECONDS = 15;
export const MAX_ATTEMPTS = 5;
/** Hand-overs after which a job the queue keeps losing is marked failed. */
export const MAX_DISPATCHES = 10;

/** The queue job id of a row's `handover`-th hand-over: a re-dispatch never reuses an old id. */
export const queueJobId = (id: string, handover: number): string =>
  handover <= 1 ? `outbox-${id}` : `outbox-${id}-${handover}`;

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
    return { id: rows[0].id, name, payload, handover: 1 };
  }

  /** Claims due pending jobs for this relay pass, leasing them so no other replica takes them. */
  async claimDue(limit: number, leaseSeconds: number): Promise<DispatchableJob[]> {
    return queryRows<DispatchableJob>(
      this.dataSource,
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => $2)
       WHERE id IN (
         SELECT id FROM job_outbox WHERE status = 'pending' AND available_at <= now()
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, name, payload, dispatches + 1 AS handover`,
      [limit, leaseSeconds],
    );
  }

  /**
   * Claims rows handed to the queue whose lease expired: no worker renewed it, so Redis may have
   * lost the job, or its worker died. Extends their lease for this pass. `handover` is the
   * number of the current hand-over; rows handed over too often are marked failed first.
   */
  async claimLost(limit: number, leaseSeconds: number): Promise<DispatchableJob[]> {
    await this.dataSource.query(
      `UPDATE job_outbox SET status = 'failed', lease_until = NULL,
         last_error = 'lost by the queue ' || dispatches || ' times'
       WHERE status = 'dispatched' AND COALESCE(lease_until, '-infinity') < now() AND dispatches >= $1`,
      [MAX_DISPATCHES],
    );
    return queryRows<DispatchableJob>(
      this.dataSource,
      `UPDATE job_outbox SET lease_until = now() + make_interval(secs => $2)
       WHERE id IN (
         SELECT id FROM job_outbox WHERE status = 'dispatched' AND COALESCE(lease_until, '-infinity') < now()
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, name, payload, GREATEST(dispatches, 1) AS handover`,
      [limit, leaseSeconds],
    );
  }

  async lease(id: string, seconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => $2) WHERE id = $1 AND status = 'pending'`,
      [id, seconds],
    );
  }

  /** Records a hand-over to the queue, leased: a row not finished within it is handed over again. */
  async markDispatched(id: string, handover: number, leaseSeconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET status = 'dispatched', dispatched_at = now(), dispatches = GREATEST(dispatches, $2),
         lease_until = now() + make_interval(secs => $3)
       WHERE id = $1 AND status IN ('pending', 'dispatched')`,
      [id, handover, leaseSeconds],
    );
  }

  /** A worker runs the job: extends its lease (called again as a heartbeat while it runs). */
  async renewLease(id: string, leaseSeconds: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET lease_until = now() + make_interval(secs => $2)
       WHERE id = $1 AND status = 'dispatched'`,
      [id, leaseSeconds],
    );
  }

  async markDone(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE job_outbox SET status = 'done', completed_at = now(), attempts = attempts + 1, last_error = NULL,
         lease_until = NULL
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
