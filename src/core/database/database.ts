import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsService } from 'nestjs-cls';
import type pg from 'pg';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { compileNamed, type SqlParams } from './named-params.js';
import { queryRows } from './sql.js';
import { statementName } from './statement-name.js';

const AFTER_COMMIT = Symbol('afterCommit');
type Hook = () => unknown;

/** How {@link Database.query} runs one statement. */
export interface QueryOptions {
  /**
   * Run it as a named prepared statement: PostgreSQL parses and plans it once per connection
   * instead of on every call. For the hot paths (token lookup, report reads and lists), whose
   * text is fixed or takes one of a few shapes; never for text built from unbounded input,
   * since every distinct text stays prepared on every pooled connection.
   */
  prepare?: boolean;
}

/**
 * The one way to reach PostgreSQL: the unit of work and raw SQL with named parameters.
 *
 * A service method opens the unit of work with {@link transaction}; every repository call made
 * inside it, however deep, runs on that transaction without being handed a manager (the
 * transaction lives in an AsyncLocalStorage context kept by `@nestjs-cls/transactional`).
 * Outside a unit of work each query runs on its own pooled connection. Side effects that must
 * not happen for a rolled-back write (dispatching a job, a notification) go to
 * {@link afterCommit}; writes that must share its fate (the outbox row, an audit row) are plain
 * repository calls inside it.
 */
@Injectable()
export class Database {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly host: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly cls: ClsService,
    private readonly dataSource: DataSource,
  ) {}

  /** The manager of the current unit of work, or the pool's outside one. */
  get manager(): EntityManager {
    return this.host.tx;
  }

  get inTransaction(): boolean {
    return this.host.isTransactionActive();
  }

  /**
   * Runs SQL with `:name` parameters on the current unit of work, or outside one straight on a
   * pooled connection, and returns its rows.
   */
  query<T>(sql: string, params?: SqlParams, options?: QueryOptions): Promise<T[]> {
    const { text, values } = compileNamed(sql, params);
    const name = options?.prepare ? statementName(text) : undefined;
    if (!this.host.isTransactionActive()) return this.onPool<T>(text, values, name);
    // TypeORM's query runner hands a query config through to pg unchanged.
    return queryRows<T>(this.host.tx, (name ? { name, text } : text) as string, values);
  }

  /** The first row of {@link query}, or undefined. */
  async one<T>(sql: string, params?: SqlParams, options?: QueryOptions): Promise<T | undefined> {
    const [row] = await this.query<T>(sql, params, options);
    return row;
  }

  /**
   * One statement on a connection of TypeORM's pool, without a query runner: what a read
   * outside a unit of work costs on the hot paths. Errors read as through TypeORM: a failed
   * statement is a `QueryFailedError`, a failed connect the driver's own error.
   */
  private async onPool<T>(text: string, values: unknown[], name: string | undefined): Promise<T[]> {
    const pool = (this.dataSource.driver as PostgresDriver).master as pg.Pool;
    const client = await pool.connect();
    let broken: Error | undefined;
    // The pool listens for a connection's errors only while it is idle (TypeORM's query runner
    // adds a listener of its own): without this one, a connection reset while the client is out
    // is an unhandled 'error' event, which ends the process.
    const onError = (err: Error): void => {
      broken = err;
    };
    client.on('error', onError);
    try {
      const result = await client.query<T & pg.QueryResultRow>({ name, text, values });
      return result.rows;
    } catch (err) {
      if (!(err instanceof Error) || !('severity' in err)) broken ??= err as Error; // not a server error
      throw new QueryFailedError(text, values, err as Error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /**
   * Runs `work` as one unit of work: commits when it resolves, rolls back when it throws. Called
   * inside another unit of work, it joins that one (the outer caller decides the commit). Hooks
   * from {@link afterCommit} run once the outermost unit of work has committed.
   */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.host.isTransactionActive()) return work();
    const hooks: Hook[] = [];
    const result = await this.cls.run({ ifNested: 'inherit' }, () => {
      this.cls.set(AFTER_COMMIT, hooks);
      return this.host.withTransaction(work);
    });
    for (const hook of hooks) await this.runHook(hook);
    return result;
  }

  /**
   * Runs `hook` after the current unit of work commits (never if it rolls back), or at once when
   * no unit of work is open. A failing hook is logged: the write it follows is already committed,
   * so what it starts must be recoverable on its own (the outbox relay re-dispatches jobs).
   */
  afterCommit(hook: Hook): void {
    if (!this.inTransaction) {
      void this.runHook(hook);
      return;
    }
    const hooks = this.cls.get<Hook[] | undefined>(AFTER_COMMIT);
    if (!hooks) throw new Error('afterCommit inside a transaction not opened by Database.transaction');
    hooks.push(hook);
  }

  private async runHook(hook: Hook): Promise<void> {
    try {
      await hook();
    } catch (err) {
      this.logger.error(`An after-commit hook failed: ${(err as Error).message}`, (err as Error).stack);
    }
  }
}
