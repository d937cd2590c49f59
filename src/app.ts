import fs from 'node:fs';
import { ApplicationConfig, NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from './core/config/app-config.js';
import { AuditService } from './core/audit/audit.service.js';
import { AllExceptionsFilter } from './core/errors/exception.filter.js';
import { configureHttp } from './core/http/http-setup.js';
import { OpenApiDocument } from './core/openapi/openapi-document.js';
import { buildOpenApiDocument, setupSwaggerUi } from './core/openapi/openapi.js';
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
  // Node's 5 s default closes idle sockets a load balancer (60 s idle is common) still reuses,
  // and its clients get 502s. The headers timeout must exceed the keep-alive timeout.
  const server = app.getHttpServer();
  server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  server.headersTimeout = config.http.keepAliveTimeoutMs + 5_000;
  dropPassThroughEnhancers(app);
  configureApp(app, config);
  await app.init();
  return app;
}

/**
 * nestjs-cls registers a global guard and a global interceptor even when it mounts neither
 * (we open its context with each transaction, not per request): an object whose
 * `canActivate` answers true and one whose `intercept` passes the call on. They change nothing,
 * but a global interceptor puts every route through Nest's observable pipeline, a cost on every
 * read. Removed before the routes are built (`app.init`); a test checks that only our own
 * enhancers remain.
 */
export function dropPassThroughEnhancers(app: NestExpressApplication): void {
  const config = app.get(ApplicationConfig);
  const passThrough = (method: string) => (enhancer: object) =>
    Object.getPrototypeOf(enhancer) === Object.prototype &&
    Object.keys(enhancer).length === 1 &&
    typeof (enhancer as Record<string, unknown>)[method] === 'function';
  for (const [list, method] of [
    [config.getGlobalInterceptors(), 'intercept'],
    [config.getGlobalGuards(), 'canActivate'],
  ] as const) {
    const drop = passThrough(method);
    for (let i = list.length - 1; i >= 0; i--) if (drop(list[i])) list.splice(i, 1);
  }
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
