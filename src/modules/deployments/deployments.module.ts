import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  DeploymentCreationController,
  DeploymentsController,
  RegionsController,
} from './deployments.controller.js';
import { DeploymentsService } from './deployments.service.js';
import { DeploymentBuild } from './entities/deployment-build.entity.js';
import { Deployment } from './entities/deployment.entity.js';
import { Region } from './entities/region.entity.js';
import { RegionsService } from './regions.service.js';

/** Deployments (the root resource), their builds, and the region catalogue. */
@Module({
  imports: [TypeOrmModule.forFeature([Deployment, DeploymentBuild, Region])],
  controllers: [DeploymentsController, DeploymentCreationController, RegionsController],
  providers: [DeploymentsService, RegionsService],
  exports: [DeploymentsService],
})
export class DeploymentsModule {}
