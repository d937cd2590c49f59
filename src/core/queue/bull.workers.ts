import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { BullDispatcher, type BullJobData } from './bull.dispatcher.js';
import { startHeartbeat } from './heartbeat.js';
import { JobRegistry } from './job-registry.js';
import { JobRunner } from './job-runner.js';
import { OutboxRepository } from './outbox.repository.js';

/**
 * Runs the Bull jobs of the queues this process serves (`WORKER_QUEUES`): the worker role, or the
 * API with RUN_JOBS_IN_PROCESS. One named processor per job, at the job's `concurrency`.
 * Processing starts once Redis is connected, so a process that starts while Redis is down
 * neither crashes on the failed start nor stays idle after Redis returns.
 */
@Injectable()
export class BullWorkers implements OnApplicationBootstrap {
  private readonly logger = new Logger(BullWorkers.name);

  constructor(
    private readonly dispatcher: BullDispatcher,
    private readonly registry: JobRegistry,
    private readonly runner: JobRunner,
    private readonly outbox: OutboxRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    for (const name of this.config.queue.workerQueues) {
      const queue = this.dispatcher.allQueues().get(name)!;
      const jobs = this.registry.all().filter((j) => j.definition.queue === name);
      if (jobs.length === 0) continue;
      const start = () => {
        for (const { definition } of jobs) {
          queue
            .process(definition.name, definition.concurrency, (job: Job<BullJobData>) => this.handle(job))
            .catch((err: unknown) =>
              this.logger.warn(`queue ${name} stopped processing ${definition.name}: ${String(err)}`),
            );
        }
      };
      if (queue.client.status === 'ready') start();
      else queue.client.once('ready', start);
    }
  }

  private async handle(job: Job<BullJobData>): Promise<void> {
    const { outboxId, payload, runId } = job.data;
    // The heartbeat keeps the row's lease while this worker lives; once it stops, the relay
    // takes the job for lost and hands it over again.
    const lease = this.config.queue.jobLeaseSeconds;
    const renew = () => this.outbox.renewLease(outboxId, lease);
    const stop = startHeartbeat(renew, Math.max(1000, (lease * 1000) / 3));
    const attempt = job.attemptsMade + 1;
    const maxAttempts = job.opts.attempts ?? 1;
    try {
      await renew().catch(() => undefined);
      await this.runner.run(
        {
          id: outboxId,
          name: job.name,
          payload,
          runId: runId ?? null,
          handover: 1,
          attempts: job.attemptsMade,
        },
        attempt,
        maxAttempts,
      );
      await this.outbox.markDone(outboxId);
    } catch (err) {
      const final = attempt >= maxAttempts;
      this.logger.warn({ jobId: outboxId, job: job.name, err, final }, 'job failed');
      await this.outbox.noteAttempt(outboxId, String(err), final).catch(() => undefined);
      throw err;
    } finally {
      stop();
    }
  }
}
