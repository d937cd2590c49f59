import { Logger, type Type } from '@nestjs/common';
import { Process, Processor } from '@nestjs/bull';
import type { Job } from 'bull';
import { JobHandlers } from './job-handlers.js';
import type { JobName, JobPayloads, QueueName } from './jobs.js';
import { OutboxRepository } from './outbox.repository.js';

interface BullJobData {
  outboxId: string;
  payload: JobPayloads[JobName];
}

/** A Bull processor for one queue, delegating each job to its registered handler. */
export function bullProcessorFor(queue: QueueName, concurrency = 4): Type<unknown> {
  @Processor(queue)
  class QueueProcessor {
    private readonly logger = new Logger(`Queue:${queue}`);

    constructor(
      private readonly handlers: JobHandlers,
      private readonly outbox: OutboxRepository,
    ) {}

    @Process({ name: '*', concurrency })
    async handle(job: Job<BullJobData>): Promise<void> {
      const { outboxId, payload } = job.data;
      try {
        await this.handlers.run(job.name as JobName, payload);
        await this.outbox.markDone(outboxId);
      } catch (err) {
        const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        this.logger.warn({ jobId: outboxId, job: job.name, err, final }, 'job failed');
        await this.outbox.noteAttempt(outboxId, String(err), final).catch(() => undefined);
        throw err;
      }
    }
  }
  Object.defineProperty(QueueProcessor, 'name', { value: `${queue}QueueProcessor` });
  return QueueProcessor;
}
