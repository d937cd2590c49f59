import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Database } from '../../src/core/database/database.js';
import type { JobDefinition } from '../../src/core/queue/job-definition.js';
import { JobQueue } from '../../src/core/queue/job-queue.service.js';
import { DataApiClient } from '../../src/modules/data-api-client/data-api.client.js';
import { environmentSecret } from '../../src/modules/data-api-client/data-api-keys.service.js';
import { BUILD_JOB, ModelBuilds } from '../../src/modules/data-model/model-builds.js';
import {
  FOLLOW_JOB,
  RECONCILE_JOB,
  RESYNC_JOB,
  RuntimeReconciler,
  type FollowPayload,
  type ReconcilePayload,
} from '../../src/modules/deployment-runtime/runtime-reconciler.service.js';
import { ReleasesService } from '../../src/modules/deployments/releases.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { postDeployment, waitFor } from '../support/factories.js';
import { TestJobs, type JobHandlerFn } from '../support/job-context.js';
import {
  NAMESPACE,
  startKubernetesFake,
  type KubeObject,
  type KubernetesFake,
} from '../support/kubernetes-fake.js';

/**
 * Deployments run on Kubernetes (`DEPLOYMENT_RUNTIME=kubernetes`) against a loopback API server
 * that speaks server-side apply, list, delete and watch, checks every manifest against
 * Kubernetes' schema and moves a Deployment's rollout when the test says so. Changes are made
 * through HTTP; the reconcile jobs they queue are run by the test (the app's handlers, through
 * the real run records), so nothing depends on timing.
 *
 * A part of runtimes.e2e-spec.ts: its own describe, app and database.
 */

const PLATFORM = 'http://platform.test:3000';
const sh = promisify(execFile);

