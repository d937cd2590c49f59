import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../timeout.js';
import type { DispatchableJob, JobDispatcher } from './dispatcher.js';
import { JobRegistry } from './job-registry.js';
import { OutboxRepository, queueJobId } from './outbox.repository.js';
import { QUEUE_NAMES, type QueueName } from './queues.js';

/** What a Bull job carries: its outbox row, its run, and the job's payload. */
export interface BullJobData {
  outboxId: string;
  runId?: string | null;
  payload: Record<string, unknown>;
}

/** Hands jobs to Bull queues in Redis, within a bounded time. */
@Injectable()
export class BullDispatcher implements JobDispatcher {
  readonly mode = 'redis' as const;
  private readonly logger = new Logger('BullDispatcher');
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    private readonly config: AppConfig,
    private readonly outbox: OutboxRepository,
    private readonly registry: JobRegistry,
    moduleRef: ModuleRef,
  ) {
    for (const name of QUEUE_NAMES) {
      const queue = moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      queue.on('error', (err) => this.logger.warn(`queue ${name}: ${err.message}`));
      this.queues.set(name, queue);
    }
  }

  allQueues(): ReadonlyMap<QueueName, Queue> {
    return this.queues;
  }

  available(): boolean {
    return [...this.queues.values()].every((q) => q.client.status === 'ready');
  }

  async dispatch(job: DispatchableJob): Promise<void> {
    const { definition } = this.registry.get(job.name);
    const queue = this.queues.get(definition.queue)!;
    if (queue.client.status !== 'ready') throw new Error('Redis is not connected');
    const data: BullJobData = { outboxId: job.id, runId: job.runId, payload: job.payload };
    await withTimeout(
      queue.add(job.name, data, {
        // Numbered per hand-over: Bull ignores an add whose id it still holds (as a completed
        // or failed job too), which would swallow a re-dispatch under the first id.
        jobId: queueJobId(job.id, job.handover),
        attempts: definition.attempts,
        backoff: { type: 'exponential', delay: definition.backoffMs },
        removeOnComplete: 1_000,
        removeOnFail: 5_000,
      }),
      this.config.queue.enqueueTimeoutMs,
      'enqueue',
    );
    await this.outbox.markDispatched(job.id, job.handover, this.config.queue.jobLeaseSeconds);
  }

  async redispatch(job: DispatchableJob): Promise<boolean> {
    const queue = this.queues.get(this.registry.get(job.name).definition.queue)!;
    if (queue.client.status !== 'ready') throw new Error('Redis is not connected');
    const held = await withTimeout(
      queue.getJob(queueJobId(job.id, job.handover)),
      this.config.queue.enqueueTimeoutMs,
      'get job',
    );
    const state = held ? await held.getState() : null;
    // Waiting its turn (or its retry back-off): the queue still has it; the claim extended the
    // lease. Missing (Redis lost it), active without a heartbeat (its worker died), completed or
    // failed without the row being finished: hand it over again.
    if (state === 'waiting' || state === 'delayed' || state === 'paused') return false;
    await this.dispatch({ ...job, handover: job.handover + 1 });
    return true;
  }

  async check(): Promise<string | null> {
    try {
      const queue = this.queues.values().next().value!;
      if (queue.client.status !== 'ready') return `redis ${queue.client.status}`;
      await withTimeout(queue.client.ping(), 1_000, 'redis ping');
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /**
   * Pauses local processing first (which stops the blocking fetch loop), then closes. Bull's
   * own close skips the pause when its first connection attempt failed, and the blocking
   * client would then reject a pending command nobody awaits.
   */
  async close(): Promise<void> {
    await Promise.allSettled(
      [...this.queues.values()].map(async (q) => {
        await q.pause(true, true).catch(() => undefined);
        await q.close(true);
      }),
    );
  }
}
