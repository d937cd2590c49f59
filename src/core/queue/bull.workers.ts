import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { BullDispatcher, handoverOf, type BullJobData } from './bull.dispatcher.js';
import type { DispatchableJob } from './dispatcher.js';
import { startHeartbeat } from './heartbeat.js';
import { JobRegistry } from './job-registry.js';
import { JobRunner } from './job-runner.js';
import { OutboxRepository } from './outbox.repository.js';
import { QueueConsumers } from './queue-consumers.js';
import type { QueueName } from '../config/queue-names.js';

/**
 * Runs the Bull jobs of the queues this process serves (`WORKER_QUEUES`): the worker role, or the
 * API with RUN_JOBS_IN_PROCESS. One named processor per job, at the job's `concurrency`.
 * Processing starts once Redis is connected, so a process that starts while Redis is down
 * neither crashes on the failed start nor stays idle after Redis returns.
 *
 * While it consumes a queue (its Redis connection ready), the process says so every third of
 * JOB_LEASE_SECONDS (`QueueConsumers.beat`), so readiness can tell a queue nobody consumes.
 */
@Injectable()
export class BullWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(BullWorkers.name);
  /** The queues this process has started consuming. */
  private readonly consuming = new Set<QueueName>();
  private stopHeartbeat: (() => void) | null = null;

  constructor(
    private readonly dispatcher: BullDispatcher,
    private readonly registry: JobRegistry,
    private readonly runner: JobRunner,
    private readonly outbox: OutboxRepository,
    private readonly config: AppConfig,
    private readonly consumers: QueueConsumers,
  ) {}

  onApplicationBootstrap(): void {
    const everyMs = Math.max(1000, (this.config.queue.jobLeaseSeconds * 1000) / 3);
    this.stopHeartbeat = startHeartbeat(() => this.beat(), everyMs);
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
        this.consuming.add(name);
        void this.beat();
      };
      if (queue.client.status === 'ready') start();
      else queue.client.once('ready', start);
    }
  }

  /** Stops the heartbeat and forgets this consumer, so readiness does not count it meanwhile. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopHeartbeat?.();
    this.stopHeartbeat = null;
    this.consuming.clear();
    await this.consumers.forget().catch(() => undefined);
  }

  /**
   * Says which queues this process consumes now: those it processes whose Redis connection is
   * ready (cut off from Redis, it takes no job). A failed write is retried at the next beat; the
   * consumer counts as live for JOB_LEASE_SECONDS after its last one.
   */
  private async beat(): Promise<void> {
    const queues = this.dispatcher.allQueues();
    const live = [...this.consuming].filter((name) => queues.get(name)?.client.status === 'ready');
    await this.consumers
      .beat(live)
      .catch((err: unknown) => this.logger.debug(`could not record this worker's heartbeat: ${String(err)}`));
  }

  private async handle(job: Job<BullJobData>): Promise<void> {
    const { outboxId, payload, runId } = job.data;
    const before = job.data.attemptsBefore ?? 0;
    const dispatchable: DispatchableJob = {
      id: outboxId,
      name: job.name,
      payload,
      runId: runId ?? null,
      accountId: job.data.accountId ?? null,
      handover: job.data.handover ?? handoverOf(job.id),
      attempts: before + job.attemptsMade,
    };
    // The account runs its share of this job here already: the job gives its slot back at once
    // and comes back later, so the jobs of other accounts behind it run now.
    const admitted = this.runner.admit(dispatchable);
    if (!admitted) return this.defer(dispatchable);
    // The heartbeat keeps the row's lease while this worker lives; once it stops, the relay
    // takes the job for lost and hands it over again.
    const lease = this.config.queue.jobLeaseSeconds;
    const renew = () => this.outbox.renewLease(outboxId, lease);
    const stop = startHeartbeat(renew, Math.max(1000, (lease * 1000) / 3));
    const attempt = dispatchable.attempts + 1;
    const maxAttempts = before + (job.opts.attempts ?? 1);
    try {
      await renew().catch(() => undefined);
      await this.runner.run(dispatchable, attempt, maxAttempts);
      await this.outbox.markDone(outboxId);
    } catch (err) {
      const final = attempt >= maxAttempts;
      this.logger.warn({ jobId: outboxId, job: job.name, err, final }, 'job failed');
      await this.outbox.noteAttempt(outboxId, String(err), final).catch(() => undefined);
      throw err;
    } finally {
      stop();
      admitted();
    }
  }

  /**
   * Hands the job over again, `JOB_DEFER_MS` later, as the row's next hand-over; the current Bull
   * job then completes without running (not an attempt). In that order, so a crash loses nothing:
   * the new hand-over is recorded (its lease with it) before it is added, so one that never
   * reaches the queue (a crash, or Redis went away) is handed over by the relay once that lease
   * runs out; after, the current job may run again when Bull finds it stalled, which the run's
   * claim fences (and plain jobs are idempotent).
   */
  private async defer(job: DispatchableJob): Promise<void> {
    try {
      await this.dispatcher.dispatch(
        { ...job, handover: job.handover + 1 },
        { deferMs: this.config.queue.deferMs },
      );
    } catch (err) {
      this.logger.warn(
        { jobId: job.id, job: job.name, err },
        'could not defer a job past its account share; the relay hands it over once its lease runs out',
      );
    }
  }
}
