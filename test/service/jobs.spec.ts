import { randomBytes } from 'node:crypto';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { ApiError } from '../../src/core/errors/api-error.js';
import type { JobContext } from '../../src/core/queue/job-context.js';
import { declareJobs, defineJob, JobHandler } from '../../src/core/queue/job-definition.js';
import { JobQueue } from '../../src/core/queue/job-queue.service.js';
import { JobRunner } from '../../src/core/queue/job-runner.js';
import { JobRuns, type RunView } from '../../src/core/queue/job-runs.service.js';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { OutboxRelay } from '../../src/core/queue/outbox.relay.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { waitFor } from '../support/factories.js';
import { reposDirOf } from '../support/process.js';

/**
 * The job framework at the service level, on a real database with jobs of the test's own
 * declared next to the application's: in-process mode (no Redis), which runs the same handlers,
 * options and run records as Bull workers. The relay's timer is far off: tests drive it.
 */

/** A gate a handler waits at until the test opens it. */
class Gate {
  private open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  release(): void {
    this.open();
  }
}

interface StepsPayload {
  key: string;
}

const STEPS = defineJob<StepsPayload>('test.steps', {
  run: { maxClaims: 3 },
  dedupeKey: (p) => `steps:${p.key}`,
});
const REJECTS = defineJob<{ reason: string }>('test.rejects', { run: {}, attempts: 3 });
const HANGS = defineJob<{ n: number }>('test.hangs', { run: {}, attempts: 1, timeoutMs: 200 });
const PLAIN = defineJob<{ key: string }>('test.plain', { dedupeKey: (p) => p.key });
const SCHEDULED = defineJob<{ report: number; scheduledFor?: string }>('test.scheduled', { run: {} });
const ORPHAN = defineJob<object>('test.orphan');
/** Two at once per process: an account's share is one (half of two, rounded up). */
const FAIR = defineJob<{ key: string }>('test.fair', { run: {}, concurrency: 2, attempts: 1 });

@Injectable()
class TestHandlers {
  readonly gates = new Map<string, Gate>();
  readonly plainRuns: string[] = [];

  /** Set when the tests end: every gate opens, those not made yet too. */
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

  @JobHandler(STEPS)
  async steps(payload: StepsPayload, ctx: JobContext): Promise<void> {
    await ctx.phase('waiting');
    await ctx.progress(1, 3);
    await ctx.log(`waiting for ${payload.key}`);
    await this.gate(payload.key).opened;
    await ctx.throwIfCancelled();
    await ctx.phase('finishing');
    await ctx.progress(3, 3);
    await ctx.log('done');
  }

  @JobHandler(REJECTS)
  rejects(payload: { reason: string }, ctx: JobContext): Promise<void> {
    return Promise.resolve(ctx.fail(payload.reason));
  }

  @JobHandler(HANGS)
  async hangs(payload: { n: number }, ctx: JobContext): Promise<void> {
    await this.gate(`hang-${payload.n}`).opened;
    await ctx.throwIfCancelled();
  }

  @JobHandler(PLAIN)
  plain(payload: { key: string }): Promise<void> {
    this.plainRuns.push(payload.key);
    return Promise.resolve();
  }

  /** Keys whose `test.fair` handler runs now, and every entry with the attempt it was given. */
  readonly fairRunning = new Set<string>();
  readonly fairEntries: Array<{ key: string; attempt: number }> = [];

  fairRunningOf(prefix: string): string[] {
    return [...this.fairRunning].filter((k) => k.startsWith(prefix));
  }

  @JobHandler(FAIR)
  async fair(payload: { key: string }, ctx: JobContext): Promise<void> {
    this.fairEntries.push({ key: payload.key, attempt: ctx.attempt });
    this.fairRunning.add(payload.key);
    try {
      await this.gate(payload.key).opened;
    } finally {
      this.fairRunning.delete(payload.key);
    }
  }

  @JobHandler(SCHEDULED)
  async scheduled(payload: { report: number; scheduledFor?: string }, ctx: JobContext): Promise<void> {
    await ctx.log(`report ${payload.report} for ${payload.scheduledFor}`);
  }
}

@Module({ providers: [TestHandlers, declareJobs(STEPS, REJECTS, HANGS, PLAIN, SCHEDULED, FAIR)] })
class TestJobsModule {}

