import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { OutboxRelay } from '../../src/core/queue/outbox.relay.js';
import { DBT_FIXTURES } from '../fixtures/dbt/manifests.js';
import { bearer, startApp, type TestApp } from '../support/app.js';
import { REDIS_URL } from '../support/database.js';
import { deploymentInput, waitFor } from '../support/factories.js';
import { startProcess, type Proc } from '../support/process.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const WORKER = path.join(process.env.TEST_DIST_DIR ?? 'dist', 'src/worker.js');
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'dbt dev',
  GIT_AUTHOR_EMAIL: 'dbt@example.test',
  GIT_COMMITTER_NAME: 'dbt dev',
  GIT_COMMITTER_EMAIL: 'dbt@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const run = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

/** A bare repository whose `main` holds a dbt project with its compiled manifest; its file:// URL. */
function dbtRepository(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dbt-repo-'));
  const bare = path.join(root, 'dbt.git');
  run(root, 'init', '--bare', '--quiet', bare);
  const work = path.join(root, 'work');
  fs.mkdirSync(path.join(work, 'target'), { recursive: true });
  run(work, 'init', '--quiet');
  fs.writeFileSync(path.join(work, 'dbt_project.yml'), 'name: shop\n');
  fs.copyFileSync(path.join(DBT_FIXTURES, 'cube_dbt/manifest.json'), path.join(work, 'target/manifest.json'));
  run(work, 'add', '-A');
  run(work, 'commit', '--quiet', '-m', 'dbt project');
  run(work, 'push', '--quiet', bare, 'HEAD:refs/heads/main');
  return `file://${bare}`;
}

/**
 * dbt syncs run by worker processes (`node dist/src/worker.js`): a sync cancelled while no worker
 * runs never starts, and a worker killed (kill -9) in the middle of a sync, after its commit
 * moved the branch but before the unit of work recording it committed, leaves one effective run:
 * one branch, one branch row, one build.
 */
