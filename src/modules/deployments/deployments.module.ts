import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { declareJobs } from '../../core/queue/job-definition.js';
import { BUILD_JOB, DeploymentBuildJob } from './deployment-build.job.js';
import {
  DeploymentCreationController,
  DeploymentsController,
  RegionsController,
} from './deployments.controller.js';
import { DeploymentsRepository } from './deployments.repository.js';
import { DeploymentsService } from './deployments.service.js';
import { DeploymentBuild } from './entities/deployment-build.entity.js';
import { Deployment } from './entities/deployment.entity.js';
import { Region } from './entities/region.entity.js';
import { RegionsService } from './regions.service.js';

/** Deployments (the root resource), their builds (the `deployment.build` job), and the region catalogue. */
@Module({
  imports: [TypeOrmModule.forFeature([Deployment, DeploymentBuild, Region])],
  controllers: [DeploymentsController, DeploymentCreationController, RegionsController],
  providers: [
    DeploymentsRepository,
    DeploymentsService,
    RegionsService,
    DeploymentBuildJob,
    declareJobs(BUILD_JOB),
  ],
  exports: [DeploymentsService],
})
export class DeploymentsModule {}
