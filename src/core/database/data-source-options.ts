import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { BoundedClient } from './bounded-client.js';
import type { EmbeddedDatabase } from './embedded-database.js';
import { SnakeNamingStrategy } from './snake-naming.strategy.js';

/**
 * Options shared by the HTTP app, the worker and the admin command line. Schema changes only
 * ever come from `migrations/`; `synchronize` stays off.
 */
export function dataSourceOptions(config: AppConfig, embedded: EmbeddedDatabase | null): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    namingStrategy: new SnakeNamingStrategy(),
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsRun: false,
    synchronize: false,
    installExtensions: false,
    // Failed queries surface as exceptions; the exception filter logs the unexpected ones.
    logging: false,
    applicationName: `platform-api:${config.role}`,
  };
  if (embedded) {
    return {
      ...common,
      // A query issued while the single connection is held fails after this instead of hanging.
      connectTimeoutMS: 10_000,
      extra: embedded.poolOptions(),
    };
  }
  const { statementTimeoutMs, lockTimeoutMs, connectTimeoutMs } = config.database;
  return {
    ...common,
    url: config.database.url ?? undefined,
    poolSize: config.database.poolSize,
    // Bounds both opening a connection and waiting for a free one of the pool.
    connectTimeoutMS: connectTimeoutMs,
    extra: {
      idleTimeoutMillis: 30_000,
      // Server-side bounds, set on every session: PostgreSQL cancels a statement (57014) or a
      // lock wait (55P03) that takes longer; both answer 503 database_unavailable.
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      // Client-side bound for a server that stopped answering (frozen, network partition), where
      // the server-side bounds cannot fire: a little longer than statement_timeout, so that one
      // fires first when the server is alive.
      query_timeout: queryTimeoutMs(statementTimeoutMs),
      Client: BoundedClient,
    },
  };
}

/** The client-side bound of one query; with no statement timeout, none either. */
export function queryTimeoutMs(statementTimeoutMs: number): number {
  return statementTimeoutMs === 0 ? 0 : statementTimeoutMs + Math.min(5_000, statementTimeoutMs);
}
