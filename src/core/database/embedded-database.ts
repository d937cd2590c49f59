import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import lockfile from 'proper-lockfile';

/**
 * The embedded default: PostgreSQL compiled to WebAssembly (PGlite) in a data directory, used
 * when no DATABASE_URL is configured. A lock file keeps a second process off the directory,
 * because two PGlite instances on one directory silently lose writes.
 */
export class EmbeddedDatabase {
  private constructor(
    readonly dataDir: string,
    readonly pglite: PGlite,
    private readonly release: () => Promise<void>,
  ) {}

  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    fs.mkdirSync(dataDir, { recursive: true });
    let release: () => Promise<void>;
    try {
      // `stale` lets a restart proceed after a crash (kill -9) once the old lock stops being refreshed.
      release = await lockfile.lock(dataDir, {
        lockfilePath: path.join(dataDir, '.lock'),
        stale: 10_000,
        update: 2_000,
        retries: 0,
        onCompromised: (err) => {
          throw err;
        },
      });
    } catch (err) {
      throw new Error(
        `The data directory ${dataDir} is in use by another process (${(err as Error).message}). ` +
          'Stop it, or set DATA_DIR to another directory, or configure DATABASE_URL.',
        { cause: err },
      );
    }
    try {
      const pglite = await PGlite.create(path.join(dataDir, 'pgdata'));
      return new EmbeddedDatabase(dataDir, pglite, release);
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** Options for `pg.Pool` that route its single connection into this PGlite instance. */
  poolOptions(): Record<string, unknown> {
    const pgConfig = createPgConfig(this.pglite);
    return { ...pgConfig, connection: pgConfig.connection, max: 1 };
  }

  async close(): Promise<void> {
    try {
      if (!this.pglite.closed) await this.pglite.close();
    } finally {
      await this.release();
    }
  }
}
