import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import { ModelUploads, UPLOAD_SWEEP_OWNER } from '../../src/modules/data-model/model-uploads.service.js';
import { bearer, expectErrorShape, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { postDeployment, waitFor } from '../support/factories.js';

const MAX_FILE = 4096;
const MAX_PENDING = 10_000;

const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');
/** The id git gives a blob of this content. */
const blobOid = (b: Buffer) =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]))
    .digest('hex');
/** Content of `size` bytes that no other test writes. */
const content = (size: number) => Buffer.from(randomBytes(size).toString('hex').slice(0, size));

/**
 * Uploads that cannot fill memory or disk (issue 26, item 4): a part is refused while it streams,
 * an account's uploads hold a bounded number of bytes, and the sweep prunes what expired uploads
 * left in the repository.
 */
describe('upload bounds', () => {
  let t: TestApp;
  let other: Actor;

  const base = (id: number) => `/build/api/v1/deployments/${id}/data-model`;
  const repoDir = (id: number) => path.join(t.config.dataModel.reposDir, `${id}.git`);
  const hasObject = (id: number, oid: string) => {
    try {
      execFileSync('git', [`--git-dir=${repoDir(id)}`, 'cat-file', '-e', oid], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  /** Makes a loose object look written `hours` ago (what waiting that long would do). */
  const age = (id: number, oid: string, hours: number) => {
    const when = new Date(Date.now() - hours * 3600_000);
    fs.utimesSync(path.join(repoDir(id), 'objects', oid.slice(0, 2), oid.slice(2)), when, when);
  };
  const start = async (actor: Actor, id: number) => {
    const res = await t
      .http()
      .post(`${base(id)}/upload/start`)
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body.transaction.id as string;
  };
  const part = (actor: Actor, id: number, tx: string, fileName: string, body: Buffer) =>
    t
      .http()
      .post(`${base(id)}/upload/file`)
      .set(bearer(actor.token))
      .field('transaction', tx)
      .field('fileName', fileName)
      .attach('file', body, path.basename(fileName));
  const finish = (actor: Actor, id: number, tx: string, files: Record<string, Buffer>) =>
    t
      .http()
      .post(`${base(id)}/upload/finish`)
      .set(bearer(actor.token))
      .send({
        transaction: { id: tx },
        files: Object.fromEntries(Object.entries(files).map(([p, c]) => [p, { hash: sha1(c) }])),
        autoRemoveFiles: false,
      });
  const uploadBytes = async (tx: string) =>
    (await t.sql<{ bytes: string }>(`SELECT bytes FROM model_uploads WHERE id = $1`, [tx])).map((r) =>
      Number(r.bytes),
    );

  beforeAll(async () => {
    // Jobs of the `default` queue (the sweep) run here; builds stay queued: nothing compiles.
    t = await startApp({
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      MODEL_MAX_FILE_BYTES: String(MAX_FILE),
      MODEL_UPLOAD_MAX_PENDING_BYTES: String(MAX_PENDING),
    });
    other = await newAccount(t, 'globex');
  });
  afterAll(() => t.close());

  it('refuses a part over MODEL_MAX_FILE_BYTES as it arrives, without reading the rest of the body', async () => {
    const id = (await postDeployment(t, t.admin)).id;
    const tx = await start(t.admin, id);
    // At the limit it is taken; one byte more is refused, with the status the check had before.
    expect((await part(t.admin, id, tx, 'model/at-limit.yml', content(MAX_FILE))).status).toBe(200);
    const over = await part(t.admin, id, tx, 'model/over.yml', content(MAX_FILE + 1));
    expectErrorShape(over.body, 400, 'file_too_large');

    // A body that never ends: the client sends the fields and three times the limit of the
    // file, then waits. The answer comes while the body is still unfinished, and the server
    // closes the connection rather than read the rest (before, the whole part was read into memory
    // first: this request got no answer at all).
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const boundary = `b${randomBytes(8).toString('hex')}`;
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const head =
      field('transaction', tx) +
      field('fileName', 'model/cubes/huge.yml') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.yml"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n';
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `${base(id)}/upload/file`,
      headers: {
        ...bearer(t.admin.token),
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Transfer-Encoding': 'chunked',
      },
    });
    req.on('error', () => undefined); // the server closes while the body is unfinished
    const closed = new Promise<void>((resolve) => req.on('close', resolve));
    const answer = new Promise<{ status: number; connection?: string; body: string }>((resolve) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      });
    });
    req.write(head);
    req.write(content(3 * MAX_FILE));
    const outcome = await Promise.race([
      answer,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000).unref()),
    ]);
    expect(req.writableEnded).toBe(false);
    expect(outcome).not.toBeNull();
    expect(outcome!.status).toBe(400);
    expect(outcome!.connection).toBe('close');
    expectErrorShape(JSON.parse(outcome!.body), 400, 'file_too_large');
    await closed;
    req.destroy();
    // Only the part at the limit was stored.
    expect(await uploadBytes(tx)).toEqual([MAX_FILE]);
  });

  it('bounds the bytes of an account’s uploads, counted atomically; another account is not affected', async () => {
    // An account of its own: the first test's upload holds bytes of acme's allowance.
    const admin = await newAccount(t, 'initech');
    const id = (await postDeployment(t, admin)).id;
    const otherId = (await postDeployment(t, other)).id;
    const tx = await start(admin, id);
    const otherTx = await start(other, otherId);
    // Six parallel parts of 3,000 bytes against 10,000: three fit, three are refused; the other
    // account's part, sent at the same time, is taken.
    const parts = Array.from({ length: 6 }, () => content(3000));
    const otherPart = content(3000);
    const [answers, otherAnswer] = await Promise.all([
      Promise.all(parts.map((c, i) => part(admin, id, tx, `model/cubes/p${i}.yml`, c))),
      part(other, otherId, otherTx, 'model/cubes/o.yml', otherPart),
    ]);
    expect(otherAnswer.status).toBe(200);
    const taken = parts.filter((_, i) => answers[i].status === 200);
    const refused = parts.filter((_, i) => answers[i].status !== 200);
    expect(taken).toHaveLength(3);
    for (const res of answers.filter((r) => r.status !== 200)) {
      expectErrorShape(res.body, 429, 'upload_limit_reached');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await uploadBytes(tx)).toEqual([9000]);
    // Nothing of a refused part was stored.
    for (const c of refused) expect(hasObject(id, blobOid(c))).toBe(false);
    for (const c of taken) expect(hasObject(id, blobOid(c))).toBe(true);

    // A finish commits two of the three: their bytes are the branch's now; the third, left out,
    // still counts (closed, until the sweep prunes it).
    const names = answers.map((r) => r.body.fileName as string).filter(Boolean);
    const committed = Object.fromEntries(
      names.slice(0, 2).map((n) => [n, parts[Number(/p(\d)/.exec(n)![1])]]),
    );
    expect((await finish(admin, id, tx, committed)).status).toBe(200);
    expect(await uploadBytes(tx)).toEqual([3000]);
    const next = await start(admin, id);
    expect((await part(admin, id, next, 'model/cubes/n1.yml', content(3000))).status).toBe(200);
    expect((await part(admin, id, next, 'model/cubes/n2.yml', content(3000))).status).toBe(200);
    const full = await part(admin, id, next, 'model/cubes/n3.yml', content(3000));
    expectErrorShape(full.body, 429, 'upload_limit_reached');
  });

  it('prunes on its schedule what expired uploads left, keeping a live upload’s and committed blobs', async () => {
    const id = (await postDeployment(t, other)).id;
    // A committed file, an upload left to expire, and an upload under way.
    const kept = content(100);
    const first = await start(other, id);
    expect((await part(other, id, first, 'model/cubes/kept.yml', kept)).status).toBe(200);
    expect((await finish(other, id, first, { 'model/cubes/kept.yml': kept })).status).toBe(200);
    const abandoned = content(100);
    const expired = await start(other, id);
    expect((await part(other, id, expired, 'model/cubes/gone.yml', abandoned)).status).toBe(200);
    const live = content(100);
    const open = await start(other, id);
    expect((await part(other, id, open, 'model/cubes/live.yml', live)).status).toBe(200);

    // Three hours pass for the abandoned upload and for the committed blob; the live one is new.
    await t.sql(
      `UPDATE model_uploads SET created_at = now() - interval '3 hours', expires_at = now() - interval '2 hours'
       WHERE id = $1`,
      [expired],
    );
    age(id, blobOid(abandoned), 3);
    age(id, blobOid(kept), 3);

    // The schedule, made once at the first upload, fires the sweep.
    const schedules = await t.sql<{ id: string; next_run_at: Date }>(
      `SELECT id, next_run_at FROM job_schedules WHERE owner = $1`,
      [UPLOAD_SWEEP_OWNER],
    );
    expect(schedules).toHaveLength(1);
    expect(await t.app.get(JobSchedules).fireDue({ now: schedules[0].next_run_at })).toBe(1);
    const rows = await waitFor(
      () => t.sql(`SELECT id FROM model_uploads WHERE id = $1`, [expired]),
      (r) => r.length === 0,
    );
    expect(rows).toEqual([]);
    expect(hasObject(id, blobOid(abandoned))).toBe(false);
    expect(hasObject(id, blobOid(kept))).toBe(true);
    expect(hasObject(id, blobOid(live))).toBe(true);

    // Twice at once changes nothing more, and the live upload still commits its part.
    const uploads = t.app.get(ModelUploads);
    expect(await Promise.all([uploads.sweep(), uploads.sweep()])).toEqual([0, 0]);
    expect(hasObject(id, blobOid(live))).toBe(true);
    expect((await finish(other, id, open, { 'model/cubes/live.yml': live })).status).toBe(200);
    expect(
      execFileSync('git', [`--git-dir=${repoDir(id)}`, 'show', 'master:model/cubes/live.yml'], {
        encoding: 'utf8',
      }),
    ).toBe(live.toString());
  });
});
