import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { OpenApiDocument } from './openapi-document.js';
import { QueryParamsInterceptor } from './query-params.interceptor.js';
import { RateLimitRedis } from './rate-limit.js';
import { SpecController } from './spec.controller.js';

@Global()
@Module({
  controllers: [SpecController],
  providers: [
    OpenApiDocument,
    RateLimitRedis,
    { provide: APP_INTERCEPTOR, useClass: QueryParamsInterceptor },
  ],
  exports: [OpenApiDocument],
})
export class HttpCoreModule {}
