import { bearer, expectErrorShape, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { waitFor } from '../support/factories.js';
import { newDeployment, newReport, reportsPath } from '../support/reports.js';

/**
 * Python report runs through HTTP: reports' `pythonCode`, the snapshots a publish takes, and
 * `POST /embed/dashboard/{publicId}/python-run` against the real PostgreSQL and Redis, the loopback
 * data API and the real sandbox. Starting Pyodide costs seconds of CPU, so this file makes four
 * real runs on a pool of one; every refusal is decided before anything runs.
 */

interface Snapshot {
  id: number;
  reportId: number;
  versionNumber: number;
  name: string;
  sqlQuery: string | null;
  pythonCode: string | null;
}

interface Dashboard {
  id: number;
  publicId: string;
  versionNumber: number;
  reportSnapshots: Snapshot[];
}

const SETTINGS = '/api/v1/tenant/settings';
const RUN_TIMEOUT = 90_000;

const CODE = [
  'total = sum(r["amount"] for r in rows)',
  'print(f"{len(rows)} orders")',
  'output = {"total": total, "statuses": sorted({r["status"] for r in rows})}',
].join('\n');
const FAILING_CODE = 'print("before")\nraise ValueError("no data for you")';
const SQL = "SELECT status, amount FROM orders WHERE region = 'eu'";
/** A report's code that reaches for this (the API) process through Pyodide's JS bridge. */
const ESCAPE_CODE = [
  'from pyodide.ffi import to_js',
  'js = to_js([1]).constructor.constructor',
  "process = js('return process')()",
  "print('env', js('return JSON')().stringify(process.env))",
  "fs = process.getBuiltinModule('fs')",
  "for p in ['/proc/self/environ', '/etc/passwd', __import__('os').path.abspath('package.json')]:",
  '    try:',
  "        print('file', p, fs.readFileSync(p, 'utf8'))",
  '    except Exception as e:',
  "        print('file', p, str(e).splitlines()[0])",
  'output = len(rows)',
].join('\n');
/** In this process's environment before the app (and its sandbox pool) starts. */
const PROCESS_SECRET = `python-run-secret-${process.pid}-${Date.now()}`;
const ROWS = [
  { status: 'shipped', amount: 10 },
  { status: 'open', amount: 5 },
  { status: 'shipped', amount: 2.5 },
];

const runPath = (publicId: string) => `/api/v1/embed/dashboard/${publicId}/python-run`;

/** A new workbook of the deployment; its id. */
async function newWorkbook(t: TestApp, actor: Actor, dep: number, name: string): Promise<number> {
  const res = await t
    .http()
    .post(`/api/v1/deployments/${dep}/workbooks`)
    .set(bearer(actor.token))
    .send({ name })
    .expect(200);
  return res.body.id as number;
}

/** Publishes the workbook's dashboard (snapshotting its reports); the Dashboard answered. */
async function publish(t: TestApp, actor: Actor, dep: number, wb: number): Promise<Dashboard> {
  const res = await t
    .http()
    .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
    .set(bearer(actor.token))
    .send({ workbookId: wb, config: {} })
    .expect(200);
  return res.body as Dashboard;
}

/** Shares the workbook's dashboard with every embed user of the account. */
async function shareWithEmbedUsers(t: TestApp, actor: Actor, dep: number, wb: number): Promise<void> {
  await t
    .http()
    .put(`/api/v1/deployments/${dep}/workbooks/${wb}/embed-access`)
    .set(bearer(actor.token))
    .send({ allEmbedUsers: true, action: 'read' })
    .expect(200);
}

/** An account's data for python runs: a deployment whose data API is the fake, a shared dashboard. */
interface Setup {
  dep: number;
  wb: number;
  python: number;
  plain: number;
  failing: number;
  dashboard: Dashboard;
  snapshotOf(reportId: number): Snapshot;
  embedToken(body?: Record<string, unknown>): Promise<string>;
}

async function setUp(t: TestApp, actor: Actor, fake: DataApiFake): Promise<Setup> {
  const as = bearer(actor.token);
  const dep = await newDeployment(t, actor, 'Python runs');
  await t
    .http()
    .put(`/api/v1/deployments/${dep}/env-vars`)
    .set(as)
    .send({ env_variables: [{ name: 'CUBEJS_API_SECRET', value: fake.secret }] })
    .expect(200);
  await t.http().put(SETTINGS).set(as).send({ pythonAnalysisEnabled: true }).expect(200);
  const wb = await newWorkbook(t, actor, dep, 'Sales book');
  const python = (
    await newReport(t, actor, dep, { name: 'Totals', workbookId: wb, sqlQuery: SQL, pythonCode: CODE })
  ).id;
  const plain = (await newReport(t, actor, dep, { name: 'Table', workbookId: wb, sqlQuery: SQL })).id;
  const failing = (
    await newReport(t, actor, dep, {
      name: 'Broken',
      workbookId: wb,
      sqlQuery: SQL,
      pythonCode: FAILING_CODE,
    })
  ).id;
  const dashboard = await publish(t, actor, dep, wb);
  await shareWithEmbedUsers(t, actor, dep, wb);
  let seq = 0;
  return {
    dep,
    wb,
    python,
    plain,
    failing,
    dashboard,
    snapshotOf: (reportId) => dashboard.reportSnapshots.find((s) => s.reportId === reportId)!,
    embedToken: async (body = {}) => {
      const session = await t
        .http()
        .post('/api/v1/embed/generate-session')
        .set(as)
        .send({ deploymentId: dep, externalId: `viewer-${++seq}`, ...body })
        .expect(200);
      const token = await t
        .http()
        .post('/api/v1/embed/session/token')
        .send({ sessionId: session.body.sessionId })
        .expect(200);
      return token.body.token as string;
    },
  };
}

const expectError = (res: { status: number; body: unknown }, status: number, code: string) => {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
  expectErrorShape(res.body, status, code);
};

describe('python runs', () => {
  let fake: DataApiFake;
  let t: TestApp;
  let s: Setup;
  let token: string;
  const context = { tenant: 'acme', region: 'eu' };

  const run = (body: Record<string, unknown>, publicId = s.dashboard.publicId, as = token) =>
    t.http().post(runPath(publicId)).set(bearer(as)).send(body);
  const body = (reportId = s.python, extra: Record<string, unknown> = {}) => ({
    reportId,
    reportVersionId: s.snapshotOf(reportId).id,
    sqlQuery: SQL,
    ...extra,
  });

  beforeAll(async () => {
    fake = await startDataApiFake({ secret: 'python-run-secret-'.repeat(3) });
    fake.onSql(() => ({ columns: ['status', 'amount'], rows: ROWS }));
    process.env.PYTHON_RUN_TEST_SECRET = PROCESS_SECRET;
    t = await startApp({ ...fake.env(), PYTHON_POOL_SIZE: '1', PYTHON_RUN_CACHE_SECONDS: '60' });
    s = await setUp(t, t.admin, fake);
    token = await s.embedToken({ securityContext: context });
  });
  afterAll(async () => {
    delete process.env.PYTHON_RUN_TEST_SECRET;
    await t?.close();
    await fake?.close();
  });

  describe('reports carry pythonCode, and publishing snapshots them', () => {
    it('creates, reads and updates a report’s pythonCode, and caps its size', async () => {
      const as = bearer(t.admin.token);
      const created = await newReport(t, t.admin, s.dep, { name: 'Py', pythonCode: 'print(1)' });
      expect(created.pythonCode).toBe('print(1)');
      const updated = await t
        .http()
        .put(reportsPath(s.dep, `/${created.id}`))
        .set(as)
        .send({ pythonCode: 'output = 2' });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ pythonCode: 'output = 2', version: 2 });
      const read = await t
        .http()
        .get(reportsPath(s.dep, `/${created.id}`))
        .set(as);
      expect(read.body.pythonCode).toBe('output = 2');
      const cleared = await t
        .http()
        .put(reportsPath(s.dep, `/${created.id}`))
        .set(as)
        .send({ pythonCode: null });
      expect(cleared.body.pythonCode).toBeNull();
      const tooLong = await t
        .http()
        .post(reportsPath(s.dep))
        .set(as)
        .send({ name: 'Huge', pythonCode: 'x'.repeat(100_001) });
      expectError(tooLong, 400, 'validation_failed');
    });

    it('shows the workbook’s reports as published in the Dashboard shape, to the console and to embed users', async () => {
      expect(s.dashboard.reportSnapshots).toEqual([
        {
          id: expect.any(Number),
          reportId: s.python,
          versionNumber: 1,
          name: 'Totals',
          title: null,
          description: null,
          kind: null,
          sqlQuery: SQL,
          pythonCode: CODE,
          meta: null,
        },
        expect.objectContaining({ reportId: s.plain, name: 'Table', pythonCode: null }),
        expect.objectContaining({ reportId: s.failing, pythonCode: FAILING_CODE }),
      ]);
      const embedded = await t
        .http()
        .get(`/api/v1/embed/dashboard/${s.dashboard.publicId}`)
        .set(bearer(token));
      expect(embedded.status).toBe(200);
      expect(embedded.body.reportSnapshots).toEqual(s.dashboard.reportSnapshots);
      const workbook = await t
        .http()
        .get(`/api/v1/deployments/${s.dep}/workbooks/${s.wb}`)
        .set(bearer(t.admin.token));
      expect(workbook.body.publishedDashboard.reportSnapshots).toEqual(s.dashboard.reportSnapshots);
    });

    it('copies the snapshots with a duplicated workbook, re-pointed at the copied reports', async () => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${s.dep}/workbooks/${s.wb}/duplicate`)
        .set(bearer(t.admin.token))
        .send({});
      expect(res.status).toBe(200);
      const copied = res.body.publishedDashboard.reportSnapshots as Snapshot[];
      const reports = await t.sql<{ id: number; name: string }>(
        'SELECT id, name FROM reports WHERE workbook_id = $1 ORDER BY id',
        [res.body.id],
      );
      expect(copied.map((c) => c.reportId)).toEqual(reports.map((r) => r.id));
      expect(copied.map(({ name, pythonCode }) => ({ name, pythonCode }))).toEqual(
        s.dashboard.reportSnapshots.map(({ name, pythonCode }) => ({ name, pythonCode })),
      );
      expect(copied.map((c) => c.id)).not.toContain(s.dashboard.reportSnapshots[0].id);
    });

    it('takes new snapshots at each publish: an edit shows only once published, and old versions stop running', async () => {
      const as = bearer(t.admin.token);
      const wb = await newWorkbook(t, t.admin, s.dep, 'Second book');
      const report = await newReport(t, t.admin, s.dep, {
        name: 'V',
        workbookId: wb,
        pythonCode: 'output = 1',
      });
      const first = await publish(t, t.admin, s.dep, wb);
      await t
        .http()
        .put(reportsPath(s.dep, `/${report.id}`))
        .set(as)
        .send({ pythonCode: 'output = 2' })
        .expect(200);
      const unpublished = await t.http().get(`/api/v1/deployments/${s.dep}/workbooks/${wb}`).set(as);
      expect(unpublished.body.publishedDashboard.reportSnapshots).toEqual(first.reportSnapshots);
      const second = await publish(t, t.admin, s.dep, wb);
      expect(second.versionNumber).toBe(2);
      expect(second.reportSnapshots).toEqual([
        expect.objectContaining({ reportId: report.id, versionNumber: 2, pythonCode: 'output = 2' }),
      ]);
      expect(second.reportSnapshots[0].id).not.toBe(first.reportSnapshots[0].id);
      const rows = await t.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM report_snapshots WHERE dashboard_id = $1',
        [second.id],
      );
      expect(rows[0].n).toBe(1);

      // The first version is no longer published: refused before anything runs.
      await shareWithEmbedUsers(t, t.admin, s.dep, wb);
      const old = await run(
        { reportId: report.id, reportVersionId: first.reportSnapshots[0].id, sqlQuery: SQL },
        second.publicId,
      );
      expectError(old, 403, 'report_version_mismatch');

      // Deleting the report takes its snapshot with it.
      await t
        .http()
        .delete(reportsPath(s.dep, `/${report.id}`))
        .set(as)
        .expect(200);
      const after = await t.http().get(`/api/v1/deployments/${s.dep}/workbooks/${wb}`).set(as);
      expect(after.body.publishedDashboard.reportSnapshots).toEqual([]);
    });
  });

  describe('refusals (nothing runs, the data API is not asked)', () => {
    let asked: number;
    beforeEach(() => {
      asked = fake.requests.length;
    });
    afterEach(() => {
      expect(fake.requests.length).toBe(asked);
    });

    it('401 without a token, and to a console token (the route is for embed tokens, as its GET)', async () => {
      expectError(await t.http().post(runPath(s.dashboard.publicId)).send(body()), 401, 'unauthorized');
      expectError(await run(body(), s.dashboard.publicId, t.admin.token), 401, 'unauthorized');
    });

    it('404 for an unknown dashboard, another account’s, or one the user’s session may not open', async () => {
      expectError(await run(body(), 'NoSuchDash12'), 404, 'dashboard_not_found');
      expectError(await run(body(), 'not-an-id!'), 404, 'dashboard_not_found');
      const globex = await newAccount(t, 'globex-python');
      const theirs = await setUp(t, globex, fake);
      expectError(await run(body(), theirs.dashboard.publicId), 404, 'dashboard_not_found');
      // Their token on our dashboard: another account.
      const theirToken = await theirs.embedToken();
      expectError(await run(body(), s.dashboard.publicId, theirToken), 404, 'dashboard_not_found');
      // A session for one dashboard reaches no other.
      const pinned = await s.embedToken({ publicDashboardId: theirs.dashboard.publicId });
      expectError(await run(body(), s.dashboard.publicId, pinned), 404, 'dashboard_not_found');
    });

    it('400 for a bad body: missing, mistyped or unknown fields', async () => {
      const bad = [
        {},
        { reportId: s.python, reportVersionId: s.snapshotOf(s.python).id },
        { ...body(), reportId: String(s.python) },
        { ...body(), reportVersionId: 0 },
        { ...body(), sqlQuery: '' },
        { ...body(), pythonCode: 'print("mine")' },
      ];
      for (const b of bad) expectError(await run(b), 400, 'validation_failed');
    });

    it('403 while Python analysis is off for the account (the default)', async () => {
      const as = bearer(t.admin.token);
      await t.http().put(SETTINGS).set(as).send({ pythonAnalysisEnabled: false }).expect(200);
      try {
        const res = await run(body());
        expectError(res, 403, 'python_analysis_disabled');
      } finally {
        await t.http().put(SETTINGS).set(as).send({ pythonAnalysisEnabled: true }).expect(200);
      }
    });

    it('403 when the version is not a published snapshot of the report', async () => {
      const other = s.snapshotOf(s.plain).id;
      expectError(await run(body(s.python, { reportVersionId: other })), 403, 'report_version_mismatch');
      expectError(await run(body(s.python, { reportId: s.plain })), 403, 'report_version_mismatch');
      expectError(
        await run(body(s.python, { reportVersionId: 2_000_000_000 })),
        403,
        'report_version_mismatch',
      );
    });

    it('400 when the report version has no Python', async () => {
      expectError(await run(body(s.plain)), 400, 'report_has_no_python');
    });
  });

  describe('runs', () => {
    it('a data API failure answers its error and is not cached', async () => {
      fake.failWith(500, 'warehouse down');
      try {
        const res = await run(body());
        expectError(res, 502, 'data_api_failed');
      } finally {
        fake.reset();
        fake.onSql(() => ({ columns: ['status', 'amount'], rows: ROWS }));
      }
    });

    it('gives each account its share: past two runs an account gets 429, and another account’s run is taken', async () => {
      // PYTHON_ACCOUNT_CONCURRENCY=2 (the default) of the process's 8. Eight runs of one account's
      // embed user wait on a data API that hangs: two are taken, six refused at once.
      const other = await setUp(t, await newAccount(t, 'python-other'), fake);
      const otherToken = await other.embedToken({ securityContext: context });
      const before = fake.requests.length;
      fake.hang();
      const answers: Array<{ status: number; body: unknown; headers: Record<string, string> }> = [];
      const pending = Array.from({ length: 8 }, (_, i) =>
        run(body(s.python, { sqlQuery: `${SQL} -- flood ${i}` })).then((res) => {
          answers.push(res);
          return res;
        }),
      );
      let otherRun: Promise<{ status: number; body: unknown }> | undefined;
      try {
        await waitFor(
          () => Promise.resolve(answers.length + fake.requests.length - before),
          (n) => n === 8,
        );
        expect(fake.requests.length - before).toBe(2);
        expect(answers).toHaveLength(6);
        for (const refused of answers) {
          expectError(refused, 429, 'python_run_limit_reached');
          expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }
        // The other account's run is taken (it reaches the data API) while the flood holds its two.
        otherRun = t
          .http()
          .post(runPath(other.dashboard.publicId))
          .set(bearer(otherToken))
          .send({
            reportId: other.python,
            reportVersionId: other.snapshotOf(other.python).id,
            sqlQuery: `${SQL} -- other`,
          })
          .then((res) => res);
        await waitFor(
          () => Promise.resolve(fake.requests.length - before),
          (n) => n === 3,
        );
        expect(fake.requests.length - before).toBe(3);
      } finally {
        fake.release(503);
      }
      const settled = await Promise.all(pending);
      expect(settled.filter((res) => res.status === 503)).toHaveLength(2);
      for (const res of settled.filter((r) => r.status === 503))
        expectError(res, 503, 'data_api_unavailable');
      expectError(await otherRun, 503, 'data_api_unavailable');
      // The account's runs are done: its next run is taken.
      fake.reset();
      fake.onSql(() => ({ columns: ['status', 'amount'], rows: ROWS }));
      const next = await run(body(s.python, { sqlQuery: `${SQL} -- after the flood` }));
      expect({ status: next.status, output: next.body.outputData }).toEqual({
        status: 200,
        output: { total: 17.5, statuses: ['open', 'shipped'] },
      });
    });

    it(
      'runs the snapshot’s code over the rows of the SQL, queried as the embed user',
      async () => {
        const before = fake.requests.length;
        const res = await run(body());
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          stdout: '3 orders\n',
          stderr: '',
          inputRowCount: 3,
          outputData: { total: 17.5, statuses: ['open', 'shipped'] },
        });
        const asked = fake.requests.slice(before);
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({
          path: '/cubejs-api/v1/cubesql',
          deploymentId: s.dep,
          auth: 'ok',
          query: SQL,
          securityContext: context,
        });

        // The same run again: the cached answer, the data API not asked.
        const again = await run(body());
        expect(again.status).toBe(200);
        expect(again.body).toEqual(res.body);
        expect(fake.requests.length).toBe(before + 1);
      },
      RUN_TIMEOUT,
    );

    it(
      'caches per user: another user with another security context gets a run of their own',
      async () => {
        const before = fake.requests.length;
        fake.onSql((_sql, ctx) => ({
          columns: ['status', 'amount'],
          rows: ctx.region === 'us' ? ROWS.slice(0, 1) : ROWS,
        }));
        const theirs = await s.embedToken({ securityContext: { tenant: 'acme', region: 'us' } });
        const res = await run(body(), s.dashboard.publicId, theirs);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          inputRowCount: 1,
          outputData: { total: 10, statuses: ['shipped'] },
        });
        expect(fake.requests.slice(before).map((r) => r.securityContext)).toEqual([
          { tenant: 'acme', region: 'us' },
        ]);
      },
      RUN_TIMEOUT,
    );

    it(
      'runs the code in the sandbox: the API process’s environment and files are out of reach',
      async () => {
        const wb = await newWorkbook(t, t.admin, s.dep, 'Escape book');
        const report = await newReport(t, t.admin, s.dep, {
          name: 'Escape',
          workbookId: wb,
          sqlQuery: SQL,
          pythonCode: ESCAPE_CODE,
        });
        const dashboard = await publish(t, t.admin, s.dep, wb);
        await shareWithEmbedUsers(t, t.admin, s.dep, wb);
        const res = await run(
          { reportId: report.id, reportVersionId: dashboard.reportSnapshots[0].id, sqlQuery: SQL },
          dashboard.publicId,
        );
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ inputRowCount: 3, outputData: 3 });
        expect(res.body.executionError).toBeUndefined();
        const stdout = res.body.stdout as string;
        // Pyodide's bridge reaches the child's Node process, which has an empty environment and
        // sees no file of the host.
        expect(stdout).toContain('env {"PWD":"/sandbox"}');
        expect(stdout.match(/^file .* Error: ENOENT/gm)).toHaveLength(3);
        const answer = JSON.stringify(res.body);
        for (const secret of [PROCESS_SECRET, t.config.secretsKey.toString('base64'), t.databaseUrl]) {
          expect(answer).not.toContain(secret);
        }
      },
      RUN_TIMEOUT,
    );

    it(
      'answers an exception as executionError, with the traceback on stderr, and does not cache it',
      async () => {
        const before = fake.requests.length;
        for (let i = 0; i < 2; i++) {
          const res = await run(body(s.failing));
          expect(res.status).toBe(200);
          expect(res.body).toEqual({
            at: expect.any(String),
            stdout: 'before\n',
            stderr: expect.stringContaining('Traceback'),
            inputRowCount: 3,
            executionError: 'ValueError: no data for you',
          });
        }
        expect(fake.requests.length).toBe(before + 2);
      },
      2 * RUN_TIMEOUT,
    );
  });
});

describe('python runs where the sandbox cannot be set up', () => {
  let fake: DataApiFake;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startDataApiFake({ secret: 'python-run-secret-'.repeat(3) });
    t = await startApp({ ...fake.env(), PYTHON_POOL_SIZE: '1', PYTHON_BWRAP_PATH: '/nonexistent/bwrap' });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('answers 503 python_sandbox_unavailable, and never runs code without it', async () => {
    const s = await setUp(t, t.admin, fake);
    const token = await s.embedToken();
    const before = fake.requests.length;
    const res = await t
      .http()
      .post(runPath(s.dashboard.publicId))
      .set(bearer(token))
      .send({ reportId: s.python, reportVersionId: s.snapshotOf(s.python).id, sqlQuery: SQL });
    expectError(res, 503, 'python_sandbox_unavailable');
    expect(res.body.message).toContain('bubblewrap');
    expect(res.headers['retry-after']).toBeDefined();
    expect(fake.requests.length).toBe(before);
  });
});

describe('python runs where no data API is configured', () => {
  let fake: DataApiFake;
  let t: TestApp;

  beforeAll(async () => {
    // The fake only lends its secret: neither DATA_API_URL_TEMPLATE nor DEPLOYMENT_DOMAIN is set.
    fake = await startDataApiFake({ secret: 'python-run-secret-'.repeat(3) });
    t = await startApp({ PYTHON_POOL_SIZE: '0' });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('answers 409 data_api_not_configured naming the settings, never "retry shortly"', async () => {
    const s = await setUp(t, t.admin, fake);
    const token = await s.embedToken();
    const res = await t
      .http()
      .post(runPath(s.dashboard.publicId))
      .set(bearer(token))
      .send({ reportId: s.python, reportVersionId: s.snapshotOf(s.python).id, sqlQuery: SQL });
    expectError(res, 409, 'data_api_not_configured');
    expect(res.body.message).toContain('DATA_API_URL_TEMPLATE');
    expect(res.body.message).toContain('DEPLOYMENT_DOMAIN');
    expect(res.body.message).not.toMatch(/retry/i);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(fake.requests).toEqual([]);
  });
});
