import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { coreError } from '../http/api-error.js';
import { JOB_DISPATCHER, type DispatchableJob, type JobDispatcher } from './dispatcher.js';
import type { JobName, JobPayloads } from './jobs.js';
import { OutboxRepository } from './outbox.repository.js';

/**
 * How services start background work:
 * 1. `assertAvailable()` before writing, so a request that must enqueue fails fast (503) and
 *    changes nothing while the queue is down;
 * 2. `record()` inside the service's transaction (the outbox);
 * 3. `dispatch()` after commit. If the queue fails in between, the relay dispatches it later.
 */
@Injectable()
export class JobQueue {
  private readonly logger = new Logger(JobQueue.name);

  constructor(
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly outbox: OutboxRepository,
  ) {}

  assertAvailable(): void {
    if (!this.dispatcher.available()) {
      throw coreError('queue_unavailable', 'The job queue is unavailable; retry shortly');
    }
  }

  record<N extends JobName>(
    manager: EntityManager,
    name: N,
    payload: JobPayloads[N],
  ): Promise<DispatchableJob<N>> {
    return this.outbox.record(manager, name, payload);
  }

  async dispatch(jobs: DispatchableJob | DispatchableJob[]): Promise<void> {
    for (const job of Array.isArray(jobs) ? jobs : [jobs]) {
      try {
        await this.dispatcher.dispatch(job);
      } catch (err) {
        this.logger.warn(
          { jobId: job.id, job: job.name, err },
          'dispatch failed; the outbox relay will retry',
        );
      }
    }
  }
}
