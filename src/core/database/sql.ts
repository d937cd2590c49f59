import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';

export { isoSql } from './sql-text.js';

type Queryable = Pick<DataSource | EntityManager, 'query'>;

/**
 * Runs SQL and returns its rows. TypeORM answers UPDATE and DELETE with `[rows, affectedCount]`
 * on PostgreSQL; this evens that out so `... RETURNING` reads the same for every statement.
 */
export async function queryRows<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await db.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/**
 * When `err` is a unique-constraint violation (a concurrent or repeated write), the name of the
 * violated constraint or index (`''` if PostgreSQL gave none); null for any other error.
 */
export function uniqueViolation(err: unknown): string | null {
  if (!(err instanceof QueryFailedError)) return null;
  const driver = err.driverError as { code?: string; constraint?: string };
  return driver.code === '23505' ? (driver.constraint ?? '') : null;
}

/** Whether `err` is a foreign-key violation (a referenced row was deleted concurrently). */
export function foreignKeyViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23503';
}
