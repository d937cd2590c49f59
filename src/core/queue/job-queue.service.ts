import { Inject, Injectable, Logger } from '@nestjs/common';
import { Database } from '../database/database.js';
import { coreError } from '../errors/api-error.js';
import { JOB_DISPATCHER, type DispatchableJob, type JobDispatcher } from './dispatcher.js';
import type { JobDefinition } from './job-definition.js';
import { JobRegistry } from './job-registry.js';
import { JobRuns, type StuckRun } from './job-runs.service.js';
import { OutboxRepository } from './outbox.repository.js';

export interface EnqueueOptions {
  /**
   * The account the work belongs to, or null for platform work: recorded on the run and the job,
   * and a worker runs at most the account's share of its jobs at once. Pass it for tenant work.
   */
  accountId?: number | null;
  /** The domain key of what a run belongs to (`deployment:42`), to list and forget its runs. */
  owner?: string | null;
  /** Overrides the job's `dedupeKey(payload)`. */
  dedupeKey?: string | null;
}

export interface Enqueued {
  /** The run (jobs with run records), new or the one already queued under the same key. */
  runId: string | null;
  /** False when the same work was already queued (dedupe key): nothing new was recorded. */
  created: boolean;
}

/**
 * How services start background work:
 * 1. `assertAvailable()` before writing, so a request that must enqueue fails fast (503) and
 *    changes nothing while the queue is down;
 * 2. `enqueue(JOB, payload)` inside the service's unit of work: the run record and the outbox row
 *    are written with the change that causes them (no manager is passed: it joins the current
 *    `Database.transaction`, or opens one of its own);
 * 3. the job is handed to the queue after the commit (`Database.afterCommit`); if that fails, the
 *    outbox relay hands it over later.
 */
@Injectable()
export class JobQueue {
  private readonly logger = new Logger(JobQueue.name);

  constructor(
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly outbox: OutboxRepository,
    private readonly runs: JobRuns,
    private readonly registry: JobRegistry,
    private readonly db: Database,
  ) {}

  assertAvailable(): void {
    if (!this.dispatcher.available()) {
      throw coreError('queue_unavailable', 'The job queue is unavailable; retry shortly');
    }
  }

  /** Records `job` (and its run, for jobs with run records); dispatched once the unit of work commits. */
  enqueue<P extends object>(
    job: JobDefinition<P>,
    payload: P,
    options: EnqueueOptions = {},
  ): Promise<Enqueued> {
    const { definition } = this.registry.get(job.name);
    const dedupeKey = options.dedupeKey ?? definition.dedupeKey?.(payload) ?? null;
    return this.db.transaction(async () => {
      if (!definition.run) {
        const recorded = await this.outbox.record(definition.queue, definition.name, payload, {
          accountId: options.accountId ?? null,
          dedupeKey,
        });
        if (recorded) this.dispatchAfterCommit(recorded);
        return { runId: null, created: recorded !== null };
      }
      const run = await this.runs.insert({
        job: definition.name,
        payload,
        accountId: options.accountId ?? null,
        owner: options.owner ?? null,
        dedupeKey,
        maxAttempts: definition.run.maxClaims,
      });
      if (run.created) {
        await this.recordForRun({
          id: run.id,
          job: definition.name,
          payload: payload as Record<string, unknown>,
          accountId: options.accountId ?? null,
        });
      }
      return { runId: run.id, created: run.created };
    });
  }

  /**
   * Records a job for an existing run (the recovery sweep re-queues one whose worker died); none
   * when a job for it is still pending or dispatched.
   */
  async recordForRun(run: StuckRun): Promise<boolean> {
    const { definition } = this.registry.get(run.job);
    const recorded = await this.outbox.record(definition.queue, definition.name, run.payload, {
      accountId: run.accountId,
      runId: run.id,
      dedupeKey: `run:${run.id}`,
    });
    if (recorded) this.dispatchAfterCommit(recorded);
    return recorded !== null;
  }

  /** Hands jobs to the queue now; a failure is logged and left to the outbox relay. */
  async dispatch(jobs: DispatchableJob | DispatchableJob[]): Promise<void> {
    for (const job of Array.isArray(jobs) ? jobs : [jobs]) {
      try {
        await this.dispatcher.dispatch(job);
      } catch (err) {
        this.logger.warn(
          { jobId: job.id, job: job.name, err },
          'dispatch failed; the outbox relay will retry',
        );
      }
    }
  }

  private dispatchAfterCommit(job: DispatchableJob): void {
    this.db.afterCommit(() => this.dispatch(job));
  }
}
