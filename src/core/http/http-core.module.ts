import { Global, Module } from '@nestjs/common';
import { OpenApiDocument } from './openapi-document.js';
import { SpecController } from './spec.controller.js';

@Global()
@Module({ controllers: [SpecController], providers: [OpenApiDocument], exports: [OpenApiDocument] })
export class HttpCoreModule {}
