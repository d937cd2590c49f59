import { MigrationExecutor, type DataSource, type Migration } from 'typeorm';

/** Arbitrary but fixed: the advisory lock key every replica takes before migrating. */
const MIGRATION_LOCK_KEY = 728_413_905;

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so replicas starting together
 * migrate once and the others wait, then find nothing to do. The session that migrates lifts
 * the statement and lock timeouts every other query has: a migration may rewrite a large
 * table, and a replica waits for another's migrations as long as they take.
 */
export async function migrate(dataSource: DataSource, options: { lock: boolean }): Promise<Migration[]> {
  const runner = dataSource.createQueryRunner();
  let params: { query_timeout?: number } | undefined;
  let queryTimeout: number | undefined;
  try {
    const client = (await runner.connect()) as { connectionParameters?: { query_timeout?: number } };
    // The client-side bound too (pg reads it per query); restored before the pool reuses it.
    params = client.connectionParameters;
    queryTimeout = params?.query_timeout;
    if (params) params.query_timeout = 0;
    await runner.query('SET statement_timeout = 0');
    await runner.query('SET lock_timeout = 0');
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    if (!options.lock) return await executor.executePendingMigrations();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await executor.executePendingMigrations();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    if (params) params.query_timeout = queryTimeout;
    await runner.query('RESET statement_timeout').catch(() => undefined);
    await runner.query('RESET lock_timeout').catch(() => undefined);
    await runner.release();
  }
}