function config(databaseUrl: string): AppConfig {
  return new AppConfig('api', {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '5',
    REDIS_URL: '',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    OUTBOX_RELAY_INTERVAL_MS: '600000',
    JOB_DEFER_MS: '50',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    // Never the checkout's .data/repos: that would mark it as this database's installation.
    REPOS_DIR: reposDirOf({ DATABASE_URL: databaseUrl }),
  });
}

function boot(databaseUrl: string, ...modules: unknown[]): Promise<INestApplicationContext> {
  @Module({ imports: [AppModule.forRoot(config(databaseUrl)), ...(modules as [])] })
  class Root {}
  return NestFactory.createApplicationContext(Root, { logger: false, abortOnError: false });
}

describe('job framework (service level, in-process mode)', () => {
  let db: { name: string; url: string };
  let app: INestApplicationContext;
  let jobs: JobQueue;
  let runs: JobRuns;
  let schedules: JobSchedules;
  let handlers: TestHandlers;
  let sql: <T = unknown>(text: string, params?: unknown[]) => Promise<T[]>;
  let accountId: number;

  const run = async (id: string) => (await runs.get(id))!;
  const until = (id: string, done: (r: RunView) => boolean) => waitFor(() => run(id), done, 10_000, 50);
  const outboxOf = (runId: string) =>
    sql<{ status: string; attempts: number; last_error: string | null }>(
      `SELECT status, attempts, last_error FROM job_outbox WHERE run_id = $1 ORDER BY id`,
      [runId],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await boot(db.url, TestJobsModule);
    jobs = app.get(JobQueue);
    runs = app.get(JobRuns);
    schedules = app.get(JobSchedules);
    handlers = app.get(TestHandlers);
    const ds = app.get(DataSource);
    sql = <T>(text: string, params?: unknown[]) => ds.query<T[]>(text, params);
    accountId = (await app.get(AccountsService).bootstrap('acme', 'admin@acme.test')).accountId;
  });

  afterAll(async () => {
    handlers?.openAll();
    await app?.close();
    await dropTestDatabase(db.name);
  });

  describe('start-up', () => {
    it('fails when a declared job has no handler', async () => {
      @Module({ providers: [declareJobs(ORPHAN)] })
      class Orphan {}
      await expect(boot(db.url, TestJobsModule, Orphan)).rejects.toThrow(
        /job test\.orphan is declared but no @JobHandler handles it/,
      );
    });

    it('fails when a job has two handlers, or a handler handles an undeclared job', async () => {
      @Injectable()
      class Again {
        @JobHandler(PLAIN)
        plain(): Promise<void> {
          return Promise.resolve();
        }

        @JobHandler(ORPHAN)
        orphan(): Promise<void> {
          return Promise.resolve();
        }
      }
      @Module({ providers: [Again] })
      class Twice {}
      const failure = boot(db.url, TestJobsModule, Twice);
      await expect(failure).rejects.toThrow(
        /job test\.plain has 2 handlers: TestHandlers\.plain, Again\.plain/,
      );
      await expect(failure).rejects.toThrow(
        /Again\.orphan handles job test\.orphan, which no module declares/,
      );
    });

    it('refuses a job definition with a bad name or option', () => {
      expect(() => defineJob('NoDots')).toThrow(/module\.action/);
      expect(() => defineJob('test.bad', { attempts: 0 })).toThrow(/attempts must be a positive integer/);
    });
  });

  describe('runs', () => {
    it('records a run users can watch: phase, progress, log, timestamps', async () => {
      const { runId, created } = await jobs.enqueue(STEPS, { key: 'watch' }, { accountId, owner: 'thing:1' });
      expect(created).toBe(true);
      const waiting = await until(runId!, (r) => r.phase === 'waiting' && r.progress !== null);
      expect(waiting).toMatchObject({
        job: 'test.steps',
        accountId,
        owner: 'thing:1',
        status: 'running',
        progress: { current: 1, total: 3 },
        attempts: 1,
        startedAt: expect.any(String),
        finishedAt: null,
      });
      handlers.gate('watch').release();
      const done = await until(runId!, (r) => r.status === 'succeeded');
      expect(done).toMatchObject({ phase: 'finishing', progress: { current: 3, total: 3 }, error: null });
      expect(Date.parse(done.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt!));
      expect((await runs.logs(runId!)).map((l) => [l.attempt, l.level, l.message])).toEqual([
        [1, 'info', 'waiting for watch'],
        [1, 'info', 'done'],
      ]);
      expect((await runs.listByOwner('thing:1')).map((r) => r.id)).toEqual([runId]);
      expect(
        await waitFor(
          () => outboxOf(runId!),
          (rows) => rows[0]?.status === 'done',
        ),
      ).toEqual([{ status: 'done', attempts: 1, last_error: null }]);
    });

    it('queues the same work once: a second enqueue with the same key returns the run in progress', async () => {
      const first = await jobs.enqueue(STEPS, { key: 'same' });
      const second = await jobs.enqueue(STEPS, { key: 'same' });
      expect(second).toEqual({ runId: first.runId, created: false });
      expect(await outboxOf(first.runId!)).toHaveLength(1);
      handlers.gate('same').release();
      await until(first.runId!, (r) => r.status === 'succeeded');
      // Finished: the key is free again, for new work.
      const third = await jobs.enqueue(STEPS, { key: 'same' });
      expect(third.created).toBe(true);
      expect(third.runId).not.toBe(first.runId);
      await until(third.runId!, (r) => r.status === 'succeeded');
    });

    it('deduplicates plain jobs (no run record) on the outbox while pending', async () => {
      // Both inside one unit of work: the first job stays pending (it runs after the commit), so
      // the second meets it whatever the machine's speed.
      const db = app.get((await import('../../src/core/database/database.js')).Database);
      const second = await db.transaction(async () => {
        expect((await jobs.enqueue(PLAIN, { key: 'p1' })).created).toBe(true);
        return jobs.enqueue(PLAIN, { key: 'p1' });
      });
      expect(second.created).toBe(false);
      await waitFor(
        () => Promise.resolve(handlers.plainRuns),
        (list) => list.includes('p1'),
        10_000,
        50,
      );
      const rows = await sql(`SELECT status FROM job_outbox WHERE dedupe_key = 'p1'`);
      expect(rows).toHaveLength(1);
    });

    it('writes the run and its job with the unit of work that causes them, or not at all', async () => {
      const before = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM job_runs`);
      const db = app.get((await import('../../src/core/database/database.js')).Database);
      await expect(
        db.transaction(async () => {
          await jobs.enqueue(STEPS, { key: 'rolled-back' });
          throw new Error('the write failed');
        }),
      ).rejects.toThrow('the write failed');
      const after = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM job_runs`);
      expect(after[0].n).toBe(before[0].n);
      expect(await sql(`SELECT id FROM job_outbox WHERE payload->>'key' = 'rolled-back'`)).toEqual([]);
    });

    it('cancels a queued run at once, and a running one at its next check', async () => {
      const { runId } = await jobs.enqueue(STEPS, { key: 'cancel-running' });
      await until(runId!, (r) => r.phase === 'waiting');
      const requested = await runs.requestCancel(runId!);
      expect(requested).toMatchObject({ status: 'running', cancelRequestedAt: expect.any(String) });
      handlers.gate('cancel-running').release();
      const cancelled = await until(runId!, (r) => r.status === 'cancelled');
      expect(cancelled).toMatchObject({ phase: 'waiting', error: null, finishedAt: expect.any(String) });
      // Not retried: its job is done.
      expect(
        await waitFor(
          () => outboxOf(runId!),
          (rows) => rows[0]?.status === 'done',
        ),
      ).toEqual([{ status: 'done', attempts: 1, last_error: null }]);

      // A run still queued (recorded inside a unit of work not committed yet) ends at once.
      const db = app.get((await import('../../src/core/database/database.js')).Database);
      const queued = await db.transaction(async () => {
        const { runId: id } = await jobs.enqueue(STEPS, { key: 'cancel-queued' });
        expect((await runs.requestCancel(id!))?.status).toBe('cancelled');
        return id!;
      });
      expect(await run(queued)).toMatchObject({ status: 'cancelled', attempts: 0 });
      // Its job, run after the commit, finds nothing to do.
      expect(
        await waitFor(
          () => outboxOf(queued),
          (rows) => rows[0]?.status === 'done',
        ),
      ).toEqual([{ status: 'done', attempts: 1, last_error: null }]);
      expect(await runs.requestCancel(queued)).toMatchObject({ status: 'cancelled' });
    });

    it('fails a run without retrying when its handler calls ctx.fail', async () => {
      const { runId } = await jobs.enqueue(REJECTS, { reason: 'the repository does not exist' });
      const failed = await until(runId!, (r) => r.status === 'failed');
      expect(failed).toMatchObject({ error: 'the repository does not exist', attempts: 1 });
      expect(
        await waitFor(
          () => outboxOf(runId!),
          (rows) => rows[0]?.status === 'done',
        ),
      ).toEqual([{ status: 'done', attempts: 1, last_error: null }]);
    });

    it('fails an attempt past its timeout; with no attempt left, the run fails with the reason', async () => {
      const { runId } = await jobs.enqueue(HANGS, { n: 1 });
      const failed = await until(runId!, (r) => r.status === 'failed');
      expect(failed).toMatchObject({ error: 'Error: timed out after 200 ms', attempts: 1 });
      expect(
        await waitFor(
          () => outboxOf(runId!),
          (rows) => rows[0]?.status === 'failed',
        ),
      ).toEqual([{ status: 'failed', attempts: 1, last_error: 'Error: timed out after 200 ms' }]);
      handlers.gate('hang-1').release();
    });

    it('forgets the runs of an owner, with their logs and jobs', async () => {
      const { runId } = await jobs.enqueue(SCHEDULED, { report: 1 }, { owner: 'thing:forget' });
      await until(runId!, (r) => r.status === 'succeeded');
      await runs.forgetOwner('thing:forget');
      expect(await runs.get(runId!)).toBeUndefined();
      expect(await runs.logs(runId!)).toEqual([]);
      expect(await outboxOf(runId!)).toEqual([]);
    });
  });

  describe('per-account shares', () => {
    it("runs another account's job at once while one account's jobs fill its share; deferrals are no attempts", async () => {
      const other = (await app.get(AccountsService).bootstrap('beta', 'admin@beta.test')).accountId;
      // Account A queues four jobs that block until released; once one of them runs, account B
      // queues one.
      const a: string[] = [];
      for (const key of ['a1', 'a2', 'a3', 'a4']) {
        a.push((await jobs.enqueue(FAIR, { key }, { accountId, owner: 'fair:a' })).runId!);
      }
      await waitFor(
        () => Promise.resolve(handlers.fairRunningOf('a')),
        (running) => running.length > 0,
        10_000,
        20,
      );
      const b = (await jobs.enqueue(FAIR, { key: 'b1' }, { accountId: other, owner: 'fair:b' })).runId!;
      // B's job runs while A's still block: A runs its share (one); its other three went back to
      // the outbox, `pending` and due again shortly, holding no slot.
      await waitFor(
        () => Promise.resolve(handlers.fairRunningOf('b')),
        (running) => running.length === 1,
        10_000,
        20,
      );
      expect(handlers.fairRunningOf('b')).toEqual(['b1']);
      expect(handlers.fairRunningOf('a')).toHaveLength(1);
      const waiting = await sql<{ status: string; attempts: number }>(
        `SELECT status, attempts FROM job_outbox WHERE run_id = ANY($1::bigint[]) AND payload->>'key' <> ALL($2)`,
        [a, handlers.fairRunningOf('a')],
      );
      expect(waiting).toEqual(Array(3).fill({ status: 'pending', attempts: 0 }));
      handlers.gate('b1').release();
      await until(b, (r) => r.status === 'succeeded');

      // Released, A's jobs all run as the relay hands them over again, each once and as its first
      // attempt (the job allows one): deferrals used none.
      for (const key of ['a1', 'a2', 'a3', 'a4']) handlers.gate(key).release();
      const done = await waitFor(
        async () => {
          await app.get(OutboxRelay).relayOnce();
          return Promise.all(a.map(run));
        },
        (list) => list.every((r) => r.status === 'succeeded'),
        10_000,
        50,
      );
      expect(done.map((r) => [r.status, r.attempts])).toEqual(Array(4).fill(['succeeded', 1]));
      const entries = handlers.fairEntries.filter((e) => e.key.startsWith('a'));
      expect(entries.map((e) => e.key).sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
      expect(entries.every((e) => e.attempt === 1)).toBe(true);
      const rows = await waitFor(
        () =>
          sql<{ status: string; attempts: number }>(
            `SELECT status, attempts FROM job_outbox WHERE run_id = ANY($1::bigint[])`,
            [a],
          ),
        (list) => list.every((r) => r.status === 'done'),
        5_000,
        50,
      );
      expect(rows).toEqual(Array(4).fill({ status: 'done', attempts: 1 }));
    });
  });

  describe('schedules', () => {
    const relay = () => app.get(OutboxRelay).relayOnce();
    /** The test's stand-in for time passing: the schedule is due now. */
    const makeDue = (id: string) =>
      sql(`UPDATE job_schedules SET next_run_at = now() - interval '1 second' WHERE id = $1`, [id]);

    it('creates, lists, updates and deletes schedules by owner key', async () => {
      const created = await schedules.create({
        owner: 'report:7',
        job: SCHEDULED,
        cron: '0 9 * * 1-5',
        timezone: 'Europe/Berlin',
        payload: { report: 7 },
        accountId,
      });
      expect(created).toMatchObject({
        owner: 'report:7',
        job: 'test.scheduled',
        cron: '0 9 * * 1-5',
        timezone: 'Europe/Berlin',
        payload: { report: 7 },
        enabled: true,
        lastRunAt: null,
        lastRunId: null,
      });
      // 09:00 in Berlin is 07:00 or 08:00 UTC, on a weekday, in the future.
      const next = new Date(created.nextRunAt);
      expect([7, 8]).toContain(next.getUTCHours());
      expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
      expect(next.getTime()).toBeGreaterThan(Date.now());

      const other = await schedules.create({
        owner: 'report:8',
        job: SCHEDULED,
        cron: '*/5 * * * *',
        payload: { report: 8 },
      });
      expect((await schedules.listByOwner('report:7')).map((s) => s.id)).toEqual([created.id]);

      const changed = await schedules.update(created.id, {
        cron: '30 6 * * *',
        timezone: 'UTC',
        payload: { report: 70 },
      });
      expect(changed).toMatchObject({ cron: '30 6 * * *', timezone: 'UTC', payload: { report: 70 } });
      expect(new Date(changed!.nextRunAt).toISOString()).toMatch(/T06:30:00\.000Z$/);
      expect((await schedules.update(created.id, { enabled: false }))?.enabled).toBe(false);
      expect(await schedules.update('999999', { enabled: false })).toBeUndefined();

      expect(await schedules.removeByOwner('report:7')).toBe(1);
      expect(await schedules.listByOwner('report:7')).toEqual([]);
      expect(await schedules.remove(other.id)).toBe(true);
      expect(await schedules.remove(other.id)).toBe(false);
    });

    it('refuses a cron or time zone it cannot read (validation_failed)', async () => {
      const bad = (cron: string, timezone = 'UTC') =>
        schedules.create({ owner: 'bad', job: SCHEDULED, cron, timezone, payload: { report: 0 } });
      for (const attempt of [bad('61 * * * *'), bad('* * *'), bad('* * * * *', 'Mars/Olympus')]) {
        const err = await attempt.catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).code).toBe('validation_failed');
      }
      expect(await schedules.listByOwner('bad')).toEqual([]);
    });

    it('fires a due schedule once from the relay tick, records its run and advances next_run_at', async () => {
      const s = await schedules.create({
        owner: 'report:9',
        job: SCHEDULED,
        cron: '0 0 1 1 *',
        payload: { report: 9 },
        accountId,
      });
      expect(await schedules.fireDue()).toBe(0);
      await makeDue(s.id);
      await relay();
      const fired = (await schedules.get(s.id))!;
      expect(fired.lastRunId).toEqual(expect.any(String));
      expect(fired.lastRunAt).toEqual(expect.any(String));
      expect(Date.parse(fired.nextRunAt)).toBeGreaterThan(Date.now());
      expect(new Date(fired.nextRunAt).toISOString()).toMatch(/-01-01T00:00:00\.000Z$/);
      const done = await until(fired.lastRunId!, (r) => r.status === 'succeeded');
      expect(done).toMatchObject({ job: 'test.scheduled', owner: 'report:9', accountId });
      expect((await runs.logs(fired.lastRunId!)).map((l) => l.message)).toEqual([
        expect.stringMatching(/^report 9 for \d{4}-\d\d-\d\dT/),
      ]);
      // Not due any more: the next tick fires nothing.
      await relay();
      expect((await schedules.get(s.id))!.lastRunId).toBe(fired.lastRunId);
      expect(await runs.listByOwner('report:9')).toHaveLength(1);
      await schedules.remove(s.id);
    });

    it('never fires one schedule twice when ticks run side by side (FOR UPDATE SKIP LOCKED)', async () => {
      const s = await schedules.create({
        owner: 'report:10',
        job: SCHEDULED,
        cron: '0 0 1 1 *',
        payload: { report: 10 },
      });
      await makeDue(s.id);
      const fired = await Promise.all([schedules.fireDue(), schedules.fireDue(), schedules.fireDue()]);
      expect(fired.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await runs.listByOwner('report:10')).toHaveLength(1);
      await schedules.remove(s.id);
    });

    it('does not fire a disabled schedule', async () => {
      const s = await schedules.create({
        owner: 'report:11',
        job: SCHEDULED,
        cron: '* * * * *',
        payload: { report: 11 },
        enabled: false,
      });
      await makeDue(s.id);
      expect(await schedules.fireDue()).toBe(0);
      expect(await runs.listByOwner('report:11')).toEqual([]);
      await schedules.remove(s.id);
    });
  });

  describe('schedules on a controllable clock', () => {
    const at = (iso: string) => new Date(iso);
    /** The occurrences the schedule's runs were queued for, oldest first (from the runs' payloads). */
    const firedFor = async (owner: string) =>
      (
        await sql<{ scheduledFor: string }>(
          `SELECT payload->>'scheduledFor' AS "scheduledFor" FROM job_runs WHERE owner = $1 ORDER BY id`,
          [owner],
        )
      ).map((r) => r.scheduledFor);
    /** Creates a schedule as of `from`, then ticks at each instant given; answers what fired. */
    async function walk(owner: string, cron: string, timezone: string, from: string, ticks: string[]) {
      const s = await schedules.create(
        { owner, job: SCHEDULED, cron, timezone, payload: { report: 1 } },
        { now: at(from) },
      );
      const nextRuns = [s.nextRunAt];
      for (const tick of ticks) {
        await schedules.fireDue({ now: at(tick) });
        nextRuns.push((await schedules.get(s.id))!.nextRunAt);
      }
      await schedules.remove(s.id);
      return { fired: await firedFor(owner), nextRuns };
    }

    it('fires a daily 09:00 Europe/Berlin at 08:00Z in winter and 07:00Z in summer', async () => {
      const { fired, nextRuns } = await walk(
        'dst:berlin',
        '0 9 * * *',
        'Europe/Berlin',
        '2027-01-14T12:00:00Z',
        ['2027-01-15T08:00:00Z', '2027-03-27T08:00:30Z', '2027-03-28T07:00:10Z'],
      );
      expect(fired).toEqual([
        '2027-01-15T08:00:00.000Z',
        '2027-03-27T08:00:00.000Z',
        '2027-03-28T07:00:00.000Z',
      ]);
      expect(nextRuns).toEqual([
        '2027-01-15T08:00:00.000Z',
        '2027-01-16T08:00:00.000Z',
        '2027-03-28T07:00:00.000Z',
        '2027-03-29T07:00:00.000Z',
      ]);
    });

    it('fires a time that does not exist on the spring-forward day once, after the gap', async () => {
      // Europe/Berlin springs forward on 28 March 2027, 02:00 -> 03:00: 02:30 does not exist.
      const { fired } = await walk('dst:gap', '30 2 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', [
        '2027-03-28T00:30:00Z', // 01:30 local: not yet
        '2027-03-28T01:30:00Z', // 03:30 CEST: the 02:30 that does not exist, once
        '2027-03-28T02:30:00Z',
        '2027-03-28T12:00:00Z',
        '2027-03-29T00:30:00Z', // 02:30 CEST the next day
      ]);
      expect(fired).toEqual(['2027-03-28T01:30:00.000Z', '2027-03-29T00:30:00.000Z']);
    });

    it('fires a repeated local time once on the fall-back day, and an hourly cron in both real hours', async () => {
      // Europe/Berlin falls back on 31 October 2027, 03:00 CEST -> 02:00 CET: 02:30 happens twice.
      const daily = await walk('dst:repeat', '30 2 * * *', 'Europe/Berlin', '2027-10-30T12:00:00Z', [
        '2027-10-31T00:30:00Z', // 02:30 CEST
        '2027-10-31T01:30:00Z', // 02:30 CET, the same local time again
        '2027-10-31T12:00:00Z',
      ]);
      expect(daily.fired).toEqual(['2027-10-31T00:30:00.000Z']);
      const hourly = await walk('dst:hourly', '0 * * * *', 'Europe/Berlin', '2027-10-30T23:30:00Z', [
        '2027-10-31T00:00:00Z', // 02:00 CEST
        '2027-10-31T01:00:00Z', // 02:00 CET
        '2027-10-31T02:00:00Z', // 03:00 CET
      ]);
      expect(hourly.fired).toEqual([
        '2027-10-31T00:00:00.000Z',
        '2027-10-31T01:00:00.000Z',
        '2027-10-31T02:00:00.000Z',
      ]);
    });

    it('after downtime fires only the latest missed occurrence within the grace window, and none beyond it', async () => {
      // Hourly; the service was down from 03:30 to 07:20: 04:00 ... 07:00 were missed.
      const recent = await walk('downtime:recent', '0 * * * *', 'UTC', '2027-05-01T03:30:00Z', [
        '2027-05-01T07:20:00Z',
        '2027-05-01T07:40:00Z',
      ]);
      expect(recent.fired).toEqual(['2027-05-01T07:00:00.000Z']);
      expect(recent.nextRuns.at(-1)).toBe('2027-05-01T08:00:00.000Z');
      // Daily at 06:00; down for three days, back at 09:00, past the default hour of grace: none
      // fires, and the schedule goes on from the next occurrence.
      const late = await walk('downtime:late', '0 6 * * *', 'UTC', '2027-05-01T05:00:00Z', [
        '2027-05-04T09:00:00Z',
      ]);
      expect(late.fired).toEqual([]);
      expect(late.nextRuns.at(-1)).toBe('2027-05-05T06:00:00.000Z');
    });

    it('refuses a cron that never fires (validation_failed)', async () => {
      for (const cron of ['0 0 30 2 *', '0 0 31 4,6 *']) {
        const err = await schedules
          .create({ owner: 'never', job: SCHEDULED, cron, payload: { report: 0 } })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).code).toBe('validation_failed');
      }
      expect(await schedules.listByOwner('never')).toEqual([]);
    });
  });

  describe('configuration', () => {
    const cfg = (env: Record<string, string>) => new AppConfig('api', { NODE_ENV: 'test', ...env });

    it('leaves jobs to workers when Redis is configured, unless RUN_JOBS_IN_PROCESS says otherwise', () => {
      expect(cfg({}).queue.runJobsInProcess).toBe(true);
      expect(cfg({ REDIS_URL: 'redis://127.0.0.1:6379' }).queue.runJobsInProcess).toBe(false);
      expect(
        cfg({ REDIS_URL: 'redis://127.0.0.1:6379', RUN_JOBS_IN_PROCESS: 'true' }).queue.runJobsInProcess,
      ).toBe(true);
      expect(
        new AppConfig('worker', { NODE_ENV: 'test', REDIS_URL: 'redis://127.0.0.1:6379' }).queue
          .runJobsInProcess,
      ).toBe(true);
    });

    it("reads the accounts' shares of jobs, the deferral delay and the schedules' grace", () => {
      expect(cfg({}).queue).toMatchObject({
        accountConcurrency: null,
        deferMs: 2000,
        scheduleGraceSeconds: 3600,
      });
      expect(
        cfg({ JOB_ACCOUNT_CONCURRENCY: '3', JOB_DEFER_MS: '500', JOB_SCHEDULE_GRACE_SECONDS: '60' }).queue,
      ).toMatchObject({ accountConcurrency: 3, deferMs: 500, scheduleGraceSeconds: 60 });
      expect(() => cfg({ JOB_ACCOUNT_CONCURRENCY: '0' })).toThrow(/JOB_ACCOUNT_CONCURRENCY/);
      // The share: half a job's concurrency, rounded up, unless the setting says otherwise (never above it).
      const runner = app.get(JobRunner);
      expect([runner.accountShare(FAIR), runner.accountShare(STEPS)]).toEqual([1, 2]);
    });

    it('reads WORKER_QUEUES (default: every queue) and refuses an unknown queue', () => {
      expect(cfg({}).queue.workerQueues).toEqual(['builds', 'default']);
      expect(cfg({ WORKER_QUEUES: ' builds , builds' }).queue.workerQueues).toEqual(['builds']);
      expect(() => cfg({ WORKER_QUEUES: 'builds,emails' })).toThrow(/WORKER_QUEUES: emails is not a queue/);
      expect(() => cfg({ WORKER_QUEUES: ',' })).toThrow(/WORKER_QUEUES: names no queue/);
    });
  });
});
