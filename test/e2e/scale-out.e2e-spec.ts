import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { DBT_FIXTURES } from '../fixtures/dbt/manifests.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { createTestDatabase, dropTestDatabase, REDIS_URL } from '../support/database.js';
import { deploymentInput, waitFor } from '../support/factories.js';
import { startProcess, type Json, type Proc } from '../support/process.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

const DIST = process.env.TEST_DIST_DIR ?? 'dist';
const MAIN = path.join(DIST, 'src/main.js');
const WORKER = path.join(DIST, 'src/worker.js');
const CLI = path.join(DIST, 'src/cli.js');

/** The data API's secret, given to the deployment as CUBEJS_API_SECRET. */
const SECRET = 's'.repeat(40);
/** Requests per token per window, shared by both APIs through Redis. */
const RATE_LIMIT_MAX = 120;
/** The workload: kept small, the file runs on a busy 2-core machine. */
const COMMITS = 6;
const SYNCS = 2;
/** Every wait of the test is bounded by this. */
const SETTLE_MS = 150_000;

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'dbt dev',
  GIT_AUTHOR_EMAIL: 'dbt@example.test',
  GIT_COMMITTER_NAME: 'dbt dev',
  GIT_COMMITTER_EMAIL: 'dbt@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

/** A bare repository under `root` whose `main` holds a dbt project with its manifest; its file:// URL. */
function dbtRepository(root: string): string {
  const bare = path.join(root, 'dbt.git');
  git(root, 'init', '--bare', '--quiet', bare);
  const work = path.join(root, 'work');
  fs.mkdirSync(path.join(work, 'target'), { recursive: true });
  git(work, 'init', '--quiet');
  fs.writeFileSync(path.join(work, 'dbt_project.yml'), 'name: shop\n');
  fs.copyFileSync(path.join(DBT_FIXTURES, 'cube_dbt/manifest.json'), path.join(work, 'target/manifest.json'));
  git(work, 'add', '-A');
  git(work, 'commit', '--quiet', '-m', 'dbt project');
  git(work, 'push', '--quiet', bare, 'HEAD:refs/heads/main');
  return `file://${bare}`;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

/**
 * The scale-out of docs/operations.md, proven: two API processes (`dist/src/main.js`) and two
 * workers (`dist/src/worker.js`) on one PostgreSQL database, one Redis key prefix and one
 * REPOS_DIR. Under parallel commits to one branch, builds, dbt syncs and a scheduled notification,
 * driven through both APIs at once, every job runs once, every mail is sent once, the branch keeps
 * every accepted commit (no lost update), and one request budget is shared by both APIs.
 *
 * `SCALE_OUT_LOGS=<directory>` keeps the four processes' logs there (`proc-<n>.log`: APIs 0 and 1,
 * then the workers).
 */
describe('two APIs and two workers on one database, Redis and REPOS_DIR', () => {
  let db: { name: string; url: string };
  let sql: Client;
  let sink: SmtpSink;
  let fake: DataApiFake;
  let tmp: string;
  let reposDir: string;
  let dbtUrl: string;
  const prefix = `so${randomBytes(4).toString('hex')}`;
  const procs: Proc[] = [];
  const ports: number[] = [];
  let token: string;
  let dep: number;
  /** Requests the admin's token made: its budget is RATE_LIMIT_MAX too. */
  let adminRequests = 0;

  const rows = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    (await sql.query(text, params)).rows as T[];
  const gitIn = (...args: string[]) =>
    execFileSync('git', [`--git-dir=${path.join(reposDir, `${dep}.git`)}`, ...args], {
      encoding: 'utf8',
    }).trim();

  /** A request to API `api` (0 or 1), as the admin unless `auth` says otherwise. */
  async function call(
    api: number,
    method: string,
    url: string,
    body?: unknown,
    auth: string = `Bearer ${token}`,
  ): Promise<Answer> {
    if (auth === `Bearer ${token}`) adminRequests++;
    const headers: Record<string, string> = { Authorization: auth };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(`http://127.0.0.1:${ports[api]}${url}`, { method, headers, body: payload });
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Json), headers: res.headers };
  }
  /** The same, expecting 200; the body. */
  async function ok(api: number, method: string, url: string, body?: unknown): Promise<Json> {
    const res = await call(api, method, url, body);
    if (res.status !== 200)
      throw new Error(`${method} ${url} on API ${api}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  const base = () => `/api/v1/deployments/${dep}`;
  const build = () => `/build/api/v1/deployments/${dep}`;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scale-out-'));
    reposDir = path.join(tmp, 'repos');
    fs.mkdirSync(reposDir);
    dbtUrl = dbtRepository(tmp);
    [db, sink, fake] = await Promise.all([
      createTestDatabase(),
      startSmtpSink(),
      startDataApiFake({ secret: SECRET }),
    ]);
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: db.url,
      DATABASE_POOL_SIZE: '5',
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      REPOS_DIR: reposDir,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      // Every process's relay ticks each second: all four race for the due schedule.
      OUTBOX_RELAY_INTERVAL_MS: '1000',
      JOB_DEFER_MS: '100',
      RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
      // Long enough that no window ends during the test (a window starts at its first request).
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      DBT_GIT_PROTOCOLS: 'file',
      // A compile or a rendering on a busy machine is slow, never failed for it (it would be retried).
      MODEL_COMPILE_TIMEOUT_MS: '120000',
      RENDER_TIMEOUT_MS: '120000',
      // Writers of one branch take turns under its lock: on a busy machine the last of six waits
      // longer than the default 5 s, and would be refused (503, changing nothing) rather than land.
      DATABASE_LOCK_TIMEOUT_MS: '60000',
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
      ...fake.env(),
      ...sink.env,
    };
    // The four processes start together (each migrates under the advisory lock: one finds
    // nothing to do, the others wait for it), as does the command that makes the admin.
    for (let i = 0; i < 2; i++) procs.push(startProcess(MAIN, { ...env, PORT: '0' }));
    for (let i = 0; i < 2; i++) procs.push(startProcess(WORKER, env));
    const [bootstrap, ...listening] = await Promise.all([
      promisify(execFile)(
        process.execPath,
        [CLI, 'bootstrap', '--account', 'acme', '--email', 'admin@acme.test'],
        {
          env: { PATH: process.env.PATH, DATABASE_URL: db.url },
        },
      ),
      procs[0].listening(90_000),
      procs[1].listening(90_000),
      procs[2].waitFor(/worker started/, 90_000),
      procs[3].waitFor(/worker started/, 90_000),
    ]);
    token = (JSON.parse(bootstrap.stdout) as { token: string }).token;
    ports.push(listening[0], listening[1]);
  }, 150_000);

  afterAll(async () => {
    if (process.env.SCALE_OUT_LOGS)
      procs.forEach((p, i) =>
        fs.writeFileSync(path.join(process.env.SCALE_OUT_LOGS!, `proc-${i}.log`), p.output()),
      );
    for (const p of procs)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    await sql?.end();
    if (db) await dropTestDatabase(db.name);
    const redis = new Redis(REDIS_URL);
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 500 }))
      keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await Promise.all([sink?.close(), fake?.close()]);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it('runs parallel commits, builds, dbt syncs and a scheduled notification once each', async () => {
    // --- Set-up, spread over both APIs: one deployment (its first build), its data API secret and
    // dbt repository, a second user, and a daily notification of a dashboard to both users.
    dep = (await ok(0, 'POST', '/build/api/v1/deployments', deploymentInput({ name: 'Scale-out' }))).id;
    const [, , user, wb] = await Promise.all([
      ok(1, 'PUT', `${base()}/env-vars`, { env_variables: [{ name: 'CUBEJS_API_SECRET', value: SECRET }] }),
      ok(0, 'PUT', `${base()}/dbt-integration`, { repositoryUrl: dbtUrl, branch: 'main' }),
      ok(1, 'POST', '/api/v1/users', { email: 'ben@acme.test', username: 'ben@acme.test', defaultRoles: [] }),
      ok(0, 'POST', `${base()}/workbooks`, { name: 'Ops' }),
    ]);
    fake.onLoad(() => [{ 'Orders.status': 'completed', 'Orders.count': '3' }]);
    const report = await ok(1, 'POST', `${base()}/reports`, {
      name: 'Orders',
      workbookId: wb.id,
      jsonQuery: JSON.stringify({ measures: ['Orders.count'], dimensions: ['Orders.status'] }),
    });
    const widget = {
      id: 'w',
      type: 'CHART',
      position: { x: 0, y: 0, w: 4, h: 4 },
      config: { reportId: report.id },
    };
    const dashboard = await ok(0, 'POST', `${base()}/workbooks/${wb.id}/publish`, {
      workbookId: wb.id,
      title: 'Ops daily',
      config: { widgets: [widget] },
    });
    // Its daily hour is half a day from now: the next occurrence after the one fired is far off.
    const notification = await ok(1, 'POST', `${base()}/notifications`, {
      dashboardId: dashboard.id,
      scheduleType: 'DAILY',
      hour: (new Date().getUTCHours() + 12) % 24,
    });
    const admin = await ok(0, 'GET', '/api/v1/users/me');
    await ok(0, 'POST', `${base()}/notifications/${notification.id}/recipients`, {
      recipients: [admin, user].map((u) => ({ type: 'USER', userId: u.id })),
    });
    const recipients = [admin.email as string, user.email as string];

    // --- The parallel workload. Each commit is an upload opened on one API, its file sent through
    // the other and finished on the first; the odd ones start on API 1.
    const commit = async (i: number): Promise<Answer> => {
      const [a, b] = [i % 2, (i + 1) % 2];
      const { transaction } = await ok(a, 'POST', `${build()}/data-model/upload/start`);
      const name = `notes/commit-${i}.md`;
      const form = new FormData();
      form.append('transaction', JSON.stringify(transaction));
      form.append('fileName', name);
      form.append('file', new Blob([`commit ${i}\n`]), `commit-${i}.md`);
      await ok(b, 'POST', `${build()}/data-model/upload/file`, form);
      return call(a, 'POST', `${build()}/data-model/upload/finish`, {
        transaction,
        files: { [name]: { hash: sha1(`commit ${i}\n`) } },
        autoRemoveFiles: false,
        commitMessage: `commit ${i}`,
      });
    };
    const sync = (i: number) => ok(i % 2, 'POST', `${base()}/dbt-sync`, {});
    // The notification's schedule comes due: every process's relay tick competes for it.
    const due = rows(`UPDATE job_schedules SET next_run_at = now() - interval '1 second' WHERE owner = $1`, [
      `notification:${notification.id}`,
    ]);
    const [commits, syncs] = await Promise.all([
      Promise.all(Array.from({ length: COMMITS }, (_, i) => commit(i))),
      Promise.all(Array.from({ length: SYNCS }, (_, i) => sync(i))),
      due,
    ]);

    // A commit is accepted (200) or refused having changed nothing: 503 when it waited for the
    // branch's lock longer than DATABASE_LOCK_TIMEOUT_MS (a very busy machine), 409 when the branch
    // kept changing under it. Writers take turns, so the first always gets through.
    const accepted = commits.filter((c) => c.status === 200).map((c) => c.body.lastHash as string);
    expect(accepted.length).toBeGreaterThan(0);
    for (const c of commits.filter((r) => r.status !== 200))
      expect([`503 database_unavailable`, '409 conflict']).toContain(`${c.status} ${c.body.code}`);

    // --- Everything settles: no job waits or runs, each sync and each mail is done.
    // Runs: the first build, one per accepted commit, one per sync and its build, the notification's.
    const expectedRuns = 1 + accepted.length + 2 * SYNCS + 1;
    const settled = await waitFor(
      () =>
        rows<{ open: string; runs: string; sent: string }>(
          `SELECT (SELECT count(*) FROM job_outbox WHERE status IN ('pending', 'dispatched')) +
                  (SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')) AS open,
                  (SELECT count(*) FROM job_runs) AS runs,
                  (SELECT count(*) FROM notification_deliveries WHERE status = 'sent') AS sent`,
        ).then((r) => r[0]),
      (s) => s.open === '0' && Number(s.runs) >= expectedRuns && s.sent === '2',
      SETTLE_MS,
      200,
    );
    if (settled.open !== '0' || settled.sent !== '2') {
      // What was left, to tell a stuck job from a slow machine.
      const left = await rows(
        `SELECT 'run' AS kind, job AS name, status, attempts, error FROM job_runs WHERE status <> 'succeeded'
         UNION ALL
         SELECT 'job', name, status, attempts, last_error FROM job_outbox WHERE status <> 'done'`,
      );
      throw new Error(`not settled in ${SETTLE_MS} ms: ${JSON.stringify({ settled, left })}`);
    }
    expect(settled).toEqual({ open: '0', runs: String(expectedRuns), sent: '2' });

    // --- Every job ran once: one outbox row per job, done at its first attempt; one claim per run,
    // which succeeded; and each build's handler logged its checkout once.
    const jobs = await rows<{ name: string; status: string; attempts: number }>(
      `SELECT name, status, attempts FROM job_outbox ORDER BY id`,
    );
    expect(jobs.filter((j) => j.status !== 'done' || j.attempts !== 1)).toEqual([]);
    const count = (name: string) => jobs.filter((j) => j.name === name).length;
    expect(count('deployment.build')).toBe(1 + accepted.length + SYNCS);
    expect(count('dbt-sync.run')).toBe(SYNCS);
    expect(count('notification.run')).toBe(1);
    expect(count('notification.deliver')).toBe(2);
    const runs = await rows<{
      job: string;
      status: string;
      attempts: number;
      jobs: string;
      checkouts: string;
    }>(
      `SELECT r.job, r.status, r.attempts,
              (SELECT count(*) FROM job_outbox o WHERE o.run_id = r.id) AS jobs,
              (SELECT count(*) FROM job_run_logs l WHERE l.run_id = r.id AND l.message LIKE 'Checking out %') AS checkouts
       FROM job_runs r ORDER BY r.id`,
    );
    for (const r of runs) {
      expect(r).toMatchObject({ status: 'succeeded', attempts: 1, jobs: '1' });
      expect(r.checkouts).toBe(r.job === 'deployment.build' ? '1' : '0');
    }

    // --- The repository was set up once: whichever process came first (a worker's build, an API's
    // upload) made the starter commit, the only root of the deploy branch; the others found it.
    const roots = gitIn('rev-list', '--max-parents=0', 'refs/heads/master').split('\n');
    expect(roots).toHaveLength(1);
    const [starter] = roots;
    expect(gitIn('log', '-1', '--format=%s', starter)).toBe('Starter project');

    // --- No lost update: the branch holds exactly the accepted commits, one after another.
    const history = gitIn('rev-list', `${starter}..refs/heads/master`).split('\n');
    expect(history).toHaveLength(accepted.length);
    expect([...history].sort()).toEqual([...accepted].sort());
    expect(gitIn('rev-list', '--merges', 'refs/heads/master')).toBe('');
    // The tree a single process would leave: the starter project and every accepted commit's file.
    const files = commits.flatMap((c, i) => (c.status === 200 ? [`notes/commit-${i}.md`] : []));
    const tree = gitIn('ls-tree', '-r', '--name-only', 'refs/heads/master').split('\n');
    expect(tree.filter((p) => p.startsWith('notes/')).sort()).toEqual(files.sort());
    expect(tree.filter((p) => !p.startsWith('notes/'))).toEqual(
      gitIn('ls-tree', '-r', '--name-only', starter).split('\n'),
    );
    for (const f of files)
      expect(gitIn('show', `refs/heads/master:${f}`)).toBe(
        f.replace(/^notes\/commit-(\d+)\.md$/, 'commit $1'),
      );
    const head = gitIn('rev-parse', 'refs/heads/master');
    expect(history[0]).toBe(head);

    // --- Builds: one per accepted commit, each of its own commit; both APIs tell the same final status.
    const builds = await rows<{ branch: string; trigger: string; commit_sha: string; outcome: string }>(
      `SELECT branch, trigger, commit_sha, outcome FROM deployment_builds WHERE deployment_id = $1 ORDER BY id`,
      [dep],
    );
    expect(
      builds
        .filter((b) => b.trigger === 'upload')
        .map((b) => b.commit_sha)
        .sort(),
    ).toEqual([...accepted].sort());
    expect(builds.every((b) => b.outcome === 'built')).toBe(true);
    const status = await Promise.all(
      [0, 1].map((api) => ok(api, 'GET', `${base()}/build-status?branchName=master`)),
    );
    for (const s of status) expect(s).toMatchObject({ status: 'built', lastHash: head });
    expect(status[0].buildJobId).toBe(status[1].buildJobId);

    // --- dbt syncs: each completed once (read through the other API), on a branch of its own
    // holding the same files (the same manifest), built.
    const branches = syncs.map((s) => s.branchName as string);
    for (const [i, s] of syncs.entries()) {
      expect(await ok((i + 1) % 2, 'GET', `${base()}/dbt-sync/${s.syncJobId}`)).toMatchObject({
        status: 'COMPLETED',
      });
    }
    // Each sync branched from the deploy branch as it was (before or after any accepted commit) and
    // added the same cube files (the same manifest): the same model either way.
    const added = branches.map((b) => {
      expect([starter, ...accepted]).toContain(gitIn('rev-parse', `refs/heads/${b}^`));
      return gitIn('diff', '--name-only', `refs/heads/${b}^`, `refs/heads/${b}`);
    });
    expect(added[0]).toMatch(/^model\//);
    expect(added[1]).toBe(added[0]);
    const models = branches.map((b) => gitIn('rev-parse', `refs/heads/${b}:model`));
    expect(models[1]).toBe(models[0]);
    expect(
      builds
        .filter((b) => b.trigger !== 'upload')
        .map((b) => b.branch)
        .sort(),
    ).toEqual(['master', ...branches].sort());
    // Every ref (and branch row) where a single process would leave it: the deploy branch and one
    // per sync, no other.
    expect(gitIn('for-each-ref', '--format=%(refname)').split('\n').sort()).toEqual(
      ['refs/heads/master', ...branches.map((b) => `refs/heads/${b}`)].sort(),
    );
    expect(
      (await rows<{ name: string }>(`SELECT name FROM model_branches WHERE deployment_id = $1`, [dep]))
        .map((r) => r.name)
        .sort(),
    ).toEqual(['master', ...branches].sort());

    // --- The notification fired once: one run, one mail per recipient.
    const [schedule] = await rows<{ next_run_at: Date; last_run_id: string }>(
      `SELECT next_run_at, last_run_id FROM job_schedules WHERE owner = $1`,
      [`notification:${notification.id}`],
    );
    expect(schedule.next_run_at.getTime()).toBeGreaterThan(Date.now());
    expect(
      await rows(`SELECT id FROM notification_runs WHERE notification_id = $1`, [notification.id]),
    ).toHaveLength(1);
    expect(await rows(`SELECT email, status, attempts FROM notification_deliveries ORDER BY email`)).toEqual(
      recipients.sort().map((email) => ({ email, status: 'sent', attempts: 1 })),
    );
    expect(sink.messages).toHaveLength(2);
    for (const email of recipients) expect(sink.messagesTo(email)).toHaveLength(1);
    // The upload sweep's schedule, asked for by every upload on either API, exists once.
    expect(await rows(`SELECT id FROM job_schedules WHERE job = 'data-model.upload-sweep'`)).toHaveLength(1);
  }, 240_000);

  it('shares one request budget per token between the APIs', async () => {
    // A token of its own, so the admin's requests above do not count; they stayed under the limit.
    expect(adminRequests).toBeLessThan(RATE_LIMIT_MAX);
    const { token: key } = await ok(0, 'POST', '/api/v1/api-keys', { name: 'budget' });
    const auth = `Api-Key ${key as string}`;
    // The whole budget, half through each API, several at a time.
    const answers: Answer[] = [];
    for (let i = 0; i < RATE_LIMIT_MAX; i += 8)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(8, RATE_LIMIT_MAX - i) }, (_, j) =>
            call((i + j) % 2, 'GET', '/api/v1/users/me', undefined, auth),
          ),
        )),
      );
    expect(answers.map((a) => a.status)).toEqual(Array(RATE_LIMIT_MAX).fill(200));
    // One counter: the remaining budgets both APIs announced are each value once, down to 0.
    const remaining = answers.map((a) => Number(/r=(\d+)/.exec(a.headers.get('ratelimit') ?? '')?.[1]));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: RATE_LIMIT_MAX }, (_, i) => i));
    // The next request is refused whichever API gets it.
    for (const api of [0, 1]) {
      const over = await call(api, 'GET', '/api/v1/users/me', undefined, auth);
      expect(over.status).toBe(429);
      expect(over.body.code).toBe('rate_limited');
    }
  });
});
