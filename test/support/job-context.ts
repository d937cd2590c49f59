import type { INestApplicationContext } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import {
  JobCancelled,
  JobFailure,
  RunLost,
  type JobContext,
  type JobLogDetails,
  type JobLogLevel,
} from '../../src/core/queue/job-context.js';
import type { JobDefinition } from '../../src/core/queue/job-definition.js';
import { JobRuns, type RunClaim } from '../../src/core/queue/job-runs.service.js';

/** A line a handler logged, as the test context recorded it. */
export interface LoggedLine {
  message: string;
  level: JobLogLevel;
  /** The phase the handler was in when it wrote the line (null before its first phase). */
  phase: string | null;
  /** For a line closing a step: its duration, ms (rounded, never negative, as the real context writes it). */
  durationMs: number | null;
}

export interface TestJobContextOptions {
  /** The attempt of the job, from 1 (default 1). */
  attempt?: number;
  /**
   * The claim this attempt holds on its run (`JobRuns.claim`): phases, progress and log lines are
   * then written to the real run records too, fenced by the claim as the runner's context writes
   * them, and `throwIfCancelled()` reads the run's real state. Without: nothing is written.
   */
  claim?: RunClaim | null;
  /** Called once each phase is recorded: where a test acts while the handler is in that phase. */
  onPhase?: (phase: string, ctx: TestJobContext) => Promise<void> | void;
}

/**
 * A {@link JobContext} for calling a job handler directly in a test (`app.get(Handler).run(payload,
 * ctx)`): it records the phases, progress and log lines the handler reports, can be told to report
 * cancellation (`requestCancel()`), and its `fail()` throws {@link JobFailure} as the runner's does.
 * With a claim it behaves as the runner's context on that run (`src/core/queue/job-runner.ts`).
 */
export class TestJobContext implements JobContext {
  readonly attempt: number;
  /** Every phase the handler entered, in order. */
  readonly phases: string[] = [];
  readonly progressed: Array<{ phase: string | null; current: number; total: number | null }> = [];
  readonly lines: LoggedLine[] = [];
  /** A fenced write found the claim gone (another worker holds the run): as the real context notes it. */
  lost = false;
  private cancelRequested = false;
  private current: string | null = null;
  private readonly claim: RunClaim | null;
  private readonly onPhase: TestJobContextOptions['onPhase'];

  constructor(
    readonly job: string,
    private readonly runs: JobRuns | null = null,
    options: TestJobContextOptions = {},
  ) {
    this.attempt = options.attempt ?? 1;
    this.claim = options.claim ?? null;
    this.onPhase = options.onPhase;
    if (this.claim && !runs) throw new Error('a context holding a claim needs JobRuns to write through');
  }

  get run(): { id: string; claim: number } | null {
    return this.claim ? { id: this.claim.id, claim: this.claim.attempt } : null;
  }

  /** The phase the handler is in (null before its first). */
  get currentPhase(): string | null {
    return this.current;
  }

  /** The messages logged, in order. */
  get messages(): string[] {
    return this.lines.map((l) => l.message);
  }

  /** From now on `throwIfCancelled()` throws {@link JobCancelled}, as after `JobRuns.requestCancel`. */
  requestCancel(): void {
    this.cancelRequested = true;
  }

  async phase(name: string): Promise<void> {
    this.current = name;
    this.phases.push(name);
    if (this.claim) this.note(await this.runs!.setPhase(this.claim, name));
    await this.onPhase?.(name, this);
  }

  async progress(current: number, total: number | null = null): Promise<void> {
    this.progressed.push({ phase: this.current, current, total });
    if (this.claim) this.note(await this.runs!.setProgress(this.claim, current, total));
  }

  async log(message: string, level: JobLogLevel = 'info', details: JobLogDetails = {}): Promise<void> {
    const durationMs = details.durationMs === undefined ? null : Math.max(0, Math.round(details.durationMs));
    this.lines.push({ message, level, phase: this.current, durationMs });
    if (this.claim) this.note(await this.runs!.appendLog(this.claim, level, message, durationMs));
  }

  async throwIfCancelled(): Promise<void> {
    if (this.lost) throw new RunLost();
    if (this.cancelRequested) throw new JobCancelled();
    if (!this.claim) return;
    const state = await this.runs!.state(this.claim);
    if (!state.held) {
      this.lost = true;
      throw new RunLost();
    }
    if (state.cancelRequested) throw new JobCancelled();
  }

  fail(reason: string): never {
    throw new JobFailure(reason);
  }

  private note(held: boolean): void {
    if (!held) this.lost = true;
  }
}

/**
 * How one attempt ended, as the runner records it: `failed` (`ctx.fail`, or the last attempt
 * threw), `retry` (it threw with attempts left: the run went back to `queued` and the queue would
 * try it again), `lost` (another worker holds the run: nothing recorded), or `unclaimed` (the run
 * is finished, gone or held by a live worker: the handler was not called).
 */