describe('deployments run on Kubernetes', () => {
  let fake: KubernetesFake;
  let t: TestApp;
  let jobs: TestJobs;
  let admin: Actor;

  beforeAll(async () => {
    fake = await startKubernetesFake();
    t = await startApp({
      ...fake.env(),
      KUBERNETES_PLATFORM_URL: PLATFORM,
      KUBERNETES_PROGRESS_DEADLINE_SECONDS: '30',
    });
    jobs = new TestJobs(t.app);
    admin = t.admin;
    await t.app.get(ReleasesService).addRelease('latest', '1.6.2');
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  afterEach(() => {
    const invalid = fake.invalid;
    fake.reset();
    expect(invalid).toEqual([]);
  });

  const reconciler = () => t.app.get(RuntimeReconciler);

  /** The queued runs of `job` for a deployment (or every one of the job), oldest first. */
  const queued = async (job: string, deploymentId?: number) =>
    (
      await t.sql(
        `SELECT id FROM job_runs WHERE job = $1 AND status = 'queued' AND ($2::text IS NULL OR owner = $2)
         ORDER BY created_at, id`,
        [job, deploymentId === undefined ? null : `deployment:${deploymentId}`],
      )
    ).map((r) => String(r.id));

  /** Runs every queued build of the deployment, as a worker would. */
  const runBuilds = async (deploymentId: number) => {
    for (const runId of await queued(BUILD_JOB.name, deploymentId)) {
      const { outcome } = await jobs.attempt(BUILD_JOB, runId, (p, c) => t.app.get(ModelBuilds).build(p, c));
      if (outcome.status !== 'succeeded')
        throw new Error(`build failed: ${String((outcome as { error?: unknown }).error)}`);
    }
  };

  /** Runs the deployment's queued runs of `job` with `handler`, oldest first; answers their outcomes. */
  const runQueued = async <P>(job: JobDefinition<P>, deploymentId: number, handler: JobHandlerFn<P>) => {
    const outcomes = [];
    for (const runId of await queued(job.name, deploymentId)) {
      outcomes.push((await jobs.attempt(job, runId, handler)).outcome);
    }
    return outcomes;
  };
  const runReconciles = (deploymentId: number) =>
    runQueued(RECONCILE_JOB, deploymentId, (p: ReconcilePayload, c) => reconciler().reconcile(p, c));
  /** The rollout followers: each watches until nothing is deploying. */
  const runFollowers = (deploymentId: number) =>
    runQueued(FOLLOW_JOB, deploymentId, (p: FollowPayload, c) => reconciler().follow(p, c));

  /**
   * Runs the deployment's queued reconciles, then the followers they queued while the test moves
   * the rollout: a follower watches until nothing is deploying, so `move` runs once it watches.
   * Answers the reconciles' outcomes.
   */
  const reconcileThrough = async (deploymentId: number, move: () => unknown) => {
    const outcomes = await runReconciles(deploymentId);
    const before = fake.watchers('Deployment');
    const following = runFollowers(deploymentId);
    await waitFor(
      () => Promise.resolve(fake.watchers('Deployment')),
      (n) => n > before,
      20_000,
      20,
    );
    await move();
    expect(new Set((await following).map((o) => o.status))).toEqual(new Set(['succeeded']));
    return outcomes;
  };

  const buildStatus = async (id: number, actor = admin, branchName?: string) => {
    const res = await t
      .http()
      .get(`/api/v1/deployments/${id}/build-status`)
      .query(branchName ? { branchName } : {})
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body as {
      deploymentStatus: string | null;
      deploymentStatusReason?: string | null;
      lastHash: string;
    };
  };

  const environments = async (id: number, actor = admin) => {
    const res = await t.http().get(`/api/v1/deployments/${id}/environments`).set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body.items as Array<{
      id: string;
      type: string;
      branch: string;
      status?: string;
      statusReason?: string;
    }>;
  };

  const setEnv = async (id: number, vars: Record<string, string | null>, actor = admin) => {
    const res = await t
      .http()
      .put(`/api/v1/deployments/${id}/env-vars`)
      .set(bearer(actor.token))
      .send({ env_variables: Object.entries(vars).map(([name, value]) => ({ name, value })) });
    expect(res.status).toBe(200);
  };

  const secretData = (name: string) =>
    Object.fromEntries(
      Object.entries((fake.get('Secret', name)?.data ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString(),
      ]),
    );
  const podTemplate = (name: string) => fake.get('Deployment', name)!.spec.template as KubeObject;

  /** The deployment's objects on the cluster, as `Kind/name`. */
  const objectsOf = (id: number) =>
    fake
      .objects()
      .filter((o) => o.metadata.labels?.deployment === String(id))
      .map((o) => `${o.kind}/${o.metadata.name}`)
      .sort();

  /** A deployment with env vars and its first build, reconciled and rolled out. */
  const deployed = async (actor = admin) => {
    const { id } = await postDeployment(t, actor);
    await setEnv(
      id,
      { CUBEJS_API_SECRET: `secret-${id}-0123456789abcdef`, CUBEJS_DB_TYPE: 'postgres' },
      actor,
    );
    await runBuilds(id);
    const outcomes = await reconcileThrough(id, () => {
      fake.setRollout(`cube-${id}`, 'available');
    });
    expect(outcomes.map((o) => o.status)).toContain('succeeded');
    expect((await buildStatus(id, actor)).deploymentStatus).toBe('deployed');
    return id;
  };

  it('runs a new deployment once its first build succeeds, and reports the rollout until it is deployed', async () => {
    const { id } = await postDeployment(t, admin);
    // Created, not built: nothing runs, and the environments list says why.
    expect(objectsOf(id)).toEqual([]);
    expect((await environments(id))[0]).toMatchObject({ type: 'production', status: 'not_deployed' });

    await setEnv(id, { CUBEJS_API_SECRET: 'first-secret-0123456789', CUBEJS_DB_TYPE: 'postgres' });
    await runBuilds(id);
    const outcomes = await reconcileThrough(id, async () => {
      expect(objectsOf(id)).toEqual(
        [
          `Deployment/cube-${id}`,
          `NetworkPolicy/cube-${id}`,
          `Secret/cube-${id}-env`,
          `Secret/cube-${id}-git`,
          `Service/cube-${id}`,
        ].sort(),
      );
      const status = await buildStatus(id);
      expect(status).toMatchObject({ deploymentStatus: 'deploying' });
      const pod = podTemplate(`cube-${id}`);
      expect(pod.metadata.labels).toMatchObject({ deployment: String(id), source: 'production' });
      expect(pod.spec.containers[0].image).toBe('cubejs/cube:v1.6.2');
      const initEnv = Object.fromEntries(
        (pod.spec.initContainers[0].env as Array<{ name: string; value?: string }>).map((e) => [
          e.name,
          e.value,
        ]),
      );
      // The built commit, from this service's git URL.
      expect(initEnv).toMatchObject({
        GIT_COMMIT: status.lastHash,
        GIT_URL: `${PLATFORM}/build/api/v1/deployments/${id}/git`,
      });
      expect(secretData(`cube-${id}-env`)).toMatchObject({
        CUBEJS_API_SECRET: 'first-secret-0123456789',
        CUBEJS_DB_TYPE: 'postgres',
        CUBEJS_DEV_MODE: 'false',
        PORT: '4000',
      });
      expect((await environments(id))[0]).toMatchObject({ status: 'deploying' });
      fake.setRollout(`cube-${id}`, 'available');
    });
    // The env var change and the build each queued one; the second found its change applied.
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    expect(await buildStatus(id)).toMatchObject({
      deploymentStatus: 'deployed',
      deploymentStatusReason: null,
    });
    expect((await environments(id))[0]).toMatchObject({ status: 'deployed', statusReason: null });
    // The pods the cluster made for it are what the pods route reads.
    const pods = await t.http().get(`/api/v1/deployments/${id}/pods`).set(bearer(admin.token));
    expect(pods.status).toBe(200);
    expect(pods.body.items.length).toBe(2);
    // Every write was a server-side apply by this service's field manager, with strict validation.
    const writes = fake.requests.filter((r) => r.method === 'PATCH');
    expect(writes.length).toBe(5);
    for (const w of writes) {
      expect(w.contentType).toBe('application/apply-patch+yaml');
      expect(w.query).toMatchObject({ fieldManager: 'analytics-platform-api', fieldValidation: 'Strict' });
    }
    // A secret never leaves its Secret: not in the other objects, nor in run records and their logs.
    const outside = JSON.stringify([fake.get('Deployment', `cube-${id}`), fake.get('Service', `cube-${id}`)]);
    expect(outside).not.toContain('first-secret-0123456789');
    const records = await t.sql(
      `SELECT r.payload::text || coalesce(r.error, '') || coalesce(string_agg(l.message, ''), '') AS text
         FROM job_runs r LEFT JOIN job_run_logs l ON l.run_id = r.id WHERE r.owner = $1 GROUP BY r.id`,
      [`deployment:${id}`],
    );
    expect(records.length).toBeGreaterThan(2);
    for (const r of records) expect(String(r.text)).not.toContain('first-secret-0123456789');
  });

  it('fetches exactly the built commit with the pod’s git credential, which reads that one deployment only', async () => {
    const id = await deployed();
    await t.app.listen(0, '127.0.0.1');
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const init = podTemplate(`cube-${id}`).spec.initContainers[0];
    const env: Record<string, string> = {};
    for (const e of init.env as Array<{ name: string; value?: string; valueFrom?: unknown }>) {
      env[e.name] = e.value ?? secretData(`cube-${id}-git`).GIT_CONFIG_VALUE_0;
    }
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pod-'));
    const conf = path.join(work, 'conf');
    fs.mkdirSync(conf);
    // The init container's own script, with its directories moved under the test's.
    const script = (init.command[2] as string)
      .replaceAll('/cube/conf', conf)
      .replaceAll('/tmp/model', `${work}/repo`);
    await sh('/bin/sh', ['-ec', script], {
      env: {
        ...env,
        GIT_URL: env.GIT_URL.replace(PLATFORM, `http://127.0.0.1:${port}`),
        HOME: work,
        PATH: process.env.PATH!,
      },
    });
    const files = fs.readdirSync(conf, { recursive: true }).map(String);
    expect(files.some((f) => f.startsWith('model'))).toBe(true);
    fs.rmSync(work, { recursive: true, force: true });

    // The credential is Basic on the git routes, for that deployment only.
    const header = env.GIT_CONFIG_VALUE_0.replace(/^Authorization: /, '');
    const refs = (deploymentId: number, authorization: string) =>
      t
        .http()
        .get(`/build/api/v1/deployments/${deploymentId}/git/info/refs`)
        .query({ service: 'git-upload-pack' })
        .set('Authorization', authorization);
    expect((await refs(id, header)).status).toBe(200);
    const mine = await postDeployment(t, admin);
    const globex = await newAccount(t, `globex${id}`);
    const theirs = await postDeployment(t, globex);
    for (const other of [mine.id, theirs.id]) {
      const res = await refs(other, header);
      expect(res.status).toBe(404);
    }
    const credential = Buffer.from(header.replace(/^Basic /, ''), 'base64')
      .toString()
      .slice(4);
    const tampered = `Basic ${Buffer.from(`git:${credential.slice(0, -2)}AA`).toString('base64')}`;
    expect((await refs(id, tampered)).status).toBe(401);
    // Nowhere else: as a bearer token it is unknown.
    const elsewhere = await t
      .http()
      .get(`/api/v1/deployments/${id}`)
      .set('Authorization', `Bearer ${credential}`);
    expectErrorShape(elsewhere.body, 401);
  });

  it('rolls out an env var change: the Secret, then the pods through the template’s checksum', async () => {
    const id = await deployed();
    const before = fake.get('Deployment', `cube-${id}`)!;
    await setEnv(id, { CUBEJS_DB_TYPE: 'snowflake' });
    const outcomes = await reconcileThrough(id, async () => {
      expect(secretData(`cube-${id}-env`).CUBEJS_DB_TYPE).toBe('snowflake');
      const after = fake.get('Deployment', `cube-${id}`)!;
      expect(after.metadata.generation).toBe(before.metadata.generation + 1);
      expect(after.spec.template.metadata.annotations['analytics-platform/env-checksum']).not.toBe(
        before.spec.template.metadata.annotations['analytics-platform/env-checksum'],
      );
      expect((await buildStatus(id)).deploymentStatus).toBe('deploying');
      fake.setRollout(`cube-${id}`, 'available');
    });
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded']);
    expect((await buildStatus(id)).deploymentStatus).toBe('deployed');
  });

  it('moves to a new version: a release of its channel, then a version it holds', async () => {
    const id = await deployed();
    await t.app.get(ReleasesService).addRelease('latest', '1.7.0');
    await reconcileThrough(id, () => {
      expect(podTemplate(`cube-${id}`).spec.containers[0].image).toBe('cubejs/cube:v1.7.0');
      fake.setRollout(`cube-${id}`, 'available');
    });
    const held = await t
      .http()
      .put(`/api/v1/deployments/${id}`)
      .set(bearer(admin.token))
      .send({ releaseChannelVersion: '1.6.2' });
    expect(held.status).toBe(200);
    await reconcileThrough(id, () => {
      expect(podTemplate(`cube-${id}`).spec.containers[0].image).toBe('cubejs/cube:v1.6.2');
      fake.setRollout(`cube-${id}`, 'available');
    });
    expect((await buildStatus(id)).deploymentStatus).toBe('deployed');
  });

  it('runs a staging branch while its toggle is on, with its own API secret, and removes it when turned off', async () => {
    const id = await deployed();
    const branch = await t
      .http()
      .post(`/build/api/v1/deployments/${id}/branches`)
      .set(bearer(admin.token))
      .send({ name: 'staging' });
    expect(branch.status).toBe(200);
    const toggle = (enabled: boolean) =>
      t
        .http()
        .put(`/build/api/v1/deployments/${id}/branches/staging-environment`)
        .set(bearer(admin.token))
        .send({ branchName: 'staging', enabled });
    expect((await toggle(true)).status).toBe(200);
    const staging = (await environments(id)).find((e) => e.type === 'staging')!;
    expect(staging).toMatchObject({ branch: 'staging', status: 'not_deployed' });
    // Its first build.
    await t.app
      .get(Database)
      .transaction(() => t.app.get(ModelBuilds).queue(admin.accountId, id, 'staging', null, 'test'));
    await runBuilds(id);
    const name = `cube-${id}-env-${staging.id}`;
    await reconcileThrough(id, () => {
      expect(podTemplate(name).metadata.labels).toMatchObject({
        source: 'dev',
        environment: staging.id,
        branch: 'staging',
      });
      expect(secretData(`${name}-env`).CUBEJS_API_SECRET).toBe(
        environmentSecret(`secret-${id}-0123456789abcdef`, Number(staging.id)),
      );
      fake.setRollout(name, 'available');
    });
    expect((await buildStatus(id, admin, 'staging')).deploymentStatus).toBe('deployed');
    expect((await environments(id)).find((e) => e.type === 'staging')).toMatchObject({ status: 'deployed' });

    expect((await toggle(false)).status).toBe(200);
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['succeeded']);
    expect(objectsOf(id).filter((o) => o.includes('-env-'))).toEqual([]);
    expect(objectsOf(id)).toContain(`Deployment/cube-${id}`);
  });

  it('keeps production running while a new deploy branch has no successful build, then moves to its build', async () => {
    const id = await deployed();
    const running = podTemplate(`cube-${id}`).metadata.annotations['analytics-platform/commit'];
    const created = await t
      .http()
      .post(`/build/api/v1/deployments/${id}/branches`)
      .set(bearer(admin.token))
      .send({ name: 'next' });
    expect(created.status).toBe(200);
    const moved = await t
      .http()
      .put(`/api/v1/deployments/${id}`)
      .set(bearer(admin.token))
      .send({ deployBranchName: 'next' });
    expect(moved.status).toBe(200);
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['succeeded']);
    // Nothing of production went: it runs the old deploy branch's build until `next` has one.
    expect(objectsOf(id).length).toBe(5);
    expect(podTemplate(`cube-${id}`).metadata.annotations['analytics-platform/commit']).toBe(running);
    await t.app
      .get(Database)
      .transaction(() => t.app.get(ModelBuilds).queue(admin.accountId, id, 'next', null, 'test'));
    await runBuilds(id);
    await reconcileThrough(id, () => {
      expect(podTemplate(`cube-${id}`).metadata.labels.branch).toBe('next');
      fake.setRollout(`cube-${id}`, 'available');
    });
    expect((await buildStatus(id, admin, 'next')).deploymentStatus).toBe('deployed');
  });

  it('removes everything a deleted deployment ran', async () => {
    const id = await deployed();
    expect(objectsOf(id).length).toBe(5);
    const res = await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(admin.token));
    expect(res.status).toBe(200);
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['succeeded']);
    expect(objectsOf(id)).toEqual([]);
  });

  it('reports a failed rollout with the reason from the Deployment’s conditions', async () => {
    const { id } = await postDeployment(t, admin);
    await setEnv(id, { CUBEJS_API_SECRET: 'x'.repeat(24) });
    await runBuilds(id);
    await reconcileThrough(id, () => {
      fake.setRollout(`cube-${id}`, 'failed', { message: 'ReplicaSet "cube-x" has timed out progressing.' });
    });
    expect(await buildStatus(id)).toMatchObject({
      deploymentStatus: 'failed',
      deploymentStatusReason: 'ReplicaSet "cube-x" has timed out progressing.',
    });
    expect((await environments(id))[0]).toMatchObject({ status: 'failed' });
  });

  it('never takes over an object of the same name that someone else made, and says so', async () => {
    const { id } = await postDeployment(t, admin);
    const foreign = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `cube-${id}`, namespace: NAMESPACE, labels: { app: 'theirs' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'theirs' } },
        template: {
          metadata: { labels: { app: 'theirs' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    };
    expect(fake.applyAs('kubectl', foreign).code).toBe(201);
    await setEnv(id, { CUBEJS_API_SECRET: 'x'.repeat(24) });
    await runBuilds(id);
    const outcomes = await runReconciles(id);
    expect(new Set(outcomes.map((o) => o.status))).toEqual(new Set(['retry']));
    const status = await buildStatus(id);
    expect(status.deploymentStatus).toBe('failed');
    expect(status.deploymentStatusReason).toMatch(/managed by someone else/);
    expect(fake.get('Deployment', `cube-${id}`)!.spec.template.spec.containers[0].image).toBe('nginx:1.27');
  });

  it('corrects drift on the resync, and a repeated reconcile changes nothing', async () => {
    const id = await deployed();
    // Someone scales it by hand, forcing the field away from this service.
    const drifted = fake.applyAs(
      'kubectl',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `cube-${id}` }, spec: { replicas: 5 } },
      { force: true },
    );
    expect(drifted.body.spec.replicas).toBe(5);
    const { runId } = await t.app
      .get(Database)
      .transaction(() => t.app.get(JobQueue).enqueue(RESYNC_JOB, {}));
    expect((await jobs.attempt(RESYNC_JOB, runId!, (p, c) => reconciler().resync(p, c))).outcome.status).toBe(
      'succeeded',
    );
    await reconcileThrough(id, () => {
      expect(fake.get('Deployment', `cube-${id}`)!.spec.replicas).toBe(2);
      fake.setRollout(`cube-${id}`, 'available');
    });
    const before = Object.fromEntries(
      fake
        .objects()
        .filter((o) => o.metadata.labels?.deployment === String(id))
        .map((o) => [o.metadata.name + o.kind, o.metadata.resourceVersion]),
    );
    const again = await t.app.get(Database).transaction(() => t.app.get(JobQueue).enqueue(RESYNC_JOB, {}));
    await jobs.attempt(RESYNC_JOB, again.runId!, (p, c) => reconciler().resync(p, c));
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['succeeded']);
    const after = Object.fromEntries(
      fake
        .objects()
        .filter((o) => o.metadata.labels?.deployment === String(id))
        .map((o) => [o.metadata.name + o.kind, o.metadata.resourceVersion]),
    );
    expect(after).toEqual(before);
  });

  it('records an RBAC refusal as the failure, naming the permission, and succeeds once it is granted', async () => {
    const id = await deployed();
    fake.settings.deny = [{ verb: 'patch', resource: 'deployments' }];
    await setEnv(id, { CUBEJS_DB_TYPE: 'bigquery' });
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['retry']);
    const status = await buildStatus(id);
    expect(status.deploymentStatus).toBe('failed');
    expect(status.deploymentStatusReason).toMatch(/403 Forbidden.*patch and create on deployments\.apps/);
    fake.settings.deny = [];
    // The retry (the run went back to queued) applies the change.
    const outcomes = await reconcileThrough(id, () => {
      fake.setRollout(`cube-${id}`, 'available');
    });
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded']);
    expect((await buildStatus(id)).deploymentStatus).toBe('deployed');
  });

  it('keeps answering while the cluster is out of reach; the reconcile is retried', async () => {
    const id = await deployed();
    fake.settings.failWith = 503;
    await setEnv(id, { CUBEJS_DB_TYPE: 'redshift' });
    expect((await runReconciles(id)).map((o) => o.status)).toEqual(['retry']);
    fake.settings.failWith = null;
    fake.settings.hang = true;
    // Requests never wait on the cluster (the pods route does, and is bounded).
    expect((await buildStatus(id)).deploymentStatus).toBe('failed');
    expect((await environments(id))[0].statusReason).toMatch(/overloaded or failing \(503\)/);
    fake.settings.hang = false;
  });

  it('points the data API client at the production Service when no address is configured', async () => {
    const client = t.app.get(DataApiClient);
    expect(client.configured).toBe(true);
    const id = await deployed();
    const failure = await client
      .meta({ accountId: admin.accountId, deploymentId: id }, { securityContext: {} })
      .catch((err: Error) => err);
    expect(String((failure as { message?: string }).message ?? failure)).toMatch(
      new RegExp(`cube-${id}\\.${NAMESPACE}\\.svc|DEPLOYMENT_RUNTIME`),
    );
  });

  it('keeps another account’s deployments out of reach: 404 for its states, as for everything of it', async () => {
    const globex = await newAccount(t, 'initech');
    const theirs = await postDeployment(t, globex);
    const viewer = await newUser(t, admin, { defaultRoles: ['Viewer'] });
    for (const url of [
      `/api/v1/deployments/${theirs.id}/build-status`,
      `/api/v1/deployments/${theirs.id}/environments`,
    ]) {
      expectErrorShape((await t.http().get(url).set(bearer(viewer.token))).body, 404);
    }
  });
});

