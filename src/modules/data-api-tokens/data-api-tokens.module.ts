import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataApiClientModule } from '../data-api-client/data-api-client.module.js';
import { DataModelModule } from '../data-model/data-model.module.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DeploymentTokenController, EnvironmentTokensController } from './data-api-tokens.controller.js';
import { DataApiTokensRepository } from './data-api-tokens.repository.js';
import { DataApiTokens } from './data-api-tokens.service.js';
import { EnvironmentToken } from './entities/environment-token.entity.js';

/**
 * Credentials for querying deployments' data APIs: a deployment's token and tokens per
 * environment (the environments and their ids are the data model's; the signing secrets come
 * through the data API client's {@link DataApiKeys}).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([EnvironmentToken]),
    DeploymentsModule,
    DataModelModule,
    DataApiClientModule,
  ],
  controllers: [DeploymentTokenController, EnvironmentTokensController],
  providers: [DataApiTokens, DataApiTokensRepository],
})
export class DataApiTokensModule {}
