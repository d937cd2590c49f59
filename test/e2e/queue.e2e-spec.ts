import { spawn, type ChildProcess } from 'node:child_process';
import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';
import { freePort } from '../support/process.js';

const REDIS_SERVER = '/usr/bin/redis-server';

const deploymentBody = (name: string) => deploymentInput({ name, creationStep: 'project' });

/** A redis-server child process of this test file, on a port of its own. */
class RedisProcess {
  private child: ChildProcess | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });
    child.stdout.resume();
    child.stderr.resume();
  }

  /** Kills the server abruptly (SIGKILL) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
  ]).finally(() => clearTimeout(timer));
}

const counts = async (t: TestApp) =>
  (
    await t.sql<{ deployments: number; builds: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM deployments) AS deployments,
              (SELECT count(*)::int FROM deployment_builds) AS builds,
              (SELECT count(*)::int FROM job_outbox) AS jobs`,
    )
  )[0];

const buildStatus = async (t: TestApp, buildId: number) =>
  (await t.sql<{ status: string }>(`SELECT status FROM deployment_builds WHERE id = $1`, [buildId]))[0]
    ?.status;

const outboxRow = async (t: TestApp, buildId: number) =>
  (
    await t.sql<{ id: string; status: string; attempts: number; last_error: string | null }>(
      `SELECT id, status, attempts, last_error FROM job_outbox WHERE payload->>'buildId' = $1`,
      [String(buildId)],
    )
  )[0];

/** A build recorded in the database (with its outbox row, due now) but never handed to the queue. */
async function recordUndispatchedBuild(t: TestApp, deploymentId: number, accountId: number): Promise<number> {
  const [build] = await t.sql<{ id: number }>(
    `INSERT INTO deployment_builds (account_id, deployment_id, branch, status, trigger)
     VALUES ($1, $2, 'master', 'queued', 'test') RETURNING id`,
    [accountId, deploymentId],
  );
  await t.sql(
    `INSERT INTO job_outbox (queue, name, payload, status, available_at)
     VALUES ('builds', 'deployment.build', $1, 'pending', now() - interval '1 second')`,
    [JSON.stringify({ buildId: build.id })],
  );
  return build.id;
}

