import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { PrincipalCache } from '../../src/core/auth/principal-cache.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import { ApiError } from '../../src/core/errors/api-error.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { testConfig, type Actor } from './app.js';
import { createTestDatabase, dropTestDatabase } from './database.js';
import { Factories } from './factories.js';

/**
 * The service tier: the real application (every module, the real configuration) without an HTTP
 * listener, on a database of its own copied from the migrated template. Tests take services with
 * `app.get(Service)` and call them with principals built as the bearer guard builds them.
 */
export interface ServiceApp {
  app: INestApplicationContext;
  config: AppConfig;
  dataSource: DataSource;
  /** The admin of account `acme`, created as the command line does. */
  admin: Actor;
  /** Typed test data, created through the services. */
  make: Factories;
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function startServiceApp(
  env: Record<string, string | undefined> = {},
  options: { databaseUrl?: (url: string) => string } = {},
): Promise<ServiceApp> {
  const db = await createTestDatabase();
  // `databaseUrl` lets a test route the app's connections (through a fault-injecting proxy).
  const config = testConfig(options.databaseUrl?.(db.url) ?? db.url, env);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  await app.init();
  const dataSource = app.get(DataSource);
  const identity = await app.get(AccountsService).bootstrap('acme', 'admin@acme.test');
  const admin: Actor = { ...identity, slug: 'acme', email: 'admin@acme.test' };
  return {
    app,
    config,
    dataSource,
    admin,
    make: new Factories(app, admin),
    // SQL by hand reaches this process's principal cache through the `principals_changed`
    // notification, moments later; a test's next request must not race it, so it is emptied here.
    sql: async (text, params) => {
      const rows = await dataSource.query(text, params);
      app.get(PrincipalCache).clear();
      return rows;
    },
    close: async () => {
      await app.close();
      await dropTestDatabase(db.name);
    },
  };
}

/**
 * Runs `work`, expecting it to fail with the API error `code` and the HTTP status the catalogue
 * gives it (what a route would answer). Returns the error for further checks.
 */
export async function expectApiError(
  work: Promise<unknown>,
  status: number,
  code: string,
): Promise<ApiError> {
  let caught: unknown;
  try {
    await work;
  } catch (err) {
    caught = err;
  }
  return expectApiErrorOf(caught, status, code);
}

/** Checks that `error` (thrown or a rejection reason) is the API error `code` with its status. */
export function expectApiErrorOf(error: unknown, status: number, code: string): ApiError {
  expect(error).toBeInstanceOf(ApiError);
  const apiError = error as ApiError;
  expect({ status: apiError.getStatus(), code: apiError.code }).toEqual({ status, code });
  return apiError;
}
