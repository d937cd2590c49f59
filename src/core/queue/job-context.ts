/** What a handler gets besides its payload: its run (if the job has run records) and its limits. */
export interface JobContext {
  /** The job's name. */
  readonly job: string;
  /** This attempt of the job, from 1. */
  readonly attempt: number;
  /** The run this attempt works on (jobs declared with `run`), else null. */
  readonly run: { readonly id: string; readonly claim: number } | null;
  /** Records the phase the run is in (shown to users), and resets its progress. */
  phase(name: string): Promise<void>;
  /** Records the run's progress: `current` of `total` steps. */
  progress(current: number, total?: number | null): Promise<void>;
  /**
   * Appends a line to the run's log (and to the process log). The line records the run's current
   * phase; `details.durationMs` marks it as the line that closes a step and says how long it took.
   */
  log(message: string, level?: JobLogLevel, details?: JobLogDetails): Promise<void>;
  /**
   * Call between steps: throws {@link JobCancelled} when the run's cancellation was requested,
   * {@link JobTimedOut} when the attempt ran past the job's `timeoutMs`, and {@link RunLost}
   * when another worker took the run over (this one's lease had expired).
   */
  throwIfCancelled(): Promise<void>;
  /** Ends the run as `failed` with `reason`, without retrying: for failures a retry will not fix. */
  fail(reason: string): never;
}

export type JobLogLevel = 'info' | 'warn' | 'error';

/** What a log line may carry besides its text. */
export interface JobLogDetails {
  /** How long the step the line closes took, in milliseconds (a non-negative integer). */
  durationMs?: number;
}

/** Thrown by `ctx.throwIfCancelled()`: the run ends `cancelled`, the job is not retried. */
export class JobCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** The attempt ran out of time: it fails and is retried (its run goes back to `queued`). */
export class JobTimedOut extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** Another worker holds the run now: this attempt stops and records nothing. */
export class RunLost extends Error {
  constructor() {
    super('the run was taken over by another worker');
  }
}

/** Thrown by `ctx.fail()`: the run ends `failed` with the reason, the job is not retried. */
export class JobFailure extends Error {}
