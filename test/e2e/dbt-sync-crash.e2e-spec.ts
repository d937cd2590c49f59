import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutboxRelay } from '../../src/core/queue/outbox.relay.js';
import { DBT_FIXTURES } from '../fixtures/dbt/manifests.js';
import { bearer, startApp, type TestApp } from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';
import { Workers } from '../support/workers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

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
  let workers: Workers;
  let id: number;
  const base = () => `/api/v1/deployments/${id}`;
  const admin = () => bearer(t.admin.token);

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
    workers = await Workers.open(t, { DBT_GIT_PROTOCOLS: 'file' });
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
    await workers?.close();
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

    await workers.start();
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
    const worker = workers.running() ?? (await workers.start());
    // Stop the sync in the middle, deterministically: its commit moves the branch's ref, then the
    // unit of work recording the branch waits behind a lock this test holds on model_branches.
    await workers.pauseWritesTo('model_branches');
    const res = await t.http().post(`${base()}/dbt-sync`).set(admin()).send({});
    expect(res.status).toBe(200);
    const { syncJobId, branchName } = res.body as { syncJobId: string; branchName: string };
    const blocked = await workers.waitForBlockedWorker(30_000);
    expect(blocked).toHaveLength(1);
    const session = blocked[0].pid;
    expect(await runOf(syncJobId)).toMatchObject({ status: 'running', attempts: 1, phase: 'branch-commit' });
    // The ref moved already; nothing recorded it yet.
    const moved = gitIn('rev-parse', `refs/heads/${branchName}`);
    expect(moved).toMatch(/^[0-9a-f]{40}$/);

    await workers.killBlocked(worker, session);
    expect(await runOf(syncJobId)).toMatchObject({ status: 'running', attempts: 1, finished_at: null });
    expect(
      await t.sql(`SELECT 1 FROM model_branches WHERE deployment_id = $1 AND name = $2`, [id, branchName]),
    ).toEqual([]);

    // Time passes: the dead worker's leases run out. A new worker and one relay pass finish it.
    const runId = (await runOf(syncJobId)).id;
    await workers.expireLeases(runId);
    await workers.start();
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
