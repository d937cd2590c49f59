import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { bearer, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';

const BROKEN_CUBE = `cubes:
  - name: broken
    sql_table: public.broken
    measures:
      - name: total
        type: not_a_type
`;

describe('data model builds and validation (Cube’s compiler)', () => {
  let t: TestApp;
  let developer: Actor;
  let id: number;

  const base = () => `/build/api/v1/deployments/${id}`;
  const status = async (branchName?: string) =>
    (
      await t
        .http()
        .get(`/api/v1/deployments/${id}/build-status`)
        .query(branchName ? { branchName } : {})
        .set(bearer(developer.token))
    ).body as Record<string, unknown>;
  const settled = (branchName?: string) =>
    waitFor(
      () => status(branchName),
      (s) => s.status !== 'queued' && s.status !== 'building',
      60_000,
      250,
    );
  const gitIn = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`, ...args], {
      encoding: 'utf8',
    }).trim();

  beforeAll(async () => {
    // This API runs the builds it queues; a branch holds 4 files at most (the starter has 3).
    t = await startApp({ RUN_JOBS_IN_PROCESS: 'true', MODEL_MAX_FILES: '4' });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    id = res.body.id;
  });
  afterAll(() => t.close());

  it('builds a new deployment’s starter project: built, at the deploy branch’s head', async () => {
    const s = await settled();
    expect(s).toEqual({
      deploymentId: id,
      branchName: 'master',
      mode: 'production',
      status: 'built',
      buildJobId: expect.any(Number),
      deploymentStatus: 'succeeded',
      errorText: null,
      filesHash: expect.stringMatching(/^[0-9a-f]{40}$/),
      lastHash: gitIn('rev-parse', 'master'),
      updatedAt: expect.any(String),
    });
  });

  it('validates the deploy branch with the real compiler', async () => {
    const res = await t.http().get(`${base()}/data-model/validate`).set(bearer(developer.token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      deploymentId: id,
      branchName: 'master',
      mode: 'production',
      valid: true,
      errors: [],
      cubesCount: 2,
    });
  });

  it('reports compile errors as 200 valid:false, and a commit of them builds as failed with the errors', async () => {
    const dev = await t.http().post(`${base()}/dev-mode`).set(bearer(developer.token)).send({});
    const branch = dev.body.branchName as string;
    await t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path: '/model/cubes/broken.yml', content: BROKEN_CUBE }] });

    const pending = await t
      .http()
      .get(`${base()}/data-model/validate`)
      .query({ devMode: 'true' })
      .set(bearer(developer.token));
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ branchName: branch, mode: 'dev_mode', valid: false, cubesCount: 0 });
    expect(pending.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          fileName: 'model/cubes/broken.yml',
          message: expect.stringContaining('measures.total.type'),
        }),
      ]),
    );
    // The committed branch (what others see) still compiles.
    const committed = await t
      .http()
      .get(`${base()}/data-model/validate`)
      .query({ branchName: branch })
      .set(bearer(t.admin.token));
    expect(committed.body).toMatchObject({ valid: true, cubesCount: 2 });

    expect((await t.http().post(`${base()}/commit`).set(bearer(developer.token)).send({})).status).toBe(200);
    // With no branchName, build-status reads the caller's active dev-mode branch.
    const s = await settled();
    expect(s).toMatchObject({
      branchName: branch,
      mode: 'dev_mode',
      status: 'failed',
      lastHash: gitIn('rev-parse', branch),
      errorText: expect.stringContaining('model/cubes/broken.yml'),
    });
  });

  it('refuses a write past MODEL_MAX_FILES with 400 too_many_files and changes nothing', async () => {
    // The dev branch holds the starter's 3 files and broken.yml: a fifth is one too many.
    const res = await t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path: '/model/cubes/fifth.yml', content: 'cubes: []\n' }] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('too_many_files');
    const files = await t.http().get(`${base()}/data-model/files`).set(bearer(developer.token));
    expect(JSON.stringify(files.body.items)).not.toContain('fifth.yml');
    // Replacing a file does not add one.
    const replace = await t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path: '/model/cubes/broken.yml', content: 'cubes: []\n' }] });
    expect(replace.status).toBe(200);
  });

  it('leaves one effective build when a build runs twice', async () => {
    const [build] = await t.sql<{ id: number; outcome: string; files_hash: string }>(
      `SELECT id, outcome, files_hash FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master'`,
      [id],
    );
    const { ModelBuilds } = await import('../../src/modules/data-model/model-builds.js');
    const logs: string[] = [];
    // The handler itself, delivered once more outside the runner (whose claims are tested in queue.e2e).
    const ctx = {
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
    await t.app.get(ModelBuilds).build({ buildId: build.id }, ctx);
    const after = await t.sql(
      `SELECT id, outcome, files_hash FROM deployment_builds WHERE deployment_id = $1 AND branch = 'master'`,
      [id],
    );
    expect(after).toEqual([build]);
    expect(logs).toContain('Built: 2 cubes');
  });
});
