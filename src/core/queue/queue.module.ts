import {
  Global,
  Inject,
  Injectable,
  Module,
  Optional,
  type DynamicModule,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BullModule } from '@nestjs/bull';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { BullDispatcher } from './bull.dispatcher.js';
import { BullWorkers } from './bull.workers.js';
import { JOB_DISPATCHER, type JobDispatcher } from './dispatcher.js';
import { JobConsumer } from './entities/job-consumer.entity.js';
import { JobRunLog } from './entities/job-run-log.entity.js';
import { JobRun } from './entities/job-run.entity.js';
import { JobSchedule } from './entities/job-schedule.entity.js';
import { InProcessDispatcher } from './in-process.dispatcher.js';
import { JobQueue } from './job-queue.service.js';
import { JobRegistry } from './job-registry.js';
import { JobRunner } from './job-runner.js';
import { JobRuns } from './job-runs.service.js';
import { JobSchedules } from './job-schedules.service.js';
import { OutboxJob } from './outbox-job.entity.js';
import { OutboxRelay } from './outbox.relay.js';
import { OutboxRepository } from './outbox.repository.js';
import { QueueConsumers, QueueWatch } from './queue-consumers.js';
import { QUEUE_NAMES } from '../config/queue-names.js';
import { BullRedisClients } from '../redis/redis.js';
import { RunRecovery } from './run-recovery.js';

/** Closes queues, or waits for in-process jobs, when the application shuts down. */
@Injectable()
class QueueCloser implements OnApplicationShutdown {
  constructor(
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    @Optional() private readonly redisClients?: BullRedisClients,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dispatcher instanceof BullDispatcher) await this.dispatcher.close();
    await this.redisClients?.closeAll();
    if (this.dispatcher instanceof InProcessDispatcher) await this.dispatcher.drain();
  }
}

/**
 * Background jobs (see README.md of this folder). With REDIS_URL: Bull queues, processed here
 * when this process runs jobs (the worker role, or the API with RUN_JOBS_IN_PROCESS), for the
 * queues in WORKER_QUEUES. Without: every job runs in this process.
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(config: AppConfig): DynamicModule {
    const common: Provider[] = [
      JobRegistry,
      JobRunner,
      JobRuns,
      JobSchedules,
      OutboxRepository,
      JobQueue,
      RunRecovery,
      QueueConsumers,
      QueueWatch,
      QueueCloser,
      ...(config.role === 'cli' ? [] : [OutboxRelay]),
    ];
    const imports = [
      DiscoveryModule,
      TypeOrmModule.forFeature([OutboxJob, JobRun, JobRunLog, JobSchedule, JobConsumer]),
    ];
    const exports = [JobQueue, JobRuns, JobSchedules, QueueWatch, JOB_DISPATCHER];
    const redisUrl = config.queue.redisUrl;
    if (!redisUrl) {
      return {
        module: QueueModule,
        imports,
        providers: [
          ...common,
          InProcessDispatcher,
          { provide: JOB_DISPATCHER, useExisting: InProcessDispatcher },
        ],
        exports,
      };
    }
    const redisClients = new BullRedisClients(redisUrl);
    return {
      module: QueueModule,
      imports: [
        ...imports,
        BullModule.forRoot({
          prefix: config.queue.prefix,
          createClient: (type) => redisClients.create(type),
        }),
        BullModule.registerQueue(...QUEUE_NAMES.map((name) => ({ name }))),
      ],
      providers: [
        ...common,
        BullDispatcher,
        { provide: BullRedisClients, useValue: redisClients },
        { provide: JOB_DISPATCHER, useExisting: BullDispatcher },
        ...(config.queue.runJobsInProcess ? [BullWorkers] : []),
      ],
      exports,
    };
  }
}
