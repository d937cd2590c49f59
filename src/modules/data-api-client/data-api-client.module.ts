import { Module } from '@nestjs/common';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { DataApiAddresses } from './data-api-addresses.service.js';
import { DataApiKeys } from './data-api-keys.service.js';
import { DataApiClient } from './data-api.client.js';
import { DataModelMetaService } from './data-model-meta.service.js';
import { MetaController } from './meta.controller.js';

/**
 * The client of deployments' Core Data APIs ({@link DataApiClient}): for the modules that read a
 * deployment's data (notifications, Python runs), and the keys data API tokens are signed with
 * ({@link DataApiKeys}, for the module that issues them). It has no tables; it reads the deployment
 * (its address, in the caller's account) and its `CUBEJS_API_SECRET` through the deployments module.
 * Its one route, `POST /meta/` (the command-line tool's), answers a deployment's `/v1/meta`.
 */
@Module({
  imports: [DeploymentsModule],
  controllers: [MetaController],
  providers: [DataApiClient, DataApiKeys, DataApiAddresses, DataModelMetaService],
  exports: [DataApiClient, DataApiKeys, DataApiAddresses],
})
export class DataApiClientModule {}
