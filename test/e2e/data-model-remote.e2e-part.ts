import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bearer, expectErrorShape, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.js';

const sh = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Remote',
      GIT_AUTHOR_EMAIL: 'remote@example.test',
      GIT_COMMITTER_NAME: 'Remote',
      GIT_COMMITTER_EMAIL: 'remote@example.test',
    },
  }).trim();

/**
 * A deployment connected to a GitHub repository: the GitHub API is the loopback fake, the
 * repository a bare repository on disk whose clone URL the fake hands out (`file://`).
 */
describe('data model with a connected GitHub repository', () => {
  let t: TestApp;
  let fake: GitHubFake;
  let developer: Actor;
  let tmp: string;
  let remote: string;
  let work: string;
  let id: number;

  const base = () => `/build/api/v1/deployments/${id}`;
  const local = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`, ...args], {
      encoding: 'utf8',
    }).trim();
  const remoteRef = (ref: string) => {
    try {
      return execFileSync('git', [`--git-dir=${remote}`, 'rev-parse', '--verify', '--quiet', ref], {
        encoding: 'utf8',
      }).trim();
    } catch {
      return null;
    }
  };

  /** Links installation `installationId` to the admin's account, the way GitHub's Setup URL does. */
  const link = async (installationId: number) => {
    const status = await t.http().get('/api/v1/github/status').set(bearer(t.admin.token));
    expect(status.status).toBe(200);
    const state = new URL(status.body.linkUrl as string).searchParams.get('state')!;
    fake.touchInstallation(installationId);
    const res = await t
      .http()
      .get('/api/v1/github/setup')
      .query({ installation_id: String(installationId), setup_action: 'install', state });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'remote-'));
    remote = path.join(tmp, 'model.git');
    work = path.join(tmp, 'work');
    execFileSync('git', ['init', '--bare', '--quiet', '--initial-branch=main', remote]);
    execFileSync('git', ['clone', '--quiet', remote, work]);
    fs.mkdirSync(path.join(work, 'model/cubes'), { recursive: true });
    fs.writeFileSync(path.join(work, 'model/cubes/github.yml'), 'cubes: []\n');
    sh(work, 'add', '.');
    sh(work, 'commit', '--quiet', '-m', 'From GitHub');
    sh(work, 'push', '--quiet', 'origin', 'HEAD:main');

    fake = await startGitHubFake();
    fake.seed({
      installations: [
        { id: 101, login: 'acme', type: 'Organization' },
        { id: 202, login: 'globex', type: 'Organization' },
      ],
      repositories: [
        {
          owner: 'acme',
          name: 'model',
          installations: [101],
          defaultBranch: 'main',
          cloneUrl: `file://${remote}`,
        },
        { owner: 'globex', name: 'secret', installations: [202], cloneUrl: `file://${remote}` },
      ],
    });
    t = await startApp(fake.env());
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    id = res.body.id;
    await link(101);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses pull before a repository is connected', async () => {
    const res = await t
      .http()
      .post(`${base()}/pull`)
      .set(bearer(t.admin.token))
      .send({ branchName: 'master' });
    expectErrorShape(res.body, 400, 'remote_not_connected');
  });

  it('refuses an installation not linked to the account', async () => {
    const res = await t
      .http()
      .post(`${base()}/github/connect`)
      .set(bearer(t.admin.token))
      .send({ installationId: 202, name: 'globex/secret' });
    expectErrorShape(res.body, 404, 'github_installation_not_found');
  });

  it('connects: the repository’s default branch becomes the deploy branch, and a build is queued', async () => {
    const res = await t
      .http()
      .post(`${base()}/github/connect`)
      .set(bearer(t.admin.token))
      .send({ installationId: 101, name: 'model' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      name: 'Sales analytics',
      deploymentUrl: expect.any(String),
      creationStep: expect.any(String),
    });
    const [row] = await t.sql(`SELECT deploy_branch_name, creation_method FROM deployments WHERE id = $1`, [
      id,
    ]);
    expect(row).toEqual({ deploy_branch_name: 'main', creation_method: 'github' });
    expect(local('rev-parse', 'main')).toBe(remoteRef('main'));
    const files = await t.http().get(`${base()}/data-model/files`).set(bearer(developer.token));
    expect(JSON.stringify(files.body.items)).toContain('/model/cubes/github.yml');
    const builds = await t.sql(
      `SELECT branch, trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'connect'`,
      [id],
    );
    expect(builds).toEqual([{ branch: 'main', trigger: 'connect', commit_sha: remoteRef('main') }]);
  });

  it('pushes each commit and merge to the repository', async () => {
    const dev = await t.http().post(`${base()}/dev-mode`).set(bearer(developer.token)).send({});
    const branch = dev.body.branchName as string;
    expect(dev.body.parentBranch).toBe('main');
    await t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path: 'model/cubes/pushed.yml', content: 'cubes: []\n' }] });
    expect((await t.http().post(`${base()}/commit`).set(bearer(developer.token)).send({})).status).toBe(200);
    expect(remoteRef(branch)).toBe(local('rev-parse', branch));
    const merged = await t.http().post(`${base()}/merge-to-default`).set(bearer(developer.token)).send({});
    expect(merged.body).toEqual({ merged: true, branchDeleted: false });
    expect(remoteRef('main')).toBe(local('rev-parse', 'main'));
    expect(
      execFileSync('git', [`--git-dir=${remote}`, 'show', 'main:model/cubes/pushed.yml'], {
        encoding: 'utf8',
      }),
    ).toBe('cubes: []\n');
  });

  it('pulls what changed on the repository and rebuilds; nothing new builds nothing', async () => {
    sh(work, 'pull', '--quiet', 'origin', 'main');
    fs.writeFileSync(path.join(work, 'model/cubes/upstream.yml'), 'cubes: []\n');
    sh(work, 'add', '.');
    sh(work, 'commit', '--quiet', '-m', 'Upstream change');
    sh(work, 'push', '--quiet', 'origin', 'HEAD:main');
    const pulled = await t
      .http()
      .post(`${base()}/pull`)
      .set(bearer(t.admin.token))
      .send({ branchName: 'main' });
    expect(pulled.body).toEqual({ buildTriggered: true });
    expect(local('rev-parse', 'main')).toBe(remoteRef('main'));
    const again = await t
      .http()
      .post(`${base()}/pull`)
      .set(bearer(t.admin.token))
      .send({ branchName: 'main' });
    expect(again.body).toEqual({ buildTriggered: false });
    const builds = await t.sql(
      `SELECT trigger FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'pull'`,
      [id],
    );
    expect(builds).toHaveLength(1);
  });

  it('changes nothing when the repository refuses a push (502 remote_failed)', async () => {
    const hook = path.join(remote, 'hooks', 'pre-receive');
    fs.writeFileSync(hook, '#!/bin/sh\necho "pushes are frozen" >&2\nexit 1\n', { mode: 0o755 });
    try {
      const dev = await t.http().post(`${base()}/dev-mode`).set(bearer(developer.token)).send({});
      const branch = dev.body.branchName as string;
      const before = local('rev-parse', branch);
      await t
        .http()
        .put(`${base()}/data-model/files`)
        .set(bearer(developer.token))
        .send({ files: [{ path: 'model/cubes/frozen.yml', content: 'cubes: []\n' }] });
      const res = await t.http().post(`${base()}/commit`).set(bearer(developer.token)).send({});
      expectErrorShape(res.body, 502, 'remote_failed');
      expect(local('rev-parse', branch)).toBe(before);
      // The pending change is still there to commit later.
      const files = await t.http().get(`${base()}/data-model/files`).set(bearer(developer.token));
      expect(JSON.stringify(files.body.items)).toContain('/model/cubes/frozen.yml');
    } finally {
      fs.rmSync(hook);
    }
  });

  it('deletes a branch on the repository too with removeOnUpstream', async () => {
    const dev = await t.http().post(`${base()}/dev-mode`).set(bearer(developer.token)).send({});
    const branch = dev.body.branchName as string;
    expect((await t.http().post(`${base()}/commit`).set(bearer(developer.token)).send({})).status).toBe(200);
    expect(remoteRef(branch)).not.toBeNull();
    const res = await t
      .http()
      .delete(`${base()}/branches`)
      .query({ branchName: branch, removeOnUpstream: 'true' })
      .set(bearer(t.admin.token));
    expect(res.body).toEqual({ success: true });
    expect(remoteRef(branch)).toBeNull();
    expect(() => local('rev-parse', '--verify', '--quiet', `refs/heads/${branch}`)).toThrow();
  });

  describe('the body `cube github connect` sends (the reference command-line tool)', () => {
    /** A deployment of the admin's, not connected yet. */
    const newDeployment = async (name: string): Promise<number> => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(deploymentInput({ name }));
      expect(res.status).toBe(200);
      return res.body.id as number;
    };
    const connect = (deployment: number, body: Record<string, unknown>) =>
      t
        .http()
        .post(`/build/api/v1/deployments/${deployment}/github/connect`)
        .set(bearer(t.admin.token))
        .send(body);
    const settings = async (deployment: number) =>
      (
        await t.sql(`SELECT deploy_branch_name, creation_method FROM deployments WHERE id = $1`, [deployment])
      )[0];

    beforeAll(() => {
      // A branch of the repository besides its default one.
      sh(work, 'push', '--quiet', 'origin', 'HEAD:release');
    });

    it('takes `branch` as the deploy branch, as `deployBranchName` is taken', async () => {
      const deployment = await newDeployment('Connected by the tool');
      // The tool's body (rust/cube-cli/src/commands/github.rs, `Cmd::Connect`): `installationId`,
      // `name` (the repository's name without its owner) and, with `--branch`, `branch`.
      const res = await connect(deployment, { installationId: 101, name: 'model', branch: 'release' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: deployment, name: 'Connected by the tool' });
      expect(await settings(deployment)).toEqual({
        deploy_branch_name: 'release',
        creation_method: 'github',
      });
      const head = execFileSync(
        'git',
        [`--git-dir=${path.join(t.config.dataModel.reposDir, `${deployment}.git`)}`, 'rev-parse', 'release'],
        { encoding: 'utf8' },
      ).trim();
      expect(head).toBe(remoteRef('release'));
      const builds = await t.sql(
        `SELECT branch, trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND trigger = 'connect'`,
        [deployment],
      );
      expect(builds).toEqual([{ branch: 'release', trigger: 'connect', commit_sha: remoteRef('release') }]);
    });

    it('refuses `branch` and `deployBranchName` naming different branches, and a bad `branch`, with 400', async () => {
      const deployment = await newDeployment('Two names');
      const before = await settings(deployment);
      const conflict = await connect(deployment, {
        installationId: 101,
        name: 'model',
        branch: 'release',
        deployBranchName: 'main',
      });
      expect(conflict.status).toBe(400);
      expectErrorShape(conflict.body, 400, 'validation_failed');
      expect(JSON.stringify(conflict.body.message)).toContain('deployBranchName');
      expect(JSON.stringify(conflict.body.message)).toContain('branch');
      for (const branch of ['a..b', 'refs/heads/main', 'dev-7-1a2b3c4d', '']) {
        const bad = await connect(deployment, { installationId: 101, name: 'model', branch });
        expect({ branch, status: bad.status }).toEqual({ branch, status: 400 });
        expectErrorShape(bad.body, 400, 'invalid_branch_name');
      }
      expect(await settings(deployment)).toEqual(before);
      expect(await t.sql(`SELECT 1 FROM model_remotes WHERE deployment_id = $1`, [deployment])).toEqual([]);
      // The same name in both is one branch.
      const same = await connect(deployment, {
        installationId: 101,
        name: 'model',
        branch: 'release',
        deployBranchName: 'release',
      });
      expect(same.status).toBe(200);
      expect(await settings(deployment)).toEqual({
        deploy_branch_name: 'release',
        creation_method: 'github',
      });
    });
  });
});
