import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../../src/app.js';
import { PrincipalCache } from '../../src/core/auth/principal-cache.js';
import { AppConfig, type ProcessRole } from '../../src/core/config/app-config.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { createTestDatabase, dropTestDatabase, REDIS_URL } from './database.js';

export interface Actor {
  token: string;
  userId: number;
  accountId: number;
  slug: string;
  email: string;
}

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** A supertest client of the real HTTP server. */
  http: () => ReturnType<typeof request>;
  dataSource: DataSource;
  /** The admin of account `acme`, created as the command line does. */
  admin: Actor;
  databaseUrl: string;
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * Boots the whole application on a database of its own (a copy of the migrated template),
 * against the real PostgreSQL and Redis.
 */
/**
 * The configuration every test app runs with: its own database, the real PostgreSQL and Redis, a
 * queue prefix of its own, silent logs and limits high enough that tests never trip them.
 */
export function testConfig(
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
  role: ProcessRole = 'api',
): AppConfig {
  return new AppConfig(role, {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '5',
    REDIS_URL,
    QUEUE_PREFIX: `t${randomBytes(5).toString('hex')}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_MAX: '100000',
    AUTH_FAILURE_LIMIT_MAX: '100000',
    OUTBOX_RELAY_INTERVAL_MS: '500',
    // Parallel writes to one branch queue on its lock: on a loaded 2-core machine the last of ten
    // waits past the 5 s default and answers 503 (tests of the timeout set their own).
    DATABASE_LOCK_TIMEOUT_MS: '30000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    // Each app keeps its deployments' git repositories in a directory of its own.
    REPOS_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-repos-')),
    // No warm Python process (each costs seconds of CPU to start); python-run tests ask for one.
    PYTHON_POOL_SIZE: '0',
    // The test runner's own processes use the CPU: sandboxed children keep the same priority.
    SANDBOX_NICENESS: '0',
    // Nor a warm compile process: a compile starts its own (model-sandbox and model-compiler tests warm one).
    MODEL_COMPILE_POOL_SIZE: '0',
    // A job deferred while its account runs its share of the job comes back soon, not in 2 s.
    JOB_DEFER_MS: '100',
    ...env,
  });
}

/**
 * Boots the whole application on a database of its own (a copy of the migrated template),
 * against the real PostgreSQL and Redis.
 */
export async function startApp(
  env: Record<string, string | undefined> = {},
  options: { databaseUrl?: (url: string) => string } = {},
): Promise<TestApp> {
  const db = await createTestDatabase();
  // `databaseUrl` lets a test route the app's connections (through a fault-injecting proxy).
  const config = testConfig(options.databaseUrl?.(db.url) ?? db.url, env);
  const app = await createHttpApp(config);
  const dataSource = app.get(DataSource);
  const adminIdentity = await app.get(AccountsService).bootstrap('acme', 'admin@acme.test');
  const server = app.getHttpServer();
  return {
    app,
    config,
    http: () => request(server),
    dataSource,
    databaseUrl: db.url,
    admin: { ...adminIdentity, slug: 'acme', email: 'admin@acme.test' },
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

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Another account with its own admin, made the way `npm run cli -- bootstrap` makes it. */
export async function newAccount(t: TestApp, slug: string): Promise<Actor> {
  const email = `admin@${slug}.test`;
  const r = await t.app.get(AccountsService).bootstrap(slug, email);
  return { ...r, slug, email };
}

/** A console user of the admin's account, created over HTTP, with a token of its own. */
export async function newUser(
  t: TestApp,
  admin: Actor,
  fields: { email?: string; defaultRoles?: string[]; firstName?: string; username?: string } = {},
): Promise<Actor> {
  const email = fields.email ?? `u${randomBytes(4).toString('hex')}@${admin.slug}.test`;
  const res = await t
    .http()
    .post('/api/v1/users')
    .set(bearer(admin.token))
    .send({
      email,
      username: fields.username ?? email,
      defaultRoles: fields.defaultRoles ?? [],
      firstName: fields.firstName,
    });
  if (res.status !== 200) throw new Error(`could not create user: ${res.status} ${JSON.stringify(res.body)}`);
  const { token } = await t.app.get(AccountsService).token(admin.slug, email);
  return { token, userId: res.body.id, accountId: admin.accountId, slug: admin.slug, email };
}

export function expectErrorShape(body: unknown, status: number, code?: string): void {
  expect(body).toEqual({
    statusCode: status,
    error: expect.any(String),
    message: expect.anything(),
    code: code ?? expect.any(String),
  });
}
