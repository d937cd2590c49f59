import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { TestApp } from './app.js';
import { REDIS_URL } from './database.js';
import { waitFor } from './factories.js';
import { startProcess, type Proc } from './process.js';

/** The built worker entry point. */
const WORKER = path.join(process.env.TEST_DIST_DIR ?? 'dist', 'src/worker.js');

/** Whether a started process still runs (neither exited nor killed). */
export const isRunning = (p: Proc) => p.child.exitCode === null && p.child.signalCode === null;

/** Kills a process (kill -9) and waits until it is gone. */
export async function killHard(p: Proc): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exit;
}

/**
 * Worker processes (`node dist/src/worker.js`) of a test app: on its database, queue prefix,
 * repositories and secrets key, with the relay's timer far off (the test drives the relay). Also
 * what a test needs to kill one in the middle of a job, deterministically: a connection of its own
 * to the test database that holds a lock the job's next write waits behind, and a Redis client.
 *
 * ```ts
 * await workers.pauseWritesTo('model_branches');   // the next write to it waits
 * const [{ pid }] = await workers.waitForBlockedWorker(30_000);
 * await workers.killBlocked(worker, pid);          // kill -9, release, the session ends
 * await workers.expireLeases(runId);               // time passes
 * await workers.start();                           // another worker takes the run over
 * ```
 */
export class Workers {
  private readonly started: Proc[] = [];

  private constructor(
    private readonly t: TestApp,
    private readonly env: Record<string, string | undefined>,
    /** The test's own connection to its database (it holds the lock that pauses a worker). */
    readonly db: Client,
    /** A client of the shared Redis; the test's keys are those under its queue prefix. */
    readonly redis: Redis,
  ) {}

  /** `env` is added to every worker's environment (fakes' addresses, WORKER_QUEUES, ...). */
  static async open(t: TestApp, env: Record<string, string | undefined> = {}): Promise<Workers> {
    const db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    return new Workers(t, env, db, new Redis(REDIS_URL));
  }

  /** Starts a worker (with `extra` over its environment) and waits until it runs jobs. */
  async start(extra: Record<string, string> = {}): Promise<Proc> {
    const worker = startProcess(WORKER, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: this.t.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: this.t.config.queue.prefix,
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      REPOS_DIR: this.t.config.dataModel.reposDir,
      SECRETS_KEY: this.t.config.secretsKey.toString('base64'),
      // As every test app (test/support/app.ts): no warm compile child unless a test asks for one,
      // and sandboxed children at the test runner's priority.
      MODEL_COMPILE_POOL_SIZE: '0',
      SANDBOX_NICENESS: '0',
      ...this.env,
      ...extra,
    });
    this.started.push(worker);
    await worker.waitFor(/worker started/, 60_000);
    return worker;
  }

  /** A worker started here that still runs, if any. */
  running(): Proc | undefined {
    return this.started.find(isRunning);
  }

  /** Kills (kill -9) every worker started here that still runs, and waits until all are gone. */
  async killAll(): Promise<void> {
    for (const w of this.started) if (isRunning(w)) w.child.kill('SIGKILL');
    await Promise.all(this.started.map((w) => w.exit));
  }

  /**
   * Opens a transaction on the test's connection holding `table` in SHARE mode: a worker's next
   * write to it waits, in the middle of its job, until `killBlocked` rolls the transaction back.
   */
  async pauseWritesTo(table: string): Promise<void> {
    await this.db.query('BEGIN');
    await this.db.query(`LOCK TABLE ${table} IN SHARE MODE`);
  }

  /** Ends a pause `pauseWritesTo` began, if one is still on (a test that failed midway). */
  async resumeWrites(): Promise<void> {
    await this.db.query('ROLLBACK');
  }

  /**
   * Polls (every 100 ms, up to `timeoutMs`) until one worker session waits for a lock; the
   * sessions. Past the deadline it throws what the runs, their jobs and the workers said, so a
   * failure names its cause.
   */
  async waitForBlockedWorker(timeoutMs: number): Promise<{ pid: number }[]> {
    const sessions = await waitFor(
      async () =>
        (
          await this.db.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'platform-api:worker'
               AND wait_event_type = 'Lock'`,
          )
        ).rows,
      (rows) => rows.length === 1,
      timeoutMs,
      100,
    );
    if (sessions.length === 1) return sessions;
    throw new Error(
      `${sessions.length} worker sessions waited for a lock after ${timeoutMs} ms\n${await this.diagnosis()}`,
    );
  }

  /** The newest job runs and outbox jobs of the test's database, and what each worker printed. */
  async diagnosis(): Promise<string> {
    const runs = await this.db.query(
      `SELECT id, job, status, phase, attempts, error FROM job_runs ORDER BY id DESC LIMIT 5`,
    );
    const jobs = await this.db.query(
      `SELECT id, name, status, attempts, dispatches, deferrals, last_error, run_id FROM job_outbox
       ORDER BY id DESC LIMIT 5`,
    );
    const said = this.started.map((w, i) => `worker ${i} (pid ${w.child.pid}):\n${w.output().slice(-4000)}`);
    return `runs: ${JSON.stringify(runs.rows)}\njobs: ${JSON.stringify(jobs.rows)}\n${said.join('\n')}`;
  }

  /**
   * Kills (kill -9) a worker paused by `pauseWritesTo`, then releases the lock. The dead worker's
   * session (`pid`) runs its waiting statement, then ends once PostgreSQL notices the client is
   * gone; polls (up to 20 s) until it has. The sessions still found with that pid: none once ended.
   */
  async killBlocked(worker: Proc, pid: number): Promise<unknown[]> {
    await killHard(worker);
    await this.db.query('ROLLBACK');
    return waitFor(
      async () => (await this.db.query(`SELECT pid FROM pg_stat_activity WHERE pid = $1`, [pid])).rows,
      (rows) => rows.length === 0,
      20_000,
      100,
    );
  }

  /** The test's stand-in for time passing: the leases of run `runId` and of its jobs run out now. */
  async expireLeases(runId: string): Promise<void> {
    await this.t.sql(`UPDATE job_runs SET lease_until = now() - interval '1 second' WHERE id = $1`, [runId]);
    await this.t.sql(`UPDATE job_outbox SET lease_until = now() - interval '1 second' WHERE run_id = $1`, [
      runId,
    ]);
  }

  /** Deletes this test's queue keys only (SCAN under its prefix: other tests share the server); how many. */
  async deleteQueueKeys(): Promise<number> {
    const keys: string[] = [];
    for await (const batch of this.redis.scanStream({ match: `${this.t.config.queue.prefix}:*`, count: 500 }))
      keys.push(...(batch as string[]));
    if (keys.length > 0) await this.redis.del(...keys);
    return keys.length;
  }

  /** Kills the workers left, deletes the test's queue keys and closes both connections. */
  async close(): Promise<void> {
    await this.killAll();
    await this.deleteQueueKeys();
    this.redis.disconnect();
    await this.db.end();
  }
}
