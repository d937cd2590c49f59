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
import { BullModule } from '@nestjs/bull';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { BullDispatcher } from './bull.dispatcher.js';
import { BullWorkers } from './bull.workers.js';
import { JOB_DISPATCHER, type JobDispatcher } from './dispatcher.js';
import { InProcessDispatcher } from './in-process.dispatcher.js';
import { JobHandlers } from './job-handlers.js';
import { JobQueue } from './job-queue.service.js';
import { QueueName } from './jobs.js';
import { OutboxJob } from './outbox-job.entity.js';
import { OutboxRelay } from './outbox.relay.js';
import { OutboxRepository } from './outbox.repository.js';
import { BullRedisClients } from './redis.js';
import { RunLeases } from './run-leases.js';

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
 * Background jobs. With REDIS_URL: Bull queues, processed here when this process runs jobs
 * (the worker role, or the API with RUN_JOBS_IN_PROCESS). Without: jobs run in this process.
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(config: AppConfig): DynamicModule {
    const common: Provider[] = [
      JobHandlers,
      OutboxRepository,
      JobQueue,
      RunLeases,
      QueueCloser,
      ...(config.role === 'cli' ? [] : [OutboxRelay]),
    ];
    const entities = TypeOrmModule.forFeature([OutboxJob]);
    const exports = [JobHandlers, JobQueue, RunLeases, JOB_DISPATCHER];
    const redisUrl = config.queue.redisUrl;
    if (!redisUrl) {
      return {
        module: QueueModule,
        imports: [entities],
        providers: [
          ...common,
          InProcessDispatcher,
          { provide: JOB_DISPATCHER, useExisting: InProcessDispatcher },
        ],
        exports,
      };
    }
    const queues = Object.values(QueueName);
    const redisClients = new BullRedisClients(redisUrl);
    return {
      module: QueueModule,
      imports: [
        entities,
        BullModule.forRoot({
          prefix: config.queue.prefix,
          createClient: (type) => redisClients.create(type),
        }),
        BullModule.registerQueue(...queues.map((name) => ({ name }))),
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
