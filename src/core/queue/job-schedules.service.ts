import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';
import { isoSql } from '../database/sql.js';
import { coreError } from '../errors/api-error.js';
import { InvalidCron, latestOccurrence, nextOccurrence } from './cron.js';
import type { JobDefinition } from './job-definition.js';
import { JobQueue } from './job-queue.service.js';
import { JobRegistry } from './job-registry.js';

export interface ScheduleInput<P extends object> {
  /** The domain key of what it belongs to (`notification:12`): list and delete by it. */
  owner: string;
  job: JobDefinition<P>;
  /** Five fields (minute hour day-of-month month day-of-week), or six with seconds first. */
  cron: string;
  /** IANA time zone the cron is read in; default UTC. */
  timezone?: string;
  payload: P;
  accountId?: number | null;
  enabled?: boolean;
}

export interface ScheduleChanges {
  cron?: string;
  timezone?: string;
  payload?: object;
  enabled?: boolean;
}

/** The clock of a call: tests pass the instant they act at; every other caller lets it be now. */
export interface ScheduleClock {
  now?: Date;
}

export interface FireOptions extends ScheduleClock {
  /** Most schedules fired by one call (default 50); the next tick takes the rest. */
  limit?: number;
}

export interface ScheduleView {
  id: string;
  accountId: number | null;
  owner: string;
  job: string;
  cron: string;
  timezone: string;
  payload: Record<string, unknown>;
  enabled: boolean;
  nextRunAt: string;
  lastRunAt: string | null;
  lastRunId: string | null;
  lastError: string | null;
}

const VIEW = `id, account_id AS "accountId", owner, job, cron, timezone, payload, enabled,
  ${isoSql('next_run_at')} AS "nextRunAt", ${isoSql('last_run_at')} AS "lastRunAt",
  last_run_id AS "lastRunId", last_error AS "lastError"`;

function next(cron: string, timezone: string, after: Date): Date {
  try {
    return nextOccurrence(cron, timezone, after);
  } catch (err) {
    if (err instanceof InvalidCron) throw coreError('validation_failed', [err.message]);
    throw err;
  }
}

/**
 * Recurring jobs kept in PostgreSQL (`job_schedules`). The outbox relay's tick calls
 * {@link fireDue}: it claims due rows (`FOR UPDATE SKIP LOCKED`, so replicas never fire one
 * twice), enqueues each one's job and advances `next_run_at`, all in one transaction. There is no
 * Bull repeatable job: a changed cron takes effect at once and two accounts' schedules never merge.
 *
 * Every method that reads the time takes an optional `now`, so tests walk a schedule through
 * chosen instants (a daylight-saving change, hours of downtime) without waiting for them.
 */
@Injectable()
export class JobSchedules {
  private readonly logger = new Logger(JobSchedules.name);

  constructor(
    private readonly db: Database,
    private readonly jobs: JobQueue,
    private readonly registry: JobRegistry,
    private readonly config: AppConfig,
  ) {}

  /** Creates a schedule; 400 `validation_failed` for a cron or time zone that cannot be read. */
  async create<P extends object>(input: ScheduleInput<P>, clock: ScheduleClock = {}): Promise<ScheduleView> {
    this.registry.get(input.job.name);
    const timezone = input.timezone ?? 'UTC';
    const nextRunAt = next(input.cron, timezone, clock.now ?? new Date());
    const row = await this.db.one<ScheduleView>(
      `INSERT INTO job_schedules (account_id, owner, job, cron, timezone, payload, enabled, next_run_at)
       VALUES (:accountId, :owner, :job, :cron, :timezone, :payload, :enabled, :nextRunAt)
       RETURNING ${VIEW}`,
      {
        accountId: input.accountId ?? null,
        owner: input.owner,
        job: input.job.name,
        cron: input.cron.trim(),
        timezone,
        payload: JSON.stringify(input.payload),
        enabled: input.enabled ?? true,
        nextRunAt,
      },
    );
    return row!;
  }

  /**
   * Changes a schedule. A new cron or time zone, or enabling it again, computes the next firing
   * from now. Undefined when there is no such schedule.
   */
  update(id: string, changes: ScheduleChanges, clock: ScheduleClock = {}): Promise<ScheduleView | undefined> {
    return this.db.transaction(async () => {
      const current = await this.db.one<{ cron: string; timezone: string; enabled: boolean }>(
        `SELECT cron, timezone, enabled FROM job_schedules WHERE id = :id FOR UPDATE`,
        { id },
      );
      if (!current) return undefined;
      const cron = changes.cron?.trim() ?? current.cron;
      const timezone = changes.timezone ?? current.timezone;
      const enabled = changes.enabled ?? current.enabled;
      const reschedule =
        cron !== current.cron || timezone !== current.timezone || (enabled && !current.enabled);
      const nextRunAt = reschedule ? next(cron, timezone, clock.now ?? new Date()) : null;
      return this.db.one<ScheduleView>(
        `UPDATE job_schedules SET cron = :cron, timezone = :timezone, enabled = :enabled,
           payload = COALESCE(:payload::jsonb, payload), next_run_at = COALESCE(:nextRunAt, next_run_at),
           last_error = CASE WHEN :reschedule THEN NULL ELSE last_error END, updated_at = now()
         WHERE id = :id RETURNING ${VIEW}`,
        {
          id,
          cron,
          timezone,
          enabled,
          payload: changes.payload === undefined ? null : JSON.stringify(changes.payload),
          nextRunAt,
          reschedule,
        },
      );
    });
  }

