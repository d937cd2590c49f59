import { Redis } from 'ioredis';
import { ModelCompiler } from '../../src/modules/data-model/compiler/model-compiler.js';
import { branchRef, GitStore } from '../../src/modules/data-model/git/git-store.js';
import { ModelVerdicts } from '../../src/modules/data-model/model-verdicts.js';
import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import { REDIS_URL } from '../support/database.js';
import { deploymentInput, waitFor } from '../support/factories.js';

const BROKEN_CUBE = `cubes:
  - name: broken
    sql_table: public.broken
    measures:
      - name: total
        type: not_a_type
`;

const cube = (name: string) => `cubes:
  - name: ${name}
    sql_table: public.${name}
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
    measures:
      - name: count
        type: count
`;

/**
 * Compile verdicts are reused for the same model tree (issue 25): validating an unchanged model
 * does not compile it again. Compiles are counted at ModelCompiler.compile, the one door to the
 * sandboxed compiler, which still runs every compile it is asked for.
 */
describe('compile verdicts reused by model tree', () => {
  let t: TestApp;
  let developer: Actor;
  let other: Actor;
  let id: number;
  let compiles: jest.SpyInstance;

  const base = (deployment = id) => `/build/api/v1/deployments/${deployment}`;
  const validate = async (query: Record<string, string> = {}, actor = developer, deployment = id) => {
    const res = await t
      .http()
      .get(`${base(deployment)}/data-model/validate`)
      .query(query)
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body as { valid: boolean; errors: Array<{ message: string }>; cubesCount: number };
  };
  const put = async (path: string, content: string) => {
    const res = await t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path, content }] });
    expect(res.status).toBe(200);
  };
  const remove = async (path: string) => {
    const res = await t
      .http()
      .delete(`${base()}/data-model/files`)
      .set(bearer(developer.token))
      .send({ files: [{ path }] });
    expect(res.status).toBe(200);
  };
  const createDeployment = async (actor: Actor) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  /** Model compiles (calls with model files; an empty model never reaches a sandbox). */
  const compileCount = () => compiles.mock.calls.filter(([files]) => (files as unknown[]).length > 0).length;

  beforeAll(async () => {
    // Builds run in this API; a compile the sandbox stops is stopped after 2 s.
    // Fair shares: two compiles at once in the process, one of them per account; a validate waits
    // 1 s for a slot (a compile that loops holds one for its 2 s and more).
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'true',
      MODEL_COMPILE_TIMEOUT_MS: '2000',
      MODEL_COMPILE_CONCURRENCY: '2',
      MODEL_COMPILE_ACCOUNT_CONCURRENCY: '1',
      MODEL_COMPILE_QUEUE_MS: '1000',
    });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    other = await newAccount(t, 'globex');
    id = await createDeployment(t.admin);
    const dev = await t.http().post(`${base()}/dev-mode`).set(bearer(developer.token)).send({});
    expect(dev.status).toBe(200);
    compiles = jest.spyOn(t.app.get(ModelCompiler), 'compile');
  });
  afterAll(async () => {
    compiles.mockRestore();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${t.config.queue.prefix}:model-verdict:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await t.close();
  });

  it('compiles an unchanged model once, whichever branch holds the same tree', async () => {
    // The deployment's first build compiles the starter project and keeps its verdict.
    const built = await waitFor(
      async () =>
        (await t.http().get(`/api/v1/deployments/${id}/build-status`).set(bearer(t.admin.token))).body as {
          status: string;
        },
      (s) => s.status !== 'queued' && s.status !== 'building',
      60_000,
      250,
    );
    expect(built.status).toBe('built');
    const before = compileCount();
    const first = await validate();
    const again = await validate();
    // The dev branch was forked from the deploy branch and holds the same tree.
    const dev = await validate({ devMode: 'true' });
    expect(first).toEqual({
      deploymentId: id,
      branchName: 'master',
      mode: 'production',
      valid: true,
      errors: [],
      cubesCount: 2,
      impact: [],
    });
    expect(again).toEqual(first);
    expect(dev).toMatchObject({ mode: 'dev_mode', valid: true, errors: [], cubesCount: 2 });
    expect(compileCount()).toBe(before);
  });

  it('serves a verdict kept in Redis to a process that just started, at its first lookup', async () => {
    // A replica just started has its own verdicts and its own Redis client, not yet connected.
    const fresh = new ModelVerdicts(t.config, t.app.get(GitStore), t.app.get(ModelCompiler));
    try {
      const before = compileCount();
      const head = await t.app.get(GitStore).resolve(id, branchRef('master'));
      const verdict = await fresh.of(t.admin.accountId, id, head, '');
      expect(verdict).toMatchObject({ valid: true, cubesCount: 2, reused: true });
      expect(compileCount()).toBe(before);
    } finally {
      await fresh.onApplicationShutdown();
    }
  });

  it('compiles a changed model again, and reuses the earlier verdict when the change is undone', async () => {
    const before = compileCount();
    await put('/model/cubes/broken.yml', BROKEN_CUBE);
    const broken = await validate({ devMode: 'true' });
    expect(broken.valid).toBe(false);
    expect(broken.errors.map((e) => e.message).join('\n')).toMatch(/notAType/);
    expect(compileCount()).toBe(before + 1);

    await remove('/model/cubes/broken.yml');
    const fixed = await validate({ devMode: 'true' });
    expect(fixed).toMatchObject({ valid: true, cubesCount: 2 });
    expect(compileCount()).toBe(before + 1);
  });

  it('shares one compile among identical validates sent together', async () => {
    await put('/model/cubes/together.yml', cube('together'));
    const before = compileCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => validate({ devMode: 'true' })));
    for (const answer of answers) expect(answer).toMatchObject({ errors: [], valid: true, cubesCount: 3 });
    expect(compileCount()).toBe(before + 1);
  });

  it('keeps each account’s verdicts apart: the same model of another account is compiled for it', async () => {
    const otherId = await createDeployment(other);
    const before = compileCount();
    const first = await validate({}, other, otherId);
    expect(first).toMatchObject({ valid: true, cubesCount: 2 });
    // The starter's tree is the same as this account's, whose verdict is cached: not shared.
    expect(compileCount()).toBe(before + 1);
  });

  it('compiles again after a compile the sandbox stopped (its time ran out)', async () => {
    await put('/model/cubes/forever.js', 'for (;;) {}\n');
    const before = compileCount();
    const first = await validate({ devMode: 'true' });
    const second = await validate({ devMode: 'true' });
    for (const answer of [first, second]) {
      expect(answer.valid).toBe(false);
      expect(answer.errors.map((e) => e.message).join('\n')).toMatch(/timed out/i);
    }
    expect(compileCount()).toBe(before + 2);
    await remove('/model/cubes/forever.js');
  });

  it('gives each account its share of compiles: past it 429 with Retry-After, while another account compiles at once', async () => {
    const verdicts = t.app.get(ModelVerdicts);
    const running = () => Promise.resolve(verdicts.shareStats().byAccount);
    const enterDevMode = async (actor: Actor, deployment: number) => {
      const res = await t
        .http()
        .post(`${base(deployment)}/dev-mode`)
        .set(bearer(actor.token))
        .send({});
      expect(res.status).toBe(200);
    };
    const putAs = async (actor: Actor, deployment: number, path: string, content: string) => {
      const res = await t
        .http()
        .put(`${base(deployment)}/data-model/files`)
        .set(bearer(actor.token))
        .send({ files: [{ path, content }] });
      expect(res.status).toBe(200);
    };
    const validateAs = (actor: Actor, deployment: number) =>
      t
        .http()
        .get(`${base(deployment)}/data-model/validate`)
        .query({ devMode: 'true' })
        .set(bearer(actor.token));
    // Three models no one compiled yet: two of this account (two dev branches), one of the other's.
    await put('/model/cubes/hog.js', 'for (;;) {}\n');
    await enterDevMode(t.admin, id);
    await putAs(t.admin, id, '/model/cubes/hog2.js', 'for (;;) {} // another\n');
    const otherId = await createDeployment(other);
    await enterDevMode(other, otherId);
    await putAs(other, otherId, '/model/cubes/fresh.yml', cube('fresh'));
    await waitFor(running, (byAccount) => Object.keys(byAccount).length === 0, 60_000);

    const accountId = String(t.admin.accountId);
    const hog = validateAs(developer, id).then((res) => res);
    await waitFor(running, (byAccount) => byAccount[accountId] === 1);
    // The same account's next compile waits its 1 s for a slot that its first holds 2 s and more.
    const refused = await validateAs(t.admin, id);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, code: 'compile_limit_reached' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another account's compile starts while the first account's still runs.
    const fresh = validateAs(other, otherId).then((res) => res);
    const both = await waitFor(running, (byAccount) => Object.keys(byAccount).length === 2);
    expect(both).toEqual({ [accountId]: 1, [String(other.accountId)]: 1 });
    expect((await fresh).body).toMatchObject({ valid: true, cubesCount: 3 });
    expect((await hog).body).toMatchObject({ valid: false });
    // Both ended: every slot is free again.
    expect(verdicts.shareStats()).toEqual({ running: 0, waiting: 0, byAccount: {} });
  });
});
