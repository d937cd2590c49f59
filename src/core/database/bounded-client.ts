import pg from 'pg';

/**
 * The pg client of the pool. When a query outlives its client-side bound (`query_timeout`: the
 * server stopped answering), the connection is closed rather than returned to the pool: its
 * server session may still run the query or hold a transaction open, and the next request
 * must not inherit that. The pool then opens a fresh connection when it needs one.
 */
export class BoundedClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads, passed through
  override query(...args: any[]): any {
    const result: unknown = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if (err instanceof Error && err.message === 'Query read timeout') this.abandon();
      });
    }
    return result;
  }

  private abandon(): void {
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}
