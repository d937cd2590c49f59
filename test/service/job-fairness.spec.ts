import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import type { JobContext } from '../../src/core/queue/job-context.js';
import { BullDispatcher } from '../../src/core/queue/bull.dispatcher.js';
import { declareJobs, defineJob, JobHandler } from '../../src/core/queue/job-definition.js';
import { JobQueue } from '../../src/core/queue/job-queue.service.js';
import { JobRuns } from '../../src/core/queue/job-runs.service.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, dropTestDatabase, REDIS_URL } from '../support/database.js';
import { waitFor } from '../support/factories.js';

/**
 * Fair shares of the job queues (issue 26), with Bull over the real Redis: this process runs the
 * jobs (RUN_JOBS_IN_PROCESS), under a queue prefix of its own. One account's long jobs must not
 * hold every slot of a job while another account's job waits. In-process mode (no Redis) is
 * tested in jobs.spec.ts.
 */

/** A gate a handler waits at until the test opens it. */
class Gate {
  private open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  release(): void {
    this.open();
  }
}

interface FairPayload {
  key: string;
}

/** Two at once per process: an account's share is one (half of two, rounded up). */
const FAIR = defineJob<FairPayload>('test.fair', { run: {}, concurrency: 2, attempts: 1 });
const PLAIN = defineJob<FairPayload>('test.fair-plain');
/** Fails every attempt, of two. */
const FAILS = defineJob<FairPayload>('test.fair-fails', { attempts: 2, backoffMs: 1 });

@Injectable()
class FairHandlers {
  readonly gates = new Map<string, Gate>();
  /** Keys whose handler runs now. */
  readonly running = new Set<string>();
  /** Every entry into the handler: key and the attempt number it was given. */
  readonly entries: Array<{ key: string; attempt: number }> = [];
  /** The most of one account's jobs (by key prefix) seen running at once. */
  readonly peak = new Map<string, number>();

  /** Set when the test ends: every gate opens, those not made yet too. */
  private allOpen = false;

  gate(key: string): Gate {
    let gate = this.gates.get(key);
    if (!gate) this.gates.set(key, (gate = new Gate()));
    if (this.allOpen) gate.release();
    return gate;
  }

  openAll(): void {
    this.allOpen = true;
    for (const gate of this.gates.values()) gate.release();
  }

  runningOf(prefix: string): string[] {
    return [...this.running].filter((k) => k.startsWith(prefix));
  }

  @JobHandler(FAIR)
  async fair(payload: FairPayload, ctx: JobContext): Promise<void> {
    this.entries.push({ key: payload.key, attempt: ctx.attempt });
    this.running.add(payload.key);
    const prefix = payload.key[0];
    this.peak.set(prefix, Math.max(this.peak.get(prefix) ?? 0, this.runningOf(prefix).length));
    try {
      await this.gate(payload.key).opened;
    } finally {
      this.running.delete(payload.key);
    }
  }

  @JobHandler(PLAIN)
  plain(): Promise<void> {
    return Promise.resolve();
  }

  @JobHandler(FAILS)
  fails(payload: FairPayload, ctx: JobContext): Promise<void> {
    this.entries.push({ key: payload.key, attempt: ctx.attempt });
    return Promise.reject(new Error('the remote is down'));
  }
}

@Module({ providers: [FairHandlers, declareJobs(FAIR, PLAIN, FAILS)] })
class FairJobsModule {}

