import fs from 'node:fs';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from './core/config/app-config.js';
import { AuditService } from './core/audit/audit.service.js';
import { AllExceptionsFilter } from './core/http/exception.filter.js';
import { configureHttp } from './core/http/http-setup.js';
import { OpenApiDocument } from './core/http/openapi-document.js';
import { buildOpenApiDocument, setupSwaggerUi } from './core/http/openapi.js';
import { StrictValidationPipe } from './core/http/validation.pipe.js';

/** Builds the HTTP application (not yet listening). Used by `main.ts` and by the tests. */
export async function createHttpApp(config: AppConfig): Promise<NestExpressApplication> {
  const httpsOptions =
    config.http.tlsCertFile && config.http.tlsKeyFile
      ? { cert: fs.readFileSync(config.http.tlsCertFile), key: fs.readFileSync(config.http.tlsKeyFile) }
      : undefined;
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bufferLogs: true,
    bodyParser: false,
    httpsOptions,
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  configureApp(app, config);
  await app.init();
  return app;
}

/** Express conventions, global pipe and filter, OpenAPI document (built on first use) and Swagger UI. */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  configureHttp(app, config);
  app.useGlobalPipes(new StrictValidationPipe());
  app.useGlobalFilters(new AllExceptionsFilter(app.get(AuditService)));
  const document = app.get(OpenApiDocument);
  document.use(() => buildOpenApiDocument(app));
  setupSwaggerUi(app, () => document.get());
}
