import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { AppConfig, ConfigError, type ProcessRole } from './config/app-config.js';

/** Validates the environment, or exits naming every bad variable. */
export function loadConfig(role: ProcessRole): AppConfig {
  try {
    return new AppConfig(role);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/**
 * Graceful shutdown on SIGTERM or SIGINT: stop accepting connections, answer in-flight requests
 * (closing their connections), let jobs finish, close queues and pools, exit 0; exit 1 if that
 * takes longer than SHUTDOWN_TIMEOUT_MS.
 */
export function shutdownOnSignals(
  app: INestApplicationContext,
  config: AppConfig,
  logger: LoggerService,
): void {
  const drain = trackConnections(app);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received; shutting down`);
    const force = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.http.shutdownTimeoutMs);
    force.unref();
    drain()
      .then(() => app.close())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error(`shutdown failed: ${String(err)}`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * Prepares the HTTP server's shutdown and returns the function that performs it: stop listening,
 * close idle keep-alive connections at once, answer every request still in flight or arriving
 * on an open connection with `Connection: close` (so the client opens no further requests on
 * it and Node closes it after the answer), and resolve once every connection is gone. All of
 * this happens while the database and queues are still open (Nest's own close would tear those
 * down first). Without it, a client that keeps its connection busy is served until the
 * shutdown timeout.
 */
function trackConnections(app: INestApplicationContext): () => Promise<void> {
  const withServer = app as INestApplicationContext & { getHttpServer?: () => Server };
  const server = withServer.getHttpServer?.();
  if (!server) return () => Promise.resolve();
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const closeWhenDone = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  // Prepended, so it runs before the application writes anything.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    if (draining) closeWhenDone(res);
    res.once('close', () => {
      inFlight.delete(res);
      // A connection whose answer went out before the drain began is idle now.
      if (draining) server.closeIdleConnections();
    });
  });
  return () => {
    draining = true;
    if (!server.listening) return Promise.resolve();
    for (const res of inFlight) closeWhenDone(res);
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  };
}
