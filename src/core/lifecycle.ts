import type { Server } from 'node:http';
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
 * Graceful shutdown on SIGTERM or SIGINT: stop accepting connections, let in-flight requests
 * and jobs finish, close queues and pools; exit anyway after SHUTDOWN_TIMEOUT_MS.
 */
export function shutdownOnSignals(
  app: INestApplicationContext,
  config: AppConfig,
  logger: LoggerService,
): void {
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
    stopAccepting(app)
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
 * Closes the HTTP listener first and waits for in-flight requests, so they finish while the
 * database and queues are still open (Nest's own close would tear those down first).
 */
function stopAccepting(app: INestApplicationContext): Promise<void> {
  const withServer = app as INestApplicationContext & { getHttpServer?: () => Server };
  const server = withServer.getHttpServer?.();
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => server.close(() => resolve()));
}