describe('dbt sync with worker processes', () => {
  let t: TestApp;
  let redis: Redis;
  let db: Client;
  let id: number;
  const workers: Proc[] = [];
  const base = () => `/api/v1/deployments/${id}`;
  const admin = () => bearer(t.admin.token);

  async function startWorker(): Promise<Proc> {
    const worker = startProcess(WORKER, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: t.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: t.config.queue.prefix,
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      REPOS_DIR: t.config.dataModel.reposDir,
      DBT_GIT_PROTOCOLS: 'file',
      SECRETS_KEY: t.config.secretsKey.toString('base64'),
    });
    workers.push(worker);
    await worker.waitFor(/worker started/, 60_000);
    return worker;
  }

  const relay = () => t.app.get(OutboxRelay).relayOnce();
  const status = async (syncJobId: string) =>
    (await t.http().get(`${base()}/dbt-sync/${syncJobId}`).set(admin())).body as Json;
  const runOf = async (syncJobId: string) =>
    (
      await t.sql<{
        id: string;
        status: string;
        attempts: number;
        phase: string | null;
        finished_at: Date | null;
      }>(
        `SELECT r.id, r.status, r.attempts, r.phase, r.finished_at FROM job_runs r
         JOIN dbt_syncs s ON s.run_id = r.id WHERE s.id = $1`,
        [syncJobId],
      )
    )[0];
  const gitIn = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`, ...args], {
      encoding: 'utf8',
    }).trim();

  beforeAll(async () => {
    // This process records and hands over jobs only; worker processes run them, and the test
    // drives the relay itself.
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'false',
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      DBT_GIT_PROTOCOLS: 'file',
    });
    redis = new Redis(REDIS_URL);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(admin())
      .send(deploymentInput({ name: 'dbt crash' }));
    id = res.body.id;
    const put = await t
      .http()
      .put(`${base()}/dbt-integration`)
      .set(admin())
      .send({ repositoryUrl: dbtRepository(), branch: 'main' });
    expect(put.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    for (const w of workers)
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exit));
    if (redis) {
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: `${t.config.queue.prefix}:*`, count: 500 }))
        keys.push(...(batch as string[]));
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    await db?.end();
    await t?.close();
  }, 30_000);

  it('cancels a queued sync at once; a worker started later does not run it', async () => {
    const res = await t.http().post(`${base()}/dbt-sync`).set(admin()).send({});
    expect(res.status).toBe(200);
    expect(await status(res.body.syncJobId)).toMatchObject({
      status: 'INITIALIZING',
      progress: { stage: 'INITIALIZING', percentComplete: 0, message: 'Waiting for a worker' },
    });
    const cancel = await t.http().delete(`${base()}/dbt-sync/${res.body.syncJobId}`).set(admin());
    expect(cancel.body).toEqual({
      message: `dbt sync ${res.body.syncJobId} was cancelled before it started`,
    });

    await startWorker();
    // The worker runs the deployment's first build (queued before it started) and takes the
    // cancelled sync's job, which finds nothing to do.
    const [build] = await t.sql<{ run_id: string }>(
      `SELECT run_id FROM deployment_builds WHERE deployment_id = $1`,
      [id],
    );
    await waitFor(
      () => t.sql<{ status: string }>(`SELECT status FROM job_runs WHERE id = $1`, [build.run_id]),
      (rows) => rows[0].status === 'succeeded',
      60_000,
      200,
    );
    const jobs = await waitFor(
      () =>
        t.sql<{ status: string }>(`SELECT o.status FROM job_outbox o WHERE o.run_id = $1`, [
          res.body.workflowId.split(':')[1],
        ]),
      (rows) => rows.every((r) => r.status === 'done'),
      20_000,
      200,
    );
    expect(jobs).toEqual([{ status: 'done' }]);
    expect(await runOf(res.body.syncJobId)).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(await status(res.body.syncJobId)).toMatchObject({
      status: 'FAILED',
      error: expect.stringMatching(/Cancelled/),
    });
    const item = ((await t.http().get(`${base()}/dbt-sync`).set(admin())).body.items as Json[]).find(
      (r) => r.syncJobId === res.body.syncJobId,
    )!;
    expect(item).toMatchObject({ status: 'CANCELLED', phases: null, durationMs: expect.any(Number) });
    expect(gitIn('for-each-ref', `refs/heads/${res.body.branchName}`)).toBe('');
    const lines = await t.http().get(`${base()}/dbt-sync/${res.body.syncJobId}/logs`).set(admin());
    expect(lines.body.items).toEqual([]);
  }, 120_000);

  it('finishes a sync once when its worker is killed (kill -9) after moving the branch', async () => {
    const worker =
      workers.find((w) => w.child.exitCode === null && w.child.signalCode === null) ?? (await startWorker());
    // Stop the sync in the middle, deterministically: its commit moves the branch's ref, then the
    // unit of work recording the branch waits behind a lock this test holds on model_branches.
    await db.query('BEGIN');
    await db.query('LOCK TABLE model_branches IN SHARE MODE');
    const res = await t.http().post(`${base()}/dbt-sync`).set(admin()).send({});
    expect(res.status).toBe(200);
    const { syncJobId, branchName } = res.body as { syncJobId: string; branchName: string };
    const blocked = await waitFor(
      async () =>
        (
          await db.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'platform-api:worker'
               AND wait_event_type = 'Lock'`,
          )
        ).rows,
      (rows) => rows.length === 1,
      30_000,
      100,
    );
    expect(blocked).toHaveLength(1);
    const session = blocked[0].pid;
    expect(await runOf(syncJobId)).toMatchObject({ status: 'running', attempts: 1, phase: 'branch-commit' });
    // The ref moved already; nothing recorded it yet.
    const moved = gitIn('rev-parse', `refs/heads/${branchName}`);
    expect(moved).toMatch(/^[0-9a-f]{40}$/);

    worker.child.kill('SIGKILL');
    await worker.exit;
    await db.query('ROLLBACK');
    await waitFor(
      async () => (await db.query(`SELECT pid FROM pg_stat_activity WHERE pid = $1`, [session])).rows,
      (rows) => rows.length === 0,
      20_000,
      100,
    );
    expect(await runOf(syncJobId)).toMatchObject({ status: 'running', attempts: 1, finished_at: null });
    expect(
      await t.sql(`SELECT 1 FROM model_branches WHERE deployment_id = $1 AND name = $2`, [id, branchName]),
    ).toEqual([]);

    // Time passes: the dead worker's leases run out. A new worker and one relay pass finish it.
    const runId = (await runOf(syncJobId)).id;
    await t.sql(`UPDATE job_runs SET lease_until = now() - interval '1 second' WHERE id = $1`, [runId]);
    await t.sql(`UPDATE job_outbox SET lease_until = now() - interval '1 second' WHERE run_id = $1`, [runId]);
    await startWorker();
    await relay();
    const done = await waitFor(
      () => status(syncJobId),
      (s) => s.status === 'COMPLETED' || s.status === 'FAILED',
      60_000,
      200,
    );
    expect(done.status).toBe('COMPLETED');
    expect(await runOf(syncJobId)).toMatchObject({ status: 'succeeded', attempts: 2 });

    // One effective run: the commit the dead attempt made is the branch (the retry found the same
    // tree), one branch row, one build of it, one sync.
    expect(gitIn('rev-parse', `refs/heads/${branchName}`)).toBe(moved);
    expect(gitIn('for-each-ref', '--format=%(refname)', 'refs/heads/dbt-sync/').split('\n')).toEqual([
      `refs/heads/${branchName}`,
    ]);
    expect(
      await t.sql(`SELECT name FROM model_branches WHERE deployment_id = $1 AND name LIKE 'dbt-sync/%'`, [
        id,
      ]),
    ).toEqual([{ name: branchName }]);
    expect(
      await t.sql(
        `SELECT trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND branch = $2`,
        [id, branchName],
      ),
    ).toEqual([{ trigger: 'dbt-sync', commit_sha: moved }]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM dbt_syncs WHERE deployment_id = $1`, [id])).toEqual([
      { n: 2 },
    ]);

    const item = ((await t.http().get(`${base()}/dbt-sync`).set(admin())).body.items as Json[]).find(
      (r) => r.syncJobId === syncJobId,
    )!;
    expect(item).toMatchObject({ status: 'COMPLETED', durationMs: expect.any(Number) });
    expect((item.phases as Json[]).map((p) => [p.phase, p.outcome])).toEqual([
      ['repo-clone', 'ok'],
      ['manifest-parse', 'ok'],
      ['cube-generate', 'ok'],
      ['branch-commit', 'ok'],
      ['finalize', 'ok'],
    ]);
    // Both attempts' lines, in order; the second ran every phase.
    const lines = (await t.http().get(`${base()}/dbt-sync/${syncJobId}/logs`).set(admin())).body
      .items as Json[];
    const closing = lines.filter((l) => l.durationMs !== null).map((l) => l.phase);
    expect(closing.slice(-5)).toEqual([
      'repo-clone',
      'manifest-parse',
      'cube-generate',
      'branch-commit',
      'finalize',
    ]);
    const attempts = await t.sql<{ attempt: number }>(
      `SELECT DISTINCT attempt FROM job_run_logs WHERE run_id = $1 ORDER BY attempt`,
      [runId],
    );
    expect(attempts).toEqual([{ attempt: 1 }, { attempt: 2 }]);
  }, 180_000);
});
