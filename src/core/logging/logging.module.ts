import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

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
 * Structured JSON logs through pino. Every request gets an id (the caller's `X-Request-Id` when
 * it is well-formed, else a new UUID), echoed in the response and bound to every log line.
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
            genReqId: (req: IncomingMessage, res: ServerResponse) => {
              const given = req.headers['x-request-id'];
              const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
              res.setHeader('X-Request-Id', id);
              return id;
            },
            customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                url: req.url.replace(/([?&]access_token=)[^&]*/gi, '$1[redacted]'),
              }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
          },
        }),
      ],
    };
  }
}
