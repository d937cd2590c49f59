import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { AppConfig } from '../../src/core/config/app-config.js';
import { column, columns, DBT_FIXTURES, manifest, modelNode, testNode } from '../fixtures/dbt/manifests.js';
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

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

const CUBE_DBT_MANIFEST = fs.readFileSync(path.join(DBT_FIXTURES, 'cube_dbt/manifest.json'), 'utf8');
const CUBE_DBT_FILES = [
  'model/cubes/line_items_copy.yml',
  'model/cubes/orders_copy.yml',
  'model/cubes/products_copy.yml',
  'model/cubes/users_copy.yml',
];
const TOKEN = 'ghp_SuperSecretToken0123456789';
const MAX_MANIFEST = 4 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'dbt dev',
  GIT_AUTHOR_EMAIL: 'dbt@example.test',
  GIT_COMMITTER_NAME: 'dbt dev',
  GIT_COMMITTER_EMAIL: 'dbt@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const run = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

/**
 * A bare repository on disk holding a dbt project: one commit per branch with the given files
 * (path -> content), and tags naming branches' commits. Answers its file:// URL.
 */
function dbtRepository(branches: Record<string, Record<string, string>>, tags: Record<string, string> = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dbt-repo-'));
  const bare = path.join(root, 'dbt.git');
  run(root, 'init', '--bare', '--quiet', bare);
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  run(work, 'init', '--quiet');
  for (const [branch, files] of Object.entries(branches)) {
    run(work, 'checkout', '--quiet', '--orphan', branch);
    run(work, 'rm', '-r', '-q', '-f', '--ignore-unmatch', '.');
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
      fs.writeFileSync(path.join(work, file), content);
    }
    run(work, 'add', '-A');
    run(work, 'commit', '--quiet', '--allow-empty', '-m', `dbt project (${branch})`);
    run(work, 'push', '--quiet', bare, `HEAD:refs/heads/${branch}`);
  }
  for (const [tag, branch] of Object.entries(tags)) run(bare, 'tag', '-a', '-m', tag, tag, branch);
  return { url: `file://${bare}`, bare, head: (branch: string) => run(bare, 'rev-parse', branch) };
}

/** A manifest of `n` documented models with typed columns and tested keys: over 1 MB at 500. */
function bigManifest(n: number) {
  const nodes = [];
  for (let i = 0; i < n; i++) {
    const name = `model_${String(i).padStart(4, '0')}`;
    const cols = ['id', 'customer_id', 'status', 'amount', 'created_at', 'updated_at', 'notes', 'is_active'];
    const types = [
      'bigint',
      'bigint',
      'varchar',
      'numeric(38,2)',
      'timestamp',
      'timestamp',
      'text',
      'boolean',
    ];
    nodes.push(
      modelNode(name, {
        description: `Model ${i} of the generated project: one row per thing, documented at length. `.repeat(
          3,
        ),
        columns: columns(
          ...cols.map((c, k) =>
            column(c, types[k], { description: `The ${c} of a ${name} row, as the warehouse stores it.` }),
          ),
        ),
      }),
      testNode('unique', `model.shop.${name}`, 'id'),
      testNode('not_null', `model.shop.${name}`, 'id'),
    );
  }
  return manifest(nodes, 12);
}

