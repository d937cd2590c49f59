import type { JobName, JobPayloads } from './jobs.js';

export interface DispatchableJob<N extends JobName = JobName> {
  /** The outbox row id; also the queue's job id, so a job dispatched twice is stored once. */
  id: string;
  name: N;
  payload: JobPayloads[N];
}

/** Hands recorded jobs to whatever runs them: Bull over Redis, or this process. */
export interface JobDispatcher {
  readonly mode: 'redis' | 'in-process';
  /** Whether a job handed over now would be accepted. */
  available(): boolean;
  /** Hands the job over; rejects within the enqueue timeout when that fails. */
  dispatch(job: DispatchableJob): Promise<void>;
  /** Readiness: null when healthy, else a reason. */
  check(): Promise<string | null>;
}

export const JOB_DISPATCHER = Symbol('JOB_DISPATCHER');
