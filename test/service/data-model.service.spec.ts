import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from '../../src/app.module.js';
import { AuthService } from '../../src/core/auth/auth.service.js';
import type { Principal } from '../../src/core/auth/principal.js';
import { ApiError } from '../../src/core/errors/api-error.js';
import type { JobContext } from '../../src/core/queue/job-context.js';
import { JobRunner } from '../../src/core/queue/job-runner.js';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import type {
  CommitDto,
  DevBranchDto,
  FileNodeDto,
} from '../../src/modules/data-model/dto/data-model.dto.js';
import { GitHubDiscoveryService } from '../../src/modules/data-model/github/github-discovery.service.js';
import { GitHubInstallations } from '../../src/modules/data-model/github/github-installations.service.js';
import { ModelBranches } from '../../src/modules/data-model/model-branches.service.js';
import { BUILD_JOB, ModelBuilds } from '../../src/modules/data-model/model-builds.js';
import { ModelConnection } from '../../src/modules/data-model/model-connection.service.js';
import { ModelDevMode } from '../../src/modules/data-model/model-dev-mode.service.js';
import { ModelFiles } from '../../src/modules/data-model/model-files.service.js';
import { ModelMerges } from '../../src/modules/data-model/model-merges.service.js';
import { ModelUploads, UPLOAD_SWEEP_OWNER } from '../../src/modules/data-model/model-uploads.service.js';
import { DeploymentsService } from '../../src/modules/deployments/deployments.service.js';
import type { CreateDeploymentDto } from '../../src/modules/deployments/dto/deployment.dto.js';
import { testConfig, type Actor } from '../support/app.js';
import { gitCli, gitSucceeds } from '../support/git-cli.js';
import { waitFor } from '../support/factories.js';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.js';
import { expectApiError, expectApiErrorOf, startServiceApp, type ServiceApp } from '../support/service.js';

/**
 * The rules of the data model on git, below HTTP (moved from the e2e tests of model-git.e2e-spec
 * and the former data-model.e2e-spec): the starter project, dev mode and pending changes, file
 * paths and limits, branches, merges, uploads and their bounds, builds and validation with the
 * real compiler, pull, and refs moved by another process. The HTTP contract of these routes
 * (status codes, the error shape, 401/403/404, validation, response shapes) stays in the parts of
 * model-git.e2e-spec (data-model, model-refs, model-upload-bounds).
 *
 * One application: jobs of the `default` queue (the upload sweep) run in it; builds stay queued,
 * and a test that needs one runs it through the application's runner ({@link runBuild}).
 */

/** Files a branch holds at most: room for every test here, few enough to fill in one write. */
const MAX_FILES = 30;
const MAX_FILE_BYTES = 4096;
const MAX_PENDING_BYTES = 10_000;

/** What entering dev mode answers: the dev branch is always named. */
type DevBranch = DevBranchDto & { branchName: string };

const STARTER = ['/README.md', '/model/cubes/orders.yml', '/model/views/orders_view.yml'];

const BROKEN_CUBE = `cubes:
  - name: broken
    sql_table: public.broken
    measures:
      - name: total
        type: not_a_type
`;

const sha1 = (c: string | Buffer) => createHash('sha1').update(c).digest('hex');
/** The id git gives a blob of this content. */
const blobOid = (b: Buffer) =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]))
    .digest('hex');
/** Content of `size` bytes that no other test writes. */
const content = (size: number) => Buffer.from(randomBytes(size).toString('hex').slice(0, size));

/** Every file path of a tree. */
const filePaths = (nodes: FileNodeDto[]): string[] =>
  nodes.flatMap((n) => (n.type === 'file' ? [n.path] : filePaths(n.children)));

/** The content of each file of a tree, by path. */
const fileContents = (nodes: FileNodeDto[], out: Record<string, string> = {}): Record<string, string> => {
  for (const n of nodes) {
    if (n.type === 'file') out[n.path] = n.content ?? '';
    else fileContents(n.children, out);
  }
  return out;
};

/** What each of parallel calls ended with: `ok`, or the API error's status and code (a route's answer). */
const settle = async (work: Array<Promise<unknown>>): Promise<string[]> =>
  (await Promise.allSettled(work)).map((r) =>
    r.status === 'fulfilled'
      ? 'ok'
      : r.reason instanceof ApiError
        ? `${r.reason.getStatus()} ${r.reason.code}`
        : String(r.reason),
  );

/** Git in a work tree, as someone pushing to the remote. */
const sh = (cwd: string, ...args: string[]) =>
  gitCli(['-C', cwd, ...args], {
    env: {
      GIT_AUTHOR_NAME: 'Remote',
      GIT_AUTHOR_EMAIL: 'remote@example.test',
      GIT_COMMITTER_NAME: 'Remote',
      GIT_COMMITTER_EMAIL: 'remote@example.test',
    },
  });

