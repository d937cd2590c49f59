import type { ChildProcess } from 'node:child_process';
import childProcess from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Response } from 'superagent';
import { runCommand } from '../../src/core/process/command-runner.js';
import { GitHttpService } from '../../src/modules/data-model/git-http/git-http.service.js';
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
import { gitCli } from '../support/git-cli.js';

/**
 * A deployment's repository over git's smart HTTP protocol (`.../git`): the real git client
 * clones, fetches and pushes against the listening service with a token as its Basic password;
 * raw requests check what the client never sends (wants of hidden objects, hostile bodies) and
 * the bounds (per-account share, deadline, a client that leaves), with nothing timed: each waits
 * for an answer or polls for a state, with a bound.
 *
 * A part of model-git.e2e-spec.ts: its own describe, apps and databases.
 */

const GIT_UA = { 'User-Agent': 'git/2.39.5' };
const REQUEST_TYPE = 'application/x-git-upload-pack-request';
const pkt = (line: string) => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')}${line}`;
/** A fetch's body as git sends it for a clone: its wants, a flush, `done`. */
const fetchBody = (...oids: string[]) =>
  oids.map((oid, i) => pkt(`want ${oid}${i === 0 ? ' side-band-64k ofs-delta' : ''}\n`)).join('') +
  '0000' +
  pkt('done\n');
const basic = (actor: Actor) => `Basic ${Buffer.from(`git:${actor.token}`).toString('base64')}`;
/** Reads any answer whole, as bytes (supertest parses only the types it knows). */
const bytes = (res: Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

/** Polls `check` until it holds; fails after 30 s (a bound, not a timing the test relies on). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const started = Date.now(); !(await check());) {
    if (Date.now() - started > 30_000) throw new Error(`still not ${what} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface HangingAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A fetch whose body never ends: `sent` goes out, then nothing. `answer` settles when the service
 * answers, or undefined when the connection closes without an answer; `leave` closes it.
 */
function hangingFetch(port: number, id: number, actor: Actor, sent: string) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: `/build/api/v1/deployments/${id}/git/git-upload-pack`,
    headers: { Authorization: basic(actor), 'Content-Type': REQUEST_TYPE, 'Transfer-Encoding': 'chunked' },
  });
  let settle: (answer: HangingAnswer | undefined) => void = () => undefined;
  const answer = new Promise<HangingAnswer | undefined>((resolve) => {
    settle = resolve;
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
      res.once('error', () => resolve(undefined));
    });
    req.once('error', () => resolve(undefined));
  });
  req.write(sent);
  return {
    answer,
    leave: () => {
      req.destroy();
      settle(undefined);
    },
  };
}

/** The `git upload-pack` processes `spawn` started, from its spy. */
const uploadPacks = (spawn: jest.SpyInstance): ChildProcess[] =>
  spawn.mock.calls.flatMap((call: unknown[], i) =>
    (call[1] as string[] | undefined)?.[0] === 'upload-pack'
      ? [spawn.mock.results[i].value as ChildProcess]
      : [],
  );

async function killedBySigkill(child: ChildProcess): Promise<string | null> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  return child.signalCode;
}

