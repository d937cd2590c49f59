import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { loadConfig, shutdownOnSignals } from './core/lifecycle.js';

/**
 * The worker role: the same modules as the API, no HTTP; it runs the jobs of the queues in
 * WORKER_QUEUES (default: all), plus the outbox relay (recovery sweep and schedules tick).
 */
async function main(): Promise<void> {
  const config = loadConfig('worker');
  if (!config.queue.redisUrl) {
    throw new Error('The worker needs REDIS_URL; without Redis the API runs jobs in-process');
  }
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  logger.log(
    `worker started in ${Math.round(process.uptime() * 1000)} ms; queues: ${config.queue.workerQueues.join(', ')}`,
  );
  shutdownOnSignals(app, config, logger);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
