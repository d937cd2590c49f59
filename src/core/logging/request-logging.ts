import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Level, Logger } from 'pino';

/** The level of a request's closing line: errors and 5xx answers are errors. */
export function requestLogLevel(_req: IncomingMessage, res: ServerResponse, err?: Error): Level {
  return err || res.statusCode >= 500 ? 'error' : 'info';
}

type LoggedRequest = Request & { log?: Logger };
type LoggedResponse = Response & { err?: Error };

/**
 * A logger that becomes `create()`'s child on first use: most requests log nothing of their own,
 * and a child logger serialises its bindings (the request) when it is made.
 */
function lazyLogger(create: () => Logger): Logger {
  let real: Logger | undefined;
  const target = () => (real ??= create());
  return new Proxy({} as Logger, {
    get(_, key) {
      const logger = target();
      const value = Reflect.get(logger, key, logger) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(logger) : value;
    },
    set(_, key, value) {
      return Reflect.set(target(), key, value);
    },
    has(_, key) {
      return Reflect.has(target(), key);
    },
  });
}

/**
 * What pino-http did on every request, with the same output but done only when something is
 * written: `req.log` is a child of `root` bound to the request, created on its first use; the
 * closing line (`request completed`, or `request errored` with the error, at
 * {@link requestLogLevel}, with `res` and `responseTime`) is written when the response finishes,
 * closes or fails, and only listened for when its level can be enabled. `root` is the logger
 * nestjs-pino builds from the pino-http options, so the serialisers (and redaction) are the
 * same. The request id is assigned earlier, by the first middleware.
 */
export function requestLogging(root: Logger) {
  return (req: LoggedRequest, res: LoggedResponse, next: NextFunction): void => {
    const startedAt = Date.now();
    let child: Logger | undefined;
    const logger = () => (child ??= root.child({ req }));
    req.log = lazyLogger(logger);
    if (root.isLevelEnabled('error')) {
      const done = (err?: Error) => {
        res.removeListener('close', done);
        res.removeListener('finish', done);
        res.removeListener('error', done);
        const level = requestLogLevel(req, res, err);
        if (!root.isLevelEnabled(level)) return;
        const responseTime = Date.now() - startedAt;
        if (err || res.err || res.statusCode >= 500) {
          const error = err ?? res.err ?? new Error(`failed with status code ${res.statusCode}`);
          logger()[level]({ res, err: error, responseTime }, 'request errored');
          return;
        }
        logger()[level]({ res, responseTime }, 'request completed');
      };
      res.on('close', done);
      res.on('finish', done);
      res.on('error', done);
    }
    next();
  };
}
