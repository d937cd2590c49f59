import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { BullDispatcher } from './bull.dispatcher.js';
import { startHeartbeat } from './heartbeat.js';
import { JobHandlers } from './job-handlers.js';
import type { JobName, JobPayloads } from './jobs.js';
import { OutboxRepository } from './outbox.repository.js';

interface BullJobData {
  outboxId: string;
  payload: JobPayloads[JobName];
}

const CONCURRENCY = 4;

/**
 * Runs the Bull queues' jobs in this process (the worker role, or the API with
 * RUN_JOBS_IN_PROCESS). Processing starts once Redis is connected, so a process that starts
 * while Redis is down neither crashes on the failed start nor stays idle after Redis returns.
 */
@Injectable()
export class BullWorkers implements OnApplicationBootstrap {
  private readonly logger = new Logger(BullWorkers.name);

  constructor(
    private readonly dispatcher: BullDispatcher,
    private readonly handlers: JobHandlers,
    private readonly outbox: OutboxRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    for (const [name, queue] of this.dispatcher.allQueues()) {
      const start = () =>
        queue
          .process('*', CONCURRENCY, (job: Job<BullJobData>) => this.handle(job))
          .catch((err: unknown) => this.logger.warn(`queue ${name} stopped processing: ${String(err)}`));
      if (queue.client.status === 'ready') void start();
      else queue.client.once('ready', () => void start());
    }
  }

  private async handle(job: Job<BullJobData>): Promise<void> {
    const { outboxId, payload } = job.data;
    // The heartbeat keeps the row's lease while this worker lives; once it stops, the relay
    // takes the job for lost and hands it over again.
    const lease = this.config.queue.jobLeaseSeconds;
    const renew = () => this.outbox.renewLease(outboxId, lease);
    const stop = startHeartbeat(renew, Math.max(1000, (lease * 1000) / 3));
    try {
      await renew().catch(() => undefined);
      await this.handlers.run(job.name as JobName, payload);
      await this.outbox.markDone(outboxId);
    } catch (err) {
      const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.warn({ jobId: outboxId, job: job.name, err, final }, 'job failed');
      await this.outbox.noteAttempt(outboxId, String(err), final).catch(() => undefined);
      throw err;
    } finally {
      stop();
    }
  }
}
