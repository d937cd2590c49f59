import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../timeout.js';
import type { DispatchableJob, JobDispatcher } from './dispatcher.js';
import { JobRegistry } from './job-registry.js';
import { OutboxRepository, queueJobId } from './outbox.repository.js';
import { QUEUE_NAMES, type QueueName } from '../config/queue-names.js';

/**
 * What a Bull job carries: its outbox row and which hand-over of it this is, its run, its account,
 * the attempts earlier hand-overs made, and the job's payload. Fields added since the first
 * release are optional: a job queued by an older process may lack them.
 */
export interface BullJobData {
  outboxId: string;
  runId?: string | null;
  /** The account the work belongs to (null: platform work). */
  accountId?: number | null;
  /** Which hand-over of the row this Bull job is (its id is `queueJobId(outboxId, handover)`). */
  handover?: number;
  /** Attempts made under earlier hand-overs: Bull counts each job's own from zero. */
  attemptsBefore?: number;
  payload: Record<string, unknown>;
}

/** The hand-over a Bull job id names (`outbox-<id>` is the first, `outbox-<id>-<n>` the n-th). */
export function handoverOf(jobId: string | number): number {
  const n = /^outbox-\d+-(\d+)$/.exec(String(jobId))?.[1];
  return n ? Number(n) : 1;
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

  /**
   * Adds the job to its queue under its hand-over's id, then records the hand-over. The attempts
   * already made are carried over, so a job handed over again is not given its `attempts` anew.
   * `deferMs`: a deferral (its account held its share of the job): the job becomes runnable only
   * after it, and the row counts the hand-over as a deferral, not a loss. A deferral is recorded
   * before the add: the job it adds may run and defer again within `deferMs`, and the next
   * deferral's record must not overtake this one's (it would count as a loss). Should the add
   * fail, the recorded hand-over never arrives and the relay hands the job over once its lease
   * runs out.
   */
  async dispatch(job: DispatchableJob, options: { deferMs?: number } = {}): Promise<void> {
    const { definition } = this.registry.get(job.name);
    const queue = this.queues.get(definition.queue)!;
    if (queue.client.status !== 'ready') throw new Error('Redis is not connected');
    const deferred = options.deferMs !== undefined;
    const leaseSeconds = this.config.queue.jobLeaseSeconds;
    if (deferred) await this.outbox.markDispatched(job.id, job.handover, leaseSeconds, true);
    const attemptsBefore = Math.max(0, job.attempts);
    const data: BullJobData = {
      outboxId: job.id,
      runId: job.runId,
      accountId: job.accountId,
      handover: job.handover,
      attemptsBefore,
      payload: job.payload,
    };
    await withTimeout(
      queue.add(job.name, data, {
        // Numbered per hand-over: Bull ignores an add whose id it still holds (as a completed
        // or failed job too), which would swallow a re-dispatch under the first id.
        jobId: queueJobId(job.id, job.handover),
        // At least one, so a job handed over is always tried.
        attempts: Math.max(1, definition.attempts - attemptsBefore),
        ...(options.deferMs ? { delay: options.deferMs } : {}),
        backoff: { type: 'exponential', delay: definition.backoffMs },
        removeOnComplete: 1_000,
        removeOnFail: 5_000,
      }),
      this.config.queue.enqueueTimeoutMs,
      'enqueue',
    );
    if (!deferred) await this.outbox.markDispatched(job.id, job.handover, leaseSeconds);
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