describe('git over HTTP', () => {
  let t: TestApp;
  let port: number;
  let home: string;
  let alice: Actor;
  let bob: Actor;
  let guest: Actor;
  let other: Actor;

  const base = (id: number) => `/build/api/v1/deployments/${id}`;
  const repoDir = (id: number) => path.join(t.config.dataModel.reposDir, `${id}.git`);
  const onServer = (id: number, ...args: string[]) => gitCli([`--git-dir=${repoDir(id)}`, ...args]);
  const url = (id: number, actor?: Actor, token = actor?.token) =>
    `http://${token ? `git:${token}@` : ''}127.0.0.1:${port}${base(id)}/git`;
  /** The git client as a person runs it: a home of its own, no system configuration, never a prompt. */
  const client = async (...args: string[]) => {
    const result = await runCommand({
      file: 'git',
      args,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        LANG: 'C',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
      },
      timeoutMs: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return {
      code: result.code,
      stdout: result.stdout.toString('utf8').trim(),
      stderr: result.stderr.toString(),
    };
  };
  const succeeds = async (...args: string[]) => {
    const result = await client(...args);
    if (result.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  const workDir = () => fs.mkdtempSync(path.join(home, 'w-'));

  const createDeployment = async (actor: Actor = t.admin) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const devMode = async (id: number, actor: Actor) =>
    (
      await t
        .http()
        .post(`${base(id)}/dev-mode`)
        .set(bearer(actor.token))
        .send({})
        .expect(200)
    ).body.branchName as string;
  const write = (id: number, actor: Actor, file: string, content: string) =>
    t
      .http()
      .put(`${base(id)}/data-model/files`)
      .set(bearer(actor.token))
      .send({ files: [{ path: file, content }] })
      .expect(200);
  const commit = (id: number, actor: Actor) =>
    t
      .http()
      .post(`${base(id)}/commit`)
      .set(bearer(actor.token))
      .send({})
      .expect(200);
  const infoRefs = (id: number, query = '?service=git-upload-pack') =>
    t.http().get(`${base(id)}/git/info/refs${query}`);
  const rawFetch = (id: number, actor: Actor, body: string | Buffer, headers: Record<string, string> = {}) =>
    t
      .http()
      .post(`${base(id)}/git/git-upload-pack`)
      .set({ Authorization: basic(actor), 'Content-Type': REQUEST_TYPE, ...headers })
      .buffer(true)
      .parse(bytes)
      .send(body);
  const shares = () => t.app.get(GitHttpService).shareStats();

  beforeAll(async () => {
    t = await startApp({
      // One git request per account at once, refused at once past it: the share is seen at once.
      GIT_HTTP_ACCOUNT_CONCURRENCY: '1',
      GIT_HTTP_QUEUE_MS: '0',
      GIT_HTTP_MAX_REQUEST_BYTES: '8192',
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'git-http-home-'));
    alice = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    bob = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    guest = await newUser(t, t.admin, { defaultRoles: ['Guest'] });
    other = await newAccount(t, 'globex');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('answers without credentials 401 with a Basic challenge git answers, and a wrong token 401', async () => {
    const id = await createDeployment();
    const challenged = await infoRefs(id).set(GIT_UA);
    expect(challenged.status).toBe(401);
    expect(challenged.headers['www-authenticate']).toContain('Basic realm="api"');
    expect(challenged.headers['content-type']).toMatch(/^text\/plain/);
    // Another client gets the one error shape.
    const json = await infoRefs(id);
    expectErrorShape(json.body, 401, 'unauthorized');

    const unprompted = await client('ls-remote', url(id));
    expect(unprompted.code).not.toBe(0);
    expect(unprompted.stderr).toContain('could not read Username');
    const wrong = await client(
      'ls-remote',
      url(id, undefined, 'pat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('The token is unknown, expired or revoked');
    expect(wrong.stderr).toContain('Authentication failed');
    // Basic is taken on these routes only.
    const elsewhere = await t
      .http()
      .get(`${base(id)}/branches`)
      .set('Authorization', basic(alice));
    expectErrorShape(elsewhere.body, 401, 'unauthorized');
  });

  it('answers 403 without SchemaRead and 404 for another account’s deployment', async () => {
    const id = await createDeployment();
    const theirs = await createDeployment(other);
    const forbidden = await infoRefs(id).set('Authorization', basic(guest));
    expectErrorShape(forbidden.body, 403, 'forbidden');
    const missing = await infoRefs(theirs).set('Authorization', basic(alice));
    expectErrorShape(missing.body, 404, 'deployment_not_found');
    const fetchTheirs = await rawFetch(theirs, alice, fetchBody('0'.repeat(40)));
    expect(fetchTheirs.status).toBe(404);

    const cloneTheirs = await client('clone', url(theirs, alice), path.join(workDir(), 'c'));
    expect(cloneTheirs.code).not.toBe(0);
    expect(cloneTheirs.stderr).toContain(`Deployment ${theirs} was not found`);
    const cloneAsGuest = await client('clone', url(id, guest), path.join(workDir(), 'c'));
    expect(cloneAsGuest.code).not.toBe(0);
    expect(cloneAsGuest.stderr).toContain('This operation requires the SchemaRead action');
  });

  it('clones in full and shallow, and fetches a commit made since', async () => {
    const id = await createDeployment();
    const full = path.join(workDir(), 'full');
    await succeeds('clone', '--quiet', url(id, alice), full);
    const master = await onServer(id, 'rev-parse', 'refs/heads/master');
    expect(await succeeds('-C', full, 'rev-parse', 'HEAD')).toBe(master);
    expect(fs.existsSync(path.join(full, 'model/cubes/orders.yml'))).toBe(true);

    // A token sent as a header (runtimes cloning often): git sends it from the first request.
    const withHeader = await succeeds(
      '-c',
      `http.extraHeader=Authorization: Bearer ${alice.token}`,
      'ls-remote',
      url(id),
    );
    expect(withHeader).toContain(`${master}\trefs/heads/master`);

    const shallow = path.join(workDir(), 'shallow');
    await succeeds('clone', '--quiet', '--depth', '1', url(id, alice), shallow);
    expect(await succeeds('-C', shallow, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(await succeeds('-C', shallow, 'rev-parse', '--is-shallow-repository')).toBe('true');

    await devMode(id, alice);
    await write(id, alice, 'model/cubes/fetched.yml', 'cubes: []\n');
    await commit(id, alice);
    await t
      .http()
      .post(`${base(id)}/merge`)
      .set(bearer(alice.token))
      .send({})
      .expect(200);
    const merged = await onServer(id, 'rev-parse', 'refs/heads/master');
    expect(merged).not.toBe(master);
    await succeeds('-C', full, 'fetch', '--quiet', 'origin');
    expect(await succeeds('-C', full, 'rev-parse', 'origin/master')).toBe(merged);
    await succeeds('-C', shallow, 'fetch', '--quiet', '--depth', '1', 'origin');
    expect(await succeeds('-C', shallow, 'show', 'origin/master:model/cubes/fetched.yml')).toBe('cubes: []');
  });

  it('serves the shared branches and the caller’s own dev branch, never pending changes or other users’ dev branches', async () => {
    const id = await createDeployment();
    await t
      .http()
      .post(`${base(id)}/branches`)
      .set(bearer(t.admin.token))
      .send({ name: 'feature/x' })
      .expect(200);
    const aliceDev = await devMode(id, alice);
    await write(id, alice, 'model/cubes/alice.yml', 'cubes: []\n');
    const bobDev = await devMode(id, bob);
    await write(id, bob, 'model/cubes/bob.yml', 'cubes: []\n');
    await commit(id, bob);
    await write(id, bob, 'model/cubes/bob_pending.yml', 'cubes: []\n');
    // Both users' pending changes and dev branches are there to hide.
    const all = (await onServer(id, 'for-each-ref', '--format=%(refname)')).split('\n');
    expect(all).toEqual(
      expect.arrayContaining([`refs/pending/${aliceDev}`, `refs/pending/${bobDev}`, `refs/heads/${bobDev}`]),
    );

    const listed = async (actor: Actor) =>
      (await succeeds('ls-remote', url(id, actor)))
        .split('\n')
        .map((line) => line.split('\t')[1])
        .sort();
    expect(await listed(alice)).toEqual([
      'HEAD',
      `refs/heads/${aliceDev}`,
      'refs/heads/feature/x',
      'refs/heads/master',
    ]);
    expect(await listed(bob)).toEqual([
      'HEAD',
      `refs/heads/${bobDev}`,
      'refs/heads/feature/x',
      'refs/heads/master',
    ]);
    expect(await listed(t.admin)).toEqual(['HEAD', 'refs/heads/feature/x', 'refs/heads/master']);

    // A clone holds what it is served, and its own dev branch can be fetched.
    const clone = path.join(workDir(), 'c');
    await succeeds('clone', '--quiet', '--no-checkout', url(id, alice), clone);
    const remote = (
      await succeeds('-C', clone, 'for-each-ref', '--format=%(refname)', 'refs/remotes/')
    ).split('\n');
    expect(remote.sort()).toEqual(
      [
        `refs/remotes/origin/${aliceDev}`,
        'refs/remotes/origin/HEAD',
        'refs/remotes/origin/feature/x',
        'refs/remotes/origin/master',
      ].sort(),
    );
  });

  it('refuses a want of an object only hidden refs reach, in upload-pack’s words', async () => {
    const id = await createDeployment();
    const aliceDev = await devMode(id, alice);
    await write(id, alice, 'model/cubes/secret.yml', 'secret: pending\n');
    const bobDev = await devMode(id, bob);
    await write(id, bob, 'model/cubes/bob.yml', 'secret: bob\n');
    await commit(id, bob);
    const hidden = {
      'another user’s dev commit': await onServer(id, 'rev-parse', `refs/heads/${bobDev}`),
      'a pending commit': await onServer(id, 'rev-parse', `refs/pending/${aliceDev}`),
      'a pending tree': await onServer(id, 'rev-parse', `refs/pending/${aliceDev}^{tree}`),
      'a pending file': await onServer(id, 'rev-parse', `refs/pending/${aliceDev}:model/cubes/secret.yml`),
      'another user’s file': await onServer(id, 'rev-parse', `refs/heads/${bobDev}:model/cubes/bob.yml`),
    };
    for (const [what, oid] of Object.entries(hidden)) {
      const res = await rawFetch(id, alice, fetchBody(oid));
      const body = (res.body as Buffer).toString('latin1');
      expect({
        what,
        status: res.status,
        refused: body.includes(`ERR upload-pack: not our ref ${oid}`),
      }).toEqual({
        what,
        status: 200,
        refused: true,
      });
      expect({ what, pack: body.includes('PACK') }).toEqual({ what, pack: false });
      // Upper-case hex names the same object to upload-pack.
      const upper = await rawFetch(id, alice, fetchBody(oid.toUpperCase()));
      expect({ what, pack: (upper.body as Buffer).includes('PACK') }).toEqual({ what, pack: false });
    }
    const repo = workDir();
    await succeeds('init', '--quiet', repo);
    for (const [what, oid] of Object.entries(hidden)) {
      // The client does not even ask for an object it was not shown.
      const fetched = await client('-C', repo, 'fetch', url(id, alice), oid);
      expect({ what, code: fetched.code, stderr: fetched.stderr }).toEqual({
        what,
        code: 128,
        stderr: expect.stringContaining(`Server does not allow request for unadvertised object ${oid}`),
      });
    }

    // What is served is fetched, gzipped or not; a want naming a hidden ref's commit by deepen-not is refused.
    const master = await onServer(id, 'rev-parse', 'refs/heads/master');
    const served = await rawFetch(id, alice, fetchBody(master));
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('application/x-git-upload-pack-result');
    expect((served.body as Buffer).includes('PACK')).toBe(true);
    const gzipped = await rawFetch(id, alice, gzipSync(fetchBody(master)), { 'Content-Encoding': 'gzip' });
    expect((gzipped.body as Buffer).includes('PACK')).toBe(true);
    const excluding = await rawFetch(
      id,
      alice,
      pkt(`want ${master} side-band-64k\n`) +
        pkt(`deepen-not refs/pending/${aliceDev}\n`) +
        '0000' +
        pkt('done\n'),
    );
    expect((excluding.body as Buffer).toString()).toContain('ERR upload-pack: deepen-not');
  });

  it('refuses pushes with 403 and says how the model changes', async () => {
    const id = await createDeployment();
    const clone = path.join(workDir(), 'c');
    await succeeds('clone', '--quiet', url(id, alice), clone);
    await succeeds(
      '-C',
      clone,
      '-c',
      'user.name=A',
      '-c',
      'user.email=a@a.test',
      'commit',
      '--allow-empty',
      '-qm',
      'x',
    );
    const before = await onServer(id, 'for-each-ref');
    const pushed = await client('-C', clone, 'push', 'origin', 'HEAD:refs/heads/master');
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain('remote: Pushing is not supported');
    expect(pushed.stderr).toContain(`POST /build/api/v1/deployments/${id}/dev-mode`);
    expect(pushed.stderr).toContain('403');
    expect(await onServer(id, 'for-each-ref')).toBe(before);

    const advertised = await infoRefs(id, '?service=git-receive-pack').set('Authorization', basic(alice));
    expectErrorShape(advertised.body, 403, 'git_push_not_supported');
    const posted = await t
      .http()
      .post(`${base(id)}/git/git-receive-pack`)
      .set({ Authorization: basic(alice), 'Content-Type': 'application/x-git-receive-pack-request' })
      .send(Buffer.from('0000'));
    expectErrorShape(posted.body, 403, 'git_push_not_supported');
    expect(posted.headers.connection).toBe('close');
  });

  it('refuses other services, unknown parameters, the dumb protocol and bodies git does not send', async () => {
    const id = await createDeployment();
    const ok = await infoRefs(id).set('Authorization', basic(alice)).buffer(true).parse(bytes);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('application/x-git-upload-pack-advertisement');
    expect(ok.headers['cache-control']).toBe('no-cache');
    expect((ok.body as Buffer).subarray(0, 34).toString()).toBe('001e# service=git-upload-pack\n0000');
    // A Bearer token is taken too (a runtime may send one as a header).
    expect((await infoRefs(id).set(bearer(alice.token))).status).toBe(200);

    for (const query of ['', '?service=git-upload-archive', '?service=git-upload-pack&x=1']) {
      const res = await infoRefs(id, query).set('Authorization', basic(alice));
      expectErrorShape(res.body, 400, 'validation_failed');
    }
    for (const dumb of ['HEAD', 'objects/info/packs', 'info/refs/x']) {
      const res = await t
        .http()
        .get(`${base(id)}/git/${dumb}`)
        .set('Authorization', basic(alice));
      expectErrorShape(res.body, 404, 'not_found');
    }

    const asJson = await t
      .http()
      .post(`${base(id)}/git/git-upload-pack`)
      .set('Authorization', basic(alice))
      .send({ want: 'x' });
    expectErrorShape(asJson.body, 415, 'unsupported_media_type');
    const encoded = await rawFetch(id, alice, fetchBody('0'.repeat(40)), { 'Content-Encoding': 'br' });
    expect(encoded.status).toBe(415);
    const notGzip = await rawFetch(id, alice, fetchBody('0'.repeat(40)), { 'Content-Encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    expect(JSON.parse((notGzip.body as Buffer).toString())).toMatchObject({
      message: ['The request body is not valid gzip'],
    });
    const notPktLines = await rawFetch(id, alice, 'want me');
    expect(notPktLines.status).toBe(400);
    const master = await onServer(id, 'rev-parse', 'refs/heads/master');
    const manyWants = pkt(`want ${master}\n`).repeat(200);
    const tooLarge = await rawFetch(id, alice, manyWants);
    expect(tooLarge.status).toBe(413);
    const inflated = await rawFetch(id, alice, gzipSync(manyWants.repeat(10)), {
      'Content-Encoding': 'gzip',
    });
    expect(inflated.status).toBe(413);
    expect(JSON.parse((inflated.body as Buffer).toString()).message).toContain('once decompressed');
  });

  it('holds an account to its share of git requests while other accounts are served, and kills the upload-pack of a client that left', async () => {
    const id = await createDeployment();
    const theirs = await createDeployment(other);
    // The repository is made by the first request that reads it.
    expect((await infoRefs(id).set('Authorization', basic(alice))).status).toBe(200);
    const master = await onServer(id, 'rev-parse', 'refs/heads/master');
    const spawn = jest.spyOn(childProcess, 'spawn');
    try {
      // Wants and their flush, then no `done`: upload-pack waits for the rest.
      const held = hangingFetch(port, id, alice, pkt(`want ${master} side-band-64k\n`) + '0000');
      await until(() => uploadPacks(spawn).length === 1, 'started');
      expect(shares().byAccount).toEqual({ [String(t.admin.accountId)]: 1 });

      const busy = await infoRefs(id).set('Authorization', basic(bob));
      expectErrorShape(busy.body, 429, 'git_fetch_limit_reached');
      expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
      const cloned = await client('clone', '--quiet', url(id, bob), path.join(workDir(), 'c'));
      expect(cloned.stderr).toContain('429');
      // Another account is served meanwhile.
      await succeeds('clone', '--quiet', url(theirs, other), path.join(workDir(), 'theirs'));

      held.leave();
      expect(await killedBySigkill(uploadPacks(spawn)[0])).toBe('SIGKILL');
      await until(() => shares().running === 0, 'released');
      expect((await infoRefs(id).set('Authorization', basic(bob))).status).toBe(200);
    } finally {
      spawn.mockRestore();
    }
  });
});

describe('git over HTTP: the deadline and the failed-authentication budget', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startApp({ GIT_HTTP_TIMEOUT_MS: '1000', AUTH_FAILURE_LIMIT_MAX: '2' });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('answers a fetch whose body never ends 503 git_fetch_timeout, its upload-pack killed and its slot freed', async () => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput());
    const id = res.body.id as number;
    expect(
      (
        await t
          .http()
          .get(`/build/api/v1/deployments/${id}/git/info/refs?service=git-upload-pack`)
          .set(bearer(t.admin.token))
      ).status,
    ).toBe(200);
    const master = await gitCli([
      `--git-dir=${path.join(t.config.dataModel.reposDir, `${id}.git`)}`,
      'rev-parse',
      'refs/heads/master',
    ]);
    const want = pkt(`want ${master} side-band-64k\n`);
    const timedOut = async (sent: string) => {
      const answer = await hangingFetch(port, id, t.admin, sent).answer;
      expect(answer?.status).toBe(503);
      expect(answer?.headers.connection).toBe('close');
      expect(JSON.parse(answer!.body)).toMatchObject({ code: 'git_fetch_timeout' });
      // Its slot was given back before the answer went out.
      expect(t.app.get(GitHttpService).shareStats().running).toBe(0);
    };
    const spawn = jest.spyOn(childProcess, 'spawn');
    try {
      // Still in its wants: upload-pack never started.
      await timedOut(want);
      expect(uploadPacks(spawn)).toEqual([]);
      // Wants and their flush, then nothing: upload-pack waits for the haves until it is killed
      // (had the deadline passed before it started, none would be left to kill).
      await timedOut(want + '0000');
      expect(uploadPacks(spawn).length).toBeLessThanOrEqual(1);
      for (const child of uploadPacks(spawn)) expect(await killedBySigkill(child)).toBe('SIGKILL');
    } finally {
      spawn.mockRestore();
    }
  });

  it('does not spend the address’s failed-authentication budget on the challenge git answers, only on bad tokens', async () => {
    const id = (
      await t.http().post('/build/api/v1/deployments').set(bearer(t.admin.token)).send(deploymentInput())
    ).body.id as number;
    const refs = `/build/api/v1/deployments/${id}/git/info/refs?service=git-upload-pack`;
    // Each git command asks once without credentials, is challenged, and asks again with them:
    // more commands than the budget of 2 failures all go through.
    for (let i = 0; i < 4; i++) {
      const challenged = await t.http().get(refs).set(GIT_UA);
      expect(challenged.status).toBe(401);
      const answered = await t.http().get(refs).set(GIT_UA).set('Authorization', basic(t.admin));
      expect(answered.status).toBe(200);
    }
    // A wrong token in Basic spends it like any other.
    const junk = {
      Authorization: `Basic ${Buffer.from('git:pat_junk-token-that-is-unknown').toString('base64')}`,
    };
    for (let i = 0; i < 2; i++) expect((await t.http().get(refs).set(GIT_UA).set(junk)).status).toBe(401);
    expect((await t.http().get(refs).set(GIT_UA).set(junk)).status).toBe(429);
    const viaBasic = await t.http().get(refs).set(GIT_UA).set('Authorization', basic(t.admin));
    expect(viaBasic.status).toBe(200);
    // The token in Basic is counted as the token, not as the address.
    const viaBearer = await t.http().get(refs).set(bearer(t.admin.token));
    expect(viaBasic.headers['ratelimit-policy']).toBe(viaBearer.headers['ratelimit-policy']);
  });
});
