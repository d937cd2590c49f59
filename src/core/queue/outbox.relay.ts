import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { JOB_DISPATCHER, type JobDispatcher } from './dispatcher.js';
import { JobSchedules } from './job-schedules.service.js';
import { OutboxRepository } from './outbox.repository.js';
import { QueueWatch } from './queue-consumers.js';
import { RunRecovery } from './run-recovery.js';

/**
 * The one tick, periodically in every API and worker process: re-queues runs stuck past their
 * lease (their worker died), fires due schedules (`job_schedules`), hands the queue the jobs whose dispatch did not happen (Redis was down between
 * commit and enqueue, or the process died) or that the queue lost (handed over, but not
 * finished within their lease: Redis restarted without its data, or the worker died),
 * retries failed in-process jobs, and logs a queue whose jobs wait with no live worker
 * ({@link QueueWatch}).
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<unknown> | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly outbox: OutboxRepository,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly recovery: RunRecovery,
    private readonly schedules: JobSchedules,
    private readonly watch: QueueWatch,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      if (!this.pass) this.pass = this.relayOnce().finally(() => (this.pass = null));
    }, this.config.queue.relayIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.pass;
  }

  /** One pass; returns how many jobs were handed over (recovered runs included). */
  async relayOnce(): Promise<number> {
    if (!this.dispatcher.available()) return 0;
    let handed = 0;
    try {
      handed += await this.recovery.recoverStuck();
      await this.schedules.fireDue();
      for (const job of await this.outbox.claimDue(100, 60)) {
        await this.dispatcher.dispatch(job);
        handed += 1;
      }
      for (const job of await this.outbox.claimLost(100, this.config.queue.jobLeaseSeconds)) {
        if (await this.dispatcher.redispatch(job)) {
          this.logger.warn({ jobId: job.id, job: job.name }, 'job lost by the queue; handed over again');
          handed += 1;
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'outbox relay pass failed');
    }
    // Logs a queue whose jobs wait with no live worker (and when that ends), probes or not.
    await this.watch
      .check()
      .catch((err: unknown) => this.logger.debug(`stalled queues check failed: ${String(err)}`));
    return handed;
  }
}
