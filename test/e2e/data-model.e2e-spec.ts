import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
import { startProcess } from '../support/process.js';
import type { Logger } from '@nestjs/common';
import { QueueConsumers, QueueWatch } from '../../src/core/queue/queue-consumers.js';
import { ModelUploads } from '../../src/modules/data-model/model-uploads.service.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

interface Node {
  path: string;
  type: 'file' | 'directory';
  content?: string;
  children: Node[];
}

/** Every file path of a tree. */
const filePaths = (nodes: Node[]): string[] =>
  nodes.flatMap((n) => (n.type === 'file' ? [n.path] : filePaths(n.children)));

/** The content of each file of a tree, by path. */
const fileContents = (nodes: Node[], out: Record<string, string> = {}): Record<string, string> => {
  for (const n of nodes) {
    if (n.type === 'file') out[n.path] = n.content ?? '';
    else fileContents(n.children, out);
  }
  return out;
};

const STARTER = ['/README.md', '/model/cubes/orders.yml', '/model/views/orders_view.yml'];

describe('data model on git', () => {
  let t: TestApp;
  let developer: Actor;
  let analyst: Actor;
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
  const devMode = async (id: number, actor: Actor = developer, branchName?: string) => {
    const res = await t
      .http()
      .post(`${base(id)}/dev-mode`)
      .set(bearer(actor.token))
      .send(branchName === undefined ? {} : { branchName });
    expect(res.status).toBe(200);
    return res.body as { active: boolean; branchName: string; parentBranch: string };
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
  const list = async (id: number, actor: Actor = developer, query: Record<string, string> = {}) => {
    const res = await t
      .http()
      .get(`${base(id)}/data-model/files`)
      .query({ withContent: 'true', ...query })
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body.items as Node[];
  };
  const commit = (id: number, body: Record<string, unknown> = {}, actor: Actor = developer) =>
    t
      .http()
      .post(`${base(id)}/commit`)
      .set(bearer(actor.token))
      .send(body);
  const repoDir = (id: number) => path.join(t.config.dataModel.reposDir, `${id}.git`);
  const gitIn = (id: number, ...args: string[]) =>
    execFileSync('git', [`--git-dir=${repoDir(id)}`, ...args], { encoding: 'utf8' }).trim();

  beforeAll(async () => {
    // Builds stay queued here (no jobs run in this API, no worker): this file is about git, not
    // compiling. A job counts as stalled after an hour, so only the test that ages one sees it.
    t = await startApp({ QUEUE_STALL_SECONDS: '3600' });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    analyst = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
    otherDeployment = await createDeployment(other);
  });
  afterAll(() => t.close());

  describe('a new deployment', () => {
    it('has a real repository with the starter project committed on its deploy branch', async () => {
      const id = await createDeployment();
      const tree = await list(id);
      expect(filePaths(tree).sort()).toEqual(STARTER);
      expect(gitIn(id, 'log', '--format=%s', 'master')).toBe('Starter project');
      // A developer can clone it and read the files.
      const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'clone-'));
      execFileSync('git', ['clone', '--quiet', repoDir(id), clone]);
      expect(fs.readFileSync(path.join(clone, 'model/cubes/orders.yml'), 'utf8')).toContain('name: orders');
      fs.rmSync(clone, { recursive: true, force: true });
      const [build] = await t.sql<{ branch: string; trigger: string }>(
        `SELECT branch, trigger FROM deployment_builds WHERE deployment_id = $1`,
        [id],
      );
      expect(build).toEqual({ branch: 'master', trigger: 'creation' });
    });

    it('created from GitHub has no starter project', async () => {
      const id = await createDeployment(t.admin, { creationMethod: 'github' });
      expect(await list(id)).toEqual([]);
      const branches = await t
        .http()
        .get(`${base(id)}/branches`)
        .set(bearer(developer.token));
      expect(branches.body.items).toEqual([]);
    });

    it('loses its repository when it is deleted', async () => {
      const id = await createDeployment();
      await list(id);
      expect(fs.existsSync(repoDir(id))).toBe(true);
      const res = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(fs.existsSync(repoDir(id))).toBe(false);
    });
  });

  describe('dev mode, pending changes and commits', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    it('forks a personal dev branch from the deploy branch and makes it active', async () => {
      const dev = await devMode(id);
      expect(dev).toEqual({
        active: true,
        branchName: expect.stringMatching(new RegExp(`^dev-${developer.userId}-[0-9a-f]{8}$`)),
        parentBranch: 'master',
      });
      expect(gitIn(id, 'rev-parse', dev.branchName)).toBe(gitIn(id, 'rev-parse', 'master'));
      // Entering again reuses the branch.
      expect((await devMode(id)).branchName).toBe(dev.branchName);
    });

    it('keeps writes pending on the dev branch until commit records them as one commit', async () => {
      const { branchName } = await devMode(id);
      const before = gitIn(id, 'rev-parse', branchName);
      expect((await put(id, [{ path: '/model/cubes/a.yml', content: 'a: 1\n' }])).body).toEqual({
        success: true,
      });
      expect((await put(id, [{ path: 'model/cubes/b.yml', content: 'b: 2\n' }])).status).toBe(200);
      // The owner sees the pending files; the branch itself has not moved.
      expect(fileContents(await list(id))).toMatchObject({
        '/model/cubes/a.yml': 'a: 1\n',
        '/model/cubes/b.yml': 'b: 2\n',
      });
      expect(gitIn(id, 'rev-parse', branchName)).toBe(before);
      // Another user reading the branch sees the committed state.
      expect(filePaths(await list(id, analyst, { branchName }))).not.toContain('/model/cubes/a.yml');

      const res = await commit(id, { message: 'Add a and b' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(gitIn(id, 'rev-list', '--count', `${before}..${branchName}`)).toBe('1');
      expect(gitIn(id, 'log', '-1', '--format=%s|%ae', branchName)).toBe(`Add a and b|${developer.email}`);
      expect(gitIn(id, 'show', `${branchName}:model/cubes/b.yml`)).toBe('b: 2');
      expect(gitIn(id, 'for-each-ref', 'refs/pending/')).toBe('');
      const builds = await t.sql(
        `SELECT branch, trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'commit'`,
        [id],
      );
      expect(builds).toEqual([
        { branch: branchName, trigger: 'commit', commit_sha: gitIn(id, 'rev-parse', branchName) },
      ]);
      // Nothing pending: a second commit changes nothing.
      expect((await commit(id)).status).toBe(200);
      expect(gitIn(id, 'rev-list', '--count', `${before}..${branchName}`)).toBe('1');
    });

    it('deletes and renames files as pending changes', async () => {
      const { branchName } = await devMode(id);
      const del = await t
        .http()
        .delete(`${base(id)}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: '/model/cubes/a.yml' }] });
      expect(del.status).toBe(200);
      const ren = await t
        .http()
        .post(`${base(id)}/data-model/files/rename`)
        .set(bearer(developer.token))
        .send({ files: [{ path: 'model/cubes/b.yml', newPath: '/model/cubes/c.yml' }] });
      expect(ren.status).toBe(200);
      expect(await commit(id, { branchName })).toMatchObject({ status: 200 });
      const files = gitIn(id, 'ls-tree', '-r', '--name-only', branchName).split('\n');
      expect(files).toContain('model/cubes/c.yml');
      expect(files).not.toContain('model/cubes/a.yml');
      expect(files).not.toContain('model/cubes/b.yml');
    });

    it('refuses deleting or renaming a missing file and changes nothing', async () => {
      const missing = await t
        .http()
        .delete(`${base(id)}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: '/model/cubes/c.yml' }, { path: '/nope.yml' }] });
      expectErrorShape(missing.body, 400, 'file_not_found');
      const clash = await t
        .http()
        .post(`${base(id)}/data-model/files/rename`)
        .set(bearer(developer.token))
        .send({ files: [{ path: '/model/cubes/c.yml', newPath: '/model/cubes/orders.yml' }] });
      expectErrorShape(clash.body, 400, 'file_exists');
      const { branchName } = await devMode(id);
      expect(gitIn(id, 'for-each-ref', `refs/pending/${branchName}`)).toBe('');
    });

    it('accepts writes only on the caller’s personal dev branch', async () => {
      for (const branchName of ['master', (await devMode(id, analyst)).branchName]) {
        const res = await put(id, [{ path: 'x.yml', content: 'x' }], developer, { branchName });
        expectErrorShape(res.body, 400, 'branch_not_writable');
      }
      const outside = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
      expectErrorShape(
        (await put(id, [{ path: 'x.yml', content: 'x' }], outside)).body,
        400,
        'not_in_dev_mode',
      );
    });

    it('leaves dev mode with DELETE, keeping the dev branch and its pending changes', async () => {
      const { branchName } = await devMode(id);
      await put(id, [{ path: 'kept.yml', content: 'kept' }]);
      const res = await t
        .http()
        .delete(`${base(id)}/dev-mode`)
        .set(bearer(developer.token));
      expect(res.body).toEqual({ success: true });
      expectErrorShape((await put(id, [{ path: 'y.yml', content: 'y' }])).body, 400, 'not_in_dev_mode');
      expect((await devMode(id)).branchName).toBe(branchName);
      expect(filePaths(await list(id))).toContain('/kept.yml');
    });

    it('never loses a change when writes to one branch race', async () => {
      await devMode(id);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          put(id, [{ path: `/model/race/f${i}.yml`, content: `n: ${i}\n` }]),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
      const contents = fileContents(await list(id));
      for (let i = 0; i < 12; i++) expect(contents[`/model/race/f${i}.yml`]).toBe(`n: ${i}\n`);
    });
  });

  describe('file paths and limits', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
      await devMode(id);
    });

    it.each([
      ['../escape.yml'],
      ['/model/../../etc/passwd'],
      ['model/./x.yml'],
      ['.git/config'],
      ['model/.GIT/hooks/post-commit'],
      ['a//b.yml'],
      [''],
      ['/'],
      ['model\\win.yml'],
      ['bad\u0001name.yml'],
      ['x'.repeat(1100)],
    ])('refuses %j with 400 invalid_path and changes nothing', async (p) => {
      const res = await put(id, [
        { path: 'ok.yml', content: 'fine' },
        { path: p, content: 'evil' },
      ]);
      expect(res.status).toBe(400);
      expect(['invalid_path', 'validation_failed', 'invalid_characters']).toContain(res.body.code);
      expect(filePaths(await list(id))).not.toContain('/ok.yml');
    });

    it('refuses a file where a directory is, and a directory where a file is, changing nothing', async () => {
      const before = fileContents(await list(id));
      // The starter project has model/cubes/orders.yml: `model` is a directory, the cube a file.
      expectErrorShape((await put(id, [{ path: 'model', content: 'a file' }])).body, 400, 'file_exists');
      expectErrorShape(
        (await put(id, [{ path: 'model/cubes/orders.yml/inner.yml', content: 'x' }])).body,
        400,
        'file_exists',
      );
      expect(fileContents(await list(id))).toEqual(before);
    });

    it('refuses a path listed twice, a file over the size limit and unknown fields', async () => {
      expectErrorShape(
        (
          await put(id, [
            { path: 'a.yml', content: '1' },
            { path: '/a.yml', content: '2' },
          ])
        ).body,
        400,
        'invalid_path',
      );
      const big = 'x'.repeat(t.config.dataModel.maxFileBytes + 1);
      const tooBig = await t
        .http()
        .put(`${base(id)}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: 'big.yml', content: big }] });
      expect([400, 413]).toContain(tooBig.status);
      expectErrorShape(
        (await put(id, [{ path: 'a.yml', content: '1', mode: 'x' } as never])).body,
        400,
        'validation_failed',
      );
      expectErrorShape((await put(id, [], developer, { force: true })).body, 400, 'validation_failed');
      expect(filePaths(await list(id))).not.toContain('/a.yml');
    });
  });

  describe('branches', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    it('creates a shared branch, validates names with git and refuses duplicates', async () => {
      const res = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'feature/orders' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false, branchName: 'feature/orders', parentBranch: 'master' });
      for (const name of ['-rf', 'a..b', 'x~1', 'has space', 'end.lock', 'dev-1-0123abcd', '']) {
        const bad = await t
          .http()
          .post(`${base(id)}/branches`)
          .set(bearer(developer.token))
          .send({ name });
        expect(bad.status).toBe(400);
        expect(['invalid_branch_name', 'validation_failed']).toContain(bad.body.code);
      }
      const dup = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'feature/orders' });
      expectErrorShape(dup.body, 409, 'branch_exists');
      const missing = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'x', from: 'no-such-branch' });
      expectErrorShape(missing.body, 404, 'branch_not_found');
    });

    it('creates one branch when the same name is asked for in parallel', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          t
            .http()
            .post(`${base(id)}/branches`)
            .set(bearer(developer.token))
            .send({ name: 'release/1' }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    });

    it('enters dev mode on a new branch with activate or enterDevMode (the command-line client)', async () => {
      const res = await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(analyst.token))
        .send({ name: 'feature/cli', enterDevMode: true });
      expect(res.body).toEqual({
        active: true,
        branchName: expect.stringMatching(/^dev-\d+-[0-9a-f]{8}$/),
        parentBranch: 'feature/cli',
      });
    });

    it('lists branches with parent, head and staging flag, paged by name', async () => {
      const res = await t
        .http()
        .get(`${base(id)}/branches`)
        .set(bearer(viewerWithSchema.token));
      expect(res.status).toBe(200);
      const names = res.body.items.map((b: { name: string }) => b.name);
      expect(names).toEqual([...names].sort());
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.items.find((b: { name: string }) => b.name === 'feature/orders')).toEqual({
        id: expect.any(Number),
        name: 'feature/orders',
        parentBranch: 'master',
        lastHash: gitIn(id, 'rev-parse', 'feature/orders'),
        isStagingEnvironmentEnabled: false,
      });
      const first = await t
        .http()
        .get(`${base(id)}/branches?first=2`)
        .set(bearer(developer.token));
      expect(first.body.items).toHaveLength(2);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const next = await t
        .http()
        .get(`${base(id)}/branches`)
        .query({ first: 100, after: first.body.pageInfo.endCursor })
        .set(bearer(developer.token));
      expect([...first.body.items, ...next.body.items].map((b: { name: string }) => b.name)).toEqual(names);
    });

    it('turns staging on for shared branches only', async () => {
      const on = await t
        .http()
        .put(`${base(id)}/branches/staging-environment`)
        .set(bearer(developer.token))
        .send({ enabled: true, branchName: 'feature/orders' });
      expect(on.status).toBe(200);
      expect(on.body.data).toMatchObject({ name: 'feature/orders', isStagingEnvironmentEnabled: true });
      const deploy = await t
        .http()
        .put(`${base(id)}/branches/staging-environment`)
        .set(bearer(developer.token))
        .send({ enabled: true, branchName: 'master' });
      expectErrorShape(deploy.body, 400, 'staging_not_allowed');
      const dev = await devMode(id);
      const personal = await t
        .http()
        .put(`${base(id)}/branches/staging-environment`)
        .set(bearer(developer.token))
        .send({ enabled: true, branchName: dev.branchName });
      expectErrorShape(personal.body, 400, 'staging_not_allowed');
    });

    it('deletes a branch: its ref goes, children move to its parent, its viewers back to the deploy branch', async () => {
      await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'parent' });
      await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'parent-child', from: 'parent' });
      const dev = await devMode(id, analyst, 'parent');
      expect(dev.parentBranch).toBe('parent');
      // The developer views `parent` itself (a merge that switches to the parent puts them there).
      const viewerDev = await devMode(id, developer, 'parent');
      const switched = await t
        .http()
        .post(`${base(id)}/merge`)
        .set(bearer(developer.token))
        .send({ branchName: viewerDev.branchName, switchToParentBranch: true });
      expect(switched.body).toEqual({ merged: true, branchDeleted: false });
      expect(
        await t.sql(`SELECT branch_name FROM model_dev_sessions WHERE deployment_id = $1 AND user_id = $2`, [
          id,
          developer.userId,
        ]),
      ).toEqual([{ branch_name: 'parent' }]);
      const res = await t
        .http()
        .delete(`${base(id)}/branches`)
        .query({ branchName: 'parent' })
        .set(bearer(developer.token));
      expect(res.body).toEqual({ success: true });
      expect(gitIn(id, 'for-each-ref', 'refs/heads/parent')).toBe('');
      const [child] = await t.sql(
        `SELECT parent_name FROM model_branches WHERE deployment_id = $1 AND name = 'parent-child'`,
        [id],
      );
      expect(child).toEqual({ parent_name: 'master' });
      const [devRow] = await t.sql(
        `SELECT parent_name FROM model_branches WHERE deployment_id = $1 AND name = $2`,
        [id, dev.branchName],
      );
      expect(devRow).toEqual({ parent_name: 'master' });
      expect(
        await t.sql(`SELECT branch_name FROM model_dev_sessions WHERE deployment_id = $1 AND user_id = $2`, [
          id,
          developer.userId,
        ]),
      ).toEqual([{ branch_name: 'master' }]);
    });

    it('refuses deleting the deploy branch (400), an unknown one (404), an empty name (400)', async () => {
      const del = (branchName: string) =>
        t
          .http()
          .delete(`${base(id)}/branches`)
          .query({ branchName })
          .set(bearer(developer.token));
      expectErrorShape((await del('master')).body, 400, 'deploy_branch_protected');
      expectErrorShape((await del('nope')).body, 404, 'branch_not_found');
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
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    it('merges a dev branch into its parent and reports conflicts without changing anything', async () => {
      const mine = await devMode(id, developer);
      await put(id, [{ path: 'model/cubes/orders.yml', content: 'cubes: [] # mine\n' }], developer);
      await commit(id, { message: 'mine' }, developer);
      const theirs = await devMode(id, analyst);
      await put(id, [{ path: 'model/cubes/orders.yml', content: 'cubes: [] # theirs\n' }], analyst);
      await commit(id, { message: 'theirs' }, analyst);

      const first = await t
        .http()
        .post(`${base(id)}/merge`)
        .set(bearer(developer.token))
        .send({ message: 'Merge mine' });
      expect(first.body).toEqual({ merged: true, branchDeleted: false });
      const head = gitIn(id, 'rev-parse', 'master');
      expect(gitIn(id, 'log', '-1', '--format=%P', 'master').split(' ')).toHaveLength(2);
      expect(gitIn(id, 'show', 'master:model/cubes/orders.yml')).toBe('cubes: [] # mine');

      const conflict = await t
        .http()
        .post(`${base(id)}/merge`)
        .set(bearer(analyst.token))
        .send({});
      expectErrorShape(conflict.body, 409, 'merge_conflict');
      expect(conflict.body.message).toContain('model/cubes/orders.yml');
      expect(gitIn(id, 'rev-parse', 'master')).toBe(head);
      expect(mine.branchName).not.toBe(theirs.branchName);
    });

    it('squashes, switches to the parent and deletes the branch on request', async () => {
      const { branchName } = await devMode(id, analyst, 'master');
      await put(id, [{ path: 'model/cubes/new.yml', content: 'cubes: []\n' }], analyst);
      // The analyst's dev branch conflicts with master (see above): start clean on a new branch.
      await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(analyst.token))
        .send({ name: 'squash-me', enterDevMode: true });
      await put(id, [{ path: 'model/cubes/one.yml', content: '1\n' }], analyst);
      await commit(id, {}, analyst);
      await put(id, [{ path: 'model/cubes/two.yml', content: '2\n' }], analyst);
      await commit(id, {}, analyst);
      const before = gitIn(id, 'rev-parse', 'squash-me');
      const res = await t
        .http()
        .post(`${base(id)}/merge`)
        .set(bearer(analyst.token))
        .send({ squashCommits: true, switchToParentBranch: true, deleteBranch: true });
      expect(res.body).toEqual({ merged: true, branchDeleted: true });
      expect(gitIn(id, 'rev-list', '--count', `${before}..squash-me`)).toBe('1');
      expect(gitIn(id, 'log', '-1', '--format=%P', 'squash-me').split(' ')).toHaveLength(1);
      expect(branchName).toMatch(/^dev-/);
    });

    it('merges straight into the deploy branch, without a message (the command-line client)', async () => {
      await t
        .http()
        .post(`${base(id)}/branches`)
        .set(bearer(developer.token))
        .send({ name: 'to-default', enterDevMode: true });
      await put(id, [{ path: 'model/cubes/default.yml', content: 'cubes: []\n' }]);
      await commit(id, {});
      const dev = await devMode(id, developer, 'to-default');
      const res = await t
        .http()
        .post(`${base(id)}/merge-to-default`)
        .set(bearer(developer.token))
        .send({ branchName: dev.branchName, removeBranchAfterMerge: true });
      expect(res.body).toEqual({ merged: true, branchDeleted: true });
      expect(gitIn(id, 'show', 'master:model/cubes/default.yml')).toBe('cubes: []');
      const build = await t.sql(
        `SELECT trigger FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master' ORDER BY id DESC LIMIT 1`,
        [id],
      );
      expect(build).toEqual([{ trigger: 'merge' }]);
    });

    it('needs SchemaUpdate to merge into the deploy branch', async () => {
      const devOnly = await userWithActions(['SchemaUpdateDevBranches', 'DeploymentRead']);
      const res = await t
        .http()
        .post(`${base(id)}/merge-to-default`)
        .set(bearer(devOnly.token))
        .send({ branchName: 'to-default' });
      expectErrorShape(res.body, 403, 'forbidden');
    });
  });

  describe('uploads', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    const upload = async (
      files: Record<string, string>,
      send: string[],
      extra: Record<string, unknown> = {},
    ) => {
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(developer.token));
      expect(start.status).toBe(200);
      expect(start.body).toEqual({
        deploymentName: 'Sales analytics',
        transaction: { id: expect.any(String) },
      });
      const transaction = start.body.transaction;
      for (const name of send) {
        const res = await t
          .http()
          .post(`${base(id)}/data-model/upload/file`)
          .set(bearer(developer.token))
          .field('transaction', JSON.stringify(transaction))
          .field('fileName', name)
          .attach('file', Buffer.from(files[name]), path.basename(name));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ fileName: name, hash: sha1(files[name]) });
      }
      return t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(developer.token))
        .send({
          transaction,
          files: Object.fromEntries(Object.entries(files).map(([p, c]) => [p, { hash: sha1(c) }])),
          ...extra,
        });
    };

    it('writes one commit from the full map, prunes absent files and queues one build', async () => {
      const files = { 'model/cubes/x.yml': 'cubes: []\n', 'model/views/y.yml': 'views: []\n' };
      const res = await upload(files, Object.keys(files), { commitMessage: 'CLI upload' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ lastHash: gitIn(id, 'rev-parse', 'master') });
      expect(gitIn(id, 'ls-tree', '-r', '--name-only', 'master').split('\n').sort()).toEqual(
        Object.keys(files).sort(),
      );
      expect(gitIn(id, 'log', '-1', '--format=%s', 'master')).toBe('CLI upload');
      const builds = await t.sql(
        `SELECT trigger FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'upload'`,
        [id],
      );
      expect(builds).toHaveLength(1);
    });

    it('serves file hashes and accepts a finish that reuses unchanged content', async () => {
      const hashes = await t
        .http()
        .get(`${base(id)}/data-model/file-hashes`)
        .set(bearer(developer.token));
      expect(hashes.body).toEqual({
        'model/cubes/x.yml': { hash: sha1('cubes: []\n') },
        'model/views/y.yml': { hash: sha1('views: []\n') },
      });
      const files = {
        'model/cubes/x.yml': 'cubes: []\n',
        'model/views/y.yml': 'views: []\n',
        'model/cubes/z.yml': 'z\n',
      };
      const res = await upload(files, ['model/cubes/z.yml'], { autoRemoveFiles: false });
      expect(res.status).toBe(200);
      expect(gitIn(id, 'show', 'master:model/cubes/z.yml')).toBe('z');
    });

    it('refuses a hash nothing matches, an unknown or finished transaction, and a bad path', async () => {
      const res = await upload({ 'model/cubes/q.yml': 'never sent\n' }, []);
      expectErrorShape(res.body, 400, 'upload_hash_mismatch');
      const head = gitIn(id, 'rev-parse', 'master');
      const unknown = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(developer.token))
        .send({ transaction: { id: '00000000-0000-4000-8000-000000000000' }, files: {} });
      expectErrorShape(unknown.body, 404, 'upload_transaction_not_found');
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(developer.token));
      const bad = await t
        .http()
        .post(`${base(id)}/data-model/upload/file`)
        .set(bearer(developer.token))
        .field('transaction', start.body.transaction.id)
        .field('fileName', '../../etc/passwd')
        .attach('file', Buffer.from('x'), 'x');
      expectErrorShape(bad.body, 400, 'invalid_path');
      // Another user cannot use the transaction.
      const foreign = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(analyst.token))
        .send({ transaction: start.body.transaction, files: {} });
      expectErrorShape(foreign.body, 404, 'upload_transaction_not_found');
      expect(gitIn(id, 'rev-parse', 'master')).toBe(head);
    });
  });

  describe('build status', () => {
    it('reports the latest build of a branch; an unknown branch is Bad branch', async () => {
      const id = await createDeployment();
      const res = await t.http().get(`/api/v1/deployments/${id}/build-status`).set(bearer(viewer.token));
      expect(res.status).toBe(200);
      // No worker has taken it: queued, not building.
      expect(res.body).toMatchObject({
        deploymentId: id,
        branchName: 'master',
        mode: 'production',
        status: 'queued',
        deploymentStatus: 'queued',
        queuedSeconds: expect.any(Number),
        message: 'Waiting for a worker',
      });
      const bad = await t
        .http()
        .get(`/api/v1/deployments/${id}/build-status`)
        .query({ branchName: 'nope' })
        .set(bearer(viewer.token));
      expect(bad.body).toMatchObject({ status: 'failed', errorText: 'Bad branch', branchName: 'nope' });
    });

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

  describe('two API processes sharing the repositories and the database', () => {
    it('never lose a change when both write one branch at once', async () => {
      const id = await createDeployment();
      await devMode(id);
      // A second API process on the same database and REPOS_DIR, as a second replica would be.
      const replica = startProcess('dist/src/main.js', {
        DATABASE_URL: t.databaseUrl,
        REDIS_URL: t.config.queue.redisUrl ?? undefined,
        QUEUE_PREFIX: t.config.queue.prefix,
        REPOS_DIR: t.config.dataModel.reposDir,
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        RATE_LIMIT_MAX: '1000000',
      });
      try {
        const port = await replica.listening(60_000);
        const url = `${base(id)}/data-model/files`;
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => {
            const files = [{ path: `model/replicas/f${i}.yml`, content: `n: ${i}\n` }];
            if (i % 2 === 0) return put(id, files).then((r) => r.status);
            return fetch(`http://127.0.0.1:${port}${url}`, {
              method: 'PUT',
              headers: { ...bearer(developer.token), 'Content-Type': 'application/json' },
              body: JSON.stringify({ files }),
            }).then((r) => r.status);
          }),
        );
        expect(results).toEqual(Array(10).fill(200));
        const contents = fileContents(await list(id));
        for (let i = 0; i < 10; i++) expect(contents[`/model/replicas/f${i}.yml`]).toBe(`n: ${i}\n`);
      } finally {
        replica.child.kill('SIGTERM');
        await replica.exit;
      }
    });
  });

  describe('file listing and upload expiry', () => {
    it('pages the top-level nodes with first/after and serves the whole tree without first', async () => {
      const id = await createDeployment();
      const whole = await t
        .http()
        .get(`${base(id)}/data-model/files`)
        .set(bearer(developer.token));
      expect(whole.body.items.map((n: Node) => n.path)).toEqual(['/model', '/README.md']);
      expect(whole.body.items[0].children.map((n: Node) => n.path)).toEqual(['/model/cubes', '/model/views']);
      expect(whole.body.items[1]).toEqual({ path: '/README.md', type: 'file', children: [] });
      const first = await t
        .http()
        .get(`${base(id)}/data-model/files?first=1`)
        .set(bearer(developer.token));
      expect(first.body.items.map((n: Node) => n.path)).toEqual(['/model']);
      expect(first.body.pageInfo.hasNextPage).toBe(true);
      const next = await t
        .http()
        .get(`${base(id)}/data-model/files`)
        .query({ first: 1, after: first.body.pageInfo.endCursor })
        .set(bearer(developer.token));
      expect(next.body.items.map((n: Node) => n.path)).toEqual(['/README.md']);
      expect(next.body.pageInfo.hasNextPage).toBe(false);
      const bad = await t
        .http()
        .get(`${base(id)}/data-model/files?after=garbage`)
        .set(bearer(developer.token));
      expectErrorShape(bad.body, 400, 'invalid_cursor');
    });

    it('forgets an abandoned upload once it expires', async () => {
      const id = await createDeployment();
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(developer.token));
      await t.sql(`UPDATE model_uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        start.body.transaction.id,
      ]);
      const finish = await t
        .http()
        .post(`${base(id)}/data-model/upload/finish`)
        .set(bearer(developer.token))
        .send({ transaction: start.body.transaction, files: {} });
      expectErrorShape(finish.body, 404, 'upload_transaction_not_found');
      // The upload sweep forgets it once what it left is old enough to prune (see
      // model-upload-bounds.e2e-part.ts): not a second after it expired, but two hours after.
      const uploads = t.app.get(ModelUploads);
      await uploads.sweep();
      expect(
        await t.sql(`SELECT 1 FROM model_uploads WHERE id = $1`, [start.body.transaction.id]),
      ).toHaveLength(1);
      await t.sql(`UPDATE model_uploads SET expires_at = now() - interval '2 hours' WHERE id = $1`, [
        start.body.transaction.id,
      ]);
      await uploads.sweep();
      expect(await t.sql(`SELECT 1 FROM model_uploads WHERE id = $1`, [start.body.transaction.id])).toEqual(
        [],
      );
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

  // Set up in beforeAll of the branches block through the helper below.
  let viewerWithSchema: Actor;
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
    viewerWithSchema = await userWithActions(['SchemaRead', 'DeploymentRead']);
  });
});
