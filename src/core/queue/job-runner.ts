import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { AppConfig } from '../config/app-config.js';
import type { DispatchableJob } from './dispatcher.js';
import { startHeartbeat } from './heartbeat.js';
import {
  JobCancelled,
  JobFailure,
  JobTimedOut,
  RunLost,
  type JobContext,
  type JobLogDetails,
  type JobLogLevel,
} from './job-context.js';
import type { JobDefinition } from './job-definition.js';
import { JobRegistry, type RegisteredJob } from './job-registry.js';
import { JobRuns, type RunClaim } from './job-runs.service.js';

/** At most `size` holders at once; the others wait their turn in order. */
class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<() => void> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    };
  }
}

class Context implements JobContext {
  timedOut: number | null = null;
  lost = false;
  cancelRequested = false;

  constructor(
    readonly job: string,
    readonly attempt: number,
    private readonly claim: RunClaim | null,
    private readonly runs: JobRuns,
    private readonly logger: Logger,
  ) {}

  get run() {
    return this.claim ? { id: this.claim.id, claim: this.claim.attempt } : null;
  }

  async phase(name: string): Promise<void> {
    if (this.claim) this.note(await this.runs.setPhase(this.claim, name));
  }

  async progress(current: number, total: number | null = null): Promise<void> {
    if (this.claim) this.note(await this.runs.setProgress(this.claim, current, total));
  }

  async log(message: string, level: JobLogLevel = 'info', details: JobLogDetails = {}): Promise<void> {
    const durationMs = details.durationMs === undefined ? null : Math.max(0, Math.round(details.durationMs));
    const fields = {
      job: this.job,
      runId: this.claim?.id,
      attempt: this.attempt,
      ...(durationMs === null ? {} : { durationMs }),
    };
    if (level === 'error') this.logger.error(fields, message);
    else if (level === 'warn') this.logger.warn(fields, message);
    else this.logger.log(fields, message);
    if (this.claim) this.note(await this.runs.appendLog(this.claim, level, message, durationMs));
  }

  async throwIfCancelled(): Promise<void> {
    if (this.timedOut !== null) throw new JobTimedOut(this.timedOut);
    if (this.lost) throw new RunLost();
    if (!this.claim) return;
    const state = await this.runs.state(this.claim);
    if (!state.held) {
      this.lost = true;
      throw new RunLost();
    }
    if (state.cancelRequested) throw new JobCancelled();
  }

  fail(reason: string): never {
    throw new JobFailure(reason);
  }

  /** A fenced write that wrote nothing: the claim is gone. */
  private note(held: boolean): void {
    if (!held) this.lost = true;
  }
}

/**
 * Runs one attempt of a job, the same way for Bull workers and in-process jobs: at most
 * `concurrency` of a job at once in this process, its run claimed and leased (jobs with run
 * records), `timeoutMs` enforced, the outcome recorded. Resolves when the job is done (succeeded,
 * failed for good by `ctx.fail`, cancelled, or nothing left to do); rejects when the attempt
 * should be retried.
 *
 * Before that, {@link admit} keeps one account from taking every slot: at most the account's
 * share of a job's `concurrency` runs (or waits for a slot) at once here; the dispatcher defers a
 * job past it, so it holds no slot while it waits and the jobs of other accounts go first.
 */
