import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { declareJobs } from '../../queue/job-definition.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyPrune, IDEMPOTENCY_PRUNE_JOB } from './idempotency-prune.job.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/**
 * `Idempotency-Key` on POST: the table, its prune, and what the interceptor needs. Global: the
 * interceptor is made in the module of every controller whose handlers are `@Audited()`
 * (audited.decorator.ts), so its dependencies must be reachable from each.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKey])],
  providers: [IdempotencyRepository, IdempotencyPrune, declareJobs(IDEMPOTENCY_PRUNE_JOB)],
  exports: [IdempotencyRepository, IdempotencyPrune],
})
export class IdempotencyModule {}
