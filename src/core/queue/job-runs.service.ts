import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';
import { isoSql } from '../database/sql.js';
import type { JobLogLevel } from './job-context.js';
import type { RunStatus } from './entities/job-run.entity.js';

/** A worker's hold on one run; `attempt` fences out a worker whose lease was taken over. */
export interface RunClaim {
  readonly id: string;
  readonly attempt: number;
}

/** A run as users see it. */
export interface RunView {
  id: string;
  job: string;
  accountId: number | null;
  owner: string | null;
  status: RunStatus;
  phase: string | null;
  progress: { current: number; total: number | null } | null;
  attempts: number;
  error: string | null;
  cancelRequestedAt: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface RunLogLine {
  id: string;
  attempt: number;
  at: string;
  level: JobLogLevel;
  message: string;
  /** The run's phase when the line was written (null before the first phase). */
  phase: string | null;
  /** For a line that closes a step: how long the step took, ms. */
  durationMs: number | null;
}

/** A line of one of an owner's runs, for a view that merges them (a deployment's logs). */
export interface OwnerLogLine {
  id: string;
  runId: string;
  job: string;
  /** ISO 8601 in UTC with microseconds: exact, so a page can continue after it. */
  at: string;
  level: JobLogLevel;
  message: string;
}

const VIEW = `id, job, account_id AS "accountId", owner, status, phase,
  CASE WHEN progress_current IS NULL THEN NULL
       ELSE json_build_object('current', progress_current, 'total', progress_total) END AS progress,
  attempts, error, ${isoSql('cancel_requested_at')} AS "cancelRequestedAt", ${isoSql('created_at')} AS "createdAt",
  ${isoSql('started_at')} AS "startedAt", ${isoSql('finished_at')} AS "finishedAt"`;

/**
 * For a module whose rows point at their run (`<table>.run_id`) and must filter or page on the
 * run's state in the same query (a history list filtered by status): the join of the run under
 * `alias` (`JOIN job_runs r ON r.id = s.run_id`). The table's name stays here, with its owner;
 * its columns are those of {@link RunView} in snake case (`status`, `phase`, `error`,
 * `created_at`, `started_at`, `finished_at`, `cancel_requested_at`).
 */
export function runJoinSql(runIdColumn: string, alias: string): string {
  return `JOIN job_runs ${alias} ON ${alias}.id = ${runIdColumn}`;
}

/** Fenced: only while the claim is the run's current one. */
const HELD = `status = 'running' AND attempts = :attempt`;

/**
 * Run records (`job_runs`, `job_run_logs`): the service API modules use to show, list and cancel
 * runs, and the claims, leases and fenced writes the job runner makes. Every call joins the
 * current unit of work (`Database`).
 */
@Injectable()
export class JobRuns {
  constructor(
    private readonly db: Database,
    private readonly config: AppConfig,
  ) {}

  // --- What modules use -------------------------------------------------------------------------

  get(id: string): Promise<RunView | undefined> {
    return this.db.one<RunView>(`SELECT ${VIEW} FROM job_runs WHERE id = :id`, { id });
  }

  /** Runs of `owner` (`deployment:42`), newest first. */
  listByOwner(owner: string, limit = 50): Promise<RunView[]> {
    return this.db.query<RunView>(
      `SELECT ${VIEW} FROM job_runs WHERE owner = :owner ORDER BY id DESC LIMIT :limit`,
      { owner, limit },
    );
  }

  /** The run's log lines, oldest first; `afterId` continues from the last line read. */
  logs(id: string, afterId = '0', limit = 1000): Promise<RunLogLine[]> {
    return this.db.query<RunLogLine>(
      `SELECT id, attempt, ${isoSql('at')} AS at, level, message, phase, duration_ms AS "durationMs"
       FROM job_run_logs WHERE run_id = :id AND id > :afterId ORDER BY id LIMIT :limit`,
      { id, afterId, limit },
    );
  }

  /**
   * The log lines of every run of `owner` in time order (`at`, then line id), optionally of run
   * `runId` only. With `after` (a line's `at` and id): the `limit` lines that follow it, oldest
   * first. Without: the last `limit` lines, newest first (the caller reverses the tail).
   */
  ownerLogs(
    owner: string,
    options: { runId: string | null; after: { at: string; id: string } | null; limit: number },
  ): Promise<OwnerLogLine[]> {
    const { runId, after, limit } = options;
    const order = after ? 'ASC' : 'DESC';
    return this.db.query<OwnerLogLine>(
      `SELECT l.id, l.run_id AS "runId", r.job,
         to_char(l.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, l.level, l.message
       FROM job_run_logs l JOIN job_runs r ON r.id = l.run_id
       WHERE r.owner = :owner${runId ? ' AND r.id = :runId' : ''}
         ${after ? 'AND (l.at, l.id) > (:afterAt::timestamptz, :afterId::bigint)' : ''}
       ORDER BY l.at ${order}, l.id ${order} LIMIT :limit`,
      {
        owner,
        limit,
        ...(runId ? { runId } : {}),
        ...(after ? { afterAt: after.at, afterId: after.id } : {}),
      },
      { prepare: true },
    );
  }

