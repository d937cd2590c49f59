import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '@nestjs/common';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { gitCli } from '../support/git-cli.js';
import { QueueConsumers, QueueWatch } from '../../src/core/queue/queue-consumers.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

interface Node {
  path: string;
  type: 'file' | 'directory';
  content?: string;
  children: Node[];
}

/**
 * The HTTP contract of the data-model routes (files, dev mode, branches, merges, uploads, validate
 * and build status): what each answers (status and shape), 401/403/404, validation, the error
 * shape, and readiness while builds wait for a worker. The rules behind them (dev mode, pending
 * changes, paths and limits, branches, merges, uploads, builds with the real compiler) are tested
 * below HTTP in test/service/data-model.service.spec.ts.
 *
 * A part of model-git.e2e-spec.ts (once its own file, data-model.e2e-spec.ts): its own describe,
 * app and database.
 */
describe('data model routes over HTTP', () => {
  let t: TestApp;
  let developer: Actor;
  let viewer: Actor;
  let other: Actor;
  let otherDeployment: number;

  const base = (id: number) => `/build/api/v1/deployments/${id}`;
  const createDeployment = async (actor: Actor = t.admin, overrides: Record<string, unknown> = {}) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput(overrides));
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const put = (
    id: number,
    files: Array<{ path: string; content: string }>,
    actor: Actor = developer,
    extra = {},
  ) =>
    t
      .http()
      .put(`${base(id)}/data-model/files`)
      .set(bearer(actor.token))
      .send({ files, ...extra });
  const list = async (id: number, actor: Actor = developer) => {
    const res = await t
      .http()
      .get(`${base(id)}/data-model/files`)
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body.items as Node[];
  };
  /** The status and body of an answer, to compare both at once. */
  const answer = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });
  const OK = { success: true };
  const gitIn = (id: number, ...args: string[]) =>
    gitCli([`--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`, ...args]);
  /** A user of the admin's account holding exactly `actions`, through a custom role. */
  const userWithActions = async (actions: string[]): Promise<Actor> => {
    const role = await t
      .http()
      .post('/api/v1/roles')
      .set(bearer(t.admin.token))
      .send({
        name: `r${Math.random().toString(36).slice(2, 8)}`,
        policies: [{ resourceType: 'Global', actions, resources: ['All'] }],
      });
    if (role.status !== 200) throw new Error(`role: ${role.status} ${JSON.stringify(role.body)}`);
    const user = await newUser(t, t.admin, {});
    const assign = await t
      .http()
      .put(`/api/v1/roles/${role.body.id}/users/${user.userId}`)
      .set(bearer(t.admin.token))
      .send({});
    if (assign.status !== 204) throw new Error(`assign: ${assign.status} ${JSON.stringify(assign.body)}`);
    return user;
  };

  beforeAll(async () => {
    // Builds stay queued here (no jobs run in this API, no worker): nothing compiles. A job counts
    // as stalled after an hour, so only the test that ages one sees it.
    t = await startApp({ QUEUE_STALL_SECONDS: '3600' });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
    otherDeployment = await createDeployment(other);
  });
  afterAll(() => t.close());

  describe('what each route answers', () => {
    it('answers entering dev mode, file writes, renames, removals, commit and leaving dev mode', async () => {
      const id = await createDeployment();
      const dev = await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({});
      expect(answer(dev)).toEqual({
        status: 200,
        body: {
          active: true,
          branchName: expect.stringMatching(new RegExp(`^dev-${developer.userId}-[0-9a-f]{8}$`)),
          parentBranch: 'master',
        },
      });
      const write = await put(id, [
        { path: '/model/cubes/a.yml', content: 'a: 1\n' },
        { path: 'model/cubes/b.yml', content: 'b: 2\n' },
      ]);
      expect(answer(write)).toEqual({ status: 200, body: OK });
      const renamed = await t
        .http()
        .post(`${base(id)}/data-model/files/rename`)
        .set(bearer(developer.token))
        .send({ files: [{ path: 'model/cubes/b.yml', newPath: '/model/cubes/c.yml' }] });
      expect(answer(renamed)).toEqual({ status: 200, body: OK });
      const removed = await t
        .http()
        .delete(`${base(id)}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: '/model/cubes/a.yml' }] });
      expect(answer(removed)).toEqual({ status: 200, body: OK });
      const committed = await t
        .http()
        .post(`${base(id)}/commit`)
        .set(bearer(developer.token))
        .send({ message: 'Add c' });
      expect(answer(committed)).toEqual({ status: 200, body: OK });
      expect(await gitIn(id, 'show', `${dev.body.branchName}:model/cubes/c.yml`)).toBe('b: 2');
      const left = await t
        .http()
        .delete(`${base(id)}/dev-mode`)
        .set(bearer(developer.token));
      expect(answer(left)).toEqual({ status: 200, body: OK });
    });

    it('answers the file tree and the branch routes: list, create, staging, merges, delete', async () => {
      const id = await createDeployment();
      const files = await t
        .http()
        .get(`${base(id)}/data-model/files`)
        .set(bearer(developer.token));
      expect(files.status).toBe(200);
      // Pages send the deprecated `data` as the same array as `items`.
      expect(files.body.data).toEqual(files.body.items);
      expect(files.body.items.map((n: Node) => n.path)).toEqual(['/model', '/README.md']);
      expect(files.body.items[1]).toEqual({ path: '/README.md', type: 'file', children: [] });
      expect(files.body.pageInfo).toMatchObject({ hasNextPage: false });

      const created = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'feature/orders' });
      expect(answer(created)).toEqual({
        status: 200,
        body: { active: false, branchName: 'feature/orders', parentBranch: 'master' },
      });
      // Listing needs SchemaRead only.
      const reader = await userWithActions(['SchemaRead', 'DeploymentRead']);
      const listed = await t
        .http()
        .get(`${base(id)}/branches`)
        .set(bearer(reader.token));
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual(listed.body.items);
      expect(listed.body.items.find((b: { name: string }) => b.name === 'feature/orders')).toEqual({
        id: expect.any(Number),
        name: 'feature/orders',
        parentBranch: 'master',
        lastHash: await gitIn(id, 'rev-parse', 'feature/orders'),
        isStagingEnvironmentEnabled: false,
        approvals: 0,
        changesRequested: 0,
      });
      const staging = await t
        .http()
        .put(`${base(id)}/branches/staging-environment`)
        .set(bearer(developer.token))
        .send({ enabled: true, branchName: 'feature/orders' });
      expect(staging.status).toBe(200);
      expect(staging.body.data).toMatchObject({ name: 'feature/orders', isStagingEnvironmentEnabled: true });

      // A dev branch of feature/orders merged into it, then feature/orders into the deploy branch.
      await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({ branchName: 'feature/orders' })
        .expect(200);
      await put(id, [{ path: 'model/cubes/merged.yml', content: 'cubes: []\n' }]).expect(200);
      await t
        .http()
        .post(`${base(id)}/commit`)
        .set(bearer(developer.token))
        .send({})
        .expect(200);
      const merged = await t
        .http()
        .post(`${base(id)}/merge`)
        .set(bearer(developer.token))
        .send({});
      expect(answer(merged)).toEqual({ status: 200, body: { merged: true, branchDeleted: false } });
      const toDefault = await t
        .http()
        .post(`${base(id)}/merge-to-default`)
        .set(bearer(developer.token))
        .send({ branchName: 'feature/orders', removeBranchAfterMerge: true });
      expect(answer(toDefault)).toEqual({ status: 200, body: { merged: true, branchDeleted: true } });
      expect(await gitIn(id, 'show', 'master:model/cubes/merged.yml')).toBe('cubes: []');

      await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'short-lived' })
        .expect(200);
      const deleted = await t
        .http()
        .delete(`${base(id)}/branches`)
        .query({ branchName: 'short-lived' })
        .set(bearer(developer.token));
      expect(answer(deleted)).toEqual({ status: 200, body: OK });
    });

    it('takes an upload as the command-line client sends it: start, a multipart part, finish; and serves file hashes', async () => {
      const id = await createDeployment();
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(developer.token));
      expect(answer(start)).toEqual({
        status: 200,
        body: { deploymentName: 'Sales analytics', transaction: { id: expect.any(String) } },
      });
      const content = 'cubes: []\n';
      const part = await t
        .http()
        .post(`${base(id)}/data-model/upload/file`)
        .set(bearer(developer.token))
        .field('transaction', JSON.stringify(start.body.transaction))
        .field('fileName', 'model/cubes/x.yml')
        .attach('file', Buffer.from(content), 'x.yml');
      expect(answer(part)).toEqual({
        status: 200,
        body: { fileName: 'model/cubes/x.yml', hash: sha1(content) },
      });
      const finish = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(developer.token))
        .send({
          transaction: start.body.transaction,
          files: { 'model/cubes/x.yml': { hash: sha1(content) } },
        });
      expect(answer(finish)).toEqual({
        status: 200,
        body: { lastHash: await gitIn(id, 'rev-parse', 'master') },
      });
      const hashes = await t
        .http()
        .get(`${base(id)}/data-model/file-hashes`)
        .set(bearer(developer.token));
      expect(answer(hashes)).toEqual({ status: 200, body: { 'model/cubes/x.yml': { hash: sha1(content) } } });
    });

    it('answers validate with the verdict: a model that does not compile is 200 with valid: false', async () => {
      // A model whose only file the compiler is never given (Python): its verdict needs no compile.
      const id = await createDeployment();
      const dev = await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({});
      expect(dev.status).toBe(200);
      const removed = await t
        .http()
        .delete(`${base(id)}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: 'model/cubes/orders.yml' }, { path: 'model/views/orders_view.yml' }] });
      expect(removed.status).toBe(200);
      expect((await put(id, [{ path: 'model/globals.py', content: 'x = 1\n' }])).status).toBe(200);
      const res = await t
        .http()
        .get(`${base(id)}/data-model/validate`)
        .query({ devMode: 'true' })
        .set(bearer(developer.token));
      expect(answer(res)).toEqual({
        status: 200,
        body: {
          deploymentId: id,
          branchName: dev.body.branchName,
          mode: 'dev_mode',
          valid: false,
          errors: [{ fileName: 'model/globals.py', message: expect.any(String) }],
          cubesCount: 0,
          impact: [],
        },
      });
    });
  });

  describe('bad input', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
      await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({})
        .expect(200);
    });

    it('refuses unknown fields and an empty write, changing nothing', async () => {
      expectErrorShape(
        (await put(id, [{ path: 'a.yml', content: '1', mode: 'x' } as never])).body,
        400,
        'validation_failed',
      );
      expectErrorShape((await put(id, [], developer, { force: true })).body, 400, 'validation_failed');
      const paths = (await list(id)).map((n) => n.path);
      expect(paths).not.toContain('/a.yml');
    });

    it('refuses branch names git refuses, the dev-branch form and an empty name', async () => {
      for (const name of ['-rf', 'a..b', 'x~1', 'has space', 'end.lock', 'dev-1-0123abcd', '']) {
        const bad = await t
          .http()
          .post(`${base(id)}/branches`)
          .set(bearer(developer.token))
          .send({ name });
        expect(bad.status).toBe(400);
        expect(['invalid_branch_name', 'validation_failed']).toContain(bad.body.code);
      }
    });

    it('refuses deleting a branch with an empty name or none (400)', async () => {
      const del = (branchName: string) =>
        t
          .http()
          .delete(`${base(id)}/branches`)
          .query({ branchName })
          .set(bearer(developer.token));
      expect((await del('')).status).toBe(400);
      expectErrorShape(
        (
          await t
            .http()
            .delete(`${base(id)}/branches`)
            .set(bearer(developer.token))
        ).body,
        400,
        'validation_failed',
      );
    });
  });

  describe('merges', () => {
    it('needs SchemaUpdate to merge into the deploy branch', async () => {
      const id = await createDeployment();
      const devOnly = await userWithActions(['SchemaUpdateDevBranches', 'DeploymentRead']);
      const res = await t
        .http()
        .post(`${base(id)}/merge-to-default`)
        .set(bearer(devOnly.token))
        .send({ branchName: 'to-default' });
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('build status', () => {
    it('says how long a build no worker takes has waited; readiness names its queue until a worker heartbeats', async () => {
      const id = await createDeployment();
      const [{ runId }] = await t.sql<{ runId: string }>(
        `SELECT run_id AS "runId" FROM deployment_builds WHERE deployment_id = $1`,
        [id],
      );
      const watch = t.app.get(QueueWatch);
      const logger = (watch as unknown as { logger: Logger }).logger;
      const warned = jest.spyOn(logger, 'warn');
      const told = jest.spyOn(logger, 'log');
      // Time passes with no worker: the build and its job were recorded two hours ago.
      await t.sql(`UPDATE job_runs SET created_at = created_at - interval '2 hours' WHERE id = $1`, [runId]);
      await t.sql(`UPDATE job_outbox SET created_at = created_at - interval '2 hours' WHERE run_id = $1`, [
        runId,
      ]);
      const res = await t.http().get(`/api/v1/deployments/${id}/build-status`).set(bearer(viewer.token));
      expect(res.body).toMatchObject({ status: 'queued', message: 'Waiting for a worker' });
      expect(res.body.queuedSeconds).toBeGreaterThanOrEqual(7200);
      expect(res.body.queuedSeconds).toBeLessThan(7200 + 600);

      // The API is not ready: the builds queue has a job past QUEUE_STALL_SECONDS and no consumer.
      const stalled = await t.http().get('/health/ready');
      expect(stalled.status).toBe(503);
      expect(stalled.body).toEqual({
        status: 'error',
        database: { status: 'up' },
        redis: { status: 'up' },
        queues: {
          status: 'down',
          detail: expect.stringContaining('queue builds: 1 job waiting'),
          stalled: [{ queue: 'builds', jobs: 1, waitingSeconds: expect.any(Number) }],
        },
      });
      expect(stalled.body.queues.stalled[0].waitingSeconds).toBeGreaterThanOrEqual(7200);
      // The logs say so once, however often it is checked.
      await t.http().get('/health/ready').expect(503);
      await watch.check();
      const warnings = warned.mock.calls.filter(([, message]) => String(message).includes('queue builds:'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0][0]).toMatchObject({ queue: 'builds', jobs: 1 });

      // A worker consuming the queue says so: ready again, and the logs say that too.
      const consumers = t.app.get(QueueConsumers);
      await consumers.beat(['builds']);
      try {
        const ready = await t.http().get('/health/ready');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ status: 'ok', database: { status: 'up' }, redis: { status: 'up' } });
        await watch.check();
        expect(told.mock.calls.some(([fields]) => (fields as { queue?: string }).queue === 'builds')).toBe(
          true,
        );
        // Still queued (the worker has not taken it yet), still waiting.
        const later = await t.http().get(`/api/v1/deployments/${id}/build-status`).set(bearer(viewer.token));
        expect(later.body).toMatchObject({ status: 'queued' });
      } finally {
        await consumers.forget();
        warned.mockRestore();
        told.mockRestore();
        // The aged job goes, so the rest of this file sees no stalled queue.
        await t.sql(`UPDATE job_outbox SET status = 'failed' WHERE run_id = $1`, [runId]);
      }
    });
  });

  describe('GET /api/v1/deployments/{id}/build-status', () => {
    it('needs a token (401), the deployment in the account (404), a valid id (400), no unknown parameter (400)', async () => {
      const id = await createDeployment();
      const url = `/api/v1/deployments/${id}/build-status`;
      expectErrorShape((await t.http().get(url)).body, 401, 'unauthorized');
      const foreign = await t
        .http()
        .get(`/api/v1/deployments/${otherDeployment}/build-status`)
        .set(bearer(viewer.token));
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
      const badId = await t.http().get(`/api/v1/deployments/abc/build-status`).set(bearer(viewer.token));
      expectErrorShape(badId.body, 400, 'validation_failed');
      const unknown = await t.http().get(`${url}?bogus=1`).set(bearer(viewer.token));
      expectErrorShape(unknown.body, 400, 'validation_failed');
      const guest = await newUser(t, t.admin, { defaultRoles: ['Guest'] });
      expect((await t.http().get(url).set(bearer(guest.token))).status).toBe(403);
    });
  });

  /**
   * `cube deploy` of the reference command-line tool (rust/cube-cli/src/commands/deploy.rs): with
   * `--branch X` it reads `file-hashes?branchName=X`, then sends `branchName` in the JSON bodies of
   * `upload/start` (`{"branchName": X}`, else `{}`) and `upload/finish` (`transaction`, `files`,
   * `autoRemoveFiles`, `commitMessage` with `-m`, and `branchName`); the parts go to `upload/file`
   * as multipart `transaction` (the transaction as JSON), `fileName` and `file`. Without `--branch`
   * it names no branch: its help says the upload goes to the active dev-mode branch, else the
   * deploy branch.
   */
  describe('uploads as `cube deploy` sends them', () => {
    /** The whole `cube deploy` exchange; `branch` is `--branch`. Answers each step's response. */
    const deploy = async (
      id: number,
      files: Record<string, string>,
      opts: { branch?: string; message?: string; actor?: Actor } = {},
    ) => {
      const actor = opts.actor ?? developer;
      const query = opts.branch === undefined ? {} : { branchName: opts.branch };
      const hashes = await t
        .http()
        .get(`${base(id)}/data-model/file-hashes`)
        .query(query)
        .set(bearer(actor.token));
      const body: Record<string, unknown> = opts.branch === undefined ? {} : { branchName: opts.branch };
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(actor.token))
        .send(body);
      const parts = [];
      for (const [name, content] of Object.entries(files)) {
        if (hashes.body[name]?.hash === sha1(content)) continue;
        parts.push(
          await t
            .http()
            .post(`${base(id)}/data-model/upload/file`)
            .set(bearer(actor.token))
            .field('transaction', JSON.stringify(start.body.transaction))
            .field('fileName', name)
            .attach('file', Buffer.from(content), path.basename(name)),
        );
      }
      const finishBody: Record<string, unknown> = {
        transaction: start.body.transaction,
        files: Object.fromEntries(Object.entries(files).map(([name, c]) => [name, { hash: sha1(c) }])),
        autoRemoveFiles: true,
        ...(opts.message === undefined ? {} : { commitMessage: opts.message }),
        ...body,
      };
      const finish = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(actor.token))
        .send(finishBody);
      return { hashes, start, parts, finish };
    };
    const uploads = async (id: number) =>
      (
        await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM model_uploads WHERE deployment_id = $1`, [
          id,
        ])
      )[0].n;

    it('with --branch: takes branchName from the bodies of upload/start and upload/finish', async () => {
      const id = await createDeployment();
      const branch = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'cli/release' });
      expect(branch.status).toBe(200);
      const master = await gitIn(id, 'rev-parse', 'master');
      const files = { 'model/cubes/cli.yml': 'cubes: []\n' };
      const run = await deploy(id, files, { branch: 'cli/release', message: 'From cube deploy' });
      expect(answer(run.start)).toEqual({
        status: 200,
        body: { deploymentName: 'Sales analytics', transaction: { id: expect.any(String) } },
      });
      expect(run.parts.map((p) => p.status)).toEqual([200]);
      expect(answer(run.finish)).toEqual({
        status: 200,
        body: { lastHash: await gitIn(id, 'rev-parse', 'cli/release') },
      });
      // The branch holds exactly the upload (the starter files were pruned); the deploy branch is untouched.
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', 'cli/release')).toBe('model/cubes/cli.yml');
      expect(await gitIn(id, 'log', '-1', '--format=%s', 'cli/release')).toBe('From cube deploy');
      expect(await gitIn(id, 'rev-parse', 'master')).toBe(master);
      const builds = await t.sql(
        `SELECT branch FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'upload'`,
        [id],
      );
      expect(builds).toEqual([{ branch: 'cli/release' }]);
      // The next run diffs against that branch: nothing changed, nothing is sent.
      const again = await deploy(id, files, { branch: 'cli/release' });
      expect(again.hashes.body).toEqual({
        'model/cubes/cli.yml': { hash: sha1(files['model/cubes/cli.yml']) },
      });
      expect(again.parts).toEqual([]);
      expect(again.finish.status).toBe(200);
    });

    it('without --branch: to your active dev-mode branch, else the deploy branch (live=false: the deploy branch)', async () => {
      const id = await createDeployment();
      const dev = await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({});
      expect(dev.status).toBe(200);
      const devBranch = dev.body.branchName as string;
      const master = await gitIn(id, 'rev-parse', 'master');

      const inDevMode = await deploy(id, { 'model/cubes/mine.yml': 'cubes: []\n' });
      expect(inDevMode.finish.status).toBe(200);
      expect(inDevMode.finish.body).toEqual({ lastHash: await gitIn(id, 'rev-parse', devBranch) });
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', devBranch)).toBe('model/cubes/mine.yml');
      expect(await gitIn(id, 'rev-parse', 'master')).toBe(master);
      // file-hashes without a branch reads the same branch.
      const hashes = await t
        .http()
        .get(`${base(id)}/data-model/file-hashes`)
        .set(bearer(developer.token));
      expect(hashes.body).toEqual({ 'model/cubes/mine.yml': { hash: sha1('cubes: []\n') } });

      // live=false names the deploy branch, in dev mode too.
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .query({ live: 'false' })
        .set(bearer(developer.token));
      expect(start.status).toBe(200);
      const kept = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(developer.token))
        .send({ transaction: start.body.transaction, files: {}, autoRemoveFiles: false, commitMessage: 'x' });
      expect(kept.status).toBe(200);
      expect(kept.body).toEqual({ lastHash: master });

      // Out of dev mode, the deploy branch.
      expect(
        (
          await t
            .http()
            .delete(`${base(id)}/dev-mode`)
            .set(bearer(developer.token))
        ).status,
      ).toBe(200);
      const outside = await deploy(id, { 'model/cubes/shared.yml': 'cubes: []\n' });
      expect(outside.finish.status).toBe(200);
      expect(outside.finish.body).toEqual({ lastHash: await gitIn(id, 'rev-parse', 'master') });
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', 'master')).toBe('model/cubes/shared.yml');
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', devBranch)).toBe('model/cubes/mine.yml');
    });

    it('refuses a branch named twice differently, or not the upload’s, with 400, changing nothing', async () => {
      const id = await createDeployment();
      expect(
        (
          await t
            .http()
            .post(`${base(id)}/branches`)
            .set(bearer(developer.token))
            .send({ name: 'other' })
        ).status,
      ).toBe(200);
      const before = await uploads(id);
      const twice = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .query({ branchName: 'master' })
        .set(bearer(developer.token))
        .send({ branchName: 'other' });
      expect(twice.status).toBe(400);
      expectErrorShape(twice.body, 400, 'validation_failed');
      expect(JSON.stringify(twice.body.message)).toContain('name different branches');
      expect(await uploads(id)).toBe(before);

      // The same name in both is one branch.
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .query({ branchName: 'master' })
        .set(bearer(developer.token))
        .send({ branchName: 'master' });
      expect(start.status).toBe(200);
      const head = await gitIn(id, 'rev-parse', 'master');
      const finish = (query: Record<string, string>, branchName?: string) =>
        t
          .http()
          .post(`${base(id)}/data-model/upload/finish`)
          .query(query)
          .set(bearer(developer.token))
          .send({
            transaction: start.body.transaction,
            files: {},
            autoRemoveFiles: true,
            ...(branchName === undefined ? {} : { branchName }),
          });
      for (const [query, branchName] of [
        [{ branchName: 'master' }, 'other'],
        [{}, 'other'],
        [{ branchName: 'other' }, undefined],
      ] as Array<[Record<string, string>, string | undefined]>) {
        const res = await finish(query, branchName);
        expect({ query, branchName, status: res.status }).toEqual({ query, branchName, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      // Nothing was committed and the upload is still open: the right name finishes it.
      expect(await gitIn(id, 'rev-parse', 'master')).toBe(head);
      const done = await finish({ branchName: 'master' }, 'master');
      expect(done.status).toBe(200);
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', 'master')).toBe('');
    });

    it('refuses a bad branch name in the body (400 invalid_branch_name) and fields start does not take', async () => {
      const id = await createDeployment();
      const before = await uploads(id);
      for (const branchName of ['a..b', 'refs/heads/master', '-rf', 'HEAD']) {
        const res = await t
          .http()
          .post(`${base(id)}/data-model/upload/start`)
          .set(bearer(developer.token))
          .send({ branchName });
        expect({ branchName, status: res.status }).toEqual({ branchName, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
        const finish = await t
          .http()
          .post(`${base(id)}/data-model/upload/finish`)
          .set(bearer(developer.token))
          .send({ transaction: { id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' }, files: {}, branchName });
        expect({ branchName, status: finish.status }).toEqual({ branchName, status: 400 });
        expectErrorShape(finish.body, 400, 'invalid_branch_name');
      }
      for (const body of [{ live: true }, { branchName: 7 }, { transaction: {} }]) {
        const res = await t
          .http()
          .post(`${base(id)}/data-model/upload/start`)
          .set(bearer(developer.token))
          .send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      expect(await uploads(id)).toBe(before);
    });
  });

  describe('access and bad input on every route', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    // Every row has a body (null: none), so jest never mistakes the last argument for `done`.
    const routes: Array<[string, string, Record<string, unknown> | null]> = [
      ['get', '/data-model/files', null],
      ['put', '/data-model/files', { files: [{ path: 'a.yml', content: 'a' }] }],
      ['delete', '/data-model/files', { files: [{ path: 'a.yml' }] }],
      ['post', '/data-model/files/rename', { files: [{ path: 'a.yml', newPath: 'b.yml' }] }],
      ['post', '/data-model/upload/start', null],
      ['post', '/data-model/upload/finish', { transaction: { id: 'x' }, files: {} }],
      ['get', '/data-model/file-hashes', null],
      ['get', '/data-model/validate', null],
      ['post', '/dev-mode', {}],
      ['delete', '/dev-mode', null],
      ['get', '/branches', null],
      ['post', '/branches', { name: 'b' }],
      ['delete', '/branches?branchName=b', null],
      ['put', '/branches/staging-environment', { enabled: true, branchName: 'b' }],
      ['post', '/commit', {}],
      ['post', '/pull', { branchName: 'master' }],
      ['post', '/merge', {}],
      ['post', '/merge-to-default', {}],
      ['post', '/github/connect', { installationId: 1, name: 'acme/model' }],
    ];

    it.each(routes)('%s %s: 401 without a token', async (method, route, body) => {
      const res = await (t.http() as unknown as Record<string, (u: string) => import('supertest').Test>)
        [method](`${base(id)}${route}`)
        .send(body ?? {});
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it.each(routes)('%s %s: 403 without the action', async (method, route, body) => {
      const res = await (t.http() as unknown as Record<string, (u: string) => import('supertest').Test>)
        [method](`${base(id)}${route}`)
        .set(bearer(viewer.token))
        .send(body ?? {});
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it.each(routes)('%s %s: 404 for another account’s deployment', async (method, route, body) => {
      const res = await (t.http() as unknown as Record<string, (u: string) => import('supertest').Test>)
        [method](`${base(otherDeployment)}${route}`)
        .set(bearer(developer.token))
        .send(body ?? {});
      expectErrorShape(res.body, 404, 'deployment_not_found');
    });

    it.each(routes)(
      '%s %s: 400 for a bad deployment id or an unknown parameter',
      async (method, route, body) => {
        const call = (url: string) =>
          (t.http() as unknown as Record<string, (u: string) => import('supertest').Test>)
            [method](url)
            .set(bearer(developer.token))
            .send(body ?? {});
        expectErrorShape(
          (await call(`/build/api/v1/deployments/abc${route}`)).body,
          400,
          'validation_failed',
        );
        const sep = route.includes('?') ? '&' : '?';
        expectErrorShape((await call(`${base(id)}${route}${sep}bogus=1`)).body, 400, 'validation_failed');
      },
    );

    it('refuses branchName with devMode on validate, an empty dev-mode branch, and unknown body fields', async () => {
      const both = await t
        .http()
        .get(`${base(id)}/data-model/validate`)
        .query({ branchName: 'master', devMode: 'true' })
        .set(bearer(developer.token));
      expectErrorShape(both.body, 400, 'validation_failed');
      const empty = await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(developer.token))
        .send({ branchName: '' });
      expectErrorShape(empty.body, 400, 'invalid_branch_name');
      const unknown = await t
        .http()
        .post(`${base(id)}/commit`)
        .set(bearer(developer.token))
        .send({ messages: 'x' });
      expectErrorShape(unknown.body, 400, 'validation_failed');
    });
  });
});
