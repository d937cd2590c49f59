import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppConfig } from '../../src/core/config/app-config.js';
import { DBT_SYNC_JOB, DbtSyncJob } from '../../src/modules/dbt-sync/dbt-sync.job.js';
import { bigManifest, CUBE_DBT_FILES, CUBE_DBT_MANIFEST } from '../fixtures/dbt/manifests.js';
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
import { TestJobs } from '../support/job-context.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/**
 * The HTTP contract of the dbt sync routes: statuses, shapes, access, validation and body limits.
 * The rules of syncs (their phases, results, failures, cancellation, history) are tested below
 * HTTP, in test/service/dbt-sync.service.spec.ts. Nothing consumes the queues here: the one sync
 * this file needs finished is run by calling its job handler (test/support/job-context.ts).
 */

const TOKEN = 'ghp_SuperSecretToken0123456789';
const MAX_MANIFEST = 4 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('dbt sync', () => {
  let t: TestApp;
  let other: Actor;
  let developer: Actor;
  let viewer: Actor;
  let id: number;
  let theirs: number;
  let bare: number;
  let repoDir: string;
  /** A dbt repository's URL: saved with the integration, never fetched in this file. */
  let repoUrl: string;
  const base = (deployment = id) => `/api/v1/deployments/${deployment}`;
  const admin = () => bearer(t.admin.token);

  const start = (body: Json, actor: Actor = t.admin, deployment = id) =>
    t
      .http()
      .post(`${base(deployment)}/dbt-sync`)
      .set(bearer(actor.token))
      .send(body);
  const status = async (syncJobId: string, deployment = id) =>
    (
      await t
        .http()
        .get(`${base(deployment)}/dbt-sync/${syncJobId}`)
        .set(admin())
    ).body as Json;
  /** One attempt of a started sync's run (`workflowId`: `dbt-sync.run:<runId>`); answers its outcome. */
  const runSync = async (workflowId: string) =>
    (
      await new TestJobs(t.app).attempt(DBT_SYNC_JOB, workflowId.split(':')[1], (payload, ctx) =>
        t.app.get(DbtSyncJob).run(payload, ctx),
      )
    ).outcome;
  const history = async (query: Record<string, string | number> = {}) =>
    (await t.http().get(`${base()}/dbt-sync`).query(query).set(admin())).body as Json;
  const historyItem = async (syncJobId: string) =>
    ((await history({ first: 1000 })).items as Json[]).find((r) => r.syncJobId === syncJobId)!;

  beforeAll(async () => {
    repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dbt-repo-'));
    repoUrl = `file://${repoDir}/dbt.git`;
    // Nothing consumes the queues, nor relays them: a sync started here stays queued unless a test
    // runs it (runSync).
    t = await startApp({
      DBT_GIT_PROTOCOLS: 'file',
      DBT_MANIFEST_MAX_BYTES: String(MAX_MANIFEST),
      OUTBOX_RELAY_INTERVAL_MS: '600000',
    });
    other = await newAccount(t, 'globex');
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    const create = async (actor: Actor, name: string) => {
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(actor.token))
        .send(deploymentInput({ name }));
      return res.body.id as number;
    };
    id = await create(t.admin, 'dbt shop');
    bare = await create(t.admin, 'No dbt');
    theirs = await create(other, 'Theirs');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(repoDir, { recursive: true, force: true });
  });

  describe('the dbt integration', () => {
    const put = (body: Json, actor: Actor = t.admin) =>
      t.http().put(`${base()}/dbt-integration`).set(bearer(actor.token)).send(body);

    it('answers 404 dbt_integration_not_found before one is configured', async () => {
      const res = await t.http().get(`${base()}/dbt-integration`).set(admin());
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'dbt_integration_not_found');
    });

    it.each([
      ['credentials in the URL', 'https://user:pass@github.com/acme/dbt.git', /credentials/],
      ['a transport this service does not allow', 'https://github.com/acme/dbt.git', /https.*allowed: file/],
      ['a relative path', 'repos/dbt.git', /absolute URL/],
      ['an scp-style address', 'git@github.com:acme/dbt.git', /absolute URL/],
      ['git’s ext transport', 'ext::sh -c touch% /tmp/pwned', /spaces|absolute/],
    ])('refuses %s with 400 invalid_dbt_repository_url', async (_, repositoryUrl, message) => {
      const res = await put({ repositoryUrl, branch: 'main' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_dbt_repository_url');
      expect(res.body.message).toMatch(message);
      expect(JSON.stringify(res.body)).not.toContain('pass@');
    });

    it('refuses an invalid branch (400 invalid_branch_name) and project directory (400 invalid_path)', async () => {
      const branch = await put({ repositoryUrl: repoUrl, branch: 'bad..branch' });
      expectErrorShape(branch.body, 400, 'invalid_branch_name');
      const root = await put({ repositoryUrl: repoUrl, branch: 'main', projectRoot: '/a/../../etc' });
      expectErrorShape(root.body, 400, 'invalid_path');
    });

    it('saves the repository; credentials are sealed, never returned, kept when left out, removed by null', async () => {
      const saved = await put({ repositoryUrl: repoUrl, branch: 'main', credentials: { token: TOKEN } });
      expect(saved.status).toBe(200);
      expect(saved.body).toEqual({
        repositoryUrl: repoUrl,
        branch: 'main',
        projectRoot: '/',
        hasCredentials: true,
        updatedAt: expect.any(String),
      });
      const [row] = await t.sql<{ credentials_sealed: string }>(
        `SELECT credentials_sealed FROM dbt_integrations WHERE deployment_id = $1`,
        [id],
      );
      expect(row.credentials_sealed).not.toContain(TOKEN);
      expect(row.credentials_sealed).not.toContain(Buffer.from(TOKEN).toString('base64'));

      const kept = await put({ repositoryUrl: repoUrl, branch: 'main', projectRoot: '/' });
      expect(kept.body.hasCredentials).toBe(true);
      const read = await t.http().get(`${base()}/dbt-integration`).set(admin());
      expect(read.status).toBe(200);
      expect(read.body).toEqual(kept.body);
      expect(JSON.stringify(read.body)).not.toContain(TOKEN);

      const removed = await put({ repositoryUrl: repoUrl, branch: 'main', credentials: null });
      expect(removed.body.hasCredentials).toBe(false);
      // Back with credentials: the syncs below run with them (a file:// remote ignores the header).
      expect(
        (await put({ repositoryUrl: repoUrl, branch: 'main', credentials: { token: TOKEN } })).status,
      ).toBe(200);
    });

    it('reads with DeploymentRead, writes with DeploymentUpdate, and credentials need SecretsManage', async () => {
      expect((await t.http().get(`${base()}/dbt-integration`).set(bearer(viewer.token))).status).toBe(200);
      const refused = await put({ repositoryUrl: repoUrl, branch: 'main' }, viewer);
      expect(refused.status).toBe(403);
      expectErrorShape(refused.body, 403, 'forbidden');
      // A Developer manages deployments but not secrets.
      const secrets = await put(
        { repositoryUrl: repoUrl, branch: 'main', credentials: { token: 'x' } },
        developer,
      );
      expect(secrets.status).toBe(403);
      const plain = await put({ repositoryUrl: repoUrl, branch: 'main' }, developer);
      expect(plain.status).toBe(200);
      expect(plain.body.hasCredentials).toBe(true);
    });

    it('answers 401 without a token and 404 for another account’s deployment', async () => {
      expect((await t.http().get(`${base()}/dbt-integration`)).status).toBe(401);
      expect((await t.http().put(`${base()}/dbt-integration`).send({})).status).toBe(401);
      const res = await t
        .http()
        .get(`${base(theirs)}/dbt-integration`)
        .set(admin());
      expectErrorShape(res.body, 404, 'deployment_not_found');
      const put404 = await t
        .http()
        .put(`${base(theirs)}/dbt-integration`)
        .set(admin())
        .send({ repositoryUrl: repoUrl, branch: 'main' });
      expectErrorShape(put404.body, 404, 'deployment_not_found');
    });
  });

  describe('starting a sync', () => {
    it('starts: a generated branch name, a sync job id and the run as workflow id', async () => {
      const res = await start({});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        branchName: expect.stringMatching(/^dbt-sync\/main-\d{14}-[0-9a-f]{8}$/),
        syncJobId: expect.stringMatching(UUID),
        workflowId: expect.stringMatching(/^dbt-sync\.run:\d+$/),
      });
    });

    it('refuses a branch name that is not one with 400 invalid_branch_name', async () => {
      for (const branchName of ['', '  ', 'bad..name', 'dev-12-0a1b2c3d', '-x']) {
        const res = await start({ branchName });
        expect({ branchName, status: res.status }).toEqual({ branchName, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
      }
    });

    it('accepts a manifest of over 1 MB on this route, while other routes keep BODY_LIMIT', async () => {
      const big = bigManifest(500);
      const body = JSON.stringify({ source: 'manifest', ref: 'ci/build-42', manifest: big });
      expect(body.length).toBeGreaterThan(1024 * 1024);
      expect(body.length).toBeLessThan(MAX_MANIFEST);
      const res = await t
        .http()
        .post(`${base()}/dbt-sync`)
        .set(admin())
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(200);

      // Without a token, the route keeps BODY_LIMIT: nobody unknown gets megabytes parsed.
      const anonymous = await t
        .http()
        .post(`${base()}/dbt-sync`)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(anonymous.status).toBe(413);
      expect((await t.http().post(`${base()}/dbt-sync`).send({})).status).toBe(401);

      // The same body on another route: over BODY_LIMIT (1mb).
      const elsewhere = await t
        .http()
        .put(`${base()}/dbt-integration`)
        .set(admin())
        .set('Content-Type', 'application/json')
        .send(body);
      expect(elsewhere.status).toBe(413);
      expectErrorShape(elsewhere.body, 413, 'payload_too_large');
    });

    it('refuses a body over DBT_MANIFEST_MAX_BYTES with 413, starting nothing', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM dbt_syncs`);
      const body = JSON.stringify({ source: 'manifest', manifest: bigManifest(1500) });
      expect(body.length).toBeGreaterThan(MAX_MANIFEST);
      const res = await t
        .http()
        .post(`${base()}/dbt-sync`)
        .set(admin())
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(413);
      expectErrorShape(res.body, 413, 'payload_too_large');
      expect(await t.sql(`SELECT count(*)::int AS n FROM dbt_syncs`)).toEqual(before);
    });

    it('allows 50 MB by default', () => {
      expect(new AppConfig('api', { NODE_ENV: 'test' }).dbtSync.manifestMaxBytes).toBe(52_428_800);
    });
  });

  describe('access', () => {
    let syncJobId: string;
    beforeAll(async () => {
      syncJobId = (await history({ first: 1 })).items[0].syncJobId;
    });
    /** Every sync route: [method, url, whether the url names a sync]. */
    const routes = (sid: () => string, deployment = () => id) =>
      [
        ['get', () => `${base(deployment())}/dbt-sync`, false],
        ['post', () => `${base(deployment())}/dbt-sync`, false],
        ['get', () => `${base(deployment())}/dbt-sync/${sid()}`, true],
        ['get', () => `${base(deployment())}/dbt-sync/${sid()}/result`, true],
        ['get', () => `${base(deployment())}/dbt-sync/${sid()}/logs`, true],
        ['get', () => `${base(deployment())}/dbt-sync/${sid()}/generated-files`, true],
        ['delete', () => `${base(deployment())}/dbt-sync/${sid()}`, true],
      ] as const;

    it('answers 401 without a token on every route', async () => {
      for (const [method, url] of routes(() => syncJobId)) {
        const res = await t.http()[method](url());
        expect({ url: url(), method, status: res.status }).toEqual({ url: url(), method, status: 401 });
      }
    });

    it('answers 403 to a caller who may read the deployment but not its data model', async () => {
      for (const [method, url] of routes(() => syncJobId)) {
        const res = await t.http()[method](url()).set(bearer(viewer.token));
        expect({ url: url(), method, status: res.status, code: res.body.code }).toEqual({
          url: url(),
          method,
          status: 403,
          code: 'forbidden',
        });
      }
    });

    it('lets a Developer start, read and cancel', async () => {
      const res = await start(
        { source: 'manifest', output: 'files', manifest: JSON.parse(CUBE_DBT_MANIFEST) },
        developer,
      );
      expect(res.status).toBe(200);
      // No worker consumes the queue here: the sync runs in the test, as a worker would run it.
      expect(await runSync(res.body.workflowId)).toEqual({ status: 'succeeded' });
      expect((await status(res.body.syncJobId)).status).toBe('COMPLETED');
      const read = await t
        .http()
        .get(`${base()}/dbt-sync/${res.body.syncJobId}/result`)
        .set(bearer(developer.token));
      expect(read.status).toBe(200);
      expect((await historyItem(res.body.syncJobId)).userId).toBe(developer.userId);
    });

    it('answers 404: another account’s deployment, another deployment’s sync, an unknown id', async () => {
      for (const [method, url] of routes(
        () => syncJobId,
        () => theirs,
      )) {
        const res = await t.http()[method](url()).set(admin());
        expect({ url: url(), status: res.status, code: res.body.code }).toEqual({
          url: url(),
          status: 404,
          code: 'deployment_not_found',
        });
      }
      for (const sid of [syncJobId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1']) {
        for (const [method, url] of routes(
          () => sid,
          () => bare,
        ).filter(([, , named]) => named)) {
          const res = await t.http()[method](url()).set(admin());
          expect({ url: url(), status: res.status, code: res.body.code }).toEqual({
            url: url(),
            status: 404,
            code: 'dbt_sync_not_found',
          });
        }
      }
    });

    it('answers 400 for unknown or ill-typed fields', async () => {
      for (const body of [
        { refs: 'main' },
        { source: 'svn' },
        { output: 'zip' },
        { manifest: [] },
        { ref: 7 },
      ]) {
        const res = await start(body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({
          body,
          status: 400,
          code: 'validation_failed',
        });
      }
      const put = await t
        .http()
        .put(`${base()}/dbt-integration`)
        .set(admin())
        .send({ repositoryUrl: repoUrl, branch: 'main', credentials: { token: 'a b' } });
      expectErrorShape(put.body, 400, 'validation_failed');
    });
  });

  describe('the routes of a finished sync', () => {
    let syncJobId: string;
    beforeAll(async () => {
      // The Developer's sync (access, above): a posted manifest, its files kept with the sync.
      [{ syncJobId }] = (await history({ status: 'COMPLETED', first: 1 })).items as Json[];
    });

    it('answer in their shapes: status, result, logs, generated files, history', async () => {
      const url = `${base()}/dbt-sync/${syncJobId}`;
      const read = await t.http().get(url).set(admin());
      expect(read.status).toBe(200);
      expect(read.body).toEqual({
        syncJobId,
        status: 'COMPLETED',
        progress: { stage: 'COMPLETED', percentComplete: 100, message: expect.any(String) },
        updatedAt: expect.any(String),
        error: null,
      });

      const result = await t.http().get(`${url}/result`).set(admin());
      expect(result.status).toBe(200);
      expect(result.body).toEqual({
        syncJobId,
        completedAt: expect.any(String),
        durationMs: expect.any(Number),
        cubeCount: expect.any(Number),
        generatedFiles: CUBE_DBT_FILES.map((p) => ({ path: p })),
        manifestStats: {
          models: expect.any(Number),
          sources: expect.any(Number),
          macros: expect.any(Number),
        },
      });

      const logs = await t.http().get(`${url}/logs`).query({ first: 2 }).set(admin());
      expect(logs.status).toBe(200);
      expect(logs.body.items).toHaveLength(2);
      for (const line of logs.body.items as Json[]) {
        expect(line).toEqual({
          timestamp: expect.any(String),
          level: 'info',
          message: expect.any(String),
          stream: 'system',
          phase: expect.any(String),
          durationMs: line.durationMs === null ? null : expect.any(Number),
        });
      }
      expect(logs.body.pageInfo).toMatchObject({ hasNextPage: true, endCursor: expect.any(String) });

      const files = await t.http().get(`${url}/generated-files`).query({ first: 3 }).set(admin());
      expect(files.status).toBe(200);
      expect(files.body.items).toEqual(
        CUBE_DBT_FILES.slice(0, 3).map((p) => ({ path: p, content: expect.any(String) })),
      );
      expect(files.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });

      expect(await historyItem(syncJobId)).toEqual({
        syncJobId,
        deploymentId: id,
        branchName: expect.any(String),
        source: 'manifest',
        startedAt: expect.any(String),
        status: 'COMPLETED',
        trigger: 'api',
        completedAt: expect.any(String),
        durationMs: expect.any(Number),
        errorMessage: null,
        failedPhase: null,
        gitRef: null,
        lastStage: 'COMPLETED',
        phases: expect.arrayContaining([
          {
            phase: expect.any(String),
            outcome: 'ok',
            startedOffsetMs: expect.any(Number),
            durationMs: expect.any(Number),
          },
        ]),
        stats: {
          models: expect.any(Number),
          sources: expect.any(Number),
          macros: expect.any(Number),
          cubeCount: expect.any(Number),
          generatedFileCount: expect.any(Number),
          dbtVersion: expect.any(String),
          manifestGeneratedAt: expect.any(String),
        },
        triggerContext: null,
        userId: developer.userId,
      });
    });

    it('answers 409 dbt_sync_finished for a completed sync', async () => {
      const [completed] = (await history({ status: 'COMPLETED', first: 1 })).items;
      const res = await t.http().delete(`${base()}/dbt-sync/${completed.syncJobId}`).set(admin());
      expectErrorShape(res.body, 409, 'dbt_sync_finished');
    });

    it('refuses a history cursor it did not make (400 invalid_cursor) and an unknown status (400)', async () => {
      const bad = await t.http().get(`${base()}/dbt-sync`).query({ after: 'nope' }).set(admin());
      expectErrorShape(bad.body, 400, 'invalid_cursor');
      const status = await t.http().get(`${base()}/dbt-sync`).query({ status: 'DONE' }).set(admin());
      expectErrorShape(status.body, 400, 'validation_failed');
    });
  });
});

describe('dbt repositories limited to some hosts (DBT_GIT_HOSTS)', () => {
  let t: TestApp;
  let id: number;

  beforeAll(async () => {
    // The names are opened to the outbound rule too: they do not resolve here (example.com), and the
    // rule would refuse a name that does not resolve when it is saved.
    t = await startApp({
      DBT_GIT_HOSTS: 'github.com,*.gitlab.example.com',
      OUTBOUND_ALLOWED_HOSTS: 'github.com,*.gitlab.example.com',
    });
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput({ name: 'Hosts' }))
      .expect(200);
    id = res.body.id as number;
  });
  afterAll(() => t.close());

  const put = (repositoryUrl: string) =>
    t
      .http()
      .put(`/api/v1/deployments/${id}/dbt-integration`)
      .set(bearer(t.admin.token))
      .send({ repositoryUrl, branch: 'main' });

  it('takes a repository on a listed host, or below a listed *.domain', async () => {
    for (const url of ['https://github.com/acme/dbt.git', 'https://code.gitlab.example.com/acme/dbt.git']) {
      const res = await put(url);
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.body.repositoryUrl).toBe(url);
    }
  });

  it('refuses any other host with 400 invalid_dbt_repository_url, and keeps the saved one', async () => {
    await put('https://github.com/acme/dbt.git').expect(200);
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://github.com.evil.test/acme/dbt.git',
      'https://gitlab.example.com/acme/dbt.git',
      'https://127.0.0.1/acme/dbt.git',
    ]) {
      const res = await put(url);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expectErrorShape(res.body, 400, 'invalid_dbt_repository_url');
      expect(res.body.message).toMatch(
        /which this service does not allow \(allowed: github\.com, \*\.gitlab\.example\.com\)/,
      );
    }
    const saved = await t.http().get(`/api/v1/deployments/${id}/dbt-integration`).set(bearer(t.admin.token));
    expect(saved.body.repositoryUrl).toBe('https://github.com/acme/dbt.git');
  });
});