export type AttemptOutcome =
  | { status: 'succeeded' }
  | { status: 'failed'; error: string }
  | { status: 'cancelled' }
  | { status: 'retry'; error: unknown }
  | { status: 'lost' }
  | { status: 'unclaimed' };

export type JobHandlerFn<P> = (payload: P, ctx: JobContext) => Promise<void>;

/**
 * Runs job handlers of a real application in the test's own process, as `JobRunner` runs them but
 * without a queue, a lease timer or back-off: a job with a run record is claimed through the real
 * `JobRuns` (the run row its producer wrote), its handler called with the payload the run was
 * queued with and a {@link TestJobContext} holding the claim, and the outcome recorded on the run.
 *
 * ```ts
 * const jobs = new TestJobs(s.app);
 * const { ctx, outcome } = await jobs.attempt(DBT_SYNC_JOB, runId, (p, c) => s.app.get(DbtSyncJob).run(p, c));
 * ```
 */
export class TestJobs {
  constructor(private readonly app: INestApplicationContext) {}

  private get runs(): JobRuns {
    return this.app.get(JobRuns);
  }

  /** The payload run `runId` was queued with: what the queue hands its handler. */
  async payload<P>(runId: string): Promise<P> {
    const rows = await this.app
      .get(DataSource)
      .query<Array<{ payload: P }>>(`SELECT payload FROM job_runs WHERE id = $1`, [runId]);
    if (rows.length === 0) throw new Error(`no run ${runId}`);
    return rows[0].payload;
  }

  /**
   * One attempt of `job` on run `runId`: claims the run (`JobRuns.claim`: `running`, attempts + 1),
   * calls `handler` with the run's payload and a context holding the claim, then records the
   * outcome as the runner does (`succeeded`, `failed` with the reason, `cancelled`, or back to
   * `queued` for a retry; `failed` when the last attempt throws). A run whose cancellation was
   * requested before the claim ends `cancelled` without its handler being called.
   */
  async attempt<P>(
    job: JobDefinition<P>,
    runId: string,
    handler: JobHandlerFn<P>,
    options: Omit<TestJobContextOptions, 'claim'> = {},
  ): Promise<{ ctx: TestJobContext | null; outcome: AttemptOutcome }> {
    if (!job.run) throw new Error(`${job.name} has no run records: use plain()`);
    const runs = this.runs;
    const claim = await runs.claim(runId);
    if (!claim) return { ctx: null, outcome: { status: 'unclaimed' } };
    if (claim.cancelRequested) {
      await runs.finish(claim, 'cancelled');
      return { ctx: null, outcome: { status: 'cancelled' } };
    }
    const attempt = options.attempt ?? 1;
    const ctx = new TestJobContext(job.name, runs, { ...options, attempt, claim });
    const payload = await this.payload<P>(runId);
    try {
      await this.isolated(() => handler(payload, ctx));
      if (ctx.lost) return { ctx, outcome: { status: 'lost' } };
      await runs.finish(claim, 'succeeded');
      return { ctx, outcome: { status: 'succeeded' } };
    } catch (err) {
      if (err instanceof RunLost || ctx.lost) return { ctx, outcome: { status: 'lost' } };
      if (err instanceof JobCancelled) {
        await runs.finish(claim, 'cancelled');
        return { ctx, outcome: { status: 'cancelled' } };
      }
      if (err instanceof JobFailure) {
        await runs.finish(claim, 'failed', err.message);
        return { ctx, outcome: { status: 'failed', error: err.message } };
      }
      if (attempt >= job.attempts) {
        await runs.finish(claim, 'failed', String(err));
        return { ctx, outcome: { status: 'failed', error: String(err) } };
      }
      await runs.release(claim);
      return { ctx, outcome: { status: 'retry', error: err } };
    }
  }

  /**
   * A job without a run record, as its queue runs it: attempt 1, then again with the next
   * attempt number while the handler throws (a retryable failure), up to the job's `attempts`; no
   * back-off is waited. `ctx.fail()` ends it at once. Answers every attempt's context and how it
   * ended (`error`: what the last attempt threw, when none succeeded).
   */
  async plain<P>(
    job: JobDefinition<P>,
    payload: P,
    handler: JobHandlerFn<P>,
  ): Promise<{ contexts: TestJobContext[]; status: 'succeeded' | 'failed'; error: unknown }> {
    if (job.run) throw new Error(`${job.name} has run records: use attempt()`);
    const contexts: TestJobContext[] = [];
    let error: unknown = null;
    for (let attempt = 1; attempt <= job.attempts; attempt++) {
      const ctx = new TestJobContext(job.name, null, { attempt });
      contexts.push(ctx);
      try {
        await this.isolated(() => handler(payload, ctx));
        return { contexts, status: 'succeeded', error: null };
      } catch (err) {
        error = err;
        if (err instanceof JobFailure) break;
      }
    }
    return { contexts, status: 'failed', error };
  }

  /** As the runner: the handler never joins a unit of work of whatever called it. */
  private isolated(work: () => Promise<void>): Promise<void> {
    return this.app.get(ClsService).run({ ifNested: 'override' }, work);
  }
}