describe('git fetches of deployments’ pods over plain HTTP', () => {
  let t: TestApp;
  let fake: KubernetesFake;
  beforeAll(async () => {
    fake = await startKubernetesFake();
    t = await startApp({ ...fake.env(), KUBERNETES_PLATFORM_URL: PLATFORM, ALLOW_HTTP: 'false' });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('are let through with a git read credential on the fetch routes only; everything else stays HTTPS-only', async () => {
    const credential = `gitr_1_1_1900000000_${'A'.repeat(43)}`;
    const basic = `Basic ${Buffer.from(`git:${credential}`).toString('base64')}`;
    const fetchRefs = await t
      .http()
      .get('/build/api/v1/deployments/1/git/info/refs')
      .query({ service: 'git-upload-pack' })
      .set('Authorization', basic);
    // Past the HTTPS rule, to the guard, which refuses the forged credential.
    expect(fetchRefs.status).toBe(401);
    const withToken = await t
      .http()
      .get('/build/api/v1/deployments/1/git/info/refs')
      .query({ service: 'git-upload-pack' })
      .set('Authorization', `Basic ${Buffer.from(`git:${t.admin.token}`).toString('base64')}`);
    expect(withToken.status).toBe(403);
    expect(withToken.text).toContain('https_required');
    const elsewhere = await t.http().get('/api/v1/deployments/1').set('Authorization', basic);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.text).toContain('https_required');
  });
});
