import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createTestDatabase, dropTestDatabase, REDIS_URL } from '../support/database.js';
import { deploymentInput } from '../support/factories.js';
import { startKubernetesFake, type KubernetesFake } from '../support/kubernetes-fake.js';
import { getJson, startProcess, type Proc } from '../support/process.js';

const run = promisify(execFile);
// The build under test: dist/ (`npm test` builds it), or TEST_DIST_DIR's.
const DIST = path.resolve(process.env.TEST_DIST_DIR ?? 'dist');
const MAIN = path.join(DIST, 'src/main.js');

/**
 * The API process with a Kubernetes runtime: what stops it at start-up, and what it writes to its
 * logs when the cluster fails (never the cluster's token).
 */
describe('the API process with DEPLOYMENT_RUNTIME', () => {
  let fake: KubernetesFake;
  let db: { name: string; url: string };
  const base = () => ({
    NODE_ENV: 'development',
    DATABASE_URL: db.url,
    MIGRATIONS_RUN: 'false',
    REDIS_URL,
    LOG_LEVEL: 'trace',
  });
  const refused = async (env: Record<string, string>) => {
    const proc = startProcess(MAIN, { ...base(), PORT: '0', ...env });
    expect(await proc.exit).toBe(1);
    expect(proc.output()).not.toContain('listening on');
    return proc.output();
  };

  beforeAll(async () => {
    fake = await startKubernetesFake();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await fake.close();
    await dropTestDatabase(db.name);
  });

  it('refuses to start with an unknown runtime, naming the accepted ones', async () => {
    expect(await refused({ DEPLOYMENT_RUNTIME: 'docker' })).toContain(
      'DEPLOYMENT_RUNTIME must be one of: none, kubernetes',
    );
  });

  it('refuses to start with Kubernetes but no kubeconfig and no cluster around it', async () => {
    const out = await refused({ DEPLOYMENT_RUNTIME: 'kubernetes' });
    expect(out).toContain('DEPLOYMENT_RUNTIME=kubernetes');
    expect(out).toContain('set KUBECONFIG');
    const missing = await refused({ DEPLOYMENT_RUNTIME: 'kubernetes', KUBECONFIG: '/nowhere/kubeconfig' });
    expect(missing).toContain('KUBECONFIG: /nowhere/kubeconfig does not exist');
  });

  it('refuses to start with a kubeconfig it cannot use, without printing what is in it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-bad-'));
    const file = path.join(dir, 'config');
    fs.writeFileSync(
      file,
      fs.readFileSync(fake.kubeconfig(), 'utf8').replace('token: ', 'token: [unclosed '),
    );
    const out = await refused({ ...fake.env(), KUBECONFIG: file });
    expect(out).toContain(`KUBECONFIG: cannot read ${file}: not a valid kubeconfig`);
    expect(out).not.toContain(fake.token);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('running against a cluster that fails', () => {
    let proc: Proc;
    let port: number;
    let token: string;
    let id: number;

    beforeAll(async () => {
      const { stdout } = await run(
        process.execPath,
        [path.join(DIST, 'src/cli.js'), 'bootstrap', '--account', 'acme', '--email', 'a@acme.test'],
        { env: { ...process.env, DATABASE_URL: db.url } },
      );
      token = JSON.parse(stdout).token;
      proc = startProcess(MAIN, {
        ...base(),
        QUEUE_PREFIX: `rt${randomBytes(4).toString('hex')}`,
        PORT: '0',
        HOST: '127.0.0.1',
        ...fake.env({ timeoutMs: 500 }),
      });
      port = await proc.listening();
      const res = await fetch(`http://127.0.0.1:${port}/build/api/v1/deployments`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(deploymentInput()),
      });
      id = ((await res.json()) as { id: number }).id;
    });
    afterAll(async () => {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exit;
      }
    });

    it('says at start-up which cluster and namespace it reads', () => {
      expect(proc.output()).toContain(`Deployment runtime: Kubernetes at ${fake.url}, namespace analytics`);
    });

    it('logs the failures, 401, 403, 500 and a silent server, and never the token', async () => {
      const answers: number[] = [];
      for (const failWith of [401, 403, 500]) {
        fake.settings.failWith = failWith;
        answers.push((await getJson(port, `/api/v1/deployments/${id}/logs`, token)).status);
        answers.push((await getJson(port, `/api/v1/deployments/${id}/pods`, token)).status);
      }
      fake.reset();
      fake.settings.hang = true;
      answers.push((await getJson(port, `/api/v1/deployments/${id}/logs`, token)).status);
      fake.reset();
      expect(answers).toEqual([502, 502, 502, 502, 502, 502, 503]);
      await proc.waitFor(/did not finish within 500 ms/);
      const out = proc.output();
      for (const status of [401, 403, 500]) expect(out).toContain(`answered ${status}`);
      expect(out).not.toContain(fake.token);
    });
  });

  describe('a rollout through a restart of the service', () => {
    let proc: Proc;
    let token: string;
    let rdb: { name: string; url: string };
    const env = () => ({
      NODE_ENV: 'development',
      DATABASE_URL: rdb.url,
      MIGRATIONS_RUN: 'false',
      // No Redis: the API runs the jobs itself, from the outbox in PostgreSQL.
      REDIS_URL: undefined,
      LOG_LEVEL: 'info',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      PORT: '0',
      HOST: '127.0.0.1',
      REPOS_DIR: repos,
      SECRETS_KEY: secretsKey,
      MODEL_COMPILE_POOL_SIZE: '0',
      PYTHON_POOL_SIZE: '0',
      ...fake.env({ timeoutMs: 2000 }),
      KUBERNETES_PLATFORM_URL: 'http://platform.test:3000',
      KUBERNETES_PROGRESS_DEADLINE_SECONDS: '30',
    });
    const repos = fs.mkdtempSync(path.join(os.tmpdir(), 'rollout-repos-'));
    const secretsKey = randomBytes(32).toString('base64');
    const cli = (...args: string[]) =>
      run(process.execPath, [path.join(DIST, 'src/cli.js'), ...args], {
        env: { ...process.env, DATABASE_URL: rdb.url, SECRETS_KEY: secretsKey, REPOS_DIR: repos },
      });
    const call = async (port: number, method: string, url: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    /** Polls `probe` every 100 ms until `done` holds; fails after `seconds` (a bound, not a timing). */
    const until = async <T>(
      probe: () => Promise<T> | T,
      done: (v: T) => boolean,
      what: string,
      seconds = 60,
    ) => {
      for (const started = Date.now(); ;) {
        const v = await probe();
        if (done(v)) return v;
        if (Date.now() - started > seconds * 1000) throw new Error(`still not ${what} after ${seconds} s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    beforeAll(async () => {
      rdb = await createTestDatabase();
      token = JSON.parse(
        (await cli('bootstrap', '--account', 'acme', '--email', 'a@acme.test')).stdout,
      ).token;
      await cli('add-release', '--channel', 'latest', '--version', '1.6.2');
    });
    afterAll(async () => {
      if (proc?.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exit;
      }
      fake.clear();
      await dropTestDatabase(rdb.name);
      fs.rmSync(repos, { recursive: true, force: true });
    });

    it('is followed to the end by the restarted service after the first was killed mid-rollout', async () => {
      fake.reset();
      proc = startProcess(MAIN, env());
      let port = await proc.listening();
      const created = await call(port, 'POST', '/build/api/v1/deployments', deploymentInput());
      const id = created.body.id as number;
      expect(
        (
          await call(port, 'PUT', `/api/v1/deployments/${id}/env-vars`, {
            env_variables: [{ name: 'CUBEJS_API_SECRET', value: 'restart-secret-0123456789' }],
          })
        ).status,
      ).toBe(200);
      // The first build runs, the reconcile applies, and the service watches the rollout.
      await until(() => fake.get('Deployment', `cube-${id}`), Boolean, 'applied');
      await until(
        () => fake.watchers('Deployment'),
        (n) => n > 0,
        'watching',
      );
      expect((await getJson(port, `/api/v1/deployments/${id}/build-status`, token)).body).toMatchObject({
        deploymentStatus: 'deploying',
      });

      // The service dies in the middle of the rollout.
      proc.child.kill('SIGKILL');
      await proc.exit;
      // Its run's lease runs out, as time would make it.
      const pg = new Client({ connectionString: rdb.url });
      await pg.connect();
      await pg.query(
        `UPDATE job_runs SET lease_until = now() - interval '1 second' WHERE status = 'running'`,
      );
      await pg.query(
        // In-process jobs are leased through their outbox row's `available_at`.
        `UPDATE job_outbox SET available_at = now() - interval '1 second' WHERE status = 'pending'`,
      );
      await pg.end();

      proc = startProcess(MAIN, env());
      port = await proc.listening();
      // The restarted service takes the run over and watches again; the cluster finishes the rollout.
      await until(
        () => fake.watchers('Deployment'),
        (n) => n > 0,
        'watching again',
      );
      fake.setRollout(`cube-${id}`, 'available');
      const status = await until(
        async () => (await getJson(port, `/api/v1/deployments/${id}/build-status`, token)).body,
        (b) => (b as { deploymentStatus?: string }).deploymentStatus === 'deployed',
        'deployed',
      );
      expect(status).toMatchObject({ deploymentStatus: 'deployed', deploymentStatusReason: null });
      expect(fake.invalid).toEqual([]);
      expect(proc.output()).not.toContain('restart-secret-0123456789');
    });
  });
});
