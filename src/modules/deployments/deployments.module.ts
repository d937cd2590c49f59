import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeploymentLifecycle } from './deployment-lifecycle.js';
import {
  DeploymentCreationController,
  DeploymentsController,
  RegionsController,
} from './deployments.controller.js';
import { DeploymentsRepository } from './deployments.repository.js';
import { DeploymentsService } from './deployments.service.js';
import { Deployment } from './entities/deployment.entity.js';
import { Region } from './entities/region.entity.js';
import { RegionsService } from './regions.service.js';

/**
 * Deployments (the root resource) and the region catalogue. What hangs from a deployment (its
 * data model, builds) plugs into {@link DeploymentLifecycle}.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Deployment, Region])],
  controllers: [DeploymentsController, DeploymentCreationController, RegionsController],
  providers: [DeploymentsRepository, DeploymentsService, RegionsService, DeploymentLifecycle],
  exports: [DeploymentsService, DeploymentLifecycle],
})
export class DeploymentsModule {}
