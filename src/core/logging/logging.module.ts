import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Global,
  Module,
  RequestMethod,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
} from '@nestjs/common';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';
import { requestLogging, requestLogLevel } from './request-logging.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The request's id: the caller's `X-Request-Id` when well-formed, else a new UUID. Assigned
 * once, by the first middleware, and echoed in the response.
 */
export function assignRequestId(req: IncomingMessage & { id?: unknown }, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
  return id;
}

/** Paths whose values must never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.token',
  '*.password',
  '*.secret',
  '*.clientSecret',
];

/**
 * Structured JSON logs through pino; every log line of a request carries its id.
 *
 * nestjs-pino builds the logger from the pino-http options below and binds each request's logger
 * to the request's async context (`useExisting`: it mounts no pino-http middleware of its own).
 * The request logger itself comes from {@link requestLogging}, mounted here just before that
 * binding (Nest mounts the middleware of global modules first, in the order they were imported:
 * this module is global and imports nestjs-pino's, so its middleware comes first): pino-http's output, made lazily, so a request that logs nothing (a read, when the
 * level leaves out `request completed`) makes no child logger and serialises nothing.
 */
@Global()
@Module({})
export class LoggingModule implements NestModule {
  constructor(private readonly logger: PinoLogger) {}

  configure(consumer: MiddlewareConsumer): void {
    // Outside a request, PinoLogger's logger is the root one nestjs-pino built.
    consumer
      .apply(requestLogging(this.logger.logger))
      .forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          useExisting: true,
          pinoHttp: {
            level: config.logLevel,
            base: { role: config.role },
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            genReqId: (req: IncomingMessage, res: ServerResponse) => assignRequestId(req, res),
            customLogLevel: requestLogLevel,
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                // Credentials that travel in query strings: tokens, and the OAuth callback's code and state.
                url: req.url.replace(/([?&](?:access_token|code|state)=)[^&]*/gi, '$1[redacted]'),
              }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
          },
        }),
      ],
    };
  }
}