describe('dbt sync', () => {
  let t: TestApp;
  let other: Actor;
  let developer: Actor;
  let viewer: Actor;
  let id: number;
  let theirs: number;
  let bare: number;
  let repo: ReturnType<typeof dbtRepository>;
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
  /** Polls the status until it is terminal (COMPLETED or FAILED). */
  const settled = (syncJobId: string) =>
    waitFor(
      () => status(syncJobId),
      (s) => s.status === 'COMPLETED' || s.status === 'FAILED',
      60_000,
      200,
    );
  const history = async (query: Record<string, string | number> = {}) =>
    (await t.http().get(`${base()}/dbt-sync`).query(query).set(admin())).body as Json;
  const historyItem = async (syncJobId: string) =>
    ((await history({ first: 1000 })).items as Json[]).find((r) => r.syncJobId === syncJobId)!;
  const logs = async (syncJobId: string) =>
    (
      (await t.http().get(`${base()}/dbt-sync/${syncJobId}/logs`).query({ first: 1000 }).set(admin()))
        .body as Json
    ).items as Json[];
  const branchFiles = async (branchName: string) =>
    (
      await t
        .http()
        .get(`/build/api/v1/deployments/${id}/data-model/files`)
        .query({ branchName, withContent: 'true' })
        .set(admin())
    ).body as Json;
  const gitIn = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`, ...args], {
      encoding: 'utf8',
    }).trim();
  const syncBranches = () => gitIn('for-each-ref', '--format=%(refname:short)', 'refs/heads/dbt-sync/');

  beforeAll(async () => {
    repo = dbtRepository(
      {
        main: { 'dbt_project.yml': 'name: shop\n', 'target/manifest.json': CUBE_DBT_MANIFEST },
        'release/2026.08': {
          'analytics/dbt_project.yml': 'name: shop\n',
          'analytics/target/manifest.json': CUBE_DBT_MANIFEST,
        },
        'no-manifest': { 'dbt_project.yml': 'name: shop\n', 'models/orders.sql': 'select 1\n' },
        'broken-json': { 'target/manifest.json': '{"metadata": ' },
        'old-schema': {
          'target/manifest.json': JSON.stringify({
            metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v8.json' },
          }),
        },
      },
      { 'v1.0': 'main', '20260817': 'main' },
    );
    // This API runs the syncs (the `default` queue), not the builds they queue (the `builds`
    // queue: their rows are what this file checks); dbt repositories are local bare ones.
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      DBT_GIT_PROTOCOLS: 'file',
      DBT_MANIFEST_MAX_BYTES: String(MAX_MANIFEST),
      MODEL_MAX_FILES: '600',
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
  afterAll(() => t.close());

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
      const branch = await put({ repositoryUrl: repo.url, branch: 'bad..branch' });
      expectErrorShape(branch.body, 400, 'invalid_branch_name');
      const root = await put({ repositoryUrl: repo.url, branch: 'main', projectRoot: '/a/../../etc' });
      expectErrorShape(root.body, 400, 'invalid_path');
    });

    it('saves the repository; credentials are sealed, never returned, kept when left out, removed by null', async () => {
      const saved = await put({ repositoryUrl: repo.url, branch: 'main', credentials: { token: TOKEN } });
      expect(saved.status).toBe(200);
      expect(saved.body).toEqual({
        repositoryUrl: repo.url,
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

      const kept = await put({ repositoryUrl: repo.url, branch: 'main', projectRoot: '/' });
      expect(kept.body.hasCredentials).toBe(true);
      const read = await t.http().get(`${base()}/dbt-integration`).set(admin());
      expect(read.status).toBe(200);
      expect(read.body).toEqual(kept.body);
      expect(JSON.stringify(read.body)).not.toContain(TOKEN);

      const removed = await put({ repositoryUrl: repo.url, branch: 'main', credentials: null });
      expect(removed.body.hasCredentials).toBe(false);
      // Back with credentials: the syncs below run with them (a file:// remote ignores the header).
      expect(
        (await put({ repositoryUrl: repo.url, branch: 'main', credentials: { token: TOKEN } })).status,
      ).toBe(200);
    });

    it('reads with DeploymentRead, writes with DeploymentUpdate, and credentials need SecretsManage', async () => {
      expect((await t.http().get(`${base()}/dbt-integration`).set(bearer(viewer.token))).status).toBe(200);
      const refused = await put({ repositoryUrl: repo.url, branch: 'main' }, viewer);
      expect(refused.status).toBe(403);
      expectErrorShape(refused.body, 403, 'forbidden');
      // A Developer manages deployments but not secrets.
      const secrets = await put(
        { repositoryUrl: repo.url, branch: 'main', credentials: { token: 'x' } },
        developer,
      );
      expect(secrets.status).toBe(403);
      const plain = await put({ repositoryUrl: repo.url, branch: 'main' }, developer);
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
        .send({ repositoryUrl: repo.url, branch: 'main' });
      expectErrorShape(put404.body, 404, 'deployment_not_found');
    });
  });

  describe('a sync from git', () => {
    let sync: Json;
    let done: Json;

    it('starts: a generated branch name, a sync job id and the run as workflow id', async () => {
      const res = await start({});
      expect(res.status).toBe(200);
      sync = res.body;
      expect(sync).toEqual({
        branchName: expect.stringMatching(/^dbt-sync\/main-\d{14}-[0-9a-f]{8}$/),
        syncJobId: expect.stringMatching(UUID),
        workflowId: expect.stringMatching(/^dbt-sync\.run:\d+$/),
      });
    });

    it('runs to COMPLETED; the branch holds the cube files and a build is recorded', async () => {
      done = await settled(sync.syncJobId);
      expect(done).toEqual({
        syncJobId: sync.syncJobId,
        status: 'COMPLETED',
        progress: { stage: 'COMPLETED', percentComplete: 100, message: 'Generated 4 cubes' },
        updatedAt: expect.any(String),
        error: null,
      });
      const tree = JSON.stringify((await branchFiles(sync.branchName)).items);
      for (const file of CUBE_DBT_FILES) expect(tree).toContain(`"/${file}"`);
      // Over the deploy branch: the starter project is still there.
      expect(gitIn('ls-tree', '-r', '--name-only', sync.branchName).split('\n')).toEqual(
        expect.arrayContaining([...CUBE_DBT_FILES, 'README.md', 'model/cubes/orders.yml']),
      );
      expect(gitIn('rev-parse', `${sync.branchName}^`)).toBe(gitIn('rev-parse', 'master'));
      const builds = await t.sql<{ trigger: string; commit_sha: string }>(
        `SELECT trigger, commit_sha FROM deployment_builds WHERE deployment_id = $1 AND branch = $2`,
        [id, sync.branchName],
      );
      expect(builds).toEqual([{ trigger: 'dbt-sync', commit_sha: gitIn('rev-parse', sync.branchName) }]);
      const branches = await t.http().get(`/build/api/v1/deployments/${id}/branches`).set(admin());
      expect(branches.body.items.map((b: Json) => b.name)).toContain(sync.branchName);
    });

    it('answers the result: cubes, files, manifest stats', async () => {
      const res = await t.http().get(`${base()}/dbt-sync/${sync.syncJobId}/result`).set(admin());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        syncJobId: sync.syncJobId,
        completedAt: expect.any(String),
        durationMs: expect.any(Number),
        cubeCount: 4,
        generatedFiles: CUBE_DBT_FILES.map((p) => ({ path: p })),
        manifestStats: { models: 4, sources: 0, macros: 349 },
      });
      expect(res.body.durationMs).toBeGreaterThanOrEqual(0);
    });

    it('logs each phase, the closing line of each with its duration', async () => {
      const lines = await logs(sync.syncJobId);
      for (const line of lines) {
        expect(line).toEqual({
          timestamp: expect.any(String),
          level: 'info',
          message: expect.any(String),
          stream: 'system',
          phase: expect.any(String),
          durationMs: line.durationMs === null ? null : expect.any(Number),
        });
      }
      const closing = lines.filter((l) => l.durationMs !== null);
      expect(closing.map((l) => [l.phase, l.message])).toEqual([
        ['repo-clone', 'repo-clone done'],
        ['manifest-parse', 'manifest-parse done'],
        ['cube-generate', 'cube-generate done'],
        ['branch-commit', 'branch-commit done'],
        ['finalize', 'finalize done'],
      ]);
      expect(lines.map((l) => l.message)).toEqual(
        expect.arrayContaining([
          `Fetched refs/heads/main at commit ${repo.head('main')}: target/manifest.json, ${CUBE_DBT_MANIFEST.length} bytes`,
          `Sync complete: 4 cubes on branch ${sync.branchName}`,
        ]),
      );
    });

    it('shows it in the history: COMPLETED, phases from one clock, stats', async () => {
      const item = await historyItem(sync.syncJobId);
      expect(item).toEqual({
        syncJobId: sync.syncJobId,
        deploymentId: id,
        branchName: sync.branchName,
        source: 'git',
        startedAt: expect.any(String),
        status: 'COMPLETED',
        trigger: 'api',
        completedAt: expect.any(String),
        durationMs: expect.any(Number),
        errorMessage: null,
        failedPhase: null,
        gitRef: 'main',
        lastStage: 'COMPLETED',
        phases: ['repo-clone', 'manifest-parse', 'cube-generate', 'branch-commit', 'finalize'].map(
          (phase) => ({
            phase,
            outcome: 'ok',
            startedOffsetMs: expect.any(Number),
            durationMs: expect.any(Number),
          }),
        ),
        stats: {
          models: 4,
          sources: 0,
          macros: 349,
          cubeCount: 4,
          generatedFileCount: 4,
          dbtVersion: '1.6.1',
          manifestGeneratedAt: '2023-09-12T12:57:47.662266Z',
        },
        triggerContext: null,
        userId: t.admin.userId,
      });
      const offsets = (item.phases as Json[]).map((p) => p.startedOffsetMs as number);
      expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
      expect(item.durationMs).toBeGreaterThanOrEqual(0);
    });

    it('never shows the credentials: not in a response, a log line or the run records', async () => {
      const bodies = [
        await t.http().get(`${base()}/dbt-integration`).set(admin()),
        await t.http().get(`${base()}/dbt-sync`).set(admin()),
        await t.http().get(`${base()}/dbt-sync/${sync.syncJobId}`).set(admin()),
        await t.http().get(`${base()}/dbt-sync/${sync.syncJobId}/logs`).set(admin()),
        await t.http().get(`${base()}/logs`).set(admin()),
      ].map((r) => JSON.stringify(r.body));
      const records = await t.sql<{ text: string }>(
        `SELECT string_agg(message, ' ') AS text FROM job_run_logs UNION ALL
         SELECT string_agg(coalesce(error, '') || payload::text, ' ') FROM job_runs`,
      );
      for (const text of [...bodies, ...records.map((r) => r.text)]) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));
      }
    });

    it('reads a tag, and a project in a directory of the repository; a full ref names the branch', async () => {
      const tag = await start({ ref: 'v1.0' });
      expect(tag.body.branchName).toMatch(/^dbt-sync\/v1\.0-\d{14}-[0-9a-f]{8}$/);
      expect((await settled(tag.body.syncJobId)).status).toBe('COMPLETED');

      // A name of digits only is a name, not an abbreviated commit.
      const dated = await start({ ref: '20260817' });
      expect(dated.status).toBe(200);
      expect((await settled(dated.body.syncJobId)).status).toBe('COMPLETED');

      const full = await start({ ref: 'refs/heads/main' });
      expect(full.body.branchName).toMatch(/^dbt-sync\/refs-heads-main-\d{14}-[0-9a-f]{8}$/);
      expect((await settled(full.body.syncJobId)).status).toBe('COMPLETED');

      const put = await t
        .http()
        .put(`${base()}/dbt-integration`)
        .set(admin())
        .send({ repositoryUrl: repo.url, branch: 'release/2026.08', projectRoot: 'analytics/' });
      expect(put.body.projectRoot).toBe('/analytics');
      const sub = await start({});
      expect(sub.body.branchName).toMatch(/^dbt-sync\/release-2026\.08-\d{14}-[0-9a-f]{8}$/);
      expect((await settled(sub.body.syncJobId)).status).toBe('COMPLETED');
      expect((await historyItem(sub.body.syncJobId)).gitRef).toBe('release/2026.08');
      await t
        .http()
        .put(`${base()}/dbt-integration`)
        .set(admin())
        .send({ repositoryUrl: repo.url, branch: 'main', projectRoot: '/' });
    });

    it('writes the branch the caller names; refuses one that exists or is not a branch name', async () => {
      const named = await start({ branchName: 'dbt/orders-review' });
      expect(named.status).toBe(200);
      expect(named.body.branchName).toBe('dbt/orders-review');
      expect((await settled(named.body.syncJobId)).status).toBe('COMPLETED');
      expect(gitIn('ls-tree', '--name-only', 'dbt/orders-review:model/cubes')).toContain('orders_copy.yml');

      for (const branchName of ['dbt/orders-review', 'master', 'dbt/orders-review/deeper']) {
        const res = await start({ branchName });
        expect({ branchName, status: res.status }).toEqual({ branchName, status: 409 });
        expectErrorShape(res.body, 409, 'branch_exists');
      }
      for (const branchName of ['', '  ', 'bad..name', 'dev-12-0a1b2c3d', '-x']) {
        const res = await start({ branchName });
        expect({ branchName, status: res.status }).toEqual({ branchName, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_branch_name');
      }
    });
  });

  describe('refs and manifests that cannot be read', () => {
    it.each([
      ['empty', ''],
      ['blank', '   '],
      ['a commit SHA', '9fceb02d0ae598e95dc970b74767f19372d61af8'],
      ['an abbreviated SHA', '9fceb02'],
      ['a SHA-256', 'a'.repeat(64)],
      ['not a ref name', 'main..next'],
      ['a ref with a colon', 'main:x'],
    ])('refuses a ref that is %s with 400 invalid_dbt_ref, starting nothing', async (_, ref) => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM dbt_syncs`);
      const res = await start({ ref });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_dbt_ref');
      expect(await t.sql(`SELECT count(*)::int AS n FROM dbt_syncs`)).toEqual(before);
    });

    /** Starts a sync expected to fail in `phase`, and answers its history item and logs. */
    async function failing(body: Json, phase: string) {
      const branchesBefore = syncBranches();
      const res = await start(body);
      expect(res.status).toBe(200);
      const final = await settled(res.body.syncJobId);
      expect(final.status).toBe('FAILED');
      expect(final.error).toMatch(new RegExp(`^${phase} failed: `));
      const item = await historyItem(res.body.syncJobId);
      expect(item).toMatchObject({ status: 'FAILED', failedPhase: phase, completedAt: expect.any(String) });
      const phases = item.phases as Json[];
      expect(phases[phases.length - 1]).toMatchObject({ phase, outcome: 'failed' });
      expect(phases.slice(0, -1).every((p) => p.outcome === 'ok')).toBe(true);
      // Failed for good: one attempt, no branch.
      const [run] = await t.sql<{ attempts: number }>(`SELECT attempts FROM job_runs WHERE id = $1`, [
        res.body.workflowId.split(':')[1],
      ]);
      expect(run.attempts).toBe(1);
      expect(syncBranches()).toBe(branchesBefore);
      const lines = await logs(res.body.syncJobId);
      expect(lines.filter((l) => l.level === 'error')).toEqual([
        expect.objectContaining({ phase, message: expect.stringContaining(item.errorMessage) }),
      ]);
      const result = await t.http().get(`${base()}/dbt-sync/${res.body.syncJobId}/result`).set(admin());
      expectErrorShape(result.body, 409, 'dbt_sync_not_completed');
      return item;
    }

    it('fails a ref the repository does not have at repo-clone, naming it', async () => {
      const item = await failing({ ref: 'no-such-branch' }, 'repo-clone');
      expect(item.errorMessage).toContain('no branch or tag "no-such-branch"');
    });

    it('fails a ref without target/manifest.json at repo-clone, naming the path', async () => {
      const item = await failing({ ref: 'no-manifest' }, 'repo-clone');
      expect(item.errorMessage).toMatch(
        /^target\/manifest\.json is not in the dbt repository at refs\/heads\/no-manifest/,
      );
    });

    it('fails a manifest that is not JSON, or of a schema not read, at manifest-parse', async () => {
      const json = await failing({ ref: 'broken-json' }, 'manifest-parse');
      expect(json.errorMessage).toMatch(/^target\/manifest\.json is not valid JSON/);
      const schema = await failing({ ref: 'old-schema' }, 'manifest-parse');
      expect(schema.errorMessage).toContain('v8');
    });

    it('refuses a broken posted manifest with 400 invalid_manifest and its precise message', async () => {
      const missing = await start({ source: 'manifest' });
      expectErrorShape(missing.body, 400, 'invalid_manifest');
      expect(missing.body.message).toBe('manifest is required when source is manifest');
      const broken = manifest([modelNode('orders', { columns: [] })]);
      const res = await start({ source: 'manifest', manifest: broken });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_manifest');
      expect(res.body.message).toBe(
        'manifest: nodes["model.shop.orders"].columns must be an object, not an array',
      );
    });

    it('needs an integration to sync from git: 400 dbt_integration_not_configured', async () => {
      const res = await start({}, t.admin, bare);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'dbt_integration_not_configured');
    });
  });

  describe('a posted manifest', () => {
    it('is converted and kept with the sync (output files), read back from generated-files by page', async () => {
      const res = await start({
        source: 'manifest',
        output: 'files',
        manifest: JSON.parse(CUBE_DBT_MANIFEST),
      });
      expect(res.status).toBe(200);
      expect(res.body.branchName).toMatch(/^dbt-sync\/manifest-\d{14}-[0-9a-f]{8}$/);
      expect((await settled(res.body.syncJobId)).status).toBe('COMPLETED');
      // Nothing committed: no such branch.
      expect(gitIn('for-each-ref', `refs/heads/${res.body.branchName}`)).toBe('');
      const url = `${base()}/dbt-sync/${res.body.syncJobId}/generated-files`;
      const first = await t.http().get(url).query({ first: 3 }).set(admin());
      expect(first.status).toBe(200);
      expect(first.body.items.map((f: Json) => f.path)).toEqual(CUBE_DBT_FILES.slice(0, 3));
      expect(first.body.items[0].content).toMatch(/^# Generated by dbt sync/);
      expect(first.body.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      const next = await t
        .http()
        .get(url)
        .query({ first: 3, after: first.body.pageInfo.endCursor })
        .set(admin());
      expect(next.body.items.map((f: Json) => f.path)).toEqual(CUBE_DBT_FILES.slice(3));
      expect(next.body.pageInfo.hasNextPage).toBe(false);
      const item = await historyItem(res.body.syncJobId);
      expect(item).toMatchObject({ source: 'manifest', gitRef: null, status: 'COMPLETED' });
      expect((item.phases as Json[]).map((p) => p.phase)).toEqual([
        'manifest-load',
        'manifest-parse',
        'cube-generate',
        'files-store',
        'finalize',
      ]);
      // The posted manifest is dropped once the run is over.
      const [row] = await t.sql<{ stored: boolean }>(
        `SELECT manifest_gz IS NOT NULL AS stored FROM dbt_syncs WHERE id = $1`,
        [res.body.syncJobId],
      );
      expect(row.stored).toBe(false);
    });

    it('answers 409 dbt_sync_files_on_branch for the files of a sync that committed them', async () => {
      const [committed] = (await history({ status: 'COMPLETED' })).items.filter(
        (r: Json) => r.source === 'git',
      );
      const res = await t
        .http()
        .get(`${base()}/dbt-sync/${committed.syncJobId}/generated-files`)
        .set(admin());
      expectErrorShape(res.body, 409, 'dbt_sync_files_on_branch');
    });

    it('accepts a 500-model manifest of over 1 MB on this route, while other routes keep BODY_LIMIT', async () => {
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
      expect(res.body.branchName).toMatch(/^dbt-sync\/ci-build-42-\d{14}-[0-9a-f]{8}$/);
      expect((await settled(res.body.syncJobId)).status).toBe('COMPLETED');
      const result = await t.http().get(`${base()}/dbt-sync/${res.body.syncJobId}/result`).set(admin());
      expect(result.body).toMatchObject({ cubeCount: 500, manifestStats: { models: 500 } });
      expect(result.body.generatedFiles).toHaveLength(500);
      const cubes = gitIn('ls-tree', '--name-only', `${res.body.branchName}:model/cubes`).split('\n');
      // The generated cubes over the starter project's own.
      expect(cubes.filter((f) => f.startsWith('model_'))).toHaveLength(500);
      expect(cubes).toContain('orders.yml');

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

    it('fails at branch-commit, for good, when the branch would break MODEL_MAX_FILES', async () => {
      const res = await start({ source: 'manifest', manifest: bigManifest(600) });
      expect(res.status).toBe(200);
      const final = await settled(res.body.syncJobId);
      expect(final.error).toBe(
        'branch-commit failed: The branch would hold 603 files; the most allowed is 600',
      );
      const item = await historyItem(res.body.syncJobId);
      expect(item).toMatchObject({
        status: 'FAILED',
        failedPhase: 'branch-commit',
        lastStage: 'WRITING_CUBE_FILES',
      });
      expect(gitIn('for-each-ref', `refs/heads/${res.body.branchName}`)).toBe('');
      // Failed for good: the posted manifest is dropped too.
      const [row] = await t.sql<{ stored: boolean }>(
        `SELECT manifest_gz IS NOT NULL AS stored FROM dbt_syncs WHERE id = $1`,
        [res.body.syncJobId],
      );
      expect(row.stored).toBe(false);
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

  describe('cancel', () => {
    it('stops a running sync between phases: CANCELLED, no branch, its phases so far', async () => {
      // Settle earlier syncs: the lock below holds every log writer.
      await waitFor(
        () =>
          t.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM job_runs
              WHERE job = 'dbt-sync.run' AND status IN ('queued', 'running')`,
          ),
        (rows) => rows[0].n === 0,
        60_000,
        200,
      );
      const db = new Client({ connectionString: t.databaseUrl });
      await db.connect();
      try {
        const branchesBefore = syncBranches();
        // Hold the sync inside its first phase: its first log line waits behind this lock.
        await db.query('BEGIN');
        await db.query('LOCK TABLE job_run_logs IN SHARE MODE');
        const res = await start({});
        expect(res.status).toBe(200);
        const blocked = await waitFor(
          async () =>
            (
              await db.query(
                `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows,
          (rows) => rows.length === 1,
          30_000,
          100,
        );
        expect(blocked).toHaveLength(1);
        const mid = await status(res.body.syncJobId);
        expect(mid).toMatchObject({ status: 'UPLOADING_PROJECT', progress: { stage: 'UPLOADING_PROJECT' } });

        const cancel = await t.http().delete(`${base()}/dbt-sync/${res.body.syncJobId}`).set(admin());
        expect(cancel.status).toBe(200);
        expect(cancel.body).toEqual({
          message: `Cancellation requested: dbt sync ${res.body.syncJobId} stops before its next phase`,
        });
        expect((await status(res.body.syncJobId)).progress.message).toMatch(/cancellation requested/);
        await db.query('ROLLBACK');

        const final = await settled(res.body.syncJobId);
        expect(final).toMatchObject({
          status: 'FAILED',
          progress: { stage: 'FAILED', message: 'Cancelled' },
          error: expect.stringContaining('Cancelled'),
        });
        const item = await historyItem(res.body.syncJobId);
        expect(item).toMatchObject({ status: 'CANCELLED', errorMessage: null, failedPhase: null });
        expect(item.phases).toEqual([expect.objectContaining({ phase: 'repo-clone', outcome: 'ok' })]);
        expect(syncBranches()).toBe(branchesBefore);
        expect((await logs(res.body.syncJobId)).map((l) => l.message)).toContain(
          'Cancelled at the user’s request',
        );

        const again = await t.http().delete(`${base()}/dbt-sync/${res.body.syncJobId}`).set(admin());
        expect(again.status).toBe(409);
        expectErrorShape(again.body, 409, 'dbt_sync_finished');
      } finally {
        await db.query('ROLLBACK').catch(() => undefined);
        await db.end();
      }
    });

    it('stopped after its commit, keeps the branch it wrote (and its build)', async () => {
      const db = new Client({ connectionString: t.databaseUrl });
      await db.connect();
      try {
        // Hold the sync inside branch-commit, after its ref moved: recording the build waits.
        await db.query('BEGIN');
        await db.query('LOCK TABLE deployment_builds IN SHARE MODE');
        const res = await start({});
        const blocked = await waitFor(
          async () =>
            (
              await db.query(
                `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows,
          (rows) => rows.length === 1,
          30_000,
          100,
        );
        expect(blocked).toHaveLength(1);
        expect(await status(res.body.syncJobId)).toMatchObject({ status: 'WRITING_CUBE_FILES' });
        const cancel = await t.http().delete(`${base()}/dbt-sync/${res.body.syncJobId}`).set(admin());
        expect(cancel.status).toBe(200);
        await db.query('ROLLBACK');
        expect((await settled(res.body.syncJobId)).status).toBe('FAILED');
        const item = await historyItem(res.body.syncJobId);
        expect(item.status).toBe('CANCELLED');
        expect((item.phases as Json[]).map((p) => p.phase)).toEqual([
          'repo-clone',
          'manifest-parse',
          'cube-generate',
          'branch-commit',
        ]);
        expect(gitIn('ls-tree', '--name-only', `${res.body.branchName}:model/cubes`)).toContain(
          'orders_copy.yml',
        );
        const builds = await t.sql(
          `SELECT 1 FROM deployment_builds WHERE deployment_id = $1 AND branch = $2`,
          [id, res.body.branchName],
        );
        expect(builds).toHaveLength(1);
      } finally {
        await db.query('ROLLBACK').catch(() => undefined);
        await db.end();
      }
    });

    it('answers 409 dbt_sync_finished for a completed sync', async () => {
      const [completed] = (await history({ status: 'COMPLETED', first: 1 })).items;
      const res = await t.http().delete(`${base()}/dbt-sync/${completed.syncJobId}`).set(admin());
      expectErrorShape(res.body, 409, 'dbt_sync_finished');
    });
  });

  describe('the history', () => {
    it('filters by status and trigger, newest first', async () => {
      const all = (await history({ first: 1000 })).items as Json[];
      expect(all.length).toBeGreaterThan(10);
      const runIds = all.map((r) => r.startedAt as string);
      expect([...runIds].sort().reverse()).toEqual(runIds);
      for (const s of ['COMPLETED', 'FAILED', 'CANCELLED']) {
        const items = (await history({ status: s, first: 1000 })).items as Json[];
        expect({ s, n: items.length > 0 }).toEqual({ s, n: true });
        expect(items.every((r) => r.status === s)).toBe(true);
        expect(items.map((r) => r.syncJobId)).toEqual(
          all.filter((r) => r.status === s).map((r) => r.syncJobId),
        );
      }
      expect((await history({ status: 'UNKNOWN' })).items).toEqual([]);
      expect((await history({ status: 'RUNNING' })).items).toEqual([]);
      expect((await history({ trigger: 'api', first: 1000 })).items).toHaveLength(all.length);
      expect((await history({ trigger: 'webhook' })).items).toEqual([]);
    });

    it('pages with first and after', async () => {
      const all = ((await history({ first: 1000 })).items as Json[]).map((r) => r.syncJobId);
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await history(after ? { first: 4, after } : { first: 4 });
        seen.push(...page.items.map((r: Json) => r.syncJobId));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
      const bad = await t.http().get(`${base()}/dbt-sync`).query({ after: 'nope' }).set(admin());
      expectErrorShape(bad.body, 400, 'invalid_cursor');
      const status = await t.http().get(`${base()}/dbt-sync`).query({ status: 'DONE' }).set(admin());
      expectErrorShape(status.body, 400, 'validation_failed');
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
      expect((await settled(res.body.syncJobId)).status).toBe('COMPLETED');
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
        .send({ repositoryUrl: repo.url, branch: 'main', credentials: { token: 'a b' } });
      expectErrorShape(put.body, 400, 'validation_failed');
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