describe('job queues: per-account shares (Bull)', () => {
  let db: { name: string; url: string };
  let config: AppConfig;
  let app: INestApplicationContext;
  let jobs: JobQueue;
  let runs: JobRuns;
  let handlers: FairHandlers;
  let sql: <T = unknown>(text: string, params?: unknown[]) => Promise<T[]>;
  let accountA: number;
  let accountB: number;

  const outbox = (runIds: string[]) =>
    sql<{ runId: string; status: string; attempts: number; dispatches: number; deferrals: number }>(
      `SELECT run_id::text AS "runId", status, attempts, dispatches, deferrals FROM job_outbox
       WHERE run_id = ANY($1::bigint[]) ORDER BY id`,
      [runIds],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    // The relay's timer far off: deferrals hand jobs over by themselves, without it.
    config = testConfig(db.url, {
      RUN_JOBS_IN_PROCESS: 'true',
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      JOB_DEFER_MS: '100',
    });
    @Module({ imports: [AppModule.forRoot(config), FairJobsModule] })
    class Root {}
    app = await NestFactory.createApplicationContext(Root, { logger: false, abortOnError: false });
    jobs = app.get(JobQueue);
    runs = app.get(JobRuns);
    handlers = app.get(FairHandlers);
    const ds = app.get(DataSource);
    sql = <T>(text: string, params?: unknown[]) => ds.query<T[]>(text, params);
    const accounts = app.get(AccountsService);
    accountA = (await accounts.bootstrap('alpha', 'admin@alpha.test')).accountId;
    accountB = (await accounts.bootstrap('beta', 'admin@beta.test')).accountId;
  });

  afterAll(async () => {
    handlers?.openAll();
    await app?.close();
    if (db) await dropTestDatabase(db.name);
    if (config) {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      const keys = await redis.keys(`${config.queue.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('records the account of every job on its outbox row (null for platform work)', async () => {
    await jobs.enqueue(PLAIN, { key: 'p-a' }, { accountId: accountA });
    await jobs.enqueue(PLAIN, { key: 'p-platform' });
    const ids = await sql<{ key: string; accountId: number | null }>(
      `SELECT payload->>'key' AS key, account_id AS "accountId" FROM job_outbox
       WHERE name = 'test.fair-plain' ORDER BY id`,
    );
    expect(ids).toEqual([
      { key: 'p-a', accountId: accountA },
      { key: 'p-platform', accountId: null },
    ]);
  });

  it("runs another account's job at once while one account's jobs fill its share; deferrals are no attempts", async () => {
    // Account A queues four jobs that block until released; once one of them runs, account B
    // queues one.
    const a: string[] = [];
    for (const key of ['a1', 'a2', 'a3', 'a4']) {
      a.push((await jobs.enqueue(FAIR, { key }, { accountId: accountA, owner: 'fair:a' })).runId!);
    }
    await waitFor(
      () => Promise.resolve(handlers.runningOf('a')),
      (running) => running.length > 0,
      15_000,
      50,
    );
    const b = (await jobs.enqueue(FAIR, { key: 'b1' }, { accountId: accountB, owner: 'fair:b' })).runId!;

    // B's job runs while A's still block: A runs its share (one) and its other three gave their
    // slot back, to come back later (deferred, each at least once).
    await waitFor(
      () => Promise.resolve(handlers.runningOf('b')),
      (running) => running.length === 1,
      15_000,
      50,
    );
    expect(handlers.runningOf('b')).toEqual(['b1']);
    expect(handlers.runningOf('a')).toHaveLength(1);
    const deferred = await waitFor(
      () => outbox(a),
      (rows) => rows.filter((r) => r.deferrals > 0).length === 3,
      15_000,
      50,
    );
    expect(deferred.filter((r) => r.deferrals > 0)).toHaveLength(3);
    expect(handlers.runningOf('a')).toHaveLength(1);
    handlers.gate('b1').release();
    expect(
      (
        await waitFor(
          () => runs.get(b),
          (r) => r?.status === 'succeeded',
          15_000,
          50,
        )
      )?.status,
    ).toBe('succeeded');

    // Released, A's jobs all run, each once and as its first attempt (the job allows one):
    // deferrals, however many, used none.
    for (const key of ['a1', 'a2', 'a3', 'a4']) handlers.gate(key).release();
    const done = await waitFor(
      () => Promise.all(a.map((id) => runs.get(id))),
      (list) => list.every((r) => r?.status === 'succeeded'),
      20_000,
      50,
    );
    expect(done.map((r) => [r?.status, r?.attempts])).toEqual(Array(4).fill(['succeeded', 1]));
    const entries = handlers.entries.filter((e) => e.key.startsWith('a'));
    expect(entries.map((e) => e.key).sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(entries.every((e) => e.attempt === 1)).toBe(true);
    expect(handlers.peak.get('a')).toBe(1);
    const rows = await waitFor(
      () => outbox(a),
      (list) => list.every((r) => r.status === 'done'),
      5_000,
      50,
    );
    // Done with one attempt each; a deferred job's hand-overs are its deferrals plus the first.
    expect(rows.map((r) => [r.status, r.attempts])).toEqual(Array(4).fill(['done', 1]));
    for (const r of rows) expect(r.dispatches).toBe(r.deferrals + 1);
  });

  it('carries the attempts already made into a hand-over: Bull does not give them anew', async () => {
    // A job that failed once, its Bull job then lost: the relay hands it over again, under the
    // row's next hand-over, with the row's one attempt made. One attempt is left, not two.
    const [{ id }] = await sql<{ id: string }>(
      `INSERT INTO job_outbox (queue, name, payload, account_id, status, attempts, dispatches, last_error)
       VALUES ('default', 'test.fair-fails', '{"key": "f1"}', $1, 'dispatched', 1, 1, 'Error: the remote is down')
       RETURNING id::text AS id`,
      [accountA],
    );
    await app.get(BullDispatcher).dispatch({
      id,
      name: FAILS.name,
      payload: { key: 'f1' },
      accountId: accountA,
      runId: null,
      handover: 2,
      attempts: 1,
    });
    const [row] = await waitFor(
      () =>
        sql<{ status: string; attempts: number; dispatches: number }>(
          `SELECT status, attempts, dispatches FROM job_outbox WHERE id = $1`,
          [id],
        ),
      (rows) => rows[0]?.status === 'failed',
      10_000,
      50,
    );
    expect(row).toEqual({ status: 'failed', attempts: 2, dispatches: 2 });
    expect(handlers.entries.filter((e) => e.key === 'f1')).toEqual([{ key: 'f1', attempt: 2 }]);
  });
});
