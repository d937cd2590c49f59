import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { startApp, type TestApp } from '../support/app.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { migrate } from '../../src/core/database/migrator.js';

const run = promisify(execFile);

describe('migrations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('agree with the entities: the schema builder finds nothing to change', async () => {
    const sql = await t.dataSource.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('apply once when several replicas start together (advisory lock)', async () => {
    const db = await createTestDatabase({ empty: true });
    const sources = [1, 2, 3].map(
      () =>
        new DataSource({
          type: 'postgres',
          url: db.url,
          migrations: MIGRATIONS,
          migrationsTableName: 'schema_migrations',
        }),
    );
    try {
      await Promise.all(sources.map((s) => s.initialize()));
      const applied = await Promise.all(sources.map((s) => migrate(s, { lock: true })));
      expect(applied.map((a) => a.length).sort()).toEqual([0, 0, MIGRATIONS.length]);
      const rows = await sources[0].query('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0].n).toBe(MIGRATIONS.length);
    } finally {
      await Promise.all(sources.filter((s) => s.isInitialized).map((s) => s.destroy()));
      await dropTestDatabase(db.name);
    }
  });

  it('roll back cleanly and apply again', async () => {
    const db = await createTestDatabase({ empty: true });
    const source = new DataSource({
      type: 'postgres',
      url: db.url,
      migrations: MIGRATIONS,
      migrationsTableName: 'schema_migrations',
    });
    try {
      await source.initialize();
      await source.runMigrations();
      for (let i = 0; i < MIGRATIONS.length; i++) await source.undoLastMigration();
      const tables = await source.query(
        `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
      );
      expect(tables).toEqual([]);
      expect((await source.runMigrations()).length).toBe(MIGRATIONS.length);
    } finally {
      if (source.isInitialized) await source.destroy();
      await dropTestDatabase(db.name);
    }
  });

  it('are applied by `npm run migrate` (the CLI), which prints one JSON line', async () => {
    const db = await createTestDatabase({ empty: true });
    try {
      const env = { ...process.env, DATABASE_URL: db.url };
      const first = await run(process.execPath, ['dist/src/cli.js', 'migrate'], { env });
      expect(JSON.parse(first.stdout)).toEqual({ applied: MIGRATIONS.map((m) => m.name) });
      const second = await run(process.execPath, ['dist/src/cli.js', 'migrate'], { env });
      expect(JSON.parse(second.stdout)).toEqual({ applied: [] });
    } finally {
      await dropTestDatabase(db.name);
    }
  });
});
