import { Injectable, Logger } from '@nestjs/common';
import type { DispatchableJob, JobDispatcher } from './dispatcher.js';
import { JobHandlers } from './job-handlers.js';
import { OutboxRepository } from './outbox.repository.js';

/** Seconds a running in-process job holds its row before the relay may run it again. */
const LEASE_SECONDS = 300;

/** Runs jobs in this process (no REDIS_URL). The outbox row is the job's durable record. */
@Injectable()
export class InProcessDispatcher implements JobDispatcher {
  readonly mode = 'in-process' as const;
  private readonly logger = new Logger('InProcessJobs');
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly handlers: JobHandlers,
    private readonly outbox: OutboxRepository,
  ) {}

  available(): boolean {
    return true;
  }

  dispatch(job: DispatchableJob): Promise<void> {
    const run = this.run(job).finally(() => this.running.delete(run));
    this.running.add(run);
    return Promise.resolve();
  }

  check(): Promise<string | null> {
    return Promise.resolve(null);
  }

  /** Waits for running jobs (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async run(job: DispatchableJob): Promise<void> {
    try {
      await this.outbox.lease(job.id, LEASE_SECONDS);
      await this.handlers.run(job.name, job.payload);
      await this.outbox.markDone(job.id);
    } catch (err) {
      this.logger.warn({ jobId: job.id, job: job.name, err }, 'job failed; it will be retried');
      await this.outbox.markFailed(job.id, String(err), true).catch(() => undefined);
    }
  }
}
