import { Database } from '../../src/core/database/database.js';
import { DBT_SYNC_JOB, DbtSyncJob } from '../../src/modules/dbt-sync/dbt-sync.job.js';
import { BUILD_JOB, ModelBuilds } from '../../src/modules/data-model/model-builds.js';
import { CUBE_DBT_MANIFEST } from '../fixtures/dbt/manifests.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { TestJobContext, TestJobs } from '../support/job-context.js';
import { EventTap } from '../support/published-events.js';
import { createUser, expectScimError, patchOp, scimClient, type ScimClient } from '../support/scim.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/** A dbt manifest of three models, as a client posts it. */
const MANIFEST = JSON.parse(CUBE_DBT_MANIFEST) as Json;

/**
 * The events builds, dbt syncs, deployments and SCIM publish (docs/webhooks.md, Event types):
 * one per change or per ending, none for a refusal, none for a job run again, and only the
 * account's own endpoints hearing of them. Observed through the webhooks API (an endpoint
 * subscribed to `*` and its deliveries; nothing is sent: no job is relayed). Jobs are run by
 * calling their handlers (test/support/job-context.ts).
 */
describe('domain events: builds, dbt syncs, deployments, SCIM', () => {
  let t: TestApp;
  let jobs: TestJobs;
  let other: Actor;
  let viewer: Actor;
  let dep: number;
  let tap: EventTap;
  let otherTap: EventTap;
  const admin = () => bearer(t.admin.token);

  const ok = async (req: PromiseLike<{ status: number; body: Json }>, status = 200): Promise<Json> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const runOf = async (table: 'deployment_builds' | 'dbt_syncs', id: number | string): Promise<string> => {
    const [row] = await t.sql<{ runId: string }>(
      `SELECT run_id::text AS "runId" FROM ${table} WHERE id = $1`,
      [id],
    );
    return row.runId;
  };
  const builds = async (deploymentId: number) =>
    (
      await t.sql<{ id: number }>(`SELECT id FROM deployment_builds WHERE deployment_id = $1 ORDER BY id`, [
        deploymentId,
      ])
    ).map((r) => r.id);
  const runBuild = async (buildId: number) =>
    (
      await jobs.attempt(BUILD_JOB, await runOf('deployment_builds', buildId), (p, c) =>
        t.app.get(ModelBuilds).build(p, c),
      )
    ).outcome;
  /** The build handler once more, as a redelivered job would run it (its run already finished). */
  const rerunBuild = (buildId: number) =>
    t.app
      .get(ModelBuilds)
      .build({ buildId }, new TestJobContext(BUILD_JOB.name))
      .catch(() => undefined);

  beforeAll(async () => {
    // Nothing relays the queue: deliveries are recorded and never sent, jobs run when a test runs them.
    // At most 4 files on a branch: the starter project (3) fits, a dbt sync's cubes over it do not.
    t = await startApp({
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      MODEL_MAX_FILES: '4',
    });
    jobs = new TestJobs(t.app);
    other = await newAccount(t, 'domain-events-other');
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    tap = await EventTap.open(t, t.admin);
    otherTap = await EventTap.open(t, other);
    dep = (
      await ok(
        t
          .http()
          .post('/build/api/v1/deployments')
          .set(admin())
          .send(deploymentInput({ name: 'events' })),
      )
    ).id as number;
  });
  afterAll(() => t?.close());

  describe('builds', () => {
    it('publishes build.finished once when a build succeeds, and nothing when it runs again', async () => {
      // Creating a deployment is not an event of its own.
      await tap.expectNone();
      const [buildId] = await builds(dep);
      expect(await runBuild(buildId)).toEqual({ status: 'succeeded' });
      const event = await tap.expectOne('build.finished', { type: 'build', id: buildId });
      const status = await ok(t.http().get(`/api/v1/deployments/${dep}/build-status`).set(admin()));
      expect(event.data).toEqual({
        buildJobId: buildId,
        deploymentId: dep,
        branchName: status.branchName,
        mode: 'production',
        status: 'built',
        trigger: expect.any(String),
        lastHash: status.lastHash,
        filesHash: status.filesHash,
        errorText: null,
        cubesCount: expect.any(Number),
        updatedAt: expect.any(String),
      });
      expect(status).toMatchObject({ status: 'built', buildJobId: buildId });

      await rerunBuild(buildId);
      await tap.expectNone();
      expect(await ok(t.http().get(`/api/v1/deployments/${dep}/build-status`).set(admin()))).toMatchObject({
        status: 'built',
        buildJobId: buildId,
        lastHash: status.lastHash,
      });
    });

    it('publishes build.failed once when a build fails, and nothing when it runs again', async () => {
      const buildId = await t.app
        .get(Database)
        .transaction(() =>
          t.app.get(ModelBuilds).queue(t.admin.accountId, dep, 'no-such-branch', null, 'test'),
        );
      expect(await runBuild(buildId)).toEqual({ status: 'failed', error: expect.any(String) });
      const event = await tap.expectOne('build.failed', { type: 'build', id: buildId });
      expect(event.data).toMatchObject({
        buildJobId: buildId,
        deploymentId: dep,
        branchName: 'no-such-branch',
        mode: 'dev_mode',
        status: 'failed',
        lastHash: null,
        errorText: 'Bad branch',
      });
      await rerunBuild(buildId);
      await tap.expectNone();
    });
  });

  describe('dbt syncs', () => {
    const start = async (body: Json) =>
      ok(t.http().post(`/api/v1/deployments/${dep}/dbt-sync`).set(admin()).send(body));
    const runSync = async (syncJobId: string, onPhase?: (phase: string, ctx: TestJobContext) => void) =>
      (
        await jobs.attempt(
          DBT_SYNC_JOB,
          await runOf('dbt_syncs', syncJobId),
          (p, c) => t.app.get(DbtSyncJob).run(p, c),
          { onPhase },
        )
      ).outcome;

    it('publishes dbt_sync.finished once with succeeded, and nothing when the job runs again', async () => {
      const started = await start({ source: 'manifest', output: 'files', manifest: MANIFEST });
      await tap.expectNone();
      expect(await runSync(started.syncJobId)).toEqual({ status: 'succeeded' });
      const event = await tap.expectOne('dbt_sync.finished', { type: 'dbt_sync', id: started.syncJobId });
      const history = await ok(t.http().get(`/api/v1/deployments/${dep}/dbt-sync`).set(admin()));
      const item = (history.items as Json[]).find((i) => i.syncJobId === started.syncJobId)!;
      expect(event.data).toMatchObject({
        syncJobId: started.syncJobId,
        deploymentId: dep,
        status: 'succeeded',
        branchName: started.branchName,
        source: 'manifest',
        output: 'files',
        trigger: item.trigger,
        startedAt: item.startedAt,
        stats: item.stats,
        errorMessage: null,
        failedPhase: null,
      });
      expect(event.data.stats.cubeCount).toBeGreaterThan(0);

      await t.app.get(DbtSyncJob).run({ syncId: started.syncJobId }, new TestJobContext(DBT_SYNC_JOB.name));
      await tap.expectNone();
    });

    it('publishes dbt_sync.finished with failed when a run fails for good', async () => {
      // Its cubes over the starter project would break MODEL_MAX_FILES: refused at branch-commit.
      const started = await start({ source: 'manifest', manifest: MANIFEST });
      expect(await runSync(started.syncJobId)).toEqual({ status: 'failed', error: expect.any(String) });
      const event = await tap.expectOne('dbt_sync.finished', { type: 'dbt_sync', id: started.syncJobId });
      expect(event.data).toMatchObject({
        syncJobId: started.syncJobId,
        status: 'failed',
        failedPhase: 'branch-commit',
        errorMessage: expect.stringContaining('the most allowed is 4'),
      });
      await t.app
        .get(DbtSyncJob)
        .run({ syncId: started.syncJobId }, new TestJobContext(DBT_SYNC_JOB.name))
        .catch(() => undefined);
      await tap.expectNone();
    });

    it('publishes dbt_sync.finished with cancelled once, for a queued sync and for a running one', async () => {
      const queued = await start({ source: 'manifest', output: 'files', manifest: MANIFEST });
      const url = `/api/v1/deployments/${dep}/dbt-sync/${queued.syncJobId}`;
      await ok(t.http().delete(url).set(admin()));
      const event = await tap.expectOne('dbt_sync.finished', { type: 'dbt_sync', id: queued.syncJobId });
      expect(event.data).toMatchObject({ syncJobId: queued.syncJobId, status: 'cancelled' });
      const again = await t.http().delete(url).set(admin());
      expectErrorShape(again.body, 409, 'dbt_sync_finished');
      expect(await runSync(queued.syncJobId)).toEqual({ status: 'unclaimed' });
      await tap.expectNone();

      const running = await start({ source: 'manifest', output: 'files', manifest: MANIFEST });
      const outcome = await runSync(running.syncJobId, (phase, ctx) => {
        if (phase === 'manifest-parse') ctx.requestCancel();
      });
      expect(outcome).toEqual({ status: 'cancelled' });
      const stopped = await tap.expectOne('dbt_sync.finished', { type: 'dbt_sync', id: running.syncJobId });
      expect(stopped.data).toMatchObject({ status: 'cancelled', errorMessage: null });
    });

    it('publishes nothing for a sync it refuses to start', async () => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${dep}/dbt-sync`)
        .set(bearer(viewer.token))
        .send({ source: 'manifest', manifest: MANIFEST });
      expect([403, 404]).toContain(res.status);
      await tap.expectNone();
    });
  });

  describe('deployments', () => {
    it('publishes deployment.changed with the settings for a settings change, nothing for a refused one', async () => {
      const updated = await ok(
        t.http().put(`/api/v1/deployments/${dep}`).set(admin()).send({ name: 'Renamed' }),
      );
      const event = await tap.expectOne('deployment.changed', { type: 'deployment', id: dep });
      expect(event.data).toEqual(updated);
      expect(event.data).toEqual(await ok(t.http().get(`/api/v1/deployments/${dep}/settings`).set(admin())));

      const refused = await t
        .http()
        .put(`/api/v1/deployments/${dep}`)
        .set(bearer(viewer.token))
        .send({ name: 'x' });
      expect([403, 404]).toContain(refused.status);
      const invalid = await t.http().put(`/api/v1/deployments/${dep}`).set(admin()).send({ name: '  ' });
      expectErrorShape(invalid.body, 400, 'validation_failed');
      await tap.expectNone();
    });

    it('publishes deployment.changed for env vars without their names or values', async () => {
      await ok(
        t
          .http()
          .put(`/api/v1/deployments/${dep}/env-vars`)
          .set(admin())
          .send({ env_variables: [{ name: 'WAREHOUSE_PASSWORD', value: 'hunter2-very-secret' }] }),
      );
      const event = await tap.expectOne('deployment.changed', { type: 'deployment', id: dep });
      expect(event.data).toMatchObject({ id: dep, name: 'Renamed' });
      expect(JSON.stringify(event)).not.toContain('hunter2-very-secret');
      expect(JSON.stringify(event)).not.toContain('WAREHOUSE_PASSWORD');
    });

    it('publishes deployment.changed for a creation step moved, and with deleted: true for a deletion', async () => {
      const doomed = (
        await ok(
          t
            .http()
            .post('/api/v1/deployments')
            .set(admin())
            .send(deploymentInput({ name: 'Doomed', creationStep: 'project' })),
        )
      ).id as number;
      await tap.expectNone();
      const advanced = await ok(
        t
          .http()
          .post(`/api/v1/deployments/${doomed}/creation-step/advance`)
          .set(admin())
          .send({ creationStep: 'upload' }),
      );
      const moved = await tap.expectOne('deployment.changed', { type: 'deployment', id: doomed });
      expect(moved.data).toMatchObject({ id: doomed, creationStep: advanced.creationStep });
      expect(advanced.creationStep).toBe('upload');
      // Advanced to the step it is at: nothing changes, nothing is published.
      await ok(
        t
          .http()
          .post(`/api/v1/deployments/${doomed}/creation-step/advance`)
          .set(admin())
          .send({ creationStep: 'upload' }),
      );
      await tap.expectNone();
      await ok(t.http().post(`/api/v1/deployments/${doomed}/creation-step/reset`).set(admin()));
      const reset = await tap.expectOne('deployment.changed', { type: 'deployment', id: doomed });
      expect(reset.data).toMatchObject({ id: doomed, creationStep: 'project' });

      const refused = await t.http().delete(`/api/v1/deployments/${doomed}`).set(bearer(viewer.token));
      expect([403, 404]).toContain(refused.status);
      await tap.expectNone();
      await ok(t.http().delete(`/api/v1/deployments/${doomed}`).set(admin()));
      const deleted = await tap.expectOne('deployment.changed', { type: 'deployment', id: doomed });
      expect(deleted.data).toEqual({ id: doomed, name: 'Doomed', deleted: true });
    });
  });

  describe('SCIM', () => {
    let scim: ScimClient;
    beforeAll(() => {
      scim = scimClient(t);
    });

    it('publishes scim.user_deprovisioned when SCIM deactivates a user, once', async () => {
      const user = await createUser(scim);
      await tap.expectNone();
      const res = await scim.patch(
        `/Users/${user.id}`,
        patchOp({ op: 'replace', path: 'active', value: false }),
      );
      expect(res.status).toBe(200);
      const event = await tap.expectOne('scim.user_deprovisioned', { type: 'user', id: user.id });
      expect(event.data).toEqual(res.body);
      expect(event.data).toMatchObject({ id: user.id, userName: user.userName, active: false });
      // Already inactive: nothing changes, nothing is published.
      await scim.patch(`/Users/${user.id}`, patchOp({ op: 'replace', path: 'active', value: false }));
      await tap.expectNone();
    });

    it('publishes scim.user_deprovisioned when SCIM deletes a user, and nothing for a refused delete', async () => {
      const user = await createUser(scim, undefined, { externalId: 'okta-events-1' });
      await tap.next();
      expectScimError(await scim.delete(`/Users/${t.admin.userId}`), 400);
      expectScimError(await scim.delete(`/Users/999999`), 404);
      await tap.expectNone();
      const res = await scim.delete(`/Users/${user.id}`);
      expect(res.status).toBe(204);
      const event = await tap.expectOne('scim.user_deprovisioned', { type: 'user', id: user.id });
      expect(event.data).toEqual({
        id: user.id,
        externalId: 'okta-events-1',
        userName: user.userName,
        active: false,
        deleted: true,
      });
    });
  });

  it('tells none of this to another account’s endpoint', async () => {
    await otherTap.expectNone();
  });
});
