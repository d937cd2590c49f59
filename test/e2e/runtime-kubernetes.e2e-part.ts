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
import {
  fakePod,
  kubeletTime,
  NAMESPACE,
  PLATFORM_URL,
  startKubernetesFake,
  type KubernetesFake,
} from '../support/kubernetes-fake.js';
import { freePort } from '../support/process.js';

/** The kubelet's timestamp `s` seconds into the test's minute. */
const at = (s: number) => kubeletTime(`2026-03-01T12:00:${String(s).padStart(2, '0')}.250Z`);

async function createDeployment(t: TestApp, actor: Actor): Promise<number> {
  return (await postDeployment(t, actor)).id;
}

describe('pods and logs from Kubernetes (a loopback API server)', () => {
  let fake: KubernetesFake;
  let t: TestApp;
  let id: number;
  let otherId: number;

  /** The deployment's pods and a few that are not its own; every test starts from these. */
  const seed = () => {
    const mine = { deployment: String(id) };
    fake.reset();
    fake.pods = [
      fakePod(
        'api-0',
        { ...mine, source: 'production', type: 'api' },
        {
          'cubejs-server': [
            [at(1), 'api started'],
            [at(4), 'api query 1'],
          ],
          vector: [[at(2), 'vector ready']],
        },
      ),
      fakePod(
        'worker-0',
        { ...mine, source: 'production', type: 'refresh-worker' },
        {
          'cubejs-server': [
            [at(3), 'worker tick'],
            [at(5), 'worker: line one'],
            [at(5), 'worker: line two'],
          ],
        },
      ),
      fakePod(
        'dev-0',
        { ...mine, source: 'dev', type: 'dev' },
        { 'cubejs-server': [[at(2), 'dev ready']] },
        { initContainers: [{ name: 'init-model', log: [[at(0), 'copying model']] }] },
      ),
      fakePod(
        'proxy-0',
        { ...mine, source: 'production', type: 'proxy' },
        { 'api-proxy': [[at(6), 'proxy up']] },
      ),
      {
        ...fakePod('pending-0', { ...mine, source: 'production' }, { 'cubejs-server': [] }),
        containers: [{ name: 'cubejs-server', log: [], started: false }],
        phase: 'Pending',
        ready: false,
      },
      // Not the deployment's: another deployment, no source label, another namespace.
      fakePod(
        'other-0',
        { deployment: String(otherId), source: 'production' },
        { 'cubejs-server': [[at(1), 'x']] },
      ),
      fakePod('stray-0', mine, { 'cubejs-server': [[at(1), 'stray']] }),
      {
        ...fakePod('elsewhere-0', { ...mine, source: 'production' }, { 'cubejs-server': [[at(1), 'x']] }),
        namespace: 'other-ns',
      },
    ];
    fake.pods.find((p) => p.name === 'dev-0')!.containers[0].restarts = 2;
  };
  const pods = (query: Record<string, unknown> = {}, deployment = id, token = t.admin.token) =>
    t.http().get(`/api/v1/deployments/${deployment}/pods`).query(query).set(bearer(token));
  const logs = (query: Record<string, unknown> = {}, deployment = id, token = t.admin.token) =>
    t.http().get(`/api/v1/deployments/${deployment}/logs`).query(query).set(bearer(token));
  const lines = (body: { items: Array<{ pod: string; message: string }> }) =>
    body.items.map((l) => `${l.pod}: ${l.message}`);

  beforeAll(async () => {
    fake = await startKubernetesFake();
    t = await startApp(fake.env({ timeoutMs: 1000 }));
    id = await createDeployment(t, t.admin);
    otherId = await createDeployment(t, t.admin);
  });
  beforeEach(seed);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  describe('GET /deployments/{id}/pods', () => {
    it('lists the pods labelled with the deployment and a source, by name, in the namespace', async () => {
      const res = await pods();
      expect(res.status).toBe(200);
      expect(res.body.items.map((p: { name: string }) => p.name)).toEqual([
        'api-0',
        'dev-0',
        'pending-0',
        'proxy-0',
        'worker-0',
      ]);
      expect(res.body.items[0]).toEqual({
        name: 'api-0',
        status: 'Running',
        ready: true,
        restartCount: 0,
        type: 'api',
        containers: ['cubejs-server', 'vector'],
      });
      expect(res.body.items[1]).toMatchObject({ name: 'dev-0', restartCount: 2, type: 'dev' });
      expect(res.body.items[2]).toMatchObject({
        name: 'pending-0',
        status: 'ContainerCreating',
        ready: false,
      });
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
      expect(fake.requests).toEqual([
        {
          method: 'GET',
          path: `/api/v1/namespaces/${NAMESPACE}/pods`,
          query: { labelSelector: `deployment=${id},source in (production,dev)` },
          auth: 'ok',
        },
      ]);
    });

    it('pages by name with first and after', async () => {
      const page = await pods({ first: 2 });
      expect(page.body.items.map((p: { name: string }) => p.name)).toEqual(['api-0', 'dev-0']);
      expect(page.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      const next = await pods({ first: 2, after: page.body.pageInfo.endCursor });
      expect(next.body.items.map((p: { name: string }) => p.name)).toEqual(['pending-0', 'proxy-0']);
      const last = await pods({ first: 2, after: next.body.pageInfo.endCursor });
      expect(last.body.items.map((p: { name: string }) => p.name)).toEqual(['worker-0']);
      expect(last.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    });

    it('shows another deployment its own pods only', async () => {
      const res = await pods({}, otherId);
      expect(res.body.items.map((p: { name: string }) => p.name)).toEqual(['other-0']);
    });
  });

  describe('GET /deployments/{id}/logs', () => {
    it('merges the cubejs-server logs of every pod chronologically, as {date, pod, message}', async () => {
      const res = await logs();
      expect(res.status).toBe(200);
      expect(res.body.items[0]).toEqual({ date: at(1), pod: 'api-0', message: 'api started' });
      expect(lines(res.body)).toEqual([
        'api-0: api started',
        'dev-0: dev ready',
        'worker-0: worker tick',
        'api-0: api query 1',
        'worker-0: worker: line one',
        'worker-0: worker: line two',
      ]);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      const reads = fake.requests.filter((r) => r.path.endsWith('/log'));
      // The pending pod's container has not started: it is not asked for a log.
      expect(reads.map((r) => r.path).sort()).toEqual(
        ['api-0', 'dev-0', 'worker-0'].map((p) => `/api/v1/namespaces/${NAMESPACE}/pods/${p}/log`),
      );
      for (const r of reads) {
        expect(r).toMatchObject({
          auth: 'ok',
          query: {
            container: 'cubejs-server',
            tailLines: '101',
            timestamps: 'true',
            limitBytes: expect.any(String),
          },
        });
      }
    });

    it('reads the production pods or the dev-mode ones with source', async () => {
      expect(lines((await logs({ source: 'production' })).body)).toEqual([
        'api-0: api started',
        'worker-0: worker tick',
        'api-0: api query 1',
        'worker-0: worker: line one',
        'worker-0: worker: line two',
      ]);
      expect(fake.requests[0].query.labelSelector).toBe(`deployment=${id},source=production`);
      expect(lines((await logs({ source: 'dev' })).body)).toEqual(['dev-0: dev ready']);
    });

    it('reads the container asked for: by name, INIT (first init container) or MAIN (first container)', async () => {
      expect(lines((await logs({ container: 'vector' })).body)).toEqual(['api-0: vector ready']);
      expect(lines((await logs({ container: 'api-proxy' })).body)).toEqual(['proxy-0: proxy up']);
      fake.reset();
      expect(lines((await logs({ container: 'INIT' })).body)).toEqual(['dev-0: copying model']);
      expect(fake.requests.find((r) => r.path.endsWith('/log'))?.query.container).toBe('init-model');
      expect(lines((await logs({ container: 'MAIN', source: 'production' })).body)).toEqual([
        'api-0: api started',
        'worker-0: worker tick',
        'api-0: api query 1',
        'worker-0: worker: line one',
        'worker-0: worker: line two',
        'proxy-0: proxy up',
      ]);
    });

    it('reads one pod of the deployment; another pod is 404 pod_not_found', async () => {
      expect(lines((await logs({ pod: 'worker-0', first: 2 })).body)).toEqual([
        'worker-0: worker: line one',
        'worker-0: worker: line two',
      ]);
      for (const query of [
        { pod: 'nope-0' },
        { pod: 'other-0' },
        { pod: 'stray-0' },
        { pod: 'elsewhere-0' },
        { pod: 'dev-0', source: 'production' },
      ]) {
        const res = await logs(query);
        expect({ query, status: res.status }).toEqual({ query, status: 404 });
        expectErrorShape(res.body, 404, 'pod_not_found');
      }
      const lacking = await logs({ pod: 'worker-0', container: 'vector' });
      expect(lacking.status).toBe(400);
      expectErrorShape(lacking.body, 400, 'validation_failed');
      expect(JSON.stringify(lacking.body.message)).toContain('worker-0 has no vector container');
    });

    it('pages a tail: the last lines, then what was written after them (sinceTime), without losing or repeating a line', async () => {
      const tail = await logs({ first: 2 });
      expect(lines(tail.body)).toEqual(['worker-0: worker: line one', 'worker-0: worker: line two']);
      expect(tail.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

      const worker = fake.pods.find((p) => p.name === 'worker-0')!.containers[0].log;
      worker.push([at(7), 'new one'], [at(8), 'new two'], [at(8), 'new three'], [at(9), 'new four']);
      fake.pods.find((p) => p.name === 'api-0')!.containers[0].log.push([at(8), 'api later']);
      fake.reset();
      const next = await logs({ first: 2, after: tail.body.pageInfo.endCursor });
      expect(lines(next.body)).toEqual(['worker-0: new one', 'api-0: api later']);
      expect(next.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      const reads = fake.requests.filter((r) => r.path.endsWith('/log'));
      for (const r of reads) {
        expect(r.query).toMatchObject({ sinceTime: '2026-03-01T12:00:05Z', timestamps: 'true' });
        expect(r.query.tailLines).toBeUndefined();
      }
      const more = await logs({ first: 2, after: next.body.pageInfo.endCursor });
      expect(lines(more.body)).toEqual(['worker-0: new two', 'worker-0: new three']);
      const end = await logs({ first: 2, after: more.body.pageInfo.endCursor });
      expect(lines(end.body)).toEqual(['worker-0: new four']);
      expect(end.body.pageInfo.hasNextPage).toBe(false);
      // Nothing new yet: no lines, and the same cursor to ask with again.
      const idle = await logs({ first: 2, after: end.body.pageInfo.endCursor });
      expect(idle.body).toEqual({
        items: [],
        pageInfo: {
          hasNextPage: false,
          hasPreviousPage: true,
          startCursor: null,
          endCursor: end.body.pageInfo.endCursor,
        },
      });
    });

    it('answers 400 for parameters out of the reference’s ranges, unknown ones and foreign cursors', async () => {
      for (const query of [
        { first: 0 },
        { first: 1001 },
        { first: 'ten' },
        { source: 'staging' },
        { container: 'sidecar' },
        { pod: '' },
        { tail: 10 },
      ]) {
        const res = await logs(query);
        expect({ query, status: res.status, code: res.body.code }).toEqual({
          query,
          status: 400,
          code: 'validation_failed',
        });
      }
      const podsCursor = (await pods({ first: 1 })).body.pageInfo.endCursor;
      for (const after of ['garbage', podsCursor]) {
        const res = await logs({ after });
        expect({ after, status: res.status }).toEqual({ after, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_cursor');
      }
      expect(fake.requests).toHaveLength(1);
    });
  });

  describe('when the API server fails', () => {
    const expectRuntimeError = async (status: number, code: string, message: RegExp) => {
      for (const res of [await pods(), await logs()]) {
        expect(res.status).toBe(status);
        expectErrorShape(res.body, status, code);
        expect(res.body.message).toMatch(message);
        expect(JSON.stringify(res.body)).not.toContain(fake.token);
      }
    };

    it('answers 502 runtime_failed when it refuses the credentials (401) or the permissions (403)', async () => {
      fake.settings.failWith = 401;
      await expectRuntimeError(502, 'runtime_failed', /401 Unauthorized/);
      fake.settings.failWith = 403;
      await expectRuntimeError(
        502,
        'runtime_failed',
        /403 Forbidden.*get and list on pods and get on pods\/log/,
      );
    });

    it('answers 502 runtime_failed when it fails (500), 503 runtime_unavailable when it is overloaded', async () => {
      fake.settings.failWith = 500;
      await expectRuntimeError(502, 'runtime_failed', /\(500\)/);
      fake.settings.failWith = 503;
      await expectRuntimeError(503, 'runtime_unavailable', /retry shortly/);
    });

    it('answers 503 runtime_unavailable when it never answers, once DEPLOYMENT_RUNTIME_TIMEOUT_MS is spent', async () => {
      fake.settings.hang = true;
      // The bound is 1 s; the client waits far longer, so an unbounded wait would fail the test.
      const res = await logs().timeout(20_000);
      expect(res.status).toBe(503);
      expectErrorShape(res.body, 503, 'runtime_unavailable');
      expect(res.body.message).toContain('within 1000 ms');
      const list = await pods().timeout(20_000);
      expect(list.status).toBe(503);
    });
  });

  describe('access', () => {
    it('lets a Viewer read them; refuses a user without DeploymentRead (403) and a caller without a token (401)', async () => {
      const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await pods({}, id, viewer.token)).status).toBe(200);
      expect((await logs({}, id, viewer.token)).status).toBe(200);
      const nobody = await newUser(t, t.admin, { defaultRoles: [] });
      fake.reset();
      for (const route of ['pods', 'logs']) {
        const refused = await t.http().get(`/api/v1/deployments/${id}/${route}`).set(bearer(nobody.token));
        expect(refused.status).toBe(403);
        expectErrorShape(refused.body, 403, 'forbidden');
        const anonymous = await t.http().get(`/api/v1/deployments/${id}/${route}`);
        expect(anonymous.status).toBe(401);
        expectErrorShape(anonymous.body, 401, 'unauthorized');
      }
      expect(fake.requests).toEqual([]);
    });

    it('answers 404 for another account’s deployment without asking the cluster', async () => {
      const other = await newAccount(t, 'globex');
      const theirs = await createDeployment(t, other);
      fake.pods.push(
        fakePod('theirs-0', { deployment: String(theirs), source: 'production' }, { 'cubejs-server': [] }),
      );
      fake.reset();
      for (const route of ['pods', 'logs']) {
        const res = await t.http().get(`/api/v1/deployments/${theirs}/${route}`).set(bearer(t.admin.token));
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
      expect(fake.requests).toEqual([]);
    });
  });
});

describe('a Kubernetes API server out of reach or refusing the token', () => {
  let fake: KubernetesFake;
  beforeAll(async () => {
    fake = await startKubernetesFake();
  });
  afterAll(() => fake.close());

  it('answers 503 runtime_unavailable when nothing listens at the server’s address', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const t = await startApp({
      DEPLOYMENT_RUNTIME: 'kubernetes',
      KUBECONFIG: fake.kubeconfig({ server: closed }),
      KUBERNETES_PLATFORM_URL: PLATFORM_URL,
    });
    try {
      const id = await createDeployment(t, t.admin);
      for (const route of ['pods', 'logs']) {
        const res = await t.http().get(`/api/v1/deployments/${id}/${route}`).set(bearer(t.admin.token));
        expect(res.status).toBe(503);
        expectErrorShape(res.body, 503, 'runtime_unavailable');
        expect(res.body.message).toContain('could not be reached (ECONNREFUSED)');
      }
    } finally {
      await t.close();
    }
  });

  it('answers 502 runtime_failed when the kubeconfig’s token is refused, quoting no token', async () => {
    const wrong = 'wrong-token-0123456789';
    const t = await startApp({
      DEPLOYMENT_RUNTIME: 'kubernetes',
      KUBECONFIG: fake.kubeconfig({ token: wrong, namespace: NAMESPACE }),
      KUBERNETES_PLATFORM_URL: PLATFORM_URL,
    });
    try {
      const id = await createDeployment(t, t.admin);
      const res = await t.http().get(`/api/v1/deployments/${id}/logs`).set(bearer(t.admin.token));
      expect(res.status).toBe(502);
      expectErrorShape(res.body, 502, 'runtime_failed');
      expect(res.body.message).toContain('401');
      expect(JSON.stringify(res.body)).not.toContain(wrong);
      expect(fake.requests.map((r) => r.auth)).toEqual(['wrong']);
    } finally {
      await t.close();
    }
  });
});
