import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Test } from 'supertest';
import { bearer, expectErrorShape, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { gitCli } from '../support/git-cli.js';

/**
 * Branch names as a hostile tenant would send them (a user holding only
 * `SchemaUpdateDevBranches`), and the refs they must never reach: every name is a short name
 * checked once at every entry point (the request DTOs: 400 `invalid_branch_name`), and what a
 * refused name leaves behind. The rules of refs below HTTP (pull of a dev branch, parallel
 * creates and writes, refs moved by another process) are in test/service/data-model.service.spec.ts.
 */

/** The personal dev branch the service gives `userId` when forked from `source`. */
const devBranchOf = (userId: number, source = 'master') =>
  `dev-${userId}-${createHash('sha1').update(source).digest('hex').slice(0, 8)}`;

interface Node {
  path: string;
  type: 'file' | 'directory';
  children: Node[];
}
const filePaths = (nodes: Node[]): string[] =>
  nodes.flatMap((n) => (n.type === 'file' ? [n.path] : filePaths(n.children)));

/** Names no entry point accepts. */
const BAD_NAMES: Array<[string, string]> = [
  ['a full ref (pending)', 'refs/pending/dev-1-0123abcd'],
  ['a full ref (heads)', 'refs/heads/master'],
  ['a reflog expression', 'master@{0}'],
  ['HEAD', 'HEAD'],
  ['@', '@'],
  ['a case variant of the dev-branch form', 'DEV-7-abcdef12'],
  ['a right-to-left override', 'feature\u202Egpj.exe'],
  ['a zero-width space', 'feat\u200Bure'],
  ['a C1 control character', 'a\u0085b'],
  ['a line separator', 'a\u2028b'],
  ['a private-use character', 'a\uE000b'],
  ['empty', ''],
];

describe('branch names and refs', () => {
  let t: TestApp;
  let victim: Actor;
  let attacker: Actor;
  let reader: Actor;

  const base = (id: number) => `/build/api/v1/deployments/${id}`;
  const repoDir = (id: number) => path.join(t.config.dataModel.reposDir, `${id}.git`);
  const gitIn = (id: number, ...args: string[]) => gitCli([`--git-dir=${repoDir(id)}`, ...args]);
  /** Every ref of the repository with its commit. */
  const refsOf = (id: number) => gitIn(id, 'for-each-ref', '--format=%(refname) %(objectname)');

  const createDeployment = async () => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const devMode = async (id: number, actor: Actor) => {
    const res = await t
      .http()
      .post(`${base(id)}/dev-mode`)
      .set(bearer(actor.token))
      .send({});
    expect(res.status).toBe(200);
    return res.body.branchName as string;
  };
  const put = (id: number, actor: Actor, files: Array<{ path: string; content: string }>) =>
    t
      .http()
      .put(`${base(id)}/data-model/files`)
      .set(bearer(actor.token))
      .send({ files });
  const commit = (id: number, actor: Actor, body: Record<string, unknown> = {}) =>
    t
      .http()
      .post(`${base(id)}/commit`)
      .set(bearer(actor.token))
      .send(body);
  const createBranch = (id: number, actor: Actor, body: Record<string, unknown>) =>
    t
      .http()
      .post(`${base(id)}/branches`)
      .set(bearer(actor.token))
      .send(body);
  const list = async (id: number, actor: Actor, query: Record<string, string> = {}) => {
    const res = await t
      .http()
      .get(`${base(id)}/data-model/files`)
      .query(query)
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return filePaths(res.body.items as Node[]).sort();
  };

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
    expect(role.status).toBe(200);
    const user = await newUser(t, t.admin, {});
    const assign = await t
      .http()
      .put(`/api/v1/roles/${role.body.id}/users/${user.userId}`)
      .set(bearer(t.admin.token))
      .send({});
    expect(assign.status).toBe(204);
    return user;
  };

  beforeAll(async () => {
    t = await startApp();
    victim = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    attacker = await userWithActions(['SchemaUpdateDevBranches', 'DeploymentRead']);
    reader = await userWithActions(['SchemaRead', 'DeploymentRead']);
  });
  afterAll(() => t.close());

  describe('a branch named like another user’s refs', () => {
    it('refuses refs/pending/<victim’s dev branch>; the victim’s writes and commit record only their files', async () => {
      const id = await createDeployment();
      const victimDev = await devMode(id, victim);
      expect((await put(id, victim, [{ path: 'model/cubes/mine.yml', content: 'cubes: []\n' }])).status).toBe(
        200,
      );

      // The attacker's own pending work: what the hijack would have recorded under the victim's name.
      const attackerDev = await devMode(id, attacker);
      expect(
        (await put(id, attacker, [{ path: 'model/cubes/planted.yml', content: 'cubes: []\n' }])).status,
      ).toBe(200);
      const hijack = await createBranch(id, attacker, {
        name: `refs/pending/${victimDev}`,
        from: attackerDev,
      });
      expectErrorShape(hijack.body, 400, 'invalid_branch_name');
      const sneak = await createBranch(id, attacker, { name: `refs/pending/${victimDev}` });
      expectErrorShape(sneak.body, 400, 'invalid_branch_name');
      expect(await refsOf(id)).not.toContain('refs/heads/refs/');

      const write = await put(id, victim, [{ path: 'model/cubes/second.yml', content: 'cubes: []\n' }]);
      expect(write.status).toBe(200);
      expect((await commit(id, victim, { message: 'Mine' })).status).toBe(200);
      const files = (await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/heads/${victimDev}`)).split('\n');
      expect(files).toEqual(expect.arrayContaining(['model/cubes/mine.yml', 'model/cubes/second.yml']));
      expect(files).not.toContain('model/cubes/planted.yml');
      expect(await gitIn(id, 'log', '-1', '--format=%s|%ae', `refs/heads/${victimDev}`)).toBe(
        `Mine|${victim.email}`,
      );
      // The attacker's pending change is still theirs alone.
      expect(await list(id, attacker)).toContain('/model/cubes/planted.yml');
    });

    it('refuses refs/heads/dev-<uid>-<hash>: a future user’s dev mode works', async () => {
      const id = await createDeployment();
      const future = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
      const theirs = devBranchOf(future.userId);
      for (const name of [`refs/heads/${theirs}`, theirs, theirs.toUpperCase()]) {
        const res = await createBranch(id, attacker, { name });
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
      }
      expect(await devMode(id, future)).toBe(theirs);
      expect((await put(id, future, [{ path: 'model/cubes/f.yml', content: 'cubes: []\n' }])).status).toBe(
        200,
      );
      expect((await commit(id, future)).status).toBe(200);
      expect(await gitIn(id, 'ls-tree', '-r', '--name-only', `refs/heads/${theirs}`)).toContain(
        'model/cubes/f.yml',
      );
    });

    it('refuses control, format, separator and private-use characters and the dev-branch form in any case', async () => {
      const id = await createDeployment();
      for (const name of [
        'DEV-7-abcdef12',
        'Dev-7-ABCDEF12',
        'a\u202Eb',
        'a\u200Bb',
        'a\u0001b',
        'a\u0085b',
        'a\u2029b',
        'a\uFEFFb',
        'a\u{10FFFD}b',
        'a\u0378b',
      ]) {
        const res = await createBranch(id, attacker, { name });
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
      }
      // Printable names outside ASCII are branch names like any other.
      expect((await createBranch(id, attacker, { name: 'feature/café' })).status).toBe(200);
    });
  });

  describe('lookups resolve exact refs only', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
      await list(id, victim);
    });

    it.each([
      [
        'build-status',
        (q: string) => t.http().get(`/api/v1/deployments/${id}/build-status`).query({ branchName: q }),
      ],
      [
        'validate',
        (q: string) =>
          t
            .http()
            .get(`${base(id)}/data-model/validate`)
            .query({ branchName: q }),
      ],
      [
        'files',
        (q: string) =>
          t
            .http()
            .get(`${base(id)}/data-model/files`)
            .query({ branchName: q }),
      ],
    ])('%s: master@{0} is 400 invalid_branch_name', async (_route, call) => {
      const res = await call('master@{0}').set(bearer(victim.token));
      expectErrorShape(res.body, 400, 'invalid_branch_name');
    });
  });

  describe('the same rule at every entry point', () => {
    let id: number;
    beforeAll(async () => {
      id = await createDeployment();
      await devMode(id, t.admin);
    });

    type Call = (name: string) => Test;
    const http = () => t.http();
    const entries: Array<[string, () => Call]> = [
      [
        'POST /branches name',
        () => (n) =>
          http()
            .post(`${base(id)}/branches`)
            .send({ name: n }),
      ],
      [
        'POST /branches from',
        () => (n) =>
          http()
            .post(`${base(id)}/branches`)
            .send({ name: 'ok-from', from: n }),
      ],
      [
        'DELETE /branches',
        () => (n) =>
          http()
            .delete(`${base(id)}/branches`)
            .query({ branchName: n }),
      ],
      [
        'POST /dev-mode',
        () => (n) =>
          http()
            .post(`${base(id)}/dev-mode`)
            .send({ branchName: n }),
      ],
      [
        'GET validate',
        () => (n) =>
          http()
            .get(`${base(id)}/data-model/validate`)
            .query({ branchName: n }),
      ],
      [
        'GET files',
        () => (n) =>
          http()
            .get(`${base(id)}/data-model/files`)
            .query({ branchName: n }),
      ],
      [
        'GET file-hashes',
        () => (n) =>
          http()
            .get(`${base(id)}/data-model/file-hashes`)
            .query({ branchName: n }),
      ],
      [
        'POST upload/start',
        () => (n) =>
          http()
            .post(`${base(id)}/data-model/upload/start`)
            .query({ branchName: n }),
      ],
      [
        'POST upload/finish',
        () => (n) =>
          http()
            .post(`${base(id)}/data-model/upload/finish`)
            .query({ branchName: n })
            .send({ transaction: { id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' }, files: {} }),
      ],
      // The body forms the reference command-line tool sends (rust/cube-cli/src/commands/deploy.rs:
      // `util::set(&mut body, "branchName", &args.branch)` on upload/start and upload/finish).
      [
        'POST upload/start body branchName',
        () => (n) =>
          http()
            .post(`${base(id)}/data-model/upload/start`)
            .send({ branchName: n }),
      ],
      [
        'POST upload/finish body branchName',
        () => (n) =>
          http()
            .post(`${base(id)}/data-model/upload/finish`)
            .send({
              transaction: { id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' },
              files: {},
              autoRemoveFiles: true,
              branchName: n,
            }),
      ],
      [
        'GET build-status',
        () => (n) => http().get(`/api/v1/deployments/${id}/build-status`).query({ branchName: n }),
      ],
      [
        'PUT files',
        () => (n) =>
          http()
            .put(`${base(id)}/data-model/files`)
            .send({ branchName: n, files: [{ path: 'a.yml', content: 'a' }] }),
      ],
      [
        'DELETE files',
        () => (n) =>
          http()
            .delete(`${base(id)}/data-model/files`)
            .send({ branchName: n, files: [{ path: 'a.yml' }] }),
      ],
      [
        'POST files/rename',
        () => (n) =>
          http()
            .post(`${base(id)}/data-model/files/rename`)
            .send({ branchName: n, files: [{ path: 'a.yml', newPath: 'b.yml' }] }),
      ],
      [
        'POST commit',
        () => (n) =>
          http()
            .post(`${base(id)}/commit`)
            .send({ branchName: n }),
      ],
      [
        'PUT staging',
        () => (n) =>
          http()
            .put(`${base(id)}/branches/staging-environment`)
            .send({ branchName: n, enabled: true }),
      ],
      [
        'POST merge',
        () => (n) =>
          http()
            .post(`${base(id)}/merge`)
            .send({ branchName: n }),
      ],
      [
        'POST merge-to-default',
        () => (n) =>
          http()
            .post(`${base(id)}/merge-to-default`)
            .send({ branchName: n }),
      ],
      [
        'POST pull',
        () => (n) =>
          http()
            .post(`${base(id)}/pull`)
            .send({ branchName: n }),
      ],
      [
        'POST github/connect deployBranchName',
        () => (n) =>
          http()
            .post(`${base(id)}/github/connect`)
            .send({ installationId: 1, name: 'acme/model', deployBranchName: n }),
      ],
      [
        // rust/cube-cli/src/commands/github.rs: `util::set(&mut body, "branch", &branch)`.
        'POST github/connect branch',
        () => (n) =>
          http()
            .post(`${base(id)}/github/connect`)
            .send({ installationId: 1, name: 'model', branch: n }),
      ],
      [
        'POST dbt-sync branchName',
        () => (n) =>
          http().post(`/api/v1/deployments/${id}/dbt-sync`).send({ branchName: n, source: 'manifest' }),
      ],
    ];

    it.each(entries)('%s refuses every bad name with 400 invalid_branch_name', async (_entry, make) => {
      const call = make();
      for (const [what, name] of BAD_NAMES) {
        const res = await call(name).set(bearer(t.admin.token));
        expect({ what, status: res.status, code: res.body.code }).toEqual({
          what,
          status: 400,
          code: 'invalid_branch_name',
        });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
      }
      // Nothing of it reached git.
      expect(await refsOf(id)).not.toMatch(/refs\/heads\/(refs|HEAD|@|DEV)/);
    });
  });

  describe('file hashes are a read', () => {
    it('answers 200 to a user holding SchemaRead (and no write action)', async () => {
      const id = await createDeployment();
      await list(id, victim);
      const res = await t
        .http()
        .get(`${base(id)}/data-model/file-hashes`)
        .set(bearer(reader.token));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'README.md',
        'model/cubes/orders.yml',
        'model/views/orders_view.yml',
      ]);
      // Writing an upload still needs the write actions.
      const start = await t
        .http()
        .post(`${base(id)}/data-model/upload/start`)
        .set(bearer(reader.token));
      expectErrorShape(start.body, 403, 'forbidden');
    });
  });
});