describe('job queue', () => {
  describe('with Redis that goes away and comes back', () => {
    let redis: RedisProcess;
    let t: TestApp;
    let deploymentId: number;
    let firstBuildId: number;

    beforeAll(async () => {
      redis = new RedisProcess(await freePort());
      await redis.start();
      t = await startApp({ REDIS_URL: redis.url });
    });

    afterAll(async () => {
      try {
        // Closing Bull queues wants a reachable Redis; bring it back if a test left it down.
        if (!redis.running) await redis.start().catch(() => undefined);
        if (t) await withTimeout(t.close(), 15_000);
      } finally {
        await redis.kill();
      }
    }, 30_000);

    it('creates a deployment while Redis is up, and Bull runs its build to succeeded', async () => {
      const ready = await t.http().get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ok', database: { status: 'up' }, redis: { status: 'up' } });

      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('Before the outage'));
      expect(res.status).toBe(200);
      deploymentId = res.body.id;
      const [build] = await t.sql<{ id: number }>(
        `SELECT id FROM deployment_builds WHERE deployment_id = $1`,
        [deploymentId],
      );
      firstBuildId = build.id;
      expect(
        await waitFor(
          () => buildStatus(t, firstBuildId),
          (s) => s === 'succeeded',
          10_000,
        ),
      ).toBe('succeeded');
      expect(
        (
          await waitFor(
            () => outboxRow(t, firstBuildId),
            (r) => r?.status === 'done',
            5_000,
          )
        ).status,
      ).toBe('done');
    });

    it('reports redis down on /health/ready (503) once Redis is gone', async () => {
      await redis.kill();
      const ready = await waitFor(
        () => t.http().get('/health/ready'),
        (r) => r.status === 503,
        5_000,
      );
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: 'error',
        database: { status: 'up' },
        redis: { status: 'down', detail: expect.any(String) },
      });
      expect((await t.http().get('/health/live')).status).toBe(200);
    }, 10_000);

    it('keeps serving reads (and writes that queue nothing) while Redis is down', async () => {
      const list = await t.http().get('/api/v1/deployments').set(bearer(t.admin.token));
      expect(list.status).toBe(200);
      expect(list.body.items.map((d: { id: number }) => d.id)).toEqual([deploymentId]);

      const one = await t.http().get(`/api/v1/deployments/${deploymentId}`).set(bearer(t.admin.token));
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: deploymentId, name: 'Before the outage' });

      const regions = await t.http().get('/api/v1/regions').set(bearer(t.admin.token));
      expect(regions.status).toBe(200);
      expect(regions.body.items.length).toBeGreaterThan(0);

      const me = await t.http().get('/api/v1/users/me').set(bearer(t.admin.token));
      expect(me.status).toBe(200);

      const put = await t
        .http()
        .put(`/api/v1/deployments/${deploymentId}`)
        .set(bearer(t.admin.token))
        .send({ customDomain: 'bi.example.com' });
      expect(put.status).toBe(200);
      expect(put.body.customDomain).toBe('bi.example.com');
    }, 10_000);

    it('answers POST /build/api/v1/deployments with 503 queue_unavailable quickly and writes nothing', async () => {
      const before = await counts(t);
      const started = Date.now();
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('During the outage'));
      const elapsed = Date.now() - started;
      expect(res.status).toBe(503);
      expectErrorShape(res.body, 503, 'queue_unavailable');
      expect(elapsed).toBeLessThan(3_000);
      expect(await counts(t)).toEqual(before);
      expect(await t.sql(`SELECT id FROM deployments WHERE name = 'During the outage'`)).toEqual([]);

      // A retry during the outage is refused the same way: no half-created deployment piles up.
      const again = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('During the outage, again'));
      expect(again.status).toBe(503);
      expectErrorShape(again.body, 503, 'queue_unavailable');
      expect(await counts(t)).toEqual(before);
    }, 10_000);

    it('keeps a job recorded during the outage and runs it once Redis is back', async () => {
      const buildId = await recordUndispatchedBuild(t, deploymentId, t.admin.accountId);

      // Several relay passes (500 ms apart) while Redis is down: the job waits, untouched.
      await new Promise((r) => setTimeout(r, 1_600));
      expect(await buildStatus(t, buildId)).toBe('queued');
      expect(await outboxRow(t, buildId)).toMatchObject({ status: 'pending', attempts: 0, last_error: null });

      await redis.start();
      const status = await waitFor(
        () => buildStatus(t, buildId),
        (s) => s === 'succeeded',
        20_000,
        200,
      );
      expect(status).toBe('succeeded');
      const row = await waitFor(
        () => outboxRow(t, buildId),
        (r) => r?.status === 'done',
        5_000,
      );
      expect(row).toMatchObject({ status: 'done', attempts: 1, last_error: null });

      // Nothing recorded was lost: every build of the deployment ended succeeded, every job done.
      const builds = await t.sql<{ status: string }>(
        `SELECT status FROM deployment_builds WHERE deployment_id = $1 ORDER BY id`,
        [deploymentId],
      );
      expect(builds.map((b) => b.status)).toEqual(['succeeded', 'succeeded']);
      const jobs = await t.sql<{ status: string }>(`SELECT status FROM job_outbox ORDER BY id`);
      expect(jobs.map((j) => j.status)).toEqual(['done', 'done']);
    }, 30_000);

    it('is ready again and creates deployments once Redis is back', async () => {
      const ready = await waitFor(
        () => t.http().get('/health/ready'),
        (r) => r.status === 200,
        10_000,
      );
      expect(ready.status).toBe(200);
      expect(ready.body.redis).toEqual({ status: 'up' });

      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('After the outage'));
      expect(res.status).toBe(200);
      const [build] = await t.sql<{ id: number }>(
        `SELECT id FROM deployment_builds WHERE deployment_id = $1`,
        [res.body.id],
      );
      expect(
        await waitFor(
          () => buildStatus(t, build.id),
          (s) => s === 'succeeded',
          10_000,
        ),
      ).toBe('succeeded');
    }, 25_000);
  });

  describe('with Redis unreachable at start-up', () => {
    let redis: RedisProcess;
    let t: TestApp;

    beforeAll(async () => {
      // A port nothing listens on yet; the server is started later on it.
      redis = new RedisProcess(await freePort());
      t = await startApp({ REDIS_URL: redis.url });
    });

    afterAll(async () => {
      // Redis is stopped before the app closes here: closing Bull queues of an app that booted
      // without Redis, after Redis appeared, leaks an unhandled "Connection is closed." rejection
      // from Bull's pause/whenCurrentJobsFinished (a shutdown issue, reported separately, that
      // is not what this block tests).
      try {
        await redis.kill();
      } finally {
        if (t) await withTimeout(t.close(), 15_000);
      }
    }, 30_000);

    it('starts, serves reads, reports redis down and refuses creation with 503', async () => {
      expect((await t.http().get('/api/v1/deployments').set(bearer(t.admin.token))).status).toBe(200);
      const ready = await t.http().get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({
        status: 'error',
        database: { status: 'up' },
        redis: { status: 'down' },
      });

      const before = await counts(t);
      const started = Date.now();
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('Never reached Redis'));
      expect(res.status).toBe(503);
      expectErrorShape(res.body, 503, 'queue_unavailable');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await counts(t)).toEqual(before);
    }, 10_000);

    it('recovers once Redis starts: ready, creating works and the build succeeds', async () => {
      await redis.start();
      const ready = await waitFor(
        () => t.http().get('/health/ready'),
        (r) => r.status === 200,
        10_000,
        200,
      );
      expect(ready.status).toBe(200);
      expect(ready.body.redis).toEqual({ status: 'up' });

      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('After Redis started'));
      expect(res.status).toBe(200);
      const [build] = await t.sql<{ id: number }>(
        `SELECT id FROM deployment_builds WHERE deployment_id = $1`,
        [res.body.id],
      );
      expect(
        await waitFor(
          () => buildStatus(t, build.id),
          (s) => s === 'succeeded',
          15_000,
          200,
        ),
      ).toBe('succeeded');
      expect(
        (
          await waitFor(
            () => outboxRow(t, build.id),
            (r) => r?.status === 'done',
            5_000,
          )
        ).status,
      ).toBe('done');
    }, 30_000);
  });

  describe('in-process mode (no REDIS_URL)', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startApp({ REDIS_URL: '' });
    });
    afterAll(() => t.close());

    it('runs without Redis', () => {
      expect(t.config.queue.redisUrl).toBeNull();
    });

    it('reports redis not-configured on /health/ready with 200', async () => {
      const ready = await t.http().get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({
        status: 'ok',
        database: { status: 'up' },
        redis: { status: 'not-configured', detail: expect.any(String) },
      });
    });

    it('creates a deployment and runs its build in-process to succeeded', async () => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentBody('In-process'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: expect.any(Number), name: 'In-process', creationStep: 'project' });
      const [build] = await t.sql<{ id: number }>(
        `SELECT id FROM deployment_builds WHERE deployment_id = $1`,
        [res.body.id],
      );
      expect(
        await waitFor(
          () => buildStatus(t, build.id),
          (s) => s === 'succeeded',
          10_000,
        ),
      ).toBe('succeeded');
      const row = await waitFor(
        () => outboxRow(t, build.id),
        (r) => r?.status === 'done',
        5_000,
      );
      expect(row).toMatchObject({ status: 'done', attempts: 1, last_error: null });
    });

    it('runs a pending outbox job through the relay', async () => {
      const [d] = await t.sql<{ id: number }>(`SELECT id FROM deployments ORDER BY id LIMIT 1`);
      const buildId = await recordUndispatchedBuild(t, d.id, t.admin.accountId);
      expect(
        await waitFor(
          () => buildStatus(t, buildId),
          (s) => s === 'succeeded',
          10_000,
        ),
      ).toBe('succeeded');
      expect(
        (
          await waitFor(
            () => outboxRow(t, buildId),
            (r) => r?.status === 'done',
            5_000,
          )
        ).status,
      ).toBe('done');
    });
  });
});
