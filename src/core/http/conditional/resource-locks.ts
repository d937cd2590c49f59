import { createHash } from 'node:crypto';
import pg from 'pg';

/** A held lock; `release` is idempotent and never throws. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Exclusive locks on resources, by key, each waited for at most `waitMs`: null when the wait ran
 * out (the resource is busy). Held from the precondition check until the write has answered.
 */
export interface ResourceLocks {
  acquire(key: string, waitMs: number): Promise<HeldLock | null>;
  close(): Promise<void>;
}

/** The 64-bit advisory lock key of a resource key (SHA-256, first 8 bytes, signed). */
export function advisoryKey(key: string): bigint {
  const digest = createHash('sha256').update(`conditional-write:${key}`).digest();
  return digest.readBigInt64BE(0);
}

/** `lock_not_available` (lock_timeout), `query_canceled` (statement_timeout). */
const WAIT_RAN_OUT = new Set(['55P03', '57014']);

type PoolWithOptions = pg.Pool & { options: pg.PoolConfig };

/**
 * PostgreSQL advisory locks (session level), so every API process serialises the same resource.
 * Each held lock keeps one connection of a small pool of its own (never the main pool, whose
 * connections the handler holding the lock needs): `size` writes hold locks at once per process;
 * a request past that waits for a connection within the same bound, and is busy past it. The
 * connections use the main pool's server, credentials and TLS, and close after 10 s unused.
 */
export class AdvisoryResourceLocks implements ResourceLocks {
  private pool: pg.Pool | null = null;

  constructor(
    private readonly main: () => pg.Pool,
    private readonly size: number,
    private readonly applicationName: string,
  ) {}

  async acquire(key: string, waitMs: number): Promise<HeldLock | null> {
    const deadline = Date.now() + waitMs;
    const pool = this.connections(waitMs);
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      // Every connection of the pool holds a lock (pg-pool's words); any other failure is the database's.
      if (err instanceof Error && err.message === 'timeout exceeded when trying to connect') return null;
      throw err;
    }
    const lockKey = advisoryKey(key).toString();
    const remaining = Math.max(1, deadline - Date.now());
    try {
      // One round trip: the wait bound of this attempt, then the lock. Both values are numbers
      // made here (a bigint and an integer), never text from the request.
      await client.query(`SET lock_timeout = ${remaining}; SELECT pg_advisory_lock(${lockKey})`);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code && WAIT_RAN_OUT.has(code)) {
        client.release();
        return null;
      }
      client.release(err as Error);
      throw err;
    }
    let held = true;
    return {
      release: async () => {
        if (!held) return;
        held = false;
        try {
          await client.query(`SELECT pg_advisory_unlock(${lockKey})`);
          client.release();
        } catch (err) {
          // The session ends with the connection, and its locks with it.
          client.release(err as Error);
        }
      },
    };
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => undefined);
  }

  private connections(waitMs: number): pg.Pool {
    if (this.pool) return this.pool;
    const main = this.main() as PoolWithOptions;
    const pool = new pg.Pool({
      ...main.options,
      max: this.size,
      min: 0,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: waitMs,
      allowExitOnIdle: true,
      application_name: this.applicationName,
    });
    // An idle connection that fails (the server restarted) is dropped by the pool; nothing to do.
    pool.on('error', () => undefined);
    this.pool = pool;
    return pool;
  }
}

/**
 * Locks in this process's memory, first come first served: the embedded database runs in one
 * process and has a single connection, which the handler needs.
 */
export class InProcessResourceLocks implements ResourceLocks {
  private readonly queues = new Map<string, Array<() => void>>();

  async acquire(key: string, waitMs: number): Promise<HeldLock | null> {
    const queue = this.queues.get(key);
    if (queue) {
      const granted = await new Promise<boolean>((resolve) => {
        const grant = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          const at = queue.indexOf(grant);
          if (at >= 0) queue.splice(at, 1);
          resolve(false);
        }, waitMs);
        queue.push(grant);
      });
      if (!granted) return null;
    } else {
      this.queues.set(key, []);
    }
    let held = true;
    return {
      release: () => {
        if (held) {
          held = false;
          const waiting = this.queues.get(key);
          const next = waiting?.shift();
          if (next) next();
          else this.queues.delete(key);
        }
        return Promise.resolve();
      },
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
