import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { queryRows } from '../database/sql.js';
import { startHeartbeat } from './heartbeat.js';
import { JobQueue } from './job-queue.service.js';
import type { JobName, JobPayloads } from './jobs.js';

/**
 * A table of runs: rows that a job works on, with `status` (`queued`, `running`, then a final
 * status), `attempts`, `lease_until`, `started_at`, `finished_at` and `error` columns.
 */
export interface RunTable<N extends JobName = JobName> {
  /** The table's name: a constant of the owning module, never input. */
  readonly table: string;
  /** The job that runs one row. */
  readonly job: N;
  /** The job's payload for row `id`. */
  payload(id: number): JobPayloads[N];
  /** The payload field that holds the row's id (how the sweep finds a run's jobs in the outbox). */
  readonly payloadKey: keyof JobPayloads[N] & string;
  /** Claims after which a run whose worker keeps dying is marked failed instead of re-queued. */
  readonly maxAttempts: number;
}

/** A worker's hold on one run; `attempt` fences out a worker whose lease was taken over. */
export interface RunClaim {
  readonly id: number;
  readonly attempt: number;
}

/**
 * Claims, leases and crash recovery of runs (see the job handler contract in `README.md` of
 * this folder). A claim holds a lease that a heartbeat renews while the work runs; a run whose
 * lease expired (its worker died) is taken over by the next job that asks for it, and the
 * recovery sweep on the outbox relay's tick re-queues it when no job is left to do so.
 */
@Injectable()
export class RunLeases {
  private readonly logger = new Logger(RunLeases.name);
  private readonly tables: RunTable[] = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  /** Registers a table for the recovery sweep (at start-up, next to the job's handler). */
  register(runs: RunTable): void {
    this.tables.push(runs);
  }

  /**
   * Claims a `queued` run, or takes over a `running` one whose lease expired. Null when the run
   * is finished, gone, or held by a live worker: the caller then has nothing to do.
   */
  async claim(runs: RunTable, id: number): Promise<RunClaim | null> {
    const rows = await queryRows<{ attempts: number }>(
      this.dataSource,
      `UPDATE ${runs.table} SET status = 'running', started_at = now(), attempts = attempts + 1,
         lease_until = now() + make_interval(secs => $2)
       WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND lease_until < now()))
       RETURNING attempts`,
      [id, this.config.queue.jobLeaseSeconds],
    );
    return rows.length === 0 ? null : { id, attempt: rows[0].attempts };
  }

  /**
   * Runs `work` under the claim, renewing its lease meanwhile. When `work` throws, the run goes
   * back to `queued` so the job's retry claims it at once, and the error is rethrown.
   */
  async hold<T>(runs: RunTable, claim: RunClaim, work: () => Promise<T>): Promise<T> {
    const leaseMs = this.config.queue.jobLeaseSeconds * 1000;
    const stop = startHeartbeat(() => this.renew(runs, claim), Math.max(1000, leaseMs / 3));
    try {
      return await work();
    } catch (err) {
      await this.dataSource
        .query(
          `UPDATE ${runs.table} SET status = 'queued', lease_until = NULL
           WHERE id = $1 AND status = 'running' AND attempts = $2`,
          [claim.id, claim.attempt],
        )
        .catch(() => undefined);
      throw err;
    } finally {
      stop();
    }
  }

  /** Extends the lease; false when the claim was lost (taken over or finished elsewhere). */
  async renew(runs: RunTable, claim: RunClaim): Promise<boolean> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE ${runs.table} SET lease_until = now() + make_interval(secs => $3)
       WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING id`,
      [claim.id, claim.attempt, this.config.queue.jobLeaseSeconds],
    );
    return rows.length > 0;
  }

  /** Records the outcome; false (and nothing written) when the claim was lost meanwhile. */
  async finish(
    runs: RunTable,
    claim: RunClaim,
    status: string,
    error: string | null = null,
  ): Promise<boolean> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE ${runs.table} SET status = $3, error = $4, finished_at = now(), lease_until = NULL
       WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING id`,
      [claim.id, claim.attempt, status, error],
    );
    return rows.length > 0;
  }

  /**
   * The recovery sweep: re-queues (with a new job) every run stuck `running` past its lease, or
   * marks it failed once it used up its attempts; and fails every run left `queued` whose jobs
   * all failed for good (its last attempt threw, so no job is left to run it). Returns how many
   * runs it recovered.
   */
  async recoverStuck(limit = 50): Promise<number> {
    let recovered = 0;
    for (const runs of this.tables) {
      recovered += await this.failOrphaned(runs);
      const { jobs, failed } = await this.dataSource.transaction(async (manager) => {
        const stuck = await queryRows<{ id: number; attempts: number }>(
          manager,
          `SELECT id, attempts FROM ${runs.table} WHERE status = 'running' AND lease_until < now()
           ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [limit],
        );
        const spent = stuck.filter((r) => r.attempts >= runs.maxAttempts).map((r) => r.id);
        const retry = stuck.filter((r) => r.attempts < runs.maxAttempts).map((r) => r.id);
        if (spent.length > 0) {
          await manager.query(
            `UPDATE ${runs.table} SET status = 'failed', finished_at = now(), lease_until = NULL,
               error = 'abandoned: its worker stopped ' || attempts || ' times before finishing'
             WHERE id = ANY($1)`,
            [spent],
          );
        }
        if (retry.length > 0) {
          await manager.query(
            `UPDATE ${runs.table} SET status = 'queued', lease_until = NULL WHERE id = ANY($1)`,
            [retry],
          );
        }
        const recorded = [];
        for (const id of retry) recorded.push(await this.jobs.record(manager, runs.job, runs.payload(id)));
        return { jobs: recorded, failed: spent.length };
      });
      if (jobs.length + failed > 0) {
        this.logger.warn(
          { table: runs.table, requeued: jobs.length, failed },
          'recovered runs stuck past their lease',
        );
      }
      await this.jobs.dispatch(jobs);
      recovered += jobs.length + failed;
    }
    return recovered;
  }

  /**
   * Fails `queued` runs that have a failed job and no job still pending or dispatched. Failed
   * jobs are few (each is an alert in the operations guide), so the scan stays small.
   */
  private async failOrphaned(runs: RunTable): Promise<number> {
    const failed = await queryRows<{ id: number }>(
      this.dataSource,
      `UPDATE ${runs.table} r SET status = 'failed', finished_at = now(), lease_until = NULL,
         error = 'its job failed: ' || coalesce(o.last_error, 'unknown error')
       FROM (SELECT DISTINCT ON ((payload->>$2)::bigint) (payload->>$2)::bigint AS run_id, last_error
             FROM job_outbox WHERE name = $1 AND status = 'failed'
             ORDER BY (payload->>$2)::bigint, id DESC) o
       WHERE r.id = o.run_id AND r.status = 'queued'
         AND NOT EXISTS (SELECT 1 FROM job_outbox l WHERE l.name = $1
           AND l.status IN ('pending', 'dispatched') AND (l.payload->>$2)::bigint = r.id)
       RETURNING r.id`,
      [runs.job, runs.payloadKey],
    );
    if (failed.length > 0) {
      this.logger.warn(
        { table: runs.table, failed: failed.length },
        'failed runs whose jobs failed for good',
      );
    }
    return failed.length;
  }
}
