import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';

/** A queue whose jobs wait past `QUEUE_STALL_SECONDS` with no live worker consuming it. */
export interface StalledQueue {
  queue: string;
  /** Jobs of the queue (pending or handed over, not finished) waiting longer than the bound. */
  jobs: number;
  /** How long the oldest of them has waited, whole seconds. */
  waitingSeconds: number;
}

/** Consumers not heard from for this long are forgotten (their rows deleted). */
const FORGET_AFTER = `interval '1 day'`;

/**
 * Worker heartbeats (`job_consumers`): which processes consume which queue, as they last said
 * (every third of `JOB_LEASE_SECONDS`), by the database's clock so workers on several hosts
 * compare; and the queues whose jobs wait with no live consumer. The whole API of the table.
 */
@Injectable()
export class QueueConsumers {
  /** This process among the consumers: a random id per start. */
  readonly workerId = randomUUID();

  constructor(
    private readonly db: Database,
    private readonly config: AppConfig,
  ) {}

  /** This process consumes `queues` now: records it (and forgets consumers gone for a day). */
  async beat(queues: readonly string[]): Promise<void> {
    if (queues.length === 0) return;
    await this.db.query(
      `INSERT INTO job_consumers (worker_id, queue, host, pid)
       SELECT :workerId, q, :host, :pid FROM unnest(:queues::varchar[]) AS q
       ON CONFLICT (worker_id, queue) DO UPDATE SET last_seen = now()`,
      { workerId: this.workerId, queues: [...queues], host: os.hostname().slice(0, 255), pid: process.pid },
    );
    await this.db.query(`DELETE FROM job_consumers WHERE last_seen < now() - ${FORGET_AFTER}`);
  }

  /** This process stops consuming (graceful shutdown): its rows go at once. */
  async forget(): Promise<void> {
    await this.db.query(`DELETE FROM job_consumers WHERE worker_id = :workerId`, { workerId: this.workerId });
  }

  /**
   * The queues with jobs recorded more than `QUEUE_STALL_SECONDS` ago and not finished (pending,
   * or handed to Redis), and no consumer heard from within `JOB_LEASE_SECONDS`: nothing will
   * run those jobs. A queue with a live consumer is never stalled, however long its jobs wait.
   */
  stalled(): Promise<StalledQueue[]> {
    return this.db.query<StalledQueue>(
      `SELECT o.queue, count(*)::int AS jobs,
         floor(extract(epoch FROM now() - min(o.created_at)))::int AS "waitingSeconds"
       FROM job_outbox o
       WHERE o.status IN ('pending', 'dispatched') AND o.created_at < now() - make_interval(secs => :stall)
         AND NOT EXISTS (
           SELECT 1 FROM job_consumers c
           WHERE c.queue = o.queue AND c.last_seen > now() - make_interval(secs => :live))
       GROUP BY o.queue ORDER BY o.queue`,
      { stall: this.config.queue.stallSeconds, live: this.config.queue.jobLeaseSeconds },
      { prepare: true },
    );
  }
}

/** How a stalled queue is told, in the logs and on `/health/ready`. */
export function describeStall(s: StalledQueue): string {
  const jobs = s.jobs === 1 ? '1 job' : `${s.jobs} jobs`;
  return (
    `queue ${s.queue}: ${jobs} waiting (the oldest ${s.waitingSeconds} s) and no live worker consumes it; ` +
    `start a worker whose WORKER_QUEUES includes ${s.queue}`
  );
}

/**
 * Watches for stalled queues (with Redis; in-process, this process runs every job itself): on
 * every relay pass and readiness probe. Logs a warning naming the queue when it stalls, and a
 * line when it no longer does: once per change, not per check.
 */
@Injectable()
export class QueueWatch {
  private readonly logger = new Logger('Queues');
  private current = new Map<string, StalledQueue>();

  constructor(
    private readonly consumers: QueueConsumers,
    private readonly config: AppConfig,
  ) {}

  /** Whether there are queues to watch: jobs go to Redis for workers to consume. */
  get watching(): boolean {
    return this.config.queue.redisUrl !== null;
  }

  /** The stalled queues now (none in-process); logs what changed since the last check. */
  async check(): Promise<StalledQueue[]> {
    if (!this.watching) return [];
    const stalled = await this.consumers.stalled();
    const now = new Map(stalled.map((s) => [s.queue, s]));
    for (const s of stalled) {
      if (!this.current.has(s.queue)) {
        this.logger.warn(
          { queue: s.queue, jobs: s.jobs, waitingSeconds: s.waitingSeconds },
          `${describeStall(s)} (waiting past QUEUE_STALL_SECONDS=${this.config.queue.stallSeconds})`,
        );
      }
    }
    for (const queue of this.current.keys()) {
      if (!now.has(queue))
        this.logger.log({ queue }, `queue ${queue}: no job waits without a worker any more`);
    }
    this.current = now;
    return stalled;
  }
}