  /**
   * While the run is `queued`: how long it has waited for a worker, whole seconds, since its job
   * was recorded (the newest job still to run for it: a run taken over from a dead worker waits
   * since then), else since the run was created. Null once it is no longer queued.
   */
  async waitingSeconds(id: string): Promise<number | null> {
    const row = await this.db.one<{ seconds: number }>(
      `SELECT greatest(0, floor(extract(epoch FROM now() - coalesce(
           (SELECT max(o.created_at) FROM job_outbox o WHERE o.run_id = r.id AND o.status IN ('pending', 'dispatched')),
           r.created_at))))::int AS seconds
       FROM job_runs r WHERE r.id = :id AND r.status = 'queued'`,
      { id },
    );
    return row?.seconds ?? null;
  }

  /**
   * Requests cancellation: a `queued` run ends `cancelled` at once; a `running` one keeps the
   * request (`cancel_requested_at`) and stops at its handler's next `ctx.throwIfCancelled()`.
   * A finished run is left as it is. Returns the run (undefined when there is none).
   */
  async requestCancel(id: string): Promise<RunView | undefined> {
    await this.db.query(
      `UPDATE job_runs SET cancel_requested_at = COALESCE(cancel_requested_at, now()),
         finished_at = CASE WHEN status = 'queued' THEN now() ELSE finished_at END,
         status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END
       WHERE id = :id AND status IN ('queued', 'running')`,
      { id },
    );
    return this.get(id);
  }

  /** Deletes the runs of `owner` (with their logs, jobs and the domain rows pointing at them). */
  async forgetOwner(owner: string): Promise<void> {
    await this.db.query(`DELETE FROM job_runs WHERE owner = :owner`, { owner });
  }

  // --- What the framework uses ------------------------------------------------------------------

  /**
   * Inserts a run; when `dedupeKey` names a run still queued or running, returns that one instead
   * (`created: false`).
   */
  async insert(run: {
    job: string;
    payload: object;
    accountId: number | null;
    owner: string | null;
    dedupeKey: string | null;
    maxAttempts: number;
  }): Promise<{ id: string; created: boolean }> {
    const inserted = await this.db.one<{ id: string }>(
      `INSERT INTO job_runs (job, payload, account_id, owner, dedupe_key, max_attempts)
       VALUES (:job, :payload, :accountId, :owner, :dedupeKey, :maxAttempts)
       ON CONFLICT (dedupe_key) WHERE status IN ('queued', 'running') DO NOTHING
       RETURNING id`,
      { ...run, payload: JSON.stringify(run.payload) },
    );
    if (inserted) return { id: inserted.id, created: true };
    const existing = await this.db.one<{ id: string }>(
      `SELECT id FROM job_runs WHERE dedupe_key = :dedupeKey AND status IN ('queued', 'running')`,
      { dedupeKey: run.dedupeKey },
    );
    if (!existing) throw new Error(`run ${run.dedupeKey} finished while being queued again; retry`);
    return { id: existing.id, created: false };
  }

  /**
   * Claims a `queued` run, or takes over a `running` one whose lease expired (its worker died),
   * counting the claim. Null when the run is finished, gone, or held by a live worker.
   */
  async claim(id: string): Promise<(RunClaim & { cancelRequested: boolean }) | null> {
    const row = await this.db.one<{ attempts: number; cancelRequested: boolean }>(
      `UPDATE job_runs SET status = 'running', started_at = now(), attempts = attempts + 1,
         lease_until = now() + make_interval(secs => :lease)
       WHERE id = :id AND (status = 'queued' OR (status = 'running' AND lease_until < now()))
       RETURNING attempts, cancel_requested_at IS NOT NULL AS "cancelRequested"`,
      { id, lease: this.config.queue.jobLeaseSeconds },
    );
    return row ? { id, attempt: row.attempts, cancelRequested: row.cancelRequested } : null;
  }

  /** Extends the lease; `held: false` when the claim was lost (taken over, finished, deleted). */
  async renew(claim: RunClaim): Promise<{ held: boolean; cancelRequested: boolean }> {
    const row = await this.db.one<{ cancelRequested: boolean }>(
      `UPDATE job_runs SET lease_until = now() + make_interval(secs => :lease)
       WHERE id = :id AND ${HELD} RETURNING cancel_requested_at IS NOT NULL AS "cancelRequested"`,
      { id: claim.id, attempt: claim.attempt, lease: this.config.queue.jobLeaseSeconds },
    );
    return { held: row !== undefined, cancelRequested: row?.cancelRequested ?? false };
  }

  /** Whether the claim still holds the run, and whether its cancellation was requested. */
  async state(claim: RunClaim): Promise<{ held: boolean; cancelRequested: boolean }> {
    const row = await this.db.one<{ held: boolean; cancelRequested: boolean }>(
      `SELECT (${HELD}) AS held, cancel_requested_at IS NOT NULL AS "cancelRequested"
       FROM job_runs WHERE id = :id`,
      { id: claim.id, attempt: claim.attempt },
    );
    return { held: row?.held ?? false, cancelRequested: row?.cancelRequested ?? false };
  }

