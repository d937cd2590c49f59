import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { declareJobs } from '../../core/queue/job-definition.js';
import { DataModelModule } from '../data-model/data-model.module.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DbtIntegrations } from './dbt-integrations.service.js';
import { DbtIntegrationController, DbtSyncController } from './dbt-sync.controller.js';
import { DbtSyncEvents } from './dbt-sync.events.js';
import { DBT_SYNC_JOB, DbtSyncJob } from './dbt-sync.job.js';
import { DbtSyncRepository } from './dbt-sync.repository.js';
import { DbtSyncs } from './dbt-sync.service.js';
import { DbtIntegration } from './entities/dbt-integration.entity.js';
import { DbtSyncFile } from './entities/dbt-sync-file.entity.js';
import { DbtSync } from './entities/dbt-sync.entity.js';

/**
 * dbt sync: a deployment's dbt repository (`.../dbt-integration`), and syncs that turn the dbt
 * project's compiled manifest into cube files on a new branch of the data model
 * (`.../dbt-sync`), run by the `dbt-sync.run` job. The converter is in `converter/`; the data
 * model takes the files through `ModelImports`.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([DbtIntegration, DbtSync, DbtSyncFile]),
    DeploymentsModule,
    DataModelModule,
  ],
  controllers: [DbtIntegrationController, DbtSyncController],
  providers: [
    DbtSyncRepository,
    DbtIntegrations,
    DbtSyncs,
    DbtSyncJob,
    DbtSyncEvents,
    declareJobs(DBT_SYNC_JOB),
  ],
})
export class DbtSyncModule {}
