import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { startHeartbeat } from './heartbeat.js';
import type { DispatchableJob, JobDispatcher } from './dispatcher.js';
import { JobHandlers } from './job-handlers.js';
import { OutboxRepository } from './outbox.repository.js';

/** Runs jobs in this process (no REDIS_URL). The outbox row is the job's durable record. */
@Injectable()
export class InProcessDispatcher implements JobDispatcher {
  readonly mode = 'in-process' as const;
  private readonly logger = new Logger('InProcessJobs');
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly handlers: JobHandlers,
    private readonly outbox: OutboxRepository,
    private readonly config: AppConfig,
  ) {}

  available(): boolean {
    return true;
  }

  dispatch(job: DispatchableJob): Promise<void> {
    const run = this.run(job).finally(() => this.running.delete(run));
    this.running.add(run);
    return Promise.resolve();
  }

  /** In-process rows stay `pending` (leased) while they run, so this is a plain dispatch. */
  async redispatch(job: DispatchableJob): Promise<boolean> {
    await this.dispatch(job);
    return true;
  }

  check(): Promise<string | null> {
    return Promise.resolve(null);
  }

  /** Waits for running jobs (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async run(job: DispatchableJob): Promise<void> {
    // The row stays `pending` and leased while the job runs; if this process dies, the lease
    // runs out and the relay of this or another process runs the job again.
    const lease = this.config.queue.jobLeaseSeconds;
    const renew = () => this.outbox.lease(job.id, lease);
    const stop = startHeartbeat(renew, Math.max(1000, (lease * 1000) / 3));
    try {
      await renew();
      await this.handlers.run(job.name, job.payload);
      await this.outbox.markDone(job.id);
    } catch (err) {
      this.logger.warn({ jobId: job.id, job: job.name, err }, 'job failed; it will be retried');
      await this.outbox.markFailed(job.id, String(err), true).catch(() => undefined);
    } finally {
      stop();
    }
  }
}
