import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import type { DispatchableJob } from './dispatcher.js';

/** Seconds a freshly recorded job waits before the relay may pick it up. */
const DISPATCH_GRACE_SECONDS = 15;
/** Hand-overs after which a job the queue keeps losing is marked failed. */
export const MAX_DISPATCHES = 10;

/** The queue job id of a row's `handover`-th hand-over: a re-dispatch never reuses an old id. */
export const queueJobId = (id: string, handover: number): string =>
  handover <= 1 ? `outbox-${id}` : `outbox-${id}-${handover}`;

const RETURNING = `id, name, payload, account_id AS "accountId", run_id AS "runId", attempts`;

/**
 * SQL over `job_outbox` (see {@link OutboxJob}): transport only. Writes join the current unit of
 * work (`Database`), so a job is recorded with the change that causes it, or not at all.
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly db: Database) {}

  /**
   * Records a job; null when a job with the same `dedupeKey` is already pending or dispatched
   * (the same work is queued once).
   */
  async record(
    queue: string,
    name: string,
    payload: object,
    options: { accountId?: number | null; runId?: string | null; dedupeKey?: string | null } = {},
  ): Promise<DispatchableJob | null> {
    const row = await this.db.one<Omit<DispatchableJob, 'handover'>>(
      `INSERT INTO job_outbox (queue, name, payload, account_id, run_id, dedupe_key, available_at)
       VALUES (:queue, :name, :payload, :accountId, :runId, :dedupeKey, now() + make_interval(secs => :grace))
       ON CONFLICT (dedupe_key) WHERE status IN ('pending', 'dispatched') DO NOTHING
       RETURNING ${RETURNING}`,
      {
        queue,
        name,
        payload: JSON.stringify(payload),
        accountId: options.accountId ?? null,
        runId: options.runId ?? null,
        dedupeKey: options.dedupeKey ?? null,
        grace: DISPATCH_GRACE_SECONDS,
      },
    );
    return row ? { ...row, handover: 1 } : null;
  }

  /** Claims due pending jobs for this relay pass, leasing them so no other replica takes them. */
  claimDue(limit: number, leaseSeconds: number): Promise<DispatchableJob[]> {
    return this.db.query<DispatchableJob>(
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => :leaseSeconds)
       WHERE id IN (
         SELECT id FROM job_outbox WHERE status = 'pending' AND available_at <= now()
         ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED)
       RETURNING ${RETURNING}, dispatches + 1 AS handover`,
      { limit, leaseSeconds },
    );
  }

  /**
   * Claims rows handed to the queue whose lease expired: no worker renewed it, so Redis may have
   * lost the job, or its worker died. Extends their lease for this pass. `handover` is the
   * number of the current hand-over; rows handed over too often are marked failed first.
   */
  async claimLost(limit: number, leaseSeconds: number): Promise<DispatchableJob[]> {
    await this.db.query(
      `UPDATE job_outbox SET status = 'failed', lease_until = NULL,
         last_error = 'lost by the queue ' || (dispatches - deferrals) || ' times'
       WHERE status = 'dispatched' AND COALESCE(lease_until, '-infinity') < now()
         AND dispatches - deferrals >= :max`,
      { max: MAX_DISPATCHES },
    );
    return this.db.query<DispatchableJob>(
      `UPDATE job_outbox SET lease_until = now() + make_interval(secs => :leaseSeconds)
       WHERE id IN (
         SELECT id FROM job_outbox WHERE status = 'dispatched' AND COALESCE(lease_until, '-infinity') < now()
         ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED)
       RETURNING ${RETURNING}, GREATEST(dispatches, 1) AS handover`,
      { limit, leaseSeconds },
    );
  }

  /** An in-process job runs: extends its pending row's lease (called again as a heartbeat). */
  async lease(id: string, seconds: number): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => :seconds)
       WHERE id = :id AND status = 'pending'`,
      { id, seconds },
    );
  }

  /**
   * An in-process job deferred (its account holds its share of the job here): due again in
   * `delayMs`, attempts untouched. Its lease is replaced, so the relay hands it over once due.
   */
  async defer(id: string, delayMs: number): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET available_at = now() + make_interval(secs => :delayMs / 1000.0)
       WHERE id = :id AND status = 'pending'`,
      { id, delayMs },
    );
  }

  /**
   * Records a hand-over to the queue, leased: a row not finished within it is handed over again.
   * The worker may finish the job before this runs (it is added to the queue first): the
   * hand-over is still counted, and the finished status is kept.
   * `deferred`: the hand-over defers the job (its account held its share), counted in
   * `deferrals`, so it is not taken for a loss.
   */
  async markDispatched(id: string, handover: number, leaseSeconds: number, deferred = false): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET dispatches = GREATEST(dispatches, :handover),
         deferrals = deferrals + CASE WHEN :deferred AND :handover > dispatches THEN 1 ELSE 0 END,
         status = CASE WHEN status IN ('pending', 'dispatched') THEN 'dispatched' ELSE status END,
         dispatched_at = CASE WHEN status IN ('pending', 'dispatched') THEN now() ELSE dispatched_at END,
         lease_until = CASE WHEN status IN ('pending', 'dispatched')
           THEN now() + make_interval(secs => :leaseSeconds) ELSE lease_until END
       WHERE id = :id`,
      { id, handover, leaseSeconds, deferred },
    );
  }

  /** A worker runs the job: extends its lease (called again as a heartbeat while it runs). */
  async renewLease(id: string, leaseSeconds: number): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET lease_until = now() + make_interval(secs => :leaseSeconds)
       WHERE id = :id AND status = 'dispatched'`,
      { id, leaseSeconds },
    );
  }

  async markDone(id: string): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET status = 'done', completed_at = now(), attempts = attempts + 1, last_error = NULL,
         lease_until = NULL
       WHERE id = :id`,
      { id },
    );
  }

  /**
   * Records a failed in-process attempt: back to `pending` after `backoffMs`, doubled at each
   * further attempt, until `maxAttempts`; then `failed`.
   */
  async markFailed(id: string, error: string, maxAttempts: number, backoffMs: number): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET attempts = attempts + 1, last_error = left(:error, 2000),
         status = CASE WHEN attempts + 1 < :maxAttempts THEN 'pending' ELSE 'failed' END,
         available_at = now() + make_interval(secs => power(2, attempts)::int * :backoffMs / 1000.0)
       WHERE id = :id`,
      { id, error, maxAttempts, backoffMs },
    );
  }

  /** Notes a failed attempt of a job whose retries the queue itself schedules. */
  async noteAttempt(id: string, error: string, final: boolean): Promise<void> {
    await this.db.query(
      `UPDATE job_outbox SET attempts = attempts + 1, last_error = left(:error, 2000),
         status = CASE WHEN :final THEN 'failed' ELSE status END
       WHERE id = :id`,
      { id, error, final },
    );
  }
}
