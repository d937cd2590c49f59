import { bearer, expectErrorShape, newAccount, newUser, startApp, type TestApp } from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';

/**
 * With no runtime configured (the default): no pods, and the logs are the platform's own records
 * of the deployment, the log lines of its job runs (here the build its creation queued).
 */
describe('pods and logs with no runtime configured', () => {
  let t: TestApp;
  let id: number;
  let runId: string;

  const get = (route: string, query: Record<string, unknown> = {}, token = t.admin.token, deployment = id) =>
    t.http().get(`/api/v1/deployments/${deployment}/${route}`).query(query).set(bearer(token));
  const messages = (body: { items: Array<{ message: string }> }) => body.items.map((l) => l.message);

  beforeAll(async () => {
    // This API runs the builds it queues.
    t = await startApp({ RUN_JOBS_IN_PROCESS: 'true' });
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    id = res.body.id;
    const build = await waitFor(
      async () => (await get('build-status')).body as { status: string },
      (s) => s.status !== 'queued' && s.status !== 'building',
      60_000,
      250,
    );
    expect(build.status).toBe('built');
    const [run] = await t.sql<{ id: string }>(`SELECT id FROM job_runs WHERE owner = $1`, [
      `deployment:${id}`,
    ]);
    runId = run.id;
  });
  afterAll(() => t.close());

  it('lists no pods: this service runs none', async () => {
    const res = await get('pods');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    });
  });

  it('serves the log lines of the deployment’s build, oldest first, each naming its run', async () => {
    const res = await get('logs');
    expect(res.status).toBe(200);
    expect(messages(res.body)).toEqual([
      expect.stringMatching(/^Checking out master at [0-9a-f]{12}$/),
      'Compiling 3 files',
      'Built: 2 cubes',
    ]);
    for (const line of res.body.items) {
      expect(line).toEqual({
        date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
        pod: `deployment.build:${runId}`,
        message: expect.any(String),
      });
    }
    const dates = res.body.items.map((l: { date: string }) => l.date);
    expect([...dates].sort()).toEqual(dates);
    const [row] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM job_run_logs WHERE run_id = $1`,
      [runId],
    );
    expect(res.body.items).toHaveLength(row.n);
    expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it('pages the tail: the last lines first, then the lines after a cursor', async () => {
    const last = await get('logs', { first: 1 });
    expect(messages(last.body)).toEqual(['Built: 2 cubes']);
    expect(last.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    const all = await get('logs', { first: 3 });
    const next = await get('logs', { first: 1, after: all.body.pageInfo.startCursor });
    expect(messages(next.body)).toEqual(['Compiling 3 files']);
    expect(next.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const then = await get('logs', { first: 1, after: next.body.pageInfo.endCursor });
    expect(messages(then.body)).toEqual(['Built: 2 cubes']);
    expect(then.body.pageInfo.hasNextPage).toBe(false);
    const idle = await get('logs', { after: then.body.pageInfo.endCursor });
    expect(idle.body.items).toEqual([]);
    expect(idle.body.pageInfo.endCursor).toBe(then.body.pageInfo.endCursor);
  });

  it('reads one run with pod; a run that is not the deployment’s is 404 pod_not_found', async () => {
    const one = await get('logs', { pod: `deployment.build:${runId}`, source: 'dev', container: 'MAIN' });
    expect(one.status).toBe(200);
    expect(one.body.items).toHaveLength(3);

    const other = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    const [theirs] = await t.sql<{ id: string }>(`SELECT id FROM job_runs WHERE owner = $1`, [
      `deployment:${other.body.id}`,
    ]);
    for (const pod of [
      `deployment.build:${theirs.id}`,
      'deployment.build:999999999',
      `other.job:${runId}`,
      'api-0',
    ]) {
      const res = await get('logs', { pod });
      expect({ pod, status: res.status }).toEqual({ pod, status: 404 });
      expectErrorShape(res.body, 404, 'pod_not_found');
    }
  });

  describe.each([['pods'], ['logs']])('GET /deployments/{id}/%s', (route) => {
    it('answers 401 without a token', async () => {
      const res = await t.http().get(`/api/v1/deployments/${id}/${route}`);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to a user without DeploymentRead, and 200 to a Viewer', async () => {
      const nobody = await newUser(t, t.admin, { defaultRoles: [] });
      const refused = await get(route, {}, nobody.token);
      expect(refused.status).toBe(403);
      expectErrorShape(refused.body, 403, 'forbidden');
      const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await get(route, {}, viewer.token)).status).toBe(200);
    });

    it('answers 404 for another account’s deployment and for one that does not exist', async () => {
      const other = await newAccount(t, `acct-${route}`);
      const theirs = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(other.token))
        .send(deploymentInput());
      for (const deployment of [theirs.body.id as number, 2147483647]) {
        const res = await get(route, {}, t.admin.token, deployment);
        expect({ deployment, status: res.status }).toEqual({ deployment, status: 404 });
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });

    it('answers 400 for bad paging, unknown parameters and a bad id', async () => {
      for (const query of [
        { first: 0 },
        { first: 1001 },
        { first: 1.5 },
        { limit: 10 },
        { follow: 'true' },
      ]) {
        const res = await get(route, query);
        expect({ query, status: res.status, code: res.body.code }).toEqual({
          query,
          status: 400,
          code: 'validation_failed',
        });
      }
      const cursor = await get(route, { after: 'not-a-cursor' });
      expect(cursor.status).toBe(400);
      expectErrorShape(cursor.body, 400, 'invalid_cursor');
      const badId = await t.http().get(`/api/v1/deployments/abc/${route}`).set(bearer(t.admin.token));
      expect(badId.status).toBe(400);
      expectErrorShape(badId.body, 400, 'validation_failed');
    });
  });

  it('answers 400 for a source or container the reference does not list', async () => {
    for (const query of [{ source: 'staging' }, { container: 'sidecar' }, { pod: '' }]) {
      const res = await get('logs', query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expectErrorShape(res.body, 400, 'validation_failed');
    }
  });
});
