import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';

/** Who this installation is: the id its database holds, and that database for people to read. */
export interface InstallationIdentity {
  id: string;
  /** The database, without credentials: `host:port/name`, or the embedded one and its directory. */
  database: string;
}

/**
 * This installation's identity, read once from the database (the `installation` row its
 * migration made). The whole API of that table: nothing writes it after the migration.
 */
@Injectable()
export class Installation {
  private identity?: Promise<InstallationIdentity>;

  constructor(
    private readonly db: Database,
    private readonly config: AppConfig,
  ) {}

  /** Read on first use, then kept; a failed read is tried again on the next call. */
  current(): Promise<InstallationIdentity> {
    this.identity ??= this.read().catch((err: unknown) => {
      this.identity = undefined;
      throw err;
    });
    return this.identity;
  }

  private async read(): Promise<InstallationIdentity> {
    const database = describeDatabase(this.config);
    let rows: Array<{ id: string }>;
    try {
      rows = await this.db.query<{ id: string }>(`SELECT id FROM installation`);
    } catch (err) {
      // 42P01: the table is not there yet (MIGRATIONS_RUN=false on a schema that is behind).
      if ((err as { code?: string }).code !== '42P01') throw err;
      throw new Error(
        `The database ${database} has no installation record: its schema is behind this version. ` +
          'Apply the migrations first (npm run migrate, or start with MIGRATIONS_RUN=true).',
        { cause: err },
      );
    }
    if (rows.length !== 1)
      throw new Error(
        `The database ${database} holds ${rows.length} installation records instead of one ` +
          '(table installation); restore that table from a backup of this database.',
      );
    return { id: rows[0].id, database };
  }
}

/** How {@link describeDatabase} starts for the embedded database. */
export const EMBEDDED_DATABASE = 'the embedded database in ';

/**
 * The database as a person recognises it, without user or password: `host:port/name` for
 * `DATABASE_URL`, or the embedded database and its data directory.
 */
export function describeDatabase(config: AppConfig): string {
  const { url, dataDir } = config.database;
  if (url === null) return `${EMBEDDED_DATABASE}${dataDir}`;
  try {
    const parsed = new URL(url);
    const name = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
    const socket = parsed.searchParams.get('host');
    const host = parsed.hostname || socket || 'localhost';
    return `${host}:${parsed.port || '5432'}/${name}`;
  } catch {
    return 'the database of DATABASE_URL';
  }
}
