/** A recorded job (an outbox row), as handed to whatever runs it. */
export interface DispatchableJob {
  /** The outbox row id; with `handover`, the queue's job id, so a hand-over repeated is stored once. */
  id: string;
  name: string;
  payload: Record<string, unknown>;
  /** The account the work belongs to (a worker runs at most its share of them at once); null: platform work. */
  accountId: number | null;
  /** Which hand-over of the row this is (1 the first); numbers the queue's job id. */
  handover: number;
  /** The run it works on (jobs with run records), else null. */
  runId: string | null;
  /**
   * Attempts already made (the row's count): in-process jobs go on from it; a Bull job handed over
   * again carries it, since Bull counts the attempts of each of its jobs from zero.
   */
  attempts: number;
}

/** Hands recorded jobs to whatever runs them: Bull over Redis, or this process. */
export interface JobDispatcher {
  readonly mode: 'redis' | 'in-process';
  /** Whether a job handed over now would be accepted. */
  available(): boolean;
  /** Hands the job over; rejects within the enqueue timeout when that fails. */
  dispatch(job: DispatchableJob): Promise<void>;
  /**
   * Hands over again a job handed over before whose lease expired: keeps it when the queue
   * still holds it, waiting to run; otherwise (lost, or its worker died) adds it anew under
   * the next hand-over's id. Resolves to whether it was handed over again.
   */
  redispatch(job: DispatchableJob): Promise<boolean>;
  /** Readiness: null when healthy, else a reason. */
  check(): Promise<string | null>;
}

export const JOB_DISPATCHER = Symbol('JOB_DISPATCHER');
