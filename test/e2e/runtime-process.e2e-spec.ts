import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
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
    const out = await refused({ DEPLOYMENT_RUNTIME: 'kubernetes', KUBECONFIG: file });
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
});
