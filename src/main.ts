import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { createHttpApp } from './app.js';
import { AppConfig } from './core/config/app-config.js';
import { loadConfig, shutdownOnSignals } from './core/lifecycle.js';
import { AccountsService } from './modules/users/accounts.service.js';

/**
 * On the first start of the embedded default with an empty database, create the default
 * account and its admin and print the admin's token, once, so `npm start` alone is usable.
 */
async function bootstrapEmbedded(app: NestExpressApplication, config: AppConfig): Promise<void> {
  if (!config.embedded) return;
  const accounts = app.get(AccountsService);
  if (!(await accounts.isEmpty())) return;
  const { accountId, userId, token } = await accounts.bootstrap(
    config.bootstrap.account,
    config.bootstrap.email,
  );
  process.stdout.write(
    [
      '',
      'First start: created account "' + config.bootstrap.account + '" and admin ' + config.bootstrap.email,
      `  accountId ${accountId}, userId ${userId}`,
      '  Admin token (shown once; keep it):',
      `  ${token}`,
      `  Try: curl -H "Authorization: Bearer ${token}" http://localhost:${config.http.port}/api/v1/users`,
      '',
    ].join('\n') + '\n',
  );
}

async function main(): Promise<void> {
  const config = loadConfig('api');
  const app = await createHttpApp(config);
  const logger = app.get(Logger);
  if (config.embedded)
    logger.warn(`No DATABASE_URL: using the embedded database in ${config.database.dataDir}`);
  if (!config.queue.redisUrl) logger.warn('No REDIS_URL: background jobs run in-process');
  else if (config.queue.runJobsInProcess)
    logger.log(
      `This API process also runs jobs (RUN_JOBS_IN_PROCESS) of queues ${config.queue.workerQueues.join(', ')}`,
    );
  else
    logger.log(
      'Jobs are left to workers (node dist/src/worker.js); set RUN_JOBS_IN_PROCESS=true to run them here',
    );
  if (config.http.allowHttp) logger.warn('Plain HTTP is allowed (ALLOW_HTTP); never do this in production');
  await bootstrapEmbedded(app, config);
  await app.listen(config.http.port, config.http.host);
  const scheme = config.http.tlsCertFile ? 'https' : 'http';
  // The port bound, which PORT=0 leaves to the system.
  const address = app.getHttpServer().address() as AddressInfo | null;
  logger.log(
    `listening on ${scheme}://${config.http.host}:${address?.port ?? config.http.port} (started in ${Math.round(process.uptime() * 1000)} ms)`,
  );
  shutdownOnSignals(app, config, logger);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