@Injectable()
export class JobRunner {
  private readonly logger = new Logger('Jobs');
  private readonly slots = new Map<string, Semaphore>();
  /** Jobs admitted and not finished, per job name and account (`name` NUL `accountId`). */
  private readonly admitted = new Map<string, number>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly runs: JobRuns,
    private readonly config: AppConfig,
    private readonly cls: ClsService,
  ) {}

  /**
   * How many jobs of one account `definition`'s job may run at once in this process:
   * JOB_ACCOUNT_CONCURRENCY, or half the job's concurrency rounded up, never above it.
   */
  accountShare(definition: Pick<JobDefinition, 'concurrency'>): number {
    const setting = this.config.queue.accountConcurrency;
    return Math.min(definition.concurrency, setting ?? Math.ceil(definition.concurrency / 2));
  }

  /**
   * Takes a place for `job` among its account's jobs of that name in this process: the function
   * that gives it back (call it once the job is over, whatever happened), or null when the account
   * already has its share of them here, and the caller defers the job without running it. Jobs of
   * no account (platform work) are always admitted.
   */
  admit(job: DispatchableJob): (() => void) | null {
    if (job.accountId === null || job.accountId === undefined) return () => undefined;
    const key = `${job.name}\0${job.accountId}`;
    const held = this.admitted.get(key) ?? 0;
    if (held >= this.accountShare(this.registry.get(job.name).definition)) return null;
    this.admitted.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.admitted.get(key) ?? 1) - 1;
      if (left > 0) this.admitted.set(key, left);
      else this.admitted.delete(key);
    };
  }

  /** Runs an attempt of a job {@link admit} let in (the caller gives its place back afterwards). */
  async run(job: DispatchableJob, attempt: number, maxAttempts: number): Promise<void> {
    const registered = this.registry.get(job.name);
    const release = await this.slot(registered).acquire();
    try {
      // A context of its own: the job never joins a unit of work of whatever started it.
      await this.cls.run({ ifNested: 'override' }, () =>
        registered.definition.run
          ? this.runWithRun(registered, job, attempt, maxAttempts)
          : this.runPlain(registered, job, attempt),
      );
    } finally {
      release();
    }
  }

  private async runPlain(registered: RegisteredJob, job: DispatchableJob, attempt: number): Promise<void> {
    const ctx = new Context(job.name, attempt, null, this.runs, this.logger);
    try {
      await this.withTimeout(registered, ctx, () => registered.handler(job.payload, ctx));
    } catch (err) {
      if (err instanceof JobFailure) {
        this.logger.warn({ jobId: job.id, job: job.name, reason: err.message }, 'job failed for good');
        return;
      }
      throw err;
    }
  }

  private async runWithRun(
    registered: RegisteredJob,
    job: DispatchableJob,
    attempt: number,
    maxAttempts: number,
  ): Promise<void> {
    if (!job.runId) throw new Error(`job ${job.id} (${job.name}) has no run`);
    const claim = await this.runs.claim(job.runId);
    // Finished, cancelled, deleted, or held by a live worker: nothing to do.
    if (!claim) return;
    if (claim.cancelRequested) {
      await this.runs.finish(claim, 'cancelled');
      return;
    }
    const ctx = new Context(job.name, attempt, claim, this.runs, this.logger);
    const leaseMs = this.config.queue.jobLeaseSeconds * 1000;
    const stop = startHeartbeat(
      async () => {
        const state = await this.runs.renew(claim);
        if (!state.held) ctx.lost = true;
        ctx.cancelRequested = state.cancelRequested;
      },
      Math.max(1000, leaseMs / 3),
    );
    try {
      await this.withTimeout(registered, ctx, () => registered.handler(job.payload, ctx));
      if (!ctx.lost) await this.runs.finish(claim, 'succeeded');
    } catch (err) {
      if (err instanceof RunLost || ctx.lost) return;
      if (err instanceof JobCancelled) {
        await this.runs.finish(claim, 'cancelled');
        return;
      }
      if (err instanceof JobFailure) {
        await this.runs.finish(claim, 'failed', err.message);
        return;
      }
      // Retried: the run waits, `queued`, for the retry's claim; failed with the error on the last.
      if (attempt >= maxAttempts) await this.runs.finish(claim, 'failed', String(err)).catch(() => false);
      else await this.runs.release(claim).catch(() => undefined);
      throw err;
    } finally {
      stop();
    }
  }

  private async withTimeout(
    registered: RegisteredJob,
    ctx: Context,
    work: () => Promise<void>,
  ): Promise<void> {
    const ms = registered.definition.timeoutMs;
    if (ms === null) return work();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ctx.timedOut = ms;
        reject(new JobTimedOut(ms));
      }, ms);
    });
    const running = work();
    // The handler goes on until its next `throwIfCancelled()`; its outcome no longer matters.
    running.catch(() => undefined);
    try {
      await Promise.race([running, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private slot(registered: RegisteredJob): Semaphore {
    let slot = this.slots.get(registered.definition.name);
    if (!slot) {
      slot = new Semaphore(registered.definition.concurrency);
      this.slots.set(registered.definition.name, slot);
    }
    return slot;
  }
}