  /**
   * The one schedule of a platform `owner` (no account), made if missing and set to `input`'s
   * cron and job otherwise; processes starting together make one (they take turns on the owner).
   */
  ensure<P extends object>(
    input: Omit<ScheduleInput<P>, 'accountId'>,
    clock: ScheduleClock = {},
  ): Promise<ScheduleView> {
    return this.db.transaction(async () => {
      await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
        key: `job-schedule:${input.owner}`,
      });
      const [current, ...extra] = await this.listByOwner(input.owner);
      for (const e of extra) await this.remove(e.id);
      if (!current) return this.create({ ...input, accountId: null }, clock);
      const timezone = input.timezone ?? 'UTC';
      if (
        current.cron === input.cron.trim() &&
        current.timezone === timezone &&
        current.job === input.job.name
      )
        return current;
      if (current.job !== input.job.name) {
        await this.remove(current.id);
        return this.create({ ...input, accountId: null }, clock);
      }
      return (await this.update(current.id, { cron: input.cron, timezone }, clock))!;
    });
  }

  async remove(id: string): Promise<boolean> {
    return (await this.db.query(`DELETE FROM job_schedules WHERE id = :id RETURNING id`, { id })).length > 0;
  }

  /** Deletes every schedule of `owner`; returns how many. */
  async removeByOwner(owner: string): Promise<number> {
    return (await this.db.query(`DELETE FROM job_schedules WHERE owner = :owner RETURNING id`, { owner }))
      .length;
  }

  get(id: string): Promise<ScheduleView | undefined> {
    return this.db.one<ScheduleView>(`SELECT ${VIEW} FROM job_schedules WHERE id = :id`, { id });
  }

  listByOwner(owner: string): Promise<ScheduleView[]> {
    return this.db.query<ScheduleView>(`SELECT ${VIEW} FROM job_schedules WHERE owner = :owner ORDER BY id`, {
      owner,
    });
  }

  /**
   * The tick: fires every enabled schedule whose `next_run_at` has come (up to `limit`), in one
   * transaction: claims the rows (`FOR UPDATE SKIP LOCKED`), enqueues each job and advances
   * `next_run_at` to the first occurrence after `now`. Jobs are dispatched after the commit.
   *
   * A schedule fires once per tick whatever it missed: after downtime, only its latest missed
   * occurrence fires (as Metabase and Superset do), and only when it is at most
   * `JOB_SCHEDULE_GRACE_SECONDS` old; an older one is skipped, noted in `last_error`. The job's
   * payload carries `scheduledFor`, the occurrence it fires for (ISO 8601), and its dedupe key is
   * the schedule and that occurrence, so an occurrence is queued once. Returns how many fired.
   */
  fireDue(options: FireOptions = {}): Promise<number> {
    const limit = options.limit ?? 50;
    const graceMs = this.config.queue.scheduleGraceSeconds * 1000;
    return this.db.transaction(async () => {
      const now = options.now ?? new Date();
      const due = await this.db.query<{
        id: string;
        accountId: number | null;
        owner: string;
        job: string;
        cron: string;
        timezone: string;
        payload: Record<string, unknown>;
        nextRunAt: Date;
      }>(
        `SELECT id, account_id AS "accountId", owner, job, cron, timezone, payload, next_run_at AS "nextRunAt"
         FROM job_schedules WHERE enabled AND next_run_at <= :now
         ORDER BY next_run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED`,
        { limit, now },
      );
      let fired = 0;
      for (const s of due) {
        let nextRunAt: Date;
        let scheduledFor: Date;
        try {
          nextRunAt = nextOccurrence(s.cron, s.timezone, now);
          // The latest occurrence missed, no earlier than the grace window allows; `next_run_at`
          // itself when no occurrence lies between it and now (it was set by hand).
          const windowStart = new Date(Math.max(s.nextRunAt.getTime(), now.getTime() - graceMs));
          scheduledFor = latestOccurrence(s.cron, s.timezone, windowStart, now) ?? s.nextRunAt;
        } catch (err) {
          await this.db.query(
            `UPDATE job_schedules SET enabled = false, last_error = :error, updated_at = :now WHERE id = :id`,
            { id: s.id, error: (err as Error).message, now },
          );
          continue;
        }
        if (now.getTime() - scheduledFor.getTime() > graceMs) {
          this.logger.warn(
            { scheduleId: s.id, job: s.job, scheduledFor: scheduledFor.toISOString() },
            'schedule missed its occurrence by more than the grace window; skipped',
          );
          await this.db.query(
            `UPDATE job_schedules SET next_run_at = :nextRunAt, last_error = :error, updated_at = :now
             WHERE id = :id`,
            {
              id: s.id,
              nextRunAt,
              now,
              error: `missed ${scheduledFor.toISOString()} by more than the grace window; skipped`,
            },
          );
          continue;
        }
        const registered = this.registry.find(s.job);
        if (!registered) {
          this.logger.warn({ scheduleId: s.id, job: s.job }, 'schedule of a job no module declares; skipped');
          await this.db.query(
            `UPDATE job_schedules SET next_run_at = :nextRunAt, last_error = :error, updated_at = :now
             WHERE id = :id`,
            { id: s.id, nextRunAt, now, error: `job ${s.job} is not declared` },
          );
          continue;
        }
        const { runId } = await this.jobs.enqueue(
          registered.definition,
          { ...s.payload, scheduledFor: scheduledFor.toISOString() },
          {
            accountId: s.accountId,
            owner: s.owner,
            dedupeKey: `schedule:${s.id}:${scheduledFor.toISOString()}`,
          },
        );
        await this.db.query(
          `UPDATE job_schedules SET next_run_at = :nextRunAt, last_run_at = :now,
             last_run_id = COALESCE(:runId::bigint, last_run_id), last_error = NULL
           WHERE id = :id`,
          { id: s.id, nextRunAt, runId, now },
        );
        fired += 1;
      }
      return fired;
    });
  }
}
