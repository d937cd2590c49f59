import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';

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
 */
@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            base: { role: config.role },
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            genReqId: (req: IncomingMessage, res: ServerResponse) => assignRequestId(req, res),
            customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
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