describe('data model on git (services)', () => {
  let s: ServiceApp;
  let fake: GitHubFake;
  let tmp: string;
  let files: ModelFiles;
  let devModes: ModelDevMode;
  let branches: ModelBranches;
  let merges: ModelMerges;
  let uploads: ModelUploads;
  let builds: ModelBuilds;
  let developer: Actor;
  let analyst: Actor;
  let viewer: Actor;
  /** A user holding SchemaRead and DeploymentRead only. */
  let viewerWithSchema: Actor;
  /** A user holding SchemaUpdateDevBranches and DeploymentRead only. */
  let attacker: Actor;

  const principals = new Map<number, Promise<Principal>>();
  /** The actor's principal, as the bearer guard builds it (their roles do not change here). */
  const as = (actor: Actor): Promise<Principal> => {
    let principal = principals.get(actor.userId);
    if (!principal) principals.set(actor.userId, (principal = s.make.principal(actor)));
    return principal;
  };
  /** A user of the admin's account holding exactly `actions`. */
  const userWithActions = async (actions: string[]): Promise<Actor> => {
    const user = await s.make.user();
    await s.make.grant(user, [{ resourceType: 'Global', actions, resources: ['All'] }]);
    return user;
  };

  const repoDir = (id: number) => path.join(s.config.dataModel.reposDir, `${id}.git`);
  const gitIn = (id: number, ...args: string[]) => gitCli([`--git-dir=${repoDir(id)}`, ...args]);
  /** Every ref of the repository with its commit. */
  const refsOf = (id: number) => gitIn(id, 'for-each-ref', '--format=%(refname) %(objectname)');
  const hasObject = (id: number, oid: string) =>
    gitSucceeds([`--git-dir=${repoDir(id)}`, 'cat-file', '-e', oid]);

  const createDeployment = async (by: Actor = s.admin, fields: Partial<CreateDeploymentDto> = {}) =>
    (await s.make.deployment({ by, ...fields })).id;
  /** Enters dev mode (on a branch forked from `branchName`, default the deploy branch). */
  const devMode = async (id: number, actor: Actor = developer, branchName?: string): Promise<DevBranch> => {
    const dto = branchName === undefined ? {} : { branchName };
    return (await devModes.start(await as(actor), id, dto)) as DevBranch;
  };
  const put = async (
    id: number,
    written: Array<{ path: string; content: string }>,
    actor: Actor = developer,
    extra: { branchName?: string } = {},
  ) => files.write(await as(actor), id, { files: written, ...extra });
  const list = async (id: number, actor: Actor = developer, query: { branchName?: string } = {}) =>
    (await files.list(await as(actor), id, { withContent: true, ...query })).items;
  const commit = async (id: number, dto: CommitDto = {}, actor: Actor = developer) =>
    files.commit(await as(actor), id, dto);
  const createBranch = async (
    id: number,
    actor: Actor,
    dto: { name: string; from?: string; enterDevMode?: boolean },
  ) => branches.create(await as(actor), id, dto);
  const sessionOf = (id: number, actor: Actor) =>
    s.sql(`SELECT branch_name FROM model_dev_sessions WHERE deployment_id = $1 AND user_id = $2`, [
      id,
      actor.userId,
    ]);

  /** Runs build `buildId` once through the application's job runner, as a worker of `builds` would. */
  const runBuild = async (buildId: number) => {
    const [build] = await s.sql<{ runId: string; accountId: number }>(
      `SELECT run_id AS "runId", account_id AS "accountId" FROM deployment_builds WHERE id = $1`,
      [buildId],
    );
    await s.app.get(JobRunner).run(
      {
        id: `build-${buildId}`,
        name: BUILD_JOB.name,
        payload: { buildId },
        accountId: build.accountId,
        handover: 1,
        runId: build.runId,
        attempts: 0,
      },
      1,
      BUILD_JOB.attempts,
    );
  };
  /** The latest build of a deployment's branch and trigger. */
  const latestBuild = async (id: number, branch: string, trigger: string) => {
    const [build] = await s.sql<{ id: number }>(
      `SELECT id FROM deployment_builds WHERE deployment_id = $1 AND branch = $2 AND trigger = $3
       ORDER BY id DESC LIMIT 1`,
      [id, branch, trigger],
    );
    return build.id;
  };

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'data-model-service-'));
    fake = await startGitHubFake();
    s = await startServiceApp({
      ...fake.env(),
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      MODEL_MAX_FILES: String(MAX_FILES),
      MODEL_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      MODEL_UPLOAD_MAX_PENDING_BYTES: String(MAX_PENDING_BYTES),
    });
    files = s.app.get(ModelFiles);
    devModes = s.app.get(ModelDevMode);
    branches = s.app.get(ModelBranches);
    merges = s.app.get(ModelMerges);
    uploads = s.app.get(ModelUploads);
    builds = s.app.get(ModelBuilds);
    developer = await s.make.user({ role: 'Developer' });
    analyst = await s.make.user({ role: 'Developer' });
    // The built-in viewer role (the HTTP API also takes its old name, Viewer).
    viewer = await s.make.user({ role: 'AIBIViewer' });
    viewerWithSchema = await userWithActions(['SchemaRead', 'DeploymentRead']);
    attacker = await userWithActions(['SchemaUpdateDevBranches', 'DeploymentRead']);
  });
  afterAll(async () => {
    await s.close();
    await fake.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('a new deployment', () => {
    it('has a real repository with the starter project committed on its deploy branch', async () => {
      const id = await createDeployment();
      expect(filePaths(await list(id)).sort()).toEqual(STARTER);
      expect(await gitIn(id, 'log', '--format=%s', 'master')).toBe('Starter project');
      // A developer can clone it and read the files.
      const clone = fs.mkdtempSync(path.join(tmp, 'clone-'));
      await gitCli(['clone', '--quiet', repoDir(id), clone]);
      expect(fs.readFileSync(path.join(clone, 'model/cubes/orders.yml'), 'utf8')).toContain('name: orders');
      fs.rmSync(clone, { recursive: true, force: true });
      const [build] = await s.sql<{ branch: string; trigger: string }>(
        `SELECT branch, trigger FROM deployment_builds WHERE deployment_id = $1`,
        [id],
      );
      expect(build).toEqual({ branch: 'master', trigger: 'creation' });
    });

    it('created from GitHub has no starter project', async () => {
      const id = await createDeployment(s.admin, { creationMethod: 'github' });
      expect(await list(id)).toEqual([]);
      expect((await branches.list(await as(developer), id, {})).items).toEqual([]);
    });

    it('loses its repository when it is deleted', async () => {
      const id = await createDeployment();
      await list(id);
      expect(fs.existsSync(repoDir(id))).toBe(true);
      await expect(s.app.get(DeploymentsService).remove(await as(s.admin), id)).resolves.toBeUndefined();
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
      expect(await gitIn(id, 'rev-parse', dev.branchName)).toBe(await gitIn(id, 'rev-parse', 'master'));
      // Entering again reuses the branch.
      expect((await devMode(id)).branchName).toBe(dev.branchName);
    });

    it('keeps writes pending on the dev branch until commit records them as one commit', async () => {
      const { branchName } = await devMode(id);
      const before = await gitIn(id, 'rev-parse', branchName);
      await expect(put(id, [{ path: '/model/cubes/a.yml', content: 'a: 1\n' }])).resolves.toBeUndefined();
      await expect(put(id, [{ path: 'model/cubes/b.yml', content: 'b: 2\n' }])).resolves.toBeUndefined();
      // The owner sees the pending files; the branch itself has not moved.
      expect(fileContents(await list(id))).toMatchObject({
        '/model/cubes/a.yml': 'a: 1\n',
        '/model/cubes/b.yml': 'b: 2\n',
      });
      expect(await gitIn(id, 'rev-parse', branchName)).toBe(before);
      // Another user reading the branch sees the committed state.
      expect(filePaths(await list(id, analyst, { branchName }))).not.toContain('/model/cubes/a.yml');

      await expect(commit(id, { message: 'Add a and b' })).resolves.toBeUndefined();
      expect(await gitIn(id, 'rev-list', '--count', `${before}..${branchName}`)).toBe('1');
      expect(await gitIn(id, 'log', '-1', '--format=%s|%ae', branchName)).toBe(
        `Add a and b|${developer.email}`,
      );
      expect(await gitIn(id, 'show', `${branchName}:model/cubes/b.yml`)).toBe('b: 2');
      expect(await gitIn(id, 'for-each-ref', 'refs/pending/')).toBe('');
      const committed = await s.sql(
        `SELECT branch, trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'commit'`,
        [id],
      );
      expect(committed).toEqual([
        { branch: branchName, trigger: 'commit', commit_sha: await gitIn(id, 'rev-parse', branchName) },
      ]);
      // Nothing pending: a second commit changes nothing.
      await expect(commit(id)).resolves.toBeUndefined();
      expect(await gitIn(id, 'rev-list', '--count', `${before}..${branchName}`)).toBe('1');
    });

    it('deletes and renames files as pending changes', async () => {
      const { branchName } = await devMode(id);
      const principal = await as(developer);
      await expect(
        files.remove(principal, id, { files: [{ path: '/model/cubes/a.yml' }] }),
      ).resolves.toBeUndefined();
      await expect(
        files.rename(principal, id, {
          files: [{ path: 'model/cubes/b.yml', newPath: '/model/cubes/c.yml' }],
        }),
      ).resolves.toBeUndefined();
      await expect(commit(id, { branchName })).resolves.toBeUndefined();
      const names = (await gitIn(id, 'ls-tree', '-r', '--name-only', branchName)).split('\n');
      expect(names).toContain('model/cubes/c.yml');
      expect(names).not.toContain('model/cubes/a.yml');
      expect(names).not.toContain('model/cubes/b.yml');
    });

    it('refuses deleting or renaming a missing file and changes nothing', async () => {
      const principal = await as(developer);
      await expectApiError(
        files.remove(principal, id, { files: [{ path: '/model/cubes/c.yml' }, { path: '/nope.yml' }] }),
        400,
        'file_not_found',
      );
      await expectApiError(
        files.rename(principal, id, {
          files: [{ path: '/model/cubes/c.yml', newPath: '/model/cubes/orders.yml' }],
        }),
        400,
        'file_exists',
      );
      const { branchName } = await devMode(id);
      expect(await gitIn(id, 'for-each-ref', `refs/pending/${branchName}`)).toBe('');
    });

    it('accepts writes only on the caller’s personal dev branch', async () => {
      for (const branchName of ['master', (await devMode(id, analyst)).branchName]) {
        await expectApiError(
          put(id, [{ path: 'x.yml', content: 'x' }], developer, { branchName }),
          400,
          'branch_not_writable',
        );
      }
      const outside = await s.make.user({ role: 'Developer' });
      await expectApiError(put(id, [{ path: 'x.yml', content: 'x' }], outside), 400, 'not_in_dev_mode');
    });

    it('leaves dev mode, keeping the dev branch and its pending changes', async () => {
      const { branchName } = await devMode(id);
      await put(id, [{ path: 'kept.yml', content: 'kept' }]);
      await expect(devModes.stop(await as(developer), id)).resolves.toBeUndefined();
      await expectApiError(put(id, [{ path: 'y.yml', content: 'y' }]), 400, 'not_in_dev_mode');
      expect((await devMode(id)).branchName).toBe(branchName);
      expect(filePaths(await list(id))).toContain('/kept.yml');
    });

    it('never loses a change when writes to one branch race', async () => {
      await devMode(id);
      const results = await settle(
        Array.from({ length: 12 }, (_, i) =>
          put(id, [{ path: `/model/race/f${i}.yml`, content: `n: ${i}\n` }]),
        ),
      );
      expect(results).toEqual(Array(12).fill('ok'));
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
      await expectApiError(
        put(id, [
          { path: 'ok.yml', content: 'fine' },
          { path: p, content: 'evil' },
        ]),
        400,
        'invalid_path',
      );
      expect(filePaths(await list(id))).not.toContain('/ok.yml');
    });

    it('refuses a file where a directory is, and a directory where a file is, changing nothing', async () => {
      const before = fileContents(await list(id));
      // The starter project has model/cubes/orders.yml: `model` is a directory, the cube a file.
      await expectApiError(put(id, [{ path: 'model', content: 'a file' }]), 400, 'file_exists');
      await expectApiError(
        put(id, [{ path: 'model/cubes/orders.yml/inner.yml', content: 'x' }]),
        400,
        'file_exists',
      );
      expect(fileContents(await list(id))).toEqual(before);
    });

    it('refuses a path listed twice and a file over the size limit, changing nothing', async () => {
      await expectApiError(
        put(id, [
          { path: 'a.yml', content: '1' },
          { path: '/a.yml', content: '2' },
        ]),
        400,
        'invalid_path',
      );
      const big = 'x'.repeat(s.config.dataModel.maxFileBytes + 1);
      await expectApiError(put(id, [{ path: 'big.yml', content: big }]), 400, 'file_too_large');
      const paths = filePaths(await list(id));
      expect(paths).not.toContain('/a.yml');
      expect(paths).not.toContain('/big.yml');
    });
  });

  describe('branches', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    it('creates a shared branch; refuses a duplicate (409) and an unknown source (404)', async () => {
      expect(await createBranch(id, developer, { name: 'feature/orders' })).toEqual({
        active: false,
        branchName: 'feature/orders',
        parentBranch: 'master',
      });
      await expectApiError(createBranch(id, developer, { name: 'feature/orders' }), 409, 'branch_exists');
      await expectApiError(
        createBranch(id, developer, { name: 'x', from: 'no-such-branch' }),
        404,
        'branch_not_found',
      );
    });

    it('creates one branch when the same name is asked for in parallel', async () => {
      const results = await settle(
        Array.from({ length: 6 }, () => createBranch(id, developer, { name: 'release/1' })),
      );
      expect(results.sort()).toEqual([...Array(5).fill('409 branch_exists'), 'ok']);
    });

    it('enters dev mode on a new branch with enterDevMode (the command-line client)', async () => {
      expect(await createBranch(id, analyst, { name: 'feature/cli', enterDevMode: true })).toEqual({
        active: true,
        branchName: expect.stringMatching(/^dev-\d+-[0-9a-f]{8}$/),
        parentBranch: 'feature/cli',
      });
    });

    it('lists branches with parent, head and staging flag, paged by name (SchemaRead suffices)', async () => {
      const page = await branches.list(await as(viewerWithSchema), id, {});
      const names = page.items.map((b) => b.name);
      expect(names).toEqual([...names].sort());
      expect(page.items.find((b) => b.name === 'feature/orders')).toEqual({
        id: expect.any(Number),
        name: 'feature/orders',
        parentBranch: 'master',
        lastHash: await gitIn(id, 'rev-parse', 'feature/orders'),
        isStagingEnvironmentEnabled: false,
        approvals: 0,
        changesRequested: 0,
      });
      const principal = await as(developer);
      const first = await branches.list(principal, id, { first: 2 });
      expect(first.items).toHaveLength(2);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = await branches.list(principal, id, {
        first: 100,
        after: first.pageInfo.endCursor ?? undefined,
      });
      expect([...first.items, ...next.items].map((b) => b.name)).toEqual(names);
    });

    it('turns staging on for shared branches only', async () => {
      const principal = await as(developer);
      const on = await branches.setStaging(principal, id, { enabled: true, branchName: 'feature/orders' });
      expect(on.data).toMatchObject({ name: 'feature/orders', isStagingEnvironmentEnabled: true });
      await expectApiError(
        branches.setStaging(principal, id, { enabled: true, branchName: 'master' }),
        400,
        'staging_not_allowed',
      );
      const dev = await devMode(id);
      await expectApiError(
        branches.setStaging(principal, id, { enabled: true, branchName: dev.branchName }),
        400,
        'staging_not_allowed',
      );
    });

    it('deletes a branch: its ref goes, children move to its parent, its viewers back to the deploy branch', async () => {
      await createBranch(id, developer, { name: 'parent' });
      await createBranch(id, developer, { name: 'parent-child', from: 'parent' });
      const dev = await devMode(id, analyst, 'parent');
      expect(dev.parentBranch).toBe('parent');
      // The developer views `parent` itself (a merge that switches to the parent puts them there).
      const viewerDev = await devMode(id, developer, 'parent');
      expect(
        await merges.merge(await as(developer), id, {
          branchName: viewerDev.branchName,
          switchToParentBranch: true,
        }),
      ).toEqual({ merged: true, branchDeleted: false });
      expect(await sessionOf(id, developer)).toEqual([{ branch_name: 'parent' }]);
      await expect(
        branches.delete(await as(developer), id, { branchName: 'parent' }),
      ).resolves.toBeUndefined();
      expect(await gitIn(id, 'for-each-ref', 'refs/heads/parent')).toBe('');
      const [child] = await s.sql(
        `SELECT parent_name FROM model_branches WHERE deployment_id = $1 AND name = 'parent-child'`,
        [id],
      );
      expect(child).toEqual({ parent_name: 'master' });
      const [devRow] = await s.sql(
        `SELECT parent_name FROM model_branches WHERE deployment_id = $1 AND name = $2`,
        [id, dev.branchName],
      );
      expect(devRow).toEqual({ parent_name: 'master' });
      expect(await sessionOf(id, developer)).toEqual([{ branch_name: 'master' }]);
    });

    it('refuses deleting the deploy branch (400) and an unknown one (404)', async () => {
      const principal = await as(developer);
      await expectApiError(
        branches.delete(principal, id, { branchName: 'master' }),
        400,
        'deploy_branch_protected',
      );
      await expectApiError(branches.delete(principal, id, { branchName: 'nope' }), 404, 'branch_not_found');
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

      expect(await merges.merge(await as(developer), id, { message: 'Merge mine' })).toEqual({
        merged: true,
        branchDeleted: false,
      });
      const head = await gitIn(id, 'rev-parse', 'master');
      expect((await gitIn(id, 'log', '-1', '--format=%P', 'master')).split(' ')).toHaveLength(2);
      expect(await gitIn(id, 'show', 'master:model/cubes/orders.yml')).toBe('cubes: [] # mine');

      const conflict = await expectApiError(merges.merge(await as(analyst), id, {}), 409, 'merge_conflict');
      expect(conflict.messages).toContain('model/cubes/orders.yml');
      expect(await gitIn(id, 'rev-parse', 'master')).toBe(head);
      expect(mine.branchName).not.toBe(theirs.branchName);
    });

    it('squashes, switches to the parent and deletes the branch on request', async () => {
      const { branchName } = await devMode(id, analyst, 'master');
      await put(id, [{ path: 'model/cubes/new.yml', content: 'cubes: []\n' }], analyst);
      // The analyst's dev branch conflicts with master (see above): start clean on a new branch.
      await createBranch(id, analyst, { name: 'squash-me', enterDevMode: true });
      await put(id, [{ path: 'model/cubes/one.yml', content: '1\n' }], analyst);
      await commit(id, {}, analyst);
      await put(id, [{ path: 'model/cubes/two.yml', content: '2\n' }], analyst);
      await commit(id, {}, analyst);
      const before = await gitIn(id, 'rev-parse', 'squash-me');
      expect(
        await merges.merge(await as(analyst), id, {
          squashCommits: true,
          switchToParentBranch: true,
          deleteBranch: true,
        }),
      ).toEqual({ merged: true, branchDeleted: true });
      expect(await gitIn(id, 'rev-list', '--count', `${before}..squash-me`)).toBe('1');
      expect((await gitIn(id, 'log', '-1', '--format=%P', 'squash-me')).split(' ')).toHaveLength(1);
      expect(branchName).toMatch(/^dev-/);
    });

    it('merges straight into the deploy branch, without a message (the command-line client)', async () => {
      await createBranch(id, developer, { name: 'to-default', enterDevMode: true });
      await put(id, [{ path: 'model/cubes/default.yml', content: 'cubes: []\n' }]);
      await commit(id, {});
      const dev = await devMode(id, developer, 'to-default');
      expect(
        await merges.mergeToDefault(await as(developer), id, {
          branchName: dev.branchName,
          removeBranchAfterMerge: true,
        }),
      ).toEqual({ merged: true, branchDeleted: true });
      expect(await gitIn(id, 'show', 'master:model/cubes/default.yml')).toBe('cubes: []');
      const build = await s.sql(
        `SELECT trigger FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master' ORDER BY id DESC LIMIT 1`,
        [id],
      );
      expect(build).toEqual([{ trigger: 'merge' }]);
    });
  });

  describe('uploads', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment(s.admin, { name: 'Sales analytics' });
    });

    /** An upload as the command-line client makes it: start, one part per file in `send`, finish. */
    const upload = async (
      contents: Record<string, string>,
      send: string[],
      extra: { commitMessage?: string; autoRemoveFiles?: boolean } = {},
    ) => {
      const principal = await as(developer);
      const start = await uploads.start(principal, id, {});
      expect(start).toEqual({ deploymentName: 'Sales analytics', transaction: { id: expect.any(String) } });
      for (const name of send) {
        // The transaction as the client sends it: `{"id": ...}` as JSON.
        const part = await uploads.file(
          principal,
          id,
          { transaction: JSON.stringify(start.transaction), fileName: name },
          Buffer.from(contents[name]),
        );
        expect(part).toEqual({ fileName: name, hash: sha1(contents[name]) });
      }
      return uploads.finish(
        principal,
        id,
        {},
        {
          transaction: start.transaction,
          files: Object.fromEntries(Object.entries(contents).map(([p, c]) => [p, { hash: sha1(c) }])),
          ...extra,
        },
      );
    };

    it('writes one commit from the full map, prunes absent files and queues one build', async () => {
      const contents = { 'model/cubes/x.yml': 'cubes: []\n', 'model/views/y.yml': 'views: []\n' };
      const res = await upload(contents, Object.keys(contents), { commitMessage: 'CLI upload' });
      expect(res).toEqual({ lastHash: await gitIn(id, 'rev-parse', 'master') });
      expect((await gitIn(id, 'ls-tree', '-r', '--name-only', 'master')).split('\n').sort()).toEqual(
        Object.keys(contents).sort(),
      );
      expect(await gitIn(id, 'log', '-1', '--format=%s', 'master')).toBe('CLI upload');
      const queued = await s.sql(
        `SELECT trigger FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'upload'`,
        [id],
      );
      expect(queued).toHaveLength(1);
    });

    it('serves file hashes and accepts a finish that reuses unchanged content', async () => {
      expect(await uploads.fileHashes(await as(developer), id, {})).toEqual({
        'model/cubes/x.yml': { hash: sha1('cubes: []\n') },
        'model/views/y.yml': { hash: sha1('views: []\n') },
      });
      const contents = {
        'model/cubes/x.yml': 'cubes: []\n',
        'model/views/y.yml': 'views: []\n',
        'model/cubes/z.yml': 'z\n',
      };
      await expect(upload(contents, ['model/cubes/z.yml'], { autoRemoveFiles: false })).resolves.toEqual({
        lastHash: expect.stringMatching(/^[0-9a-f]{40}$/),
      });
      expect(await gitIn(id, 'show', 'master:model/cubes/z.yml')).toBe('z');
    });

    it('refuses a hash nothing matches, an unknown or finished transaction, and a bad path', async () => {
      await expectApiError(upload({ 'model/cubes/q.yml': 'never sent\n' }, []), 400, 'upload_hash_mismatch');
      const head = await gitIn(id, 'rev-parse', 'master');
      const principal = await as(developer);
      await expectApiError(
        uploads.finish(
          principal,
          id,
          {},
          { transaction: { id: '00000000-0000-4000-8000-000000000000' }, files: {} },
        ),
        404,
        'upload_transaction_not_found',
      );
      const start = await uploads.start(principal, id, {});
      await expectApiError(
        uploads.file(
          principal,
          id,
          { transaction: start.transaction.id, fileName: '../../etc/passwd' },
          Buffer.from('x'),
        ),
        400,
        'invalid_path',
      );
      // Another user cannot use the transaction.
      await expectApiError(
        uploads.finish(await as(analyst), id, {}, { transaction: start.transaction, files: {} }),
        404,
        'upload_transaction_not_found',
      );
      expect(await gitIn(id, 'rev-parse', 'master')).toBe(head);
    });
  });

  /**
   * Uploads cannot fill memory or disk (issue 26, item 4): an account's uploads hold a bounded
   * number of bytes, and the sweep prunes what expired uploads left in the repository. (A part
   * refused while it streams is HTTP: model-upload-bounds.e2e-part.)
   */
  describe('upload bounds and the sweep', () => {
    const start = async (actor: Actor, id: number) =>
      (await uploads.start(await as(actor), id, {})).transaction.id;
    const part = async (actor: Actor, id: number, tx: string, fileName: string, body: Buffer) =>
      uploads.file(await as(actor), id, { transaction: tx, fileName }, body);
    const finish = async (actor: Actor, id: number, tx: string, parts: Record<string, Buffer>) =>
      uploads.finish(
        await as(actor),
        id,
        {},
        {
          transaction: { id: tx },
          files: Object.fromEntries(Object.entries(parts).map(([p, c]) => [p, { hash: sha1(c) }])),
          autoRemoveFiles: false,
        },
      );
    const uploadBytes = async (tx: string) =>
      (await s.sql<{ bytes: string }>(`SELECT bytes FROM model_uploads WHERE id = $1`, [tx])).map((r) =>
        Number(r.bytes),
      );
    /** Makes a loose object look written `hours` ago (what waiting that long would do). */
    const age = (id: number, oid: string, hours: number) => {
      const when = new Date(Date.now() - hours * 3600_000);
      fs.utimesSync(path.join(repoDir(id), 'objects', oid.slice(0, 2), oid.slice(2)), when, when);
    };

    it('bounds the bytes of an account’s uploads, counted atomically; another account is not affected', async () => {
      // Accounts of their own: other tests' uploads hold bytes of acme's allowance.
      const admin = await s.make.account('initech');
      const other = await s.make.account();
      const id = await createDeployment(admin);
      const otherId = await createDeployment(other);
      const tx = await start(admin, id);
      const otherTx = await start(other, otherId);
      // Six parallel parts of 3,000 bytes against 10,000: three fit, three are refused; the other
      // account's part, sent at the same time, is taken.
      const parts = Array.from({ length: 6 }, () => content(3000));
      const otherPart = content(3000);
      const [answers, otherAnswer] = await Promise.all([
        Promise.allSettled(parts.map((c, i) => part(admin, id, tx, `model/cubes/p${i}.yml`, c))),
        part(other, otherId, otherTx, 'model/cubes/o.yml', otherPart),
      ]);
      expect(otherAnswer).toEqual({ fileName: 'model/cubes/o.yml', hash: sha1(otherPart) });
      const taken = parts.filter((_, i) => answers[i].status === 'fulfilled');
      const refused = parts.filter((_, i) => answers[i].status !== 'fulfilled');
      expect(taken).toHaveLength(3);
      for (const answer of answers) {
        if (answer.status === 'fulfilled') continue;
        const error = expectApiErrorOf(answer.reason, 429, 'upload_limit_reached');
        // Answered as Retry-After (the header: model-upload-bounds.e2e-part).
        expect(error.retryAfterSeconds).toBeGreaterThan(0);
      }
      expect(await uploadBytes(tx)).toEqual([9000]);
      // Nothing of a refused part was stored.
      for (const c of refused) expect(await hasObject(id, blobOid(c))).toBe(false);
      for (const c of taken) expect(await hasObject(id, blobOid(c))).toBe(true);

      // A finish commits two of the three: their bytes are the branch's now; the third, left out,
      // still counts (closed, until the sweep prunes it).
      const names = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value.fileName] : []));
      const committed = Object.fromEntries(
        names.slice(0, 2).map((n) => [n, parts[Number(/p(\d)/.exec(n)![1])]]),
      );
      const finished = await finish(admin, id, tx, committed);
      expect(finished).toEqual({ lastHash: await gitIn(id, 'rev-parse', 'master') });
      expect(await uploadBytes(tx)).toEqual([3000]);
      const next = await start(admin, id);
      await expect(part(admin, id, next, 'model/cubes/n1.yml', content(3000))).resolves.toBeDefined();
      await expect(part(admin, id, next, 'model/cubes/n2.yml', content(3000))).resolves.toBeDefined();
      await expectApiError(
        part(admin, id, next, 'model/cubes/n3.yml', content(3000)),
        429,
        'upload_limit_reached',
      );
    });

    it('forgets an abandoned upload once it expires', async () => {
      const id = await createDeployment();
      const tx = await start(developer, id);
      await s.sql(`UPDATE model_uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [tx]);
      await expectApiError(finish(developer, id, tx, {}), 404, 'upload_transaction_not_found');
      // The sweep forgets it once what it left is old enough to prune: not a second after it
      // expired, but two hours after.
      await uploads.sweep();
      expect(await s.sql(`SELECT 1 FROM model_uploads WHERE id = $1`, [tx])).toHaveLength(1);
      await s.sql(`UPDATE model_uploads SET expires_at = now() - interval '2 hours' WHERE id = $1`, [tx]);
      await uploads.sweep();
      expect(await s.sql(`SELECT 1 FROM model_uploads WHERE id = $1`, [tx])).toEqual([]);
    });

    it('prunes on its schedule what expired uploads left, keeping a live upload’s and committed blobs', async () => {
      const owner = await s.make.account();
      const id = await createDeployment(owner);
      // A committed file, an upload left to expire, and an upload under way.
      const kept = content(100);
      const first = await start(owner, id);
      await expect(part(owner, id, first, 'model/cubes/kept.yml', kept)).resolves.toBeDefined();
      await expect(finish(owner, id, first, { 'model/cubes/kept.yml': kept })).resolves.toBeDefined();
      const abandoned = content(100);
      const expired = await start(owner, id);
      await expect(part(owner, id, expired, 'model/cubes/gone.yml', abandoned)).resolves.toBeDefined();
      const live = content(100);
      const open = await start(owner, id);
      await expect(part(owner, id, open, 'model/cubes/live.yml', live)).resolves.toBeDefined();

      // Three hours pass for the abandoned upload and for the committed blob; the live one is new.
      await s.sql(
        `UPDATE model_uploads SET created_at = now() - interval '3 hours', expires_at = now() - interval '2 hours'
         WHERE id = $1`,
        [expired],
      );
      age(id, blobOid(abandoned), 3);
      age(id, blobOid(kept), 3);

      // The schedule, made once at the first upload, fires the sweep (a job of the `default`
      // queue, which this application runs).
      const schedules = await s.sql<{ id: string; next_run_at: Date }>(
        `SELECT id, next_run_at FROM job_schedules WHERE owner = $1`,
        [UPLOAD_SWEEP_OWNER],
      );
      expect(schedules).toHaveLength(1);
      expect(await s.app.get(JobSchedules).fireDue({ now: schedules[0].next_run_at })).toBe(1);
      const rows = await waitFor(
        () => s.sql(`SELECT id FROM model_uploads WHERE id = $1`, [expired]),
        (r) => r.length === 0,
      );
      expect(rows).toEqual([]);
      expect(await hasObject(id, blobOid(abandoned))).toBe(false);
      expect(await hasObject(id, blobOid(kept))).toBe(true);
      expect(await hasObject(id, blobOid(live))).toBe(true);

      // Twice at once changes nothing more, and the live upload still commits its part.
      expect(await Promise.all([uploads.sweep(), uploads.sweep()])).toEqual([0, 0]);
      expect(await hasObject(id, blobOid(live))).toBe(true);
      await expect(finish(owner, id, open, { 'model/cubes/live.yml': live })).resolves.toBeDefined();
      expect(await gitIn(id, 'show', 'master:model/cubes/live.yml')).toBe(live.toString());
    });
  });

  describe('file listing', () => {
    it('pages the top-level nodes with first/after and serves the whole tree without first', async () => {
      const id = await createDeployment();
      const principal = await as(developer);
      const whole = await files.list(principal, id, {});
      expect(whole.items.map((n) => n.path)).toEqual(['/model', '/README.md']);
      expect(whole.items[0].children.map((n) => n.path)).toEqual(['/model/cubes', '/model/views']);
      expect(whole.items[1]).toEqual({ path: '/README.md', type: 'file', children: [] });
      const first = await files.list(principal, id, { first: 1 });
      expect(first.items.map((n) => n.path)).toEqual(['/model']);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = await files.list(principal, id, {
        first: 1,
        after: first.pageInfo.endCursor ?? undefined,
      });
      expect(next.items.map((n) => n.path)).toEqual(['/README.md']);
      expect(next.pageInfo.hasNextPage).toBe(false);
      await expectApiError(files.list(principal, id, { after: 'garbage' }), 400, 'invalid_cursor');
    });
  });

  describe('builds and validation (Cube’s compiler)', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
    });

    it('builds a new deployment’s starter project: built, at the deploy branch’s head', async () => {
      await runBuild(await latestBuild(id, 'master', 'creation'));
      expect(await builds.status(await as(developer), id, undefined)).toEqual({
        deploymentId: id,
        branchName: 'master',
        mode: 'production',
        status: 'built',
        buildJobId: expect.any(Number),
        deploymentStatus: 'succeeded',
        errorText: null,
        filesHash: expect.stringMatching(/^[0-9a-f]{40}$/),
        lastHash: await gitIn(id, 'rev-parse', 'master'),
        updatedAt: expect.any(String),
      });
    });

    it('validates the deploy branch with the real compiler', async () => {
      expect(await files.validate(await as(developer), id, {})).toEqual({
        deploymentId: id,
        branchName: 'master',
        mode: 'production',
        valid: true,
        errors: [],
        cubesCount: 2,
        impact: [],
      });
    });

    it('reports compile errors as valid:false (not an error), and a commit of them builds as failed with the errors', async () => {
      const branch = (await devMode(id)).branchName;
      await put(id, [{ path: '/model/cubes/broken.yml', content: BROKEN_CUBE }]);

      const pending = await files.validate(await as(developer), id, { devMode: true });
      expect(pending).toMatchObject({ branchName: branch, mode: 'dev_mode', valid: false, cubesCount: 0 });
      expect(pending.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            fileName: 'model/cubes/broken.yml',
            message: expect.stringContaining('measures.total.type'),
          }),
        ]),
      );
      // The committed branch (what others see) still compiles.
      expect(await files.validate(await as(s.admin), id, { branchName: branch })).toMatchObject({
        valid: true,
        cubesCount: 2,
      });

      await expect(commit(id)).resolves.toBeUndefined();
      await runBuild(await latestBuild(id, branch, 'commit'));
      // With no branch named, the status is the caller's active dev-mode branch's.
      expect(await builds.status(await as(developer), id, undefined)).toMatchObject({
        branchName: branch,
        mode: 'dev_mode',
        status: 'failed',
        lastHash: await gitIn(id, 'rev-parse', branch),
        errorText: expect.stringContaining('model/cubes/broken.yml'),
      });
    });

    it('refuses a write past MODEL_MAX_FILES with 400 too_many_files and changes nothing', async () => {
      // The dev branch holds the starter's 3 files and broken.yml; fill it up to the limit.
      const filler = Array.from({ length: MAX_FILES - 4 }, (_, i) => ({
        path: `/model/filler/f${i}.yml`,
        content: `f: ${i}\n`,
      }));
      await put(id, filler);
      await expectApiError(
        put(id, [{ path: '/model/cubes/fifth.yml', content: 'cubes: []\n' }]),
        400,
        'too_many_files',
      );
      expect(filePaths(await list(id))).not.toContain('/model/cubes/fifth.yml');
      // Replacing a file does not add one.
      await expect(
        put(id, [{ path: '/model/cubes/broken.yml', content: 'cubes: []\n' }]),
      ).resolves.toBeUndefined();
    });

    it('leaves one effective build when a build runs twice', async () => {
      const [build] = await s.sql<{ id: number; outcome: string; files_hash: string }>(
        `SELECT id, outcome, files_hash FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master'`,
        [id],
      );
      const logs: string[] = [];
      // The handler itself, delivered once more outside the runner (whose claims are tested in queue.e2e).
      const ctx: JobContext = {
        job: 'deployment.build',
        attempt: 2,
        run: null,
        phase: () => Promise.resolve(),
        progress: () => Promise.resolve(),
        log: (m: string) => {
          logs.push(m);
          return Promise.resolve();
        },
        throwIfCancelled: () => Promise.resolve(),
        fail: (reason: string): never => {
          throw new Error(reason);
        },
      };
      // A second delivery of the same job (a worker died after finishing): the same verdict, no new rows.
      await builds.build({ buildId: build.id }, ctx);
      const after = await s.sql(
        `SELECT id, outcome, files_hash FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master'`,
        [id],
      );
      expect(after).toEqual([build]);
      expect(logs).toContain('Built: 2 cubes');
    });
  });

  describe('build status', () => {
    it('reports the latest build of a branch while no worker has taken it; an unknown branch is Bad branch', async () => {
      const queued = await createDeployment();
      const principal = await as(viewer);
      // No worker has taken it: queued, not building.
      expect(await builds.status(principal, queued, undefined)).toMatchObject({
        deploymentId: queued,
        branchName: 'master',
        mode: 'production',
        status: 'queued',
        deploymentStatus: 'queued',
        queuedSeconds: expect.any(Number),
        message: 'Waiting for a worker',
      });
      expect(await builds.status(principal, queued, 'nope')).toMatchObject({
        status: 'failed',
        errorText: 'Bad branch',
        branchName: 'nope',
      });
    });
  });

  describe('pull moves shared branches only', () => {
    it('refuses pulling a personal dev branch (anyone’s) and leaves it as it was', async () => {
      const remote = path.join(tmp, 'model.git');
      const work = path.join(tmp, 'work');
      await gitCli(['init', '--bare', '--quiet', '--initial-branch=main', remote]);
      await gitCli(['clone', '--quiet', remote, work]);
      fs.mkdirSync(path.join(work, 'model/cubes'), { recursive: true });
      fs.writeFileSync(path.join(work, 'model/cubes/github.yml'), 'cubes: []\n');
      await sh(work, 'add', '.');
      await sh(work, 'commit', '--quiet', '-m', 'From GitHub');
      await sh(work, 'push', '--quiet', 'origin', 'HEAD:main');
      fake.seed({
        installations: [{ id: 301, login: 'acme', type: 'Organization' }],
        repositories: [
          {
            owner: 'acme',
            name: 'model',
            installations: [301],
            defaultBranch: 'main',
            cloneUrl: `file://${remote}`,
          },
        ],
      });
      const id = await createDeployment();
      const admin = await as(s.admin);
      // Linked the way GitHub's Setup URL links it: with the state of the account's link URL.
      const { linkUrl } = await s.app.get(GitHubDiscoveryService).status(admin);
      const state = new URL(linkUrl).searchParams.get('state')!;
      fake.touchInstallation(301);
      await s.app.get(GitHubInstallations).setup({ installation_id: 301, setup_action: 'install', state });
      const connection = s.app.get(ModelConnection);
      await connection.connect(admin, id, { installationId: 301, name: 'model' });

      // The victim's dev branch, committed and pushed; then someone rewrites it on the remote.
      const victim = developer;
      const victimDev = (await devMode(id, victim)).branchName;
      await put(id, [{ path: 'model/cubes/v.yml', content: 'cubes: []\n' }], victim);
      await expect(commit(id, {}, victim)).resolves.toBeUndefined();
      await sh(work, 'fetch', '--quiet', 'origin', victimDev);
      await sh(work, 'checkout', '--quiet', '-B', 'evil', `origin/${victimDev}`);
      fs.writeFileSync(path.join(work, 'model/cubes/evil.yml'), 'cubes: []\n');
      await sh(work, 'add', '.');
      await sh(work, 'commit', '--quiet', '-m', 'Planted upstream');
      await sh(work, 'push', '--quiet', 'origin', `HEAD:refs/heads/${victimDev}`);

      const before = await refsOf(id);
      for (const actor of [attacker, victim, s.admin]) {
        const outcome = await settle([connection.pull(await as(actor), id, { branchName: victimDev })]);
        expect({ user: actor.userId, outcome }).toEqual({
          user: actor.userId,
          outcome: ['400 branch_not_writable'],
        });
      }
      expect(await refsOf(id)).toBe(before);
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/heads/${victimDev}`)).not.toContain(
        'evil.yml',
      );
      // A shared branch still pulls.
      await expect(connection.pull(admin, id, { branchName: 'main' })).resolves.toBeDefined();
    });
  });

  describe('concurrency', () => {
    it('creates one branch of ten parallel creates; the rest are 409 branch_exists', async () => {
      const id = await createDeployment();
      await list(id);
      const results = await settle(
        Array.from({ length: 10 }, () => createBranch(id, developer, { name: 'release/parallel' })),
      );
      expect(results.sort()).toEqual([...Array(9).fill('409 branch_exists'), 'ok']);
    });

    it('lands every one of parallel writes to one dev branch, and commits them all', async () => {
      const id = await createDeployment();
      const dev = (await devMode(id)).branchName;
      const results = await settle(
        Array.from({ length: 10 }, (_, i) =>
          put(id, [{ path: `model/cubes/p${i}.yml`, content: `p: ${i}\n` }]),
        ),
      );
      expect(results).toEqual(Array(10).fill('ok'));
      await expect(commit(id)).resolves.toBeUndefined();
      const names = (await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/heads/${dev}`)).split('\n');
      for (let i = 0; i < 10; i++) expect(names).toContain(`model/cubes/p${i}.yml`);
      expect(await gitIn(id, 'for-each-ref', 'refs/pending/')).toBe('');
    });

    /**
     * A second instance of the application on the same database and REPOS_DIR, as a second API
     * replica is: its own connections (and advisory locks), git sessions and known refs.
     */
    const startReplica = async (): Promise<INestApplicationContext> => {
      const config = testConfig(s.config.database.url!, {
        REPOS_DIR: s.config.dataModel.reposDir,
        QUEUE_PREFIX: s.config.queue.prefix,
        SECRETS_KEY: s.config.secretsKey.toString('base64'),
        MODEL_MAX_FILES: String(MAX_FILES),
        MODEL_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      });
      const replica = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
        bufferLogs: true,
        abortOnError: false,
      });
      replica.useLogger(replica.get(Logger));
      await replica.init();
      return replica;
    };

    it('never loses a change when two instances sharing the repositories and the database write one branch at once', async () => {
      const id = await createDeployment();
      await devMode(id);
      const replica = await startReplica();
      try {
        const writers: Array<[ModelFiles, Principal]> = [
          [files, await as(developer)],
          [replica.get(ModelFiles), (await replica.get(AuthService).authenticate(developer.token))!],
        ];
        const results = await settle(
          Array.from({ length: 10 }, (_, i) => {
            const [writer, principal] = writers[i % 2];
            return writer.write(principal, id, {
              files: [{ path: `model/replicas/f${i}.yml`, content: `n: ${i}\n` }],
            });
          }),
        );
        expect(results).toEqual(Array(10).fill('ok'));
        const contents = fileContents(await list(id));
        for (let i = 0; i < 10; i++) expect(contents[`/model/replicas/f${i}.yml`]).toBe(`n: ${i}\n`);
      } finally {
        await replica.close();
      }
    });
  });

  /**
   * A file write starts from the refs this process last knew (one git command less); another
   * process (a replica, a worker) may have moved them since. The move verifies both refs of the
   * branch, and a decision made on refs it did not verify is made again on fresh ones.
   */
  describe('writes after another process moved the refs', () => {
    /** A pending commit made outside the API: `file` added over what the pending ref holds. */
    const pendingFromOutside = async (id: number, dev: string, file: string) => {
      const parent = await gitIn(id, 'rev-parse', `refs/pending/${dev}`);
      const blob = await gitCli([`--git-dir=${repoDir(id)}`, 'hash-object', '-w', '--stdin'], {
        input: 'outside: true\n',
      });
      const index = path.join(tmp, `index-${Math.random().toString(36).slice(2)}`);
      const env = { GIT_INDEX_FILE: index };
      const inIndex = (...args: string[]) => gitCli([`--git-dir=${repoDir(id)}`, ...args], { env });
      await inIndex('read-tree', `${parent}^{tree}`);
      await inIndex('update-index', '--add', '--cacheinfo', `100644,${blob},${file}`);
      const tree = await inIndex('write-tree');
      const base = await gitIn(id, 'rev-parse', `${parent}^1`);
      const next = await gitCli(
        [`--git-dir=${repoDir(id)}`, 'commit-tree', tree, '-p', base, '-m', 'outside'],
        {
          env: {
            ...env,
            GIT_AUTHOR_NAME: 'o',
            GIT_AUTHOR_EMAIL: 'o@x',
            GIT_COMMITTER_NAME: 'o',
            GIT_COMMITTER_EMAIL: 'o@x',
          },
        },
      );
      await gitIn(id, 'update-ref', `refs/pending/${dev}`, next, parent);
      fs.rmSync(index, { force: true });
    };

    it('keeps the other process’s change: the write lands on top of it', async () => {
      const id = await createDeployment();
      const dev = (await devMode(id)).branchName;
      await expect(put(id, [{ path: 'model/cubes/a.yml', content: 'a: 1\n' }])).resolves.toBeUndefined();
      await pendingFromOutside(id, dev, 'model/cubes/outside.yml');
      await expect(put(id, [{ path: 'model/cubes/b.yml', content: 'b: 1\n' }])).resolves.toBeUndefined();
      const names = (await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/pending/${dev}`)).split('\n');
      expect(names).toEqual(
        expect.arrayContaining(['model/cubes/a.yml', 'model/cubes/outside.yml', 'model/cubes/b.yml']),
      );
    });

    it('removes a file only the other process’s change holds (the refusal is decided on fresh refs)', async () => {
      const id = await createDeployment();
      const dev = (await devMode(id)).branchName;
      await expect(put(id, [{ path: 'model/cubes/a.yml', content: 'a: 1\n' }])).resolves.toBeUndefined();
      await pendingFromOutside(id, dev, 'model/cubes/outside.yml');
      await expect(
        files.remove(await as(developer), id, { files: [{ path: '/model/cubes/outside.yml' }] }),
      ).resolves.toBeUndefined();
      const names = (await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/pending/${dev}`)).split('\n');
      expect(names).toContain('model/cubes/a.yml');
      expect(names).not.toContain('model/cubes/outside.yml');
    });

    it('answers 404 for a branch deleted meanwhile, and leaves no pending changes behind', async () => {
      const id = await createDeployment();
      const dev = (await devMode(id)).branchName;
      await expect(put(id, [{ path: 'model/cubes/a.yml', content: 'a: 1\n' }])).resolves.toBeUndefined();
      await gitIn(id, 'update-ref', '-d', `refs/pending/${dev}`);
      await gitIn(id, 'update-ref', '-d', `refs/heads/${dev}`);
      await expectApiError(
        put(id, [{ path: 'model/cubes/b.yml', content: 'b: 1\n' }]),
        404,
        'branch_not_found',
      );
      expect(await refsOf(id)).not.toContain(dev);
    });
  });
});
