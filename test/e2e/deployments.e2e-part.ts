import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';

const BAD_IDS = ['abc', '0', '99999999999'];

const validBody = (overrides: Record<string, unknown> = {}) =>
  deploymentInput({ creationStep: 'project', ...overrides });

describe('deployments', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  let otherDeploymentId: number;

  const create = async (actor: Actor = t.admin, overrides: Record<string, unknown> = {}) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(validBody(overrides));
    if (res.status !== 200)
      throw new Error(`could not create deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number; name: string; deploymentUrl: string; creationStep: string };
  };

  beforeAll(async () => {
    // With Redis the API runs no jobs unless told to; this one runs the builds it queues.
    t = await startApp({ RUN_JOBS_IN_PROCESS: 'true' });
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
    otherDeploymentId = (await create(other, { name: 'Globex deployment' })).id;
  });
  afterAll(() => t.close());

  describe('POST /build/api/v1/deployments', () => {
    it('creates a deployment and answers 200 with the Deployment shape', async () => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(validBody({ name: '  Trimmed name  ', creationMethod: 'upload', deployMode: 'cli' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Trimmed name',
        deploymentUrl: `https://deployment-${res.body.id}.platform.localhost`,
        creationStep: 'project',
      });
      const [row] = await t.sql<Record<string, unknown>>(
        `SELECT account_id, name, cloud_provider, region, creation_method, deploy_mode, is_managed, target_platform
         FROM deployments WHERE id = $1`,
        [res.body.id],
      );
      expect(row).toEqual({
        account_id: t.admin.accountId,
        name: 'Trimmed name',
        cloud_provider: 'aws',
        region: 'aws-us-east-1',
        creation_method: 'upload',
        deploy_mode: 'cli',
        is_managed: true,
        target_platform: 'cubecloud',
      });
      // Its version history starts with the head of the channel it follows.
      const history = await t.sql(
        `SELECT account_id, release_channel, version FROM deployment_versions WHERE deployment_id = $1`,
        [res.body.id],
      );
      expect(history).toEqual([
        { account_id: t.admin.accountId, release_channel: 'latest', version: '1.6.2' },
      ]);
    });

    it('queues the first build, which Bull runs to succeeded, and the outbox row ends done', async () => {
      const { id } = await create();
      const builds = await t.sql<{ id: number; status: string; trigger: string; branch: string }>(
        `SELECT b.id, r.status, b.trigger, b.branch FROM deployment_builds b JOIN job_runs r ON r.id = b.run_id
         WHERE b.deployment_id = $1`,
        [id],
      );
      expect(builds).toHaveLength(1);
      expect(builds[0]).toMatchObject({ trigger: 'creation', branch: 'master' });
      expect(['queued', 'running', 'succeeded']).toContain(builds[0].status);

      const run = async () =>
        (
          await t.sql<{
            status: string;
            job: string;
            owner: string;
            phase: string | null;
            attempts: number;
            started_at: Date | null;
            finished_at: Date | null;
            error: string | null;
          }>(
            `SELECT r.status, r.job, r.owner, r.phase, r.attempts, r.started_at, r.finished_at, r.error
             FROM job_runs r JOIN deployment_builds b ON b.run_id = r.id WHERE b.id = $1`,
            [builds[0].id],
          )
        )[0];
      // A real compile in a sandboxed child: a loaded machine makes it slow, never wrong.
      const done = await waitFor(run, (r) => r.status === 'succeeded', 50_000, 200);
      expect(done).toEqual({
        status: 'succeeded',
        job: 'deployment.build',
        owner: `deployment:${id}`,
        phase: 'publish',
        attempts: 1,
        started_at: expect.any(Date),
        finished_at: expect.any(Date),
        error: null,
      });
      const log = await t.sql<{ message: string }>(
        `SELECT l.message FROM job_run_logs l JOIN deployment_builds b ON b.run_id = l.run_id
         WHERE b.id = $1 ORDER BY l.id`,
        [builds[0].id],
      );
      expect(log.map((l) => l.message)).toEqual([
        expect.stringMatching(/^Checking out master at [0-9a-f]{12}$/),
        'Compiling 3 files',
        'Built: 2 cubes',
      ]);

      const outbox = await waitFor(
        () =>
          t.sql<{ status: string; name: string; payload: unknown; attempts: number }>(
            `SELECT status, name, payload, attempts FROM job_outbox WHERE payload->>'buildId' = $1`,
            [String(builds[0].id)],
          ),
        (rows) => rows[0]?.status === 'done',
      );
      expect(outbox).toEqual([
        { status: 'done', name: 'deployment.build', payload: { buildId: builds[0].id }, attempts: 1 },
      ]);
    });

    it('answers 400 naming every missing required field', async () => {
      const res = await t.http().post('/build/api/v1/deployments').set(bearer(t.admin.token)).send({});
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      const text = (res.body.message as string[]).join('\n');
      for (const field of [
        'name',
        'cloudProvider',
        'isManaged',
        'region',
        'targetPlatform',
        'creationStep',
      ]) {
        expect(text).toContain(field);
      }
    });

    it('names only the missing field when one is absent', async () => {
      const { targetPlatform: _omit, ...body } = validBody();
      const res = await t.http().post('/build/api/v1/deployments').set(bearer(t.admin.token)).send(body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect((res.body.message as string[]).every((m) => m.startsWith('targetPlatform'))).toBe(true);
    });

    it('answers 400 for an invalid enum value', async () => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(validBody({ cloudProvider: 'azure' }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('cloudProvider');
    });

    it('answers 400 for a name of only whitespace and creates nothing', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(validBody({ name: '   ' }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('name');
      const after = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      expect(after[0].n).toBe(before[0].n);
    });

    it('answers 400 unknown_region for a region not in the catalogue and creates nothing', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(validBody({ region: 'mars-north-1' }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'unknown_region');
      expect(res.body.message).toContain('mars-north-1');
      const after = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      expect(after[0].n).toBe(before[0].n);
    });

    it('answers 400 for an unknown field', async () => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(t.admin.token))
        .send(validBody({ colour: 'blue' }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('colour');
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().post('/build/api/v1/deployments').send(validBody());
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to a Viewer and creates nothing', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(viewer.token))
        .send(validBody());
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(res.body.message).toContain('DeploymentCreate');
      const after = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM deployments`);
      expect(after[0].n).toBe(before[0].n);
    });

    it('lets a Developer create a deployment', async () => {
      const developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(developer.token))
        .send(validBody());
      expect(res.status).toBe(200);
      expect(res.body.id).toEqual(expect.any(Number));
    });
  });

  describe('GET /api/v1/deployments', () => {
    // An account of its own, so the list contents are exactly known (lists are account-scoped).
    let owner: Actor;
    let ids: number[];

    beforeAll(async () => {
      owner = await newAccount(t, 'initech');
      ids = [];
      const steps = ['project', 'upload', 'ready', 'project', 'ready'];
      for (const [i, creationStep] of steps.entries()) {
        ids.push((await create(owner, { name: `d${i}`, creationStep })).id);
      }
    });

    it("lists the caller's deployments with items, pageInfo and the legacy fields", async () => {
      const res = await t.http().get('/api/v1/deployments').set(bearer(owner.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((d: { id: number }) => d.id)).toEqual(ids);
      expect(res.body.items[0]).toEqual({
        id: ids[0],
        name: 'd0',
        deploymentUrl: `https://deployment-${ids[0]}.platform.localhost`,
        creationStep: 'project',
      });
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(5);
      expect(res.body.pagination).toEqual({ total: 5, offset: 0, limit: 100 });
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
    });

    it('pages with first/after until the end', async () => {
      const seen: number[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const res = await t
          .http()
          .get('/api/v1/deployments')
          .query({ first: 2, ...(after ? { after } : {}) })
          .set(bearer(owner.token));
        expect(res.status).toBe(200);
        pages += 1;
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        expect(res.body.pageInfo.hasPreviousPage).toBe(after !== undefined);
        expect(res.body.pagination).toEqual({ total: 5, offset: 0, limit: 2 });
        seen.push(...res.body.items.map((d: { id: number }) => d.id));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(pages).toBe(3);
      expect(seen).toEqual(ids);
    });

    it('pages with the legacy limit/offset', async () => {
      const res = await t.http().get('/api/v1/deployments?limit=2&offset=2').set(bearer(owner.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((d: { id: number }) => d.id)).toEqual(ids.slice(2, 4));
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(5);
      expect(res.body.pagination).toEqual({ total: 5, offset: 2, limit: 2 });
      expect(res.body.pageInfo.hasNextPage).toBe(true);
      expect(res.body.pageInfo.hasPreviousPage).toBe(true);

      const last = await t.http().get('/api/v1/deployments?limit=2&offset=4').set(bearer(owner.token));
      expect(last.body.items.map((d: { id: number }) => d.id)).toEqual([ids[4]]);
      expect(last.body.pageInfo.hasNextPage).toBe(false);
    });

    it.each([
      ['first', 'first=2&limit=2'],
      ['after', 'offset=1&after=WzFd'],
    ])('answers 400 pagination_conflict when mixing styles (%s)', async (_, qs) => {
      const res = await t.http().get(`/api/v1/deployments?${qs}`).set(bearer(owner.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'pagination_conflict');
    });

    it.each([
      ['a garbage cursor', 'after=not-a-cursor!', 'invalid_cursor'],
      ['first=0', 'first=0', 'validation_failed'],
      ['first too large', 'first=1001', 'validation_failed'],
      ['a negative offset', 'offset=-1', 'validation_failed'],
      ['a non-numeric limit', 'limit=ten', 'validation_failed'],
      ['an unknown parameter', 'colour=blue', 'validation_failed'],
    ])('answers 400 for %s', async (_, qs, code) => {
      const res = await t.http().get(`/api/v1/deployments?${qs}`).set(bearer(owner.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
    });

    it('filters by creationStep, one value or several', async () => {
      const one = await t.http().get('/api/v1/deployments?creationStep=ready').set(bearer(owner.token));
      expect(one.status).toBe(200);
      expect(one.body.items.map((d: { id: number }) => d.id)).toEqual([ids[2], ids[4]]);
      expect(one.body.items.every((d: { creationStep: string }) => d.creationStep === 'ready')).toBe(true);
      expect(one.body.count).toBe(2);

      const several = await t
        .http()
        .get('/api/v1/deployments?creationStep=ready,upload')
        .set(bearer(owner.token));
      expect(several.status).toBe(200);
      expect(several.body.items.map((d: { id: number }) => d.id)).toEqual([ids[1], ids[2], ids[4]]);
      expect(several.body.count).toBe(3);

      const paged = await t
        .http()
        .get('/api/v1/deployments?creationStep=project&first=1')
        .set(bearer(owner.token));
      expect(paged.body.items.map((d: { id: number }) => d.id)).toEqual([ids[0]]);
      expect(paged.body.pageInfo.hasNextPage).toBe(true);
      const next = await t
        .http()
        .get('/api/v1/deployments')
        .query({ creationStep: 'project', first: 1, after: paged.body.pageInfo.endCursor })
        .set(bearer(owner.token));
      expect(next.body.items.map((d: { id: number }) => d.id)).toEqual([ids[3]]);
      expect(next.body.pageInfo.hasNextPage).toBe(false);
    });

    it('answers 400 for an unknown creationStep', async () => {
      const res = await t.http().get('/api/v1/deployments?creationStep=flying').set(bearer(owner.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('creationStep');
    });

    it('answers 403 to a user holding DeploymentRead nowhere', async () => {
      const nobody = await newUser(t, owner, { defaultRoles: [] });
      const res = await t.http().get('/api/v1/deployments').set(bearer(nobody.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('lets a Viewer list the deployments', async () => {
      const v = await newUser(t, owner, { defaultRoles: ['Viewer'] });
      const res = await t.http().get('/api/v1/deployments').set(bearer(v.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((d: { id: number }) => d.id)).toEqual(ids);
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get('/api/v1/deployments');
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });
  });

  describe('GET /api/v1/deployments/:id', () => {
    it('returns one deployment', async () => {
      const created = await create(t.admin, { name: 'Single', creationStep: 'schema' });
      const res = await t.http().get(`/api/v1/deployments/${created.id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
      expect(res.body).toEqual({
        id: created.id,
        name: 'Single',
        deploymentUrl: `https://deployment-${created.id}.platform.localhost`,
        creationStep: 'schema',
      });
    });

    it('lets a Viewer read it', async () => {
      const created = await create();
      const res = await t.http().get(`/api/v1/deployments/${created.id}`).set(bearer(viewer.token));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(created.id);
    });

    it('answers 401 without a token', async () => {
      const created = await create();
      const res = await t.http().get(`/api/v1/deployments/${created.id}`);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to a user without DeploymentRead', async () => {
      const created = await create();
      const nobody = await newUser(t, t.admin, { defaultRoles: [] });
      const res = await t.http().get(`/api/v1/deployments/${created.id}`).set(bearer(nobody.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it("answers 404 for another account's deployment and for one that does not exist", async () => {
      const res = await t.http().get(`/api/v1/deployments/${otherDeploymentId}`).set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
      const missing = await t.http().get('/api/v1/deployments/2147483647').set(bearer(t.admin.token));
      expect(missing.status).toBe(404);
      expectErrorShape(missing.body, 404);
    });

    it.each(BAD_IDS)('answers 400 for the id %s', async (id) => {
      const res = await t.http().get(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('deploymentId');
    });
  });

  describe('PUT /api/v1/deployments/:id', () => {
    const put = (id: number | string, body: Record<string, unknown>, actor: Actor = t.admin) =>
      t.http().put(`/api/v1/deployments/${id}`).set(bearer(actor.token)).send(body);

    it('answers with the settings shape', async () => {
      const { id } = await create(t.admin, { name: 'Settings', creationMethod: 'github', deployMode: 'git' });
      const res = await put(id, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        name: 'Settings',
        deploymentUrl: `https://deployment-${id}.platform.localhost`,
        creationStep: 'project',
        cloudProvider: 'aws',
        region: 'aws-us-east-1',
        creationMethod: 'github',
        deployMode: 'git',
        isManaged: true,
        targetPlatform: 'cubecloud',
        releaseChannel: 'latest',
        // It follows its channel: it runs the channel's head.
        releaseChannelVersion: '1.6.2',
        releaseChannelVersionHold: false,
        cubeImageVersion: 'v1.6.2',
        template: 'single',
        templateVariables: {},
        defaultLaunchpadViewGroup: null,
        launchpadTabs: null,
        customDomain: null,
        deployBranchName: 'master',
        deployBranchReadOnly: false,
        deployBranchMergeAllowed: true,
        deployBranchRequiredApprovals: 0,
        deployBranchBlockNewBrokenContent: false,
        deployProjectRoot: '/',
        isCubeSqlEnabled: true,
        isSupportPreAggregations: true,
      });
    });

    it('GET .../settings answers the same payload, to readers, and 404 for another account', async () => {
      const { id } = await create(t.admin, { name: 'Read settings' });
      const written = await put(id, { customDomain: 'bi.example.com', templateVariables: { a: 1 } });
      const read = await t.http().get(`/api/v1/deployments/${id}/settings`).set(bearer(viewer.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(written.body);
      expect((await t.http().get(`/api/v1/deployments/${id}/settings`)).status).toBe(401);
      const foreign = await t
        .http()
        .get(`/api/v1/deployments/${otherDeploymentId}/settings`)
        .set(bearer(t.admin.token));
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
      const bad = await t.http().get(`/api/v1/deployments/abc/settings`).set(bearer(t.admin.token));
      expectErrorShape(bad.body, 400, 'validation_failed');
      const guest = await newUser(t, t.admin, { defaultRoles: ['Guest'] });
      expect((await t.http().get(`/api/v1/deployments/${id}/settings`).set(bearer(guest.token))).status).toBe(
        403,
      );
    });

    it('advances the setup wizard forward only, and resets it to project', async () => {
      const { id } = await create(t.admin, { name: 'Wizard', creationStep: 'project' });
      const advance = (creationStep: string, actor: Actor = t.admin) =>
        t
          .http()
          .post(`/api/v1/deployments/${id}/creation-step/advance`)
          .set(bearer(actor.token))
          .send({ creationStep });
      const upload = await advance('upload');
      expect(upload.status).toBe(200);
      expect(upload.body).toEqual({
        id,
        name: 'Wizard',
        deploymentUrl: `https://deployment-${id}.platform.localhost`,
        creationStep: 'upload',
      });
      // The same step again is a retry; skipping forward is allowed.
      expect((await advance('upload')).body.creationStep).toBe('upload');
      expect((await advance('databases')).body.creationStep).toBe('databases');
      for (const back of ['schema', 'project', 'demo']) {
        expectErrorShape((await advance(back)).body, 400, 'creation_step_invalid');
      }
      expectErrorShape((await advance('nowhere')).body, 400, 'validation_failed');
      expect((await advance('ready')).body.creationStep).toBe('ready');
      const reset = await t
        .http()
        .post(`/api/v1/deployments/${id}/creation-step/reset`)
        .set(bearer(t.admin.token));
      expect(reset.status).toBe(200);
      expect(reset.body.creationStep).toBe('project');
      const withBody = await t
        .http()
        .post(`/api/v1/deployments/${id}/creation-step/reset`)
        .set(bearer(t.admin.token))
        .send({ creationStep: 'ready' });
      expectErrorShape(withBody.body, 400, 'validation_failed');
      expect((await advance('demo')).body.creationStep).toBe('demo');
      expectErrorShape((await advance('ready')).body, 400, 'creation_step_invalid');
      // Access: readers may not move it, other accounts do not see it.
      expectErrorShape((await advance('ready', viewer)).body, 403, 'forbidden');
      const foreign = await t
        .http()
        .post(`/api/v1/deployments/${otherDeploymentId}/creation-step/reset`)
        .set(bearer(t.admin.token));
      expectErrorShape(foreign.body, 404, 'deployment_not_found');
      expect((await t.http().post(`/api/v1/deployments/${id}/creation-step/reset`)).status).toBe(401);
    });

    it('lets one of two racing advances win when they disagree', async () => {
      const { id } = await create(t.admin, { name: 'Race', creationStep: 'project' });
      const go = (creationStep: string) =>
        t
          .http()
          .post(`/api/v1/deployments/${id}/creation-step/advance`)
          .set(bearer(t.admin.token))
          .send({ creationStep });
      // ready and demo exclude each other: whichever lands first makes the other invalid.
      const results = await Promise.all([go('ready'), go('demo')]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    });

    it('merges partially: omitted fields are left unchanged', async () => {
      const { id } = await create(t.admin, { name: 'Partial' });
      const first = await put(id, {
        customDomain: 'bi.example.com',
        launchpadTabs: ['home', 'reports'],
        deployBranchName: 'main',
        template: 'simpleCluster',
      });
      expect(first.status).toBe(200);
      const second = await put(id, { name: 'Renamed', region: 'gcp-us-central1' });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        name: 'Renamed',
        region: 'gcp-us-central1',
        customDomain: 'bi.example.com',
        launchpadTabs: ['home', 'reports'],
        deployBranchName: 'main',
        template: 'simpleCluster',
        cloudProvider: 'aws',
        creationStep: 'project',
      });
      const get = await t.http().get(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(get.body.name).toBe('Renamed');
      const [row] = await t.sql<{ custom_domain: string; deploy_branch_name: string; region: string }>(
        `SELECT custom_domain, deploy_branch_name, region FROM deployments WHERE id = $1`,
        [id],
      );
      expect(row).toEqual({
        custom_domain: 'bi.example.com',
        deploy_branch_name: 'main',
        region: 'gcp-us-central1',
      });

      const cleared = await put(id, { customDomain: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ customDomain: null, name: 'Renamed', deployBranchName: 'main' });
    });

    it('merges templateVariables key by key; a null value removes a key', async () => {
      const { id } = await create();
      const a = await put(id, { templateVariables: { a: 1, b: 'two', c: { nested: true } } });
      expect(a.status).toBe(200);
      expect(a.body.templateVariables).toEqual({ a: 1, b: 'two', c: { nested: true } });

      const b = await put(id, { templateVariables: { b: 'deux', d: 4, a: null } });
      expect(b.status).toBe(200);
      expect(b.body.templateVariables).toEqual({ b: 'deux', c: { nested: true }, d: 4 });

      const c = await put(id, { name: 'No vars change' });
      expect(c.body.templateVariables).toEqual({ b: 'deux', c: { nested: true }, d: 4 });

      const [row] = await t.sql<{ template_variables: unknown }>(
        `SELECT template_variables FROM deployments WHERE id = $1`,
        [id],
      );
      expect(row.template_variables).toEqual({ b: 'deux', c: { nested: true }, d: 4 });
    });

    it('answers 400 release_version_invalid for a version not listed for the target channel', async () => {
      const { id } = await create();
      const res = await put(id, { releaseChannelVersion: '9.9.9' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'release_version_invalid');
      expect(res.body.message).toContain('9.9.9');
      // The offered versions are named: the channel's head (this deployment ran nothing else).
      expect(res.body.message).toContain('1.6.2');

      // 1.6.2 is the head of `latest` only; 1.6.1 is in the catalogue, but this deployment never ran it.
      for (const body of [
        { releaseChannel: 'release', releaseChannelVersion: '1.6.2' },
        { releaseChannelVersion: '1.6.1' },
        { releaseChannelVersion: 'banana' },
      ]) {
        const refused = await put(id, body);
        expect({ body, status: refused.status }).toEqual({ body, status: 400 });
        expectErrorShape(refused.body, 400, 'release_version_invalid');
      }

      const [row] = await t.sql<{ release_channel: string; release_channel_version: string | null }>(
        `SELECT release_channel, release_channel_version FROM deployments WHERE id = $1`,
        [id],
      );
      expect(row).toEqual({ release_channel: 'latest', release_channel_version: null });
      const history = await t.sql(
        `SELECT release_channel, version FROM deployment_versions WHERE deployment_id = $1`,
        [id],
      );
      expect(history).toEqual([{ release_channel: 'latest', version: '1.6.2' }]);
    });

    it('accepts a listed version: the head follows the channel, holding keeps a version', async () => {
      const { id } = await create();
      const head = await put(id, { releaseChannelVersion: 'v1.6.2' });
      expect(head.status).toBe(200);
      expect(head.body).toMatchObject({
        releaseChannel: 'latest',
        releaseChannelVersion: '1.6.2',
        releaseChannelVersionHold: false,
      });

      const held = await put(id, { releaseChannelVersion: '1.6.2', releaseChannelVersionHold: true });
      expect(held.body).toMatchObject({ releaseChannelVersion: '1.6.2', releaseChannelVersionHold: true });

      // Switching channel keeps the held version, which must be offered there too.
      const switched = await put(id, { releaseChannel: 'release' });
      expect(switched.status).toBe(400);
      expectErrorShape(switched.body, 400, 'release_version_invalid');

      const both = await put(id, { releaseChannel: 'release', releaseChannelVersion: '1.5.9' });
      expect(both.status).toBe(200);
      expect(both.body).toMatchObject({
        releaseChannel: 'release',
        releaseChannelVersion: '1.5.9',
        releaseChannelVersionHold: false,
        cubeImageVersion: 'v1.5.9',
      });

      const unpinned = await put(id, { releaseChannelVersion: null });
      expect(unpinned.status).toBe(200);
      expect(unpinned.body).toMatchObject({
        releaseChannel: 'release',
        releaseChannelVersion: '1.5.9',
        releaseChannelVersionHold: false,
      });
    });

    it('answers 400 unknown_region for a region not in the catalogue, the empty one included', async () => {
      const { id } = await create();
      for (const region of ['mars-north-1', '']) {
        const res = await put(id, { region });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unknown_region');
      }
      const [row] = await t.sql<{ region: string }>(`SELECT region FROM deployments WHERE id = $1`, [id]);
      expect(row.region).toBe('aws-us-east-1');

      const cleared = await put(id, { region: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.region).toBeNull();
    });

    it('answers 400 for a name of only whitespace and keeps the name', async () => {
      const { id } = await create(t.admin, { name: 'Keep me' });
      const res = await put(id, { name: '  ' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('name');
      const [row] = await t.sql<{ name: string }>(`SELECT name FROM deployments WHERE id = $1`, [id]);
      expect(row.name).toBe('Keep me');
    });

    it('answers 400 for an unknown field or a bad value', async () => {
      const { id } = await create();
      const unknown = await put(id, { colour: 'blue' });
      expect(unknown.status).toBe(400);
      expectErrorShape(unknown.body, 400, 'validation_failed');
      expect(JSON.stringify(unknown.body.message)).toContain('colour');

      const bad = await put(id, { template: 'huge', name: '' });
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'validation_failed');
      const text = JSON.stringify(bad.body.message);
      expect(text).toContain('template');
      expect(text).toContain('name');
    });

    it('answers 401 without a token', async () => {
      const { id } = await create();
      const res = await t.http().put(`/api/v1/deployments/${id}`).send({ name: 'x' });
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('answers 403 to a Viewer and changes nothing', async () => {
      const { id } = await create(t.admin, { name: 'Untouched' });
      const res = await put(id, { name: 'Hijacked' }, viewer);
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(res.body.message).toContain('DeploymentUpdate');
      const [row] = await t.sql<{ name: string }>(`SELECT name FROM deployments WHERE id = $1`, [id]);
      expect(row.name).toBe('Untouched');
    });

    it("answers 404 for another account's deployment and changes nothing", async () => {
      const res = await put(otherDeploymentId, { name: 'Hijacked' });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
      const [row] = await t.sql<{ name: string }>(`SELECT name FROM deployments WHERE id = $1`, [
        otherDeploymentId,
      ]);
      expect(row.name).toBe('Globex deployment');
    });

    it.each(BAD_IDS)('answers 400 for the id %s', async (id) => {
      const res = await put(id, { name: 'x' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('deploymentId');
    });
  });

  describe('DELETE /api/v1/deployments/:id', () => {
    it('deletes the deployment and its builds; it is then 404', async () => {
      const { id } = await create();
      const res = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });

      const get = await t.http().get(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(get.status).toBe(404);
      expectErrorShape(get.body, 404);
      const again = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(again.status).toBe(404);
      expectErrorShape(again.body, 404);
      const put = await t
        .http()
        .put(`/api/v1/deployments/${id}`)
        .set(bearer(t.admin.token))
        .send({ name: 'x' });
      expect(put.status).toBe(404);

      expect(await t.sql(`SELECT id FROM deployments WHERE id = $1`, [id])).toEqual([]);
      expect(await t.sql(`SELECT id FROM deployment_builds WHERE deployment_id = $1`, [id])).toEqual([]);
      expect(await t.sql(`SELECT id FROM deployment_versions WHERE deployment_id = $1`, [id])).toEqual([]);
      // The deployment's runs go with it (with their logs and jobs).
      expect(await t.sql(`SELECT id FROM job_runs WHERE owner = $1`, [`deployment:${id}`])).toEqual([]);
      const list = await t.http().get('/api/v1/deployments').set(bearer(t.admin.token));
      expect(list.body.items.map((d: { id: number }) => d.id)).not.toContain(id);
    });

    it('answers 401 without a token', async () => {
      const { id } = await create();
      const res = await t.http().delete(`/api/v1/deployments/${id}`);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
      expect(await t.sql(`SELECT id FROM deployments WHERE id = $1`, [id])).toHaveLength(1);
    });

    it('answers 403 to a Viewer and deletes nothing', async () => {
      const { id } = await create();
      const res = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
      expect(res.body.message).toContain('DeploymentDelete');
      expect(await t.sql(`SELECT id FROM deployments WHERE id = $1`, [id])).toHaveLength(1);
    });

    it("answers 404 for another account's deployment and deletes nothing", async () => {
      const res = await t
        .http()
        .delete(`/api/v1/deployments/${otherDeploymentId}`)
        .set(bearer(t.admin.token));
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
      expect(await t.sql(`SELECT id FROM deployments WHERE id = $1`, [otherDeploymentId])).toHaveLength(1);
    });

    it.each(BAD_IDS)('answers 400 for the id %s', async (id) => {
      const res = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(t.admin.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('deploymentId');
    });
  });

  describe('GET /api/v1/regions', () => {
    const REGIONS = [
      'aws-us-east-1',
      'aws-us-west-2',
      'aws-eu-central-1',
      'aws-ap-southeast-1',
      'gcp-us-central1',
      'gcp-europe-west3',
    ];

    it('lists the catalogue with items, data and the legacy fields', async () => {
      const res = await t.http().get('/api/v1/regions').set(bearer(viewer.token));
      expect(res.status).toBe(200);
      expect(res.body.items.map((r: { name: string }) => r.name)).toEqual(REGIONS);
      expect(res.body.items[0]).toEqual({
        id: expect.any(Number),
        name: 'aws-us-east-1',
        title: 'AWS US East (N. Virginia)',
        provider: 'aws',
        isPublic: true,
        isDedicated: false,
        isHybrid: false,
        useAiEngineer: true,
      });
      expect(res.body.data).toEqual(res.body.items);
      expect(res.body.count).toBe(REGIONS.length);
      expect(res.body.pagination).toEqual({ total: REGIONS.length, offset: 0, limit: 100 });
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('pages with first/after', async () => {
      const page1 = await t.http().get('/api/v1/regions?first=4').set(bearer(t.admin.token));
      expect(page1.status).toBe(200);
      expect(page1.body.items.map((r: { name: string }) => r.name)).toEqual(REGIONS.slice(0, 4));
      expect(page1.body.pageInfo.hasNextPage).toBe(true);
      const page2 = await t
        .http()
        .get('/api/v1/regions')
        .query({ first: 4, after: page1.body.pageInfo.endCursor })
        .set(bearer(t.admin.token));
      expect(page2.status).toBe(200);
      expect(page2.body.items.map((r: { name: string }) => r.name)).toEqual(REGIONS.slice(4));
      expect(page2.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    });

    it.each([
      ['first=0', 'validation_failed'],
      ['after=%%%', 'invalid_cursor'],
      ['limit=2', 'validation_failed'],
    ])('answers 400 for %s', async (qs, code) => {
      const res = await t.http().get(`/api/v1/regions?${qs}`).set(bearer(t.admin.token));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
    });

    it('answers 401 without a token', async () => {
      const res = await t.http().get('/api/v1/regions');
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });
  });
});
