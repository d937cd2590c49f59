import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
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
  return {
    ...common,
    url: config.database.url ?? undefined,
    poolSize: config.database.poolSize,
    connectTimeoutMS: 5_000,
    extra: { idleTimeoutMillis: 30_000 },
  };
}
