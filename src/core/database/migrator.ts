import type { DataSource, Migration } from 'typeorm';

/** Arbitrary but fixed: the advisory lock key every replica takes before migrating. */
const MIGRATION_LOCK_KEY = 728_413_905;

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so replicas starting together
 * migrate once and the others wait, then find nothing to do.
 */
export async function migrate(dataSource: DataSource, options: { lock: boolean }): Promise<Migration[]> {
  if (!options.lock) return dataSource.runMigrations({ transaction: 'each' });
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
