import { QueryFailedError } from 'typeorm';
import { Database } from '../../src/core/database/database.js';
import { statementName } from '../../src/core/database/statement-name.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { ADMIN_URL } from '../support/database.js';
import { startServiceApp, type ServiceApp } from '../support/service.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/**
 * The unit of work: every query made while `Database.transaction` runs joins its transaction,
 * whichever module makes it and however deep, and after-commit hooks follow the outcome.
 */
describe('Database: the unit of work', () => {
  let t: ServiceApp;
  let db: Database;
  const notes = async () =>
    (await t.sql<{ note: string }>(`SELECT note FROM uow_probe ORDER BY note`)).map((r) => r.note);
  const insert = (note: string) => db.query(`INSERT INTO uow_probe (note) VALUES (:note)`, { note });

  beforeAll(async () => {
    t = await startServiceApp();
    db = t.app.get(Database);
    await t.sql(`CREATE TABLE uow_probe (id serial PRIMARY KEY, note text NOT NULL)`);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.sql(`TRUNCATE uow_probe`));

  it('commits every query of the unit of work together, or none of them', async () => {
    await db.transaction(async () => {
      await insert('a');
      await insert('b');
    });
    await expect(
      db.transaction(async () => {
        await insert('c');
        throw new Error('the rule failed');
      }),
    ).rejects.toThrow('the rule failed');
    expect(await notes()).toEqual(['a', 'b']);
  });

  it('joins a nested transaction to the outer one: the outermost call decides', async () => {
    await expect(
      db.transaction(async () => {
        await db.transaction(() => insert('inner'));
        expect(db.inTransaction).toBe(true);
        throw new Error('the outer step failed');
      }),
    ).rejects.toThrow('the outer step failed');
    expect(await notes()).toEqual([]);
  });

  it('carries the transaction into another module’s service without passing it', async () => {
    await expect(
      db.transaction(async () => {
        await t.app.get(AccountsService).bootstrap('rolled-back', 'admin@rolled-back.test');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await t.sql(`SELECT id FROM accounts WHERE slug = 'rolled-back'`)).toEqual([]);
  });

  it('keeps parallel units of work apart', async () => {
    const results = await Promise.allSettled([
      db.transaction(async () => {
        await insert('kept');
        await new Promise((resolve) => setImmediate(resolve));
        await insert('kept too');
      }),
      db.transaction(async () => {
        await insert('dropped');
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('this one fails');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(await notes()).toEqual(['kept', 'kept too']);
  });

  it('runs after-commit hooks once the outermost unit of work commits, never after a rollback', async () => {
    const seen: string[] = [];
    await db.transaction(async () => {
      await insert('x');
      await db.transaction(() => {
        db.afterCommit(async () => {
          // The write is visible to other connections by now.
          seen.push(`after commit: ${(await notes()).join(',')}`);
        });
        return Promise.resolve();
      });
      seen.push('still inside');
    });
    await expect(
      db.transaction(() => {
        db.afterCommit(() => seen.push('must not run'));
        return Promise.reject(new Error('rolled back'));
      }),
    ).rejects.toThrow('rolled back');
    expect(seen).toEqual(['still inside', 'after commit: x']);
  });

  it('runs a hook at once outside a unit of work', async () => {
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      db.afterCommit(() => {
        seen.push('ran');
        resolve();
      });
    });
    expect(seen).toEqual(['ran']);
  });

  it('reads with named parameters on the pool outside a unit of work', async () => {
    await insert('p');
    expect(db.inTransaction).toBe(false);
    expect(
      await db.one<{ n: number }>(`SELECT count(*)::int AS n FROM uow_probe WHERE note = :note`, {
        note: 'p',
      }),
    ).toEqual({ n: 1 });
  });

  describe('prepared statements', () => {
    /** The statements the session of one pooled connection holds, as PostgreSQL sees them. */
    const preparedOnServer = () =>
      db.query<{ name: string; statement: string }>(
        `SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE '%uow_probe%'`,
        {},
      );

    it('prepares a statement once per connection under a name derived from its text', async () => {
      await insert('x');
      const read = () =>
        db.query<{ note: string }>(
          `SELECT note FROM uow_probe WHERE note = :note`,
          { note: 'x' },
          { prepare: true },
        );
      // A transaction pins one connection: the second call reuses what the first prepared there.
      const [first, second, held] = await db.transaction(async () => [
        await read(),
        await read(),
        await preparedOnServer(),
      ]);
      expect(first).toEqual([{ note: 'x' }]);
      expect(second).toEqual(first);
      expect(held).toEqual([
        { name: statementName(`SELECT note FROM uow_probe WHERE note = $1`), statement: expect.any(String) },
      ]);
      expect(held[0].name).toMatch(/^s_[A-Za-z0-9_-]{27}$/);
    });

    it('runs prepared statements outside a unit of work, and writes inside one roll back', async () => {
      const write = (note: string) =>
        db.query(`INSERT INTO uow_probe (note) VALUES (:note)`, { note }, { prepare: true });
      await write('kept');
      await expect(
        db.transaction(async () => {
          await write('undone');
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      expect(await notes()).toEqual(['kept']);
    });

    it('fails a bad statement as TypeORM does, and leaves the connection usable', async () => {
      const bad = db.query(
        `SELECT no_such_column FROM uow_probe WHERE note = :note`,
        { note: 'x' },
        { prepare: true },
      );
      await expect(bad).rejects.toBeInstanceOf(QueryFailedError);
      await expect(bad).rejects.toMatchObject({ driverError: { code: '42703' } });
      const failing = db.query(`SELECT 1/0 AS x WHERE :n::int = 1`, { n: 1 });
      await expect(failing).rejects.toMatchObject({ driverError: { code: '22012' } });
      expect(await db.one(`SELECT 1 AS one`, {}, { prepare: true })).toEqual({ one: 1 });
    });
  });
});

/** Reads outside a unit of work take a connection of the pool themselves (`Database.onPool`). */
describe('Database: a connection lost under a read on the pool', () => {
  const target = new URL(ADMIN_URL);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  let t: ServiceApp;

  beforeAll(async () => {
    await proxy.listen();
    t = await startServiceApp(
      // No background work on the pool: the only connection in use is the read below.
      { REDIS_URL: '', OUTBOX_RELAY_INTERVAL_MS: '600000' },
      {
        databaseUrl: (url) => {
          const proxied = new URL(url);
          proxied.hostname = '127.0.0.1';
          proxied.port = String(proxy.port);
          return proxied.toString();
        },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
    await proxy.close();
  });

  it('fails the read and the process goes on (the reset is not an unhandled error event)', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => void uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const db = t.app.get(Database);
      const slow = db
        .query(`SELECT pg_sleep(30) AS slept WHERE :n::int = 1`, { n: 1 })
        .catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, 300));
      // The connection is reset under the running statement (a failover, a proxy restart).
      proxy.sever();
      expect(await slow).toBeInstanceOf(QueryFailedError);
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
      expect(await db.one(`SELECT 1 AS one`, {})).toEqual({ one: 1 });
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
