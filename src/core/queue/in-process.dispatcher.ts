import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { startHeartbeat } from './heartbeat.js';
import type { DispatchableJob, JobDispatcher } from './dispatcher.js';
import { JobRegistry } from './job-registry.js';
import { JobRunner } from './job-runner.js';
import { OutboxRepository } from './outbox.repository.js';

/**
 * Runs jobs in this process (no REDIS_URL), with the same handlers, options and run records as
 * Bull workers. The outbox row is the job's durable record and its retry schedule.
 */
@Injectable()
export class InProcessDispatcher implements JobDispatcher {
  readonly mode = 'in-process' as const;
  private readonly logger = new Logger('InProcessJobs');
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly runner: JobRunner,
    private readonly registry: JobRegistry,
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
    // Its account runs its share of this job already: back to the outbox, due again in
    // JOB_DEFER_MS, for the relay to hand over (not an attempt). It waits holding no slot.
    const admitted = this.runner.admit(job);
    if (!admitted) {
      await this.outbox
        .defer(job.id, this.config.queue.deferMs)
        .catch((err: unknown) =>
          this.logger.warn({ jobId: job.id, job: job.name, err }, 'could not defer a job'),
        );
      return;
    }
    // The row stays `pending` and leased while the job runs; if this process dies, the lease
    // runs out and the relay of this or another process runs the job again.
    const lease = this.config.queue.jobLeaseSeconds;
    const renew = () => this.outbox.lease(job.id, lease);
    const stop = startHeartbeat(renew, Math.max(1000, (lease * 1000) / 3));
    const { definition } = this.registry.get(job.name);
    try {
      await renew();
      await this.runner.run(job, job.attempts + 1, definition.attempts);
      await this.outbox.markDone(job.id);
    } catch (err) {
      this.logger.warn({ jobId: job.id, job: job.name, err }, 'job failed; it will be retried');
      await this.outbox
        .markFailed(job.id, String(err), definition.attempts, definition.backoffMs)
        .catch(() => undefined);
    } finally {
      stop();
      admitted();
    }
  }
}