  /** The attempt failed and will be retried: the run goes back to `queued` for the retry's claim. */
  async release(claim: RunClaim): Promise<void> {
    await this.db.query(
      `UPDATE job_runs SET status = 'queued', lease_until = NULL WHERE id = :id AND ${HELD}`,
      { id: claim.id, attempt: claim.attempt },
    );
  }

  /** Records the outcome; false (and nothing written) when the claim was lost meanwhile. */
  async finish(
    claim: RunClaim,
    status: 'succeeded' | 'failed' | 'cancelled',
    error: string | null = null,
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE job_runs SET status = :status, error = left(:error, 4000), finished_at = now(), lease_until = NULL
       WHERE id = :id AND ${HELD} RETURNING id`,
      { id: claim.id, attempt: claim.attempt, status, error },
    );
    return rows.length > 0;
  }

  async setPhase(claim: RunClaim, phase: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE job_runs SET phase = left(:phase, 64), progress_current = NULL, progress_total = NULL
       WHERE id = :id AND ${HELD} RETURNING id`,
      { id: claim.id, attempt: claim.attempt, phase },
    );
    return rows.length > 0;
  }

  async setProgress(claim: RunClaim, current: number, total: number | null): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE job_runs SET progress_current = :current, progress_total = :total
       WHERE id = :id AND ${HELD} RETURNING id`,
      { id: claim.id, attempt: claim.attempt, current, total },
    );
    return rows.length > 0;
  }

  /** Appends a line, stamped with the run's current phase; `durationMs` for a line closing a step. */
  async appendLog(
    claim: RunClaim,
    level: JobLogLevel,
    message: string,
    durationMs: number | null = null,
  ): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO job_run_logs (run_id, attempt, level, message, phase, duration_ms)
       SELECT id, attempts, :level, left(:message, 4000), phase, :durationMs::int
       FROM job_runs WHERE id = :id AND ${HELD}
       RETURNING id`,
      { id: claim.id, attempt: claim.attempt, level, message, durationMs },
    );
    return rows.length > 0;
  }

  // --- Recovery -----------------------------------------------------------------------------------

  /**
   * Locks (`FOR UPDATE SKIP LOCKED`) up to `limit` runs still `running` past their lease (their
   * worker died); fails those that used up their claims, puts the others back to `queued`, and
   * returns them. Call inside a unit of work.
   */
  async takeStuck(limit: number): Promise<{ requeued: StuckRun[]; failed: number }> {
    const stuck = await this.db.query<StuckRun & { attempts: number; maxAttempts: number }>(
      `SELECT id, job, payload, account_id AS "accountId", attempts, max_attempts AS "maxAttempts" FROM job_runs
       WHERE status = 'running' AND lease_until < now()
       ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED`,
      { limit },
    );
    const spent = stuck.filter((r) => r.attempts >= r.maxAttempts).map((r) => r.id);
    const retry = stuck.filter((r) => r.attempts < r.maxAttempts);
    if (spent.length > 0) {
      await this.db.query(
        `UPDATE job_runs SET status = 'failed', finished_at = now(), lease_until = NULL,
           error = 'abandoned: its worker stopped ' || attempts || ' times before finishing'
         WHERE id = ANY(:ids)`,
        { ids: spent },
      );
    }
    if (retry.length > 0) {
      await this.db.query(`UPDATE job_runs SET status = 'queued', lease_until = NULL WHERE id = ANY(:ids)`, {
        ids: retry.map((r) => r.id),
      });
    }
    return {
      requeued: retry.map(({ id, job, payload, accountId }) => ({ id, job, payload, accountId })),
      failed: spent.length,
    };
  }

  /**
   * Fails `queued` runs that have a failed job and no job still pending or dispatched: their
   * last attempt threw, so no job is left to run them. Failed jobs are few (each is an alert in
   * the operations guide), so the scan stays small.
   */
  async failOrphaned(): Promise<number> {
    const rows = await this.db.query(
      `UPDATE job_runs r SET status = 'failed', finished_at = now(), lease_until = NULL,
         error = 'its job failed: ' || coalesce(o.last_error, 'unknown error')
       FROM (SELECT DISTINCT ON (run_id) run_id, last_error FROM job_outbox
             WHERE run_id IS NOT NULL AND status = 'failed' ORDER BY run_id, id DESC) o
       WHERE r.id = o.run_id AND r.status = 'queued'
         AND NOT EXISTS (SELECT 1 FROM job_outbox l WHERE l.run_id = r.id AND l.status IN ('pending', 'dispatched'))
       RETURNING r.id`,
    );
    return rows.length;
  }
}

export interface StuckRun {
  id: string;
  job: string;
  payload: Record<string, unknown>;
  /** The run's account: its job counts against that account's share. */
  accountId: number | null;
}
