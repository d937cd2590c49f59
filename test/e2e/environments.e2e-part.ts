import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { postDeployment } from '../support/factories.js';

interface Environment {
  id: string;
  type: string;
  branch: string | null;
  user: string | null;
  api_credentials: Array<Record<string, unknown>>;
}

describe('deployment environments', () => {
  let t: TestApp;
  let developer: Actor;
  let analyst: Actor;
  let other: Actor;
  let otherDeployment: number;
  let id: number;
  let url: string;
  let devBranch: string;
  let analystBranch: string;

  const envs = (deploymentId: number, query: Record<string, string | number> = {}, actor = t.admin) =>
    t.http().get(`/api/v1/deployments/${deploymentId}/environments`).query(query).set(bearer(actor.token));
  const build = (deploymentId: number) => `/build/api/v1/deployments/${deploymentId}`;
  const createDeployment = (actor: Actor) => postDeployment(t, actor);
  const devMode = async (deploymentId: number, actor: Actor) => {
    const res = await t
      .http()
      .post(`${build(deploymentId)}/dev-mode`)
      .set(bearer(actor.token))
      .send({});
    expect(res.status).toBe(200);
    return res.body.branchName as string;
  };
  const branch = async (deploymentId: number, name: string) => {
    const res = await t
      .http()
      .post(`${build(deploymentId)}/branches`)
      .set(bearer(t.admin.token))
      .send({ name });
    expect(res.status).toBe(200);
  };
  const staging = async (deploymentId: number, branchName: string, enabled: boolean) => {
    const res = await t
      .http()
      .put(`${build(deploymentId)}/branches/staging-environment`)
      .set(bearer(t.admin.token))
      .send({ branchName, enabled });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    t = await startApp();
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    analyst = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    other = await newAccount(t, 'globex');
    otherDeployment = (await createDeployment(other)).id;
    const d = await createDeployment(t.admin);
    id = d.id;
    url = d.deploymentUrl;
    await branch(id, 'feature/b');
    await branch(id, 'feature-a');
    await branch(id, 'not-staged');
    await staging(id, 'feature/b', true);
    await staging(id, 'feature-a', true);
    devBranch = await devMode(id, developer);
    analystBranch = await devMode(id, analyst);
  });
  afterAll(() => t.close());

  it('lists production, then staging branches with the toggle on, then dev branches, with their APIs', async () => {
    const res = await envs(id);
    expect(res.status).toBe(200);
    const devs = [
      { branch: devBranch, user: developer.email },
      { branch: analystBranch, user: analyst.email },
    ].sort((a, b) => (a.branch < b.branch ? -1 : 1));
    const expected: Environment[] = [
      {
        id: expect.stringMatching(/^[1-9]\d*$/),
        type: 'production',
        branch: 'master',
        user: null,
        api_credentials: [
          { type: 'rest', version: 1, url: `${url}/cubejs-api/v1`, host: null, port: null, database: null },
          { type: 'sql', version: 1, url: null, host: new URL(url).hostname, port: 5432, database: null },
        ],
      },
      ...['feature-a', 'feature/b'].map((b) => ({
        id: expect.stringMatching(/^[1-9]\d*$/),
        type: 'staging',
        branch: b,
        user: null,
        api_credentials: [
          {
            type: 'rest',
            version: 1,
            url: `${url}/dev-mode/${encodeURIComponent(b)}/cubejs-api/v1`,
            host: null,
            port: null,
            database: null,
          },
        ],
      })),
      ...devs.map((d) => ({
        id: expect.stringMatching(/^[1-9]\d*$/),
        type: 'development',
        branch: d.branch,
        user: d.user,
        api_credentials: [
          {
            type: 'rest',
            version: 1,
            url: `${url}/dev-mode/${d.branch}/cubejs-api/v1`,
            host: null,
            port: null,
            database: null,
          },
        ],
      })),
    ];
    expect(res.body.items).toEqual(expected);
    // The deprecated fields are still populated.
    expect(res.body.data).toEqual(expected);
    expect(res.body.count).toBe(5);
    expect(res.body.pagination).toEqual({ total: 5, offset: 0, limit: 100 });
    expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    // Every environment has an id of its own, and reading again gives the same ids.
    const ids = (res.body.items as Environment[]).map((e) => e.id);
    expect(new Set(ids).size).toBe(5);
    expect(((await envs(id)).body.items as Environment[]).map((e) => e.id)).toEqual(ids);
  });

  it('filters by type', async () => {
    const branches = async (type: string) =>
      ((await envs(id, { type })).body.items as Environment[]).map((e) => e.branch);
    expect(await branches('production')).toEqual(['master']);
    expect(await branches('staging')).toEqual(['feature-a', 'feature/b']);
    expect((await branches('development')).sort()).toEqual([devBranch, analystBranch].sort());
    const res = await envs(id, { type: 'staging' });
    expect(res.body.count).toBe(2);
  });

  it('follows the staging toggle and branch deletion: a branch staged again gets a new id', async () => {
    const stagedId = async (name: string) =>
      ((await envs(id, { type: 'staging' })).body.items as Environment[]).find((e) => e.branch === name)?.id;
    await branch(id, 'short-lived');
    await staging(id, 'short-lived', true);
    const first = await stagedId('short-lived');
    expect(first).toMatch(/^[1-9]\d*$/);
    // Turning an environment on that is on already keeps it.
    await staging(id, 'short-lived', true);
    expect(await stagedId('short-lived')).toBe(first);
    await staging(id, 'short-lived', false);
    expect(await stagedId('short-lived')).toBeUndefined();
    await staging(id, 'short-lived', true);
    const second = await stagedId('short-lived');
    expect(second).toMatch(/^[1-9]\d*$/);
    expect(second).not.toBe(first);
    const del = await t
      .http()
      .delete(`${build(id)}/branches`)
      .query({ branchName: 'short-lived' })
      .set(bearer(t.admin.token));
    expect(del.status).toBe(200);
    expect(await stagedId('short-lived')).toBeUndefined();
    expect(await t.sql(`SELECT id FROM environments WHERE id = ANY($1::int[])`, [[first, second]])).toEqual(
      [],
    );
  });

  it("keeps production's id when the deploy branch changes", async () => {
    const fresh = await createDeployment(t.admin);
    const before = (await envs(fresh.id)).body.items as Environment[];
    await branch(fresh.id, 'release');
    const put = await t
      .http()
      .put(`/api/v1/deployments/${fresh.id}`)
      .set(bearer(t.admin.token))
      .send({ deployBranchName: 'release' });
    expect(put.status).toBe(200);
    const after = (await envs(fresh.id)).body.items as Environment[];
    expect(after).toEqual([{ ...before[0], branch: 'release' }]);
  });

  it('pages with cursors and with the legacy offset, the two styles giving the same order', async () => {
    const all = ((await envs(id)).body.items as Environment[]).map((e) => e.id);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await envs(id, after ? { first: 2, after } : { first: 2 });
      expect(res.status).toBe(200);
      seen.push(...(res.body.items as Environment[]).map((e) => e.id));
      if (!res.body.pageInfo.hasNextPage) break;
      after = res.body.pageInfo.endCursor;
    }
    expect(seen).toEqual(all);
    const legacy = await envs(id, { limit: 2, offset: 3 });
    expect((legacy.body.items as Environment[]).map((e) => e.id)).toEqual(all.slice(3, 5));
    expect(legacy.body.pagination).toEqual({ total: all.length, offset: 3, limit: 2 });
    const beyond = await envs(id, { limit: 2, offset: 50 });
    expect(beyond.body.items).toEqual([]);
    expect(beyond.body.count).toBe(all.length);
  });

  it('has only production on a new deployment', async () => {
    const fresh = await createDeployment(t.admin);
    const res = await envs(fresh.id);
    expect((res.body.items as Environment[]).map((e) => e.type)).toEqual(['production']);
  });

  it('answers 401 without a token', async () => {
    const res = await t.http().get(`/api/v1/deployments/${id}/environments`);
    expect(res.status).toBe(401);
    expectErrorShape(res.body, 401);
  });

  it('answers 403 without DeploymentRead', async () => {
    const nobody = await newUser(t, t.admin, { defaultRoles: [] });
    const res = await envs(id, {}, nobody);
    expectErrorShape(res.body, 403, 'forbidden');
  });

  it("answers 404 for another account's deployment and for one that does not exist", async () => {
    expectErrorShape((await envs(otherDeployment)).body, 404, 'deployment_not_found');
    expectErrorShape((await envs(2_000_000_000)).body, 404, 'deployment_not_found');
  });

  it.each([
    [{ type: 'preview' }, 'validation_failed'],
    [{ first: 0 }, 'validation_failed'],
    [{ limit: -1 }, 'validation_failed'],
    [{ after: 'garbage' }, 'invalid_cursor'],
    [{ first: 1, offset: 0 }, 'pagination_conflict'],
    [{ unknown: 'x' }, 'validation_failed'],
  ])('answers 400 to %j', async (query, code) => {
    const res = await envs(id, query);
    expectErrorShape(res.body, 400, code);
  });

  it('refuses a cursor of another list', async () => {
    const branches = await t
      .http()
      .get(`${build(id)}/branches`)
      .query({ first: 1 })
      .set(bearer(t.admin.token));
    expect(branches.status).toBe(200);
    const res = await envs(id, { after: branches.body.pageInfo.endCursor as string });
    expectErrorShape(res.body, 400, 'invalid_cursor');
  });
});
