import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeploymentEvents } from './deployment-events.js';
import { DeploymentLifecycle } from './deployment-lifecycle.js';
import {
  DeploymentCreationController,
  DeploymentsController,
  RegionsController,
} from './deployments.controller.js';
import { DeploymentRowsController } from './deployment-rows.controller.js';
import { DeploymentsRepository } from './deployments.repository.js';
import { EnvVarsController } from './env-vars.controller.js';
import { EnvVarsRepository } from './env-vars.repository.js';
import { EnvVarsService } from './env-vars.service.js';
import { DeploymentsService } from './deployments.service.js';
import { DeploymentEnvVar } from './entities/deployment-env-var.entity.js';
import { DeploymentVersion } from './entities/deployment-version.entity.js';
import { Deployment } from './entities/deployment.entity.js';
import { Region } from './entities/region.entity.js';
import { Release } from './entities/release.entity.js';
import { RegionsService } from './regions.service.js';
import { ReleasesRepository } from './releases.repository.js';
import { ReleasesService } from './releases.service.js';

/**
 * Deployments (the root resource), the region and release catalogues, what each deployment ran,
 * and its environment variables. What hangs from a deployment (its data model, builds) plugs into
 * {@link DeploymentLifecycle}.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Deployment, Region, Release, DeploymentVersion, DeploymentEnvVar])],
  controllers: [
    DeploymentsController,
    DeploymentCreationController,
    DeploymentRowsController,
    RegionsController,
    EnvVarsController,
  ],
  providers: [
    DeploymentsRepository,
    DeploymentsService,
    RegionsService,
    DeploymentLifecycle,
    DeploymentEvents,
    ReleasesRepository,
    ReleasesService,
    EnvVarsRepository,
    EnvVarsService,
  ],
  // EnvVarsService.values: the deployment's variables in clear, for the modules configuring its runtime.
  exports: [DeploymentsService, DeploymentLifecycle, EnvVarsService],
})
export class DeploymentsModule {}
