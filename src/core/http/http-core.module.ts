import { Global, Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { OpenApiDocument } from '../openapi/openapi-document.js';
import { QueryParamsGuard } from './query-params.guard.js';
import { RateLimitRedis } from '../rate-limit/rate-limit.js';
import { RouteBehaviours } from './route-behaviour.js';
import { SpecController } from '../openapi/spec.controller.js';

@Global()
@Module({
  imports: [DiscoveryModule],
  controllers: [SpecController],
  providers: [
    OpenApiDocument,
    RouteBehaviours,
    RateLimitRedis,
    // After the access guard (AuthModule is imported first): 401 and 403 come before a 400.
    { provide: APP_GUARD, useClass: QueryParamsGuard },
  ],
  exports: [OpenApiDocument],
})
export class HttpCoreModule {}
