import type { Provider } from '@nestjs/common';
import type { JobContext } from './job-context.js';
import type { QueueName } from '../config/queue-names.js';

/** What a module declares about one of its jobs; every field but `name` has a default. */
export interface JobOptions<P> {
  /** The queue it runs on (with Redis); default `default`. */
  queue?: QueueName;
  /** Tries of one job before it fails for good; default 5. */
  attempts?: number;
  /** Wait before the first retry, doubled at each further retry, ms; default 5000. */
  backoffMs?: number;
  /**
   * Longest one attempt may take, ms; past it the attempt fails (and is retried) and
   * `ctx.throwIfCancelled()` throws, so the handler stops at its next step. Default: none.
   */
  timeoutMs?: number | null;
  /** Jobs of this name one process runs at once; default 4. */
  concurrency?: number;
  /**
   * A domain key naming the work (a sync run id, a schedule's firing): while a job (or run) with
   * the same key is queued or running, asking again returns that one instead of queuing twice.
   */
  dedupeKey?: (payload: P) => string;
  /**
   * Work users watch: each job gets a run record in `job_runs` (status, phase, progress, logs,
   * timestamps, error, lease). `maxClaims`: workers that may die holding the run before it is
   * failed instead of resumed (default 3). `false` (the default): a plain job, outbox only.
   */
  run?: false | { maxClaims?: number };
}

export interface JobDefinition<P = unknown> {
  readonly name: string;
  readonly queue: QueueName;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly timeoutMs: number | null;
  readonly concurrency: number;
  readonly dedupeKey: ((payload: P) => string) | null;
  readonly run: { readonly maxClaims: number } | null;
  /** Type only (never set): the payload this job takes. */
  readonly payloadType?: (payload: P) => void;
}

/**
 * Declares a job: its name (unique in the application) and options. Export the result; the
 * module that owns the job lists it in {@link declareJobs} and handles it with {@link JobHandler};
 * producers pass it to `JobQueue.enqueue`.
 */
export function defineJob<P extends object>(name: string, options: JobOptions<P> = {}): JobDefinition<P> {
  if (!/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/.test(name) || name.length > 64) {
    throw new Error(`Job name ${name} must look like module.action (lower case, at most 64 characters)`);
  }
  const positive = (value: number | undefined, fallback: number, what: string) => {
    const v = value ?? fallback;
    if (!Number.isInteger(v) || v < 1) throw new Error(`Job ${name}: ${what} must be a positive integer`);
    return v;
  };
  return Object.freeze({
    name,
    queue: options.queue ?? 'default',
    attempts: positive(options.attempts, 5, 'attempts'),
    backoffMs: positive(options.backoffMs, 5_000, 'backoffMs'),
    timeoutMs: options.timeoutMs == null ? null : positive(options.timeoutMs, 1, 'timeoutMs'),
    concurrency: positive(options.concurrency, 4, 'concurrency'),
    dedupeKey: options.dedupeKey ?? null,
    run: options.run ? { maxClaims: positive(options.run.maxClaims, 3, 'run.maxClaims') } : null,
  });
}

export const JOB_HANDLER_METADATA = 'platform:job-handler';

/**
 * Marks a method of a provider as the handler of `job`: `(payload, ctx) => Promise<void>`. Found
 * at start-up (Nest's DiscoveryService); the application refuses to start when a declared job
 * has no handler or two. The handler contract (idempotent, resumable, throwing only for
 * retryable failures) is in `src/core/queue/README.md`.
 */
export function JobHandler<P>(job: JobDefinition<P>) {
  return <M extends (payload: P, ctx: JobContext) => Promise<void>>(
    _target: object,
    _key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void => {
    Reflect.defineMetadata(JOB_HANDLER_METADATA, job, descriptor.value!);
  };
}

/** The jobs a module owns; the provider {@link declareJobs} adds to the module. */
export class DeclaredJobs {
  constructor(readonly jobs: readonly JobDefinition<never>[]) {}
}

/**
 * Declares the jobs a module owns: add the result to the module's `providers`. Every declared
 * job must have exactly one {@link JobHandler} in the application, and only declared jobs can be
 * enqueued or scheduled.
 */
export function declareJobs(...jobs: JobDefinition<never>[]): Provider {
  return { provide: Symbol(`jobs:${jobs.map((j) => j.name).join(',')}`), useValue: new DeclaredJobs(jobs) };
}
