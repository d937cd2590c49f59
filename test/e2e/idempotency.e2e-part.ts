import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Response } from 'supertest';
import { isAudited } from '../../src/core/audit/audited.decorator.js';
import { IdempotencyInterceptor } from '../../src/core/http/idempotency/idempotency.interceptor.js';
import { IdempotencyPrune } from '../../src/core/http/idempotency/idempotency-prune.job.js';
import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import { JobSchedules } from '../../src/core/queue/job-schedules.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { Factories } from '../support/factories.js';
import { operations } from '../support/routes.js';

const GROUPS = '/api/v1/groups';
const KEY = 'Idempotency-Key';

describe('Idempotency-Key on POST', () => {
  let t: TestApp;
  let other: Actor;
  let deploymentId: number;
  let seq = 0;
  /** A key (and names) no other test uses. */
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'idem-other');
    deploymentId = (await new Factories(t.app, t.admin).deployment()).id;
  });
  afterAll(() => t.close());

  /** Turns a supertest request into a plain promise, so it can go into Promise.all. */
  const run = (req: PromiseLike<Response>): Promise<Response> => Promise.resolve(req);

  const postGroup = (body: Record<string, unknown>, key?: string, actor: Actor = t.admin) => {
    const req = t.http().post(GROUPS).set(bearer(actor.token));
    return run((key === undefined ? req : req.set(KEY, key)).send(body));
  };

  const postFolder = (body: Record<string, unknown>, key?: string, actor: Actor = t.admin) => {
    const req = t.http().post(`/api/v1/deployments/${deploymentId}/folders`).set(bearer(actor.token));
    return run((key === undefined ? req : req.set(KEY, key)).send(body));
  };

  const groupsNamed = async (name: string, accountId = t.admin.accountId) =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM groups WHERE account_id = $1 AND name = $2`,
        [accountId, name],
      )
    )[0].n;

  const foldersNamed = async (name: string) =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM folders WHERE deployment_id = $1 AND name = $2`,
        [deploymentId, name],
      )
    )[0].n;

  it('replays the first answer to a repeat, marked Idempotent-Replayed, and creates nothing more', async () => {
    const key = unique('replay');
    const name = unique('Group');
    const first = await postGroup({ name, description: 'first' }, key);
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    // The same body, its keys in another order: the same request.
    const again = await postGroup({ description: 'first', name }, key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.text).toBe(first.text);
    expect(await groupsNamed(name)).toBe(1);

    // The draft's quoted form names the same key.
    const quoted = await postGroup({ name, description: 'first' }, `"${key}"`);
    expect(quoted.status).toBe(200);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(quoted.body).toEqual(first.body);
    expect(await groupsNamed(name)).toBe(1);

    // Kept sealed: an answer may hold a secret shown once (a new API key's token).
    const [kept] = await t.sql<{ response_body: string }>(
      `SELECT response_body FROM idempotency_keys WHERE key = $1`,
      [key],
    );
    expect(kept.response_body).not.toContain(name);
  });

  it('records the request that acted in the audit log, and no replay', async () => {
    const settings = (on: boolean) =>
      t.http().put('/api/v1/tenant/settings').set(bearer(other.token)).send({ auditLogEnabled: on });
    expect((await settings(true)).status).toBe(200);
    try {
      const key = unique('audited');
      const name = unique('Group');
      const first = await postGroup({ name }, key, other);
      const again = await postGroup({ name }, key, other);
      expect([first.status, again.headers['idempotent-replayed']]).toEqual([200, 'true']);
      const events = await t.sql<{ outcome: string; target_id: string }>(
        `SELECT outcome, target_id FROM audit_events WHERE account_id = $1 AND action = 'createUserGroup'`,
        [other.accountId],
      );
      expect(events).toEqual([{ outcome: 'success', target_id: String(first.body.id) }]);
    } finally {
      expect((await settings(false)).status).toBe(200);
    }
  });

  it('refuses the key for another request with 422 idempotency_key_reused, and acts on none of them', async () => {
    const key = unique('reused');
    const name = unique('Group');
    expect((await postGroup({ name }, key)).status).toBe(200);

    const otherName = unique('Group');
    const otherBody = await postGroup({ name: otherName }, key);
    expect(otherBody.status).toBe(422);
    expectErrorShape(otherBody.body, 422, 'idempotency_key_reused');
    expect(await groupsNamed(otherName)).toBe(0);

    // Another route under the same key.
    const otherPath = await postFolder({ name }, key);
    expect(otherPath.status).toBe(422);
    expectErrorShape(otherPath.body, 422, 'idempotency_key_reused');
    expect(await foldersNamed(name)).toBe(0);

    // Another caller of the same account, with the same body.
    const colleague = await newUser(t, t.admin, { defaultRoles: ['Admin'] });
    const otherCaller = await postGroup({ name }, key, colleague);
    expect(otherCaller.status).toBe(422);
    expectErrorShape(otherCaller.body, 422, 'idempotency_key_reused');
    expect(await groupsNamed(name)).toBe(1);
  });

  it('keeps keys per account: another account’s request under the same key acts', async () => {
    const key = unique('accounts');
    const name = unique('Group');
    const mine = await postGroup({ name }, key);
    expect(mine.status).toBe(200);
    const theirs = await postGroup({ name }, key, other);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await groupsNamed(name, t.admin.accountId)).toBe(1);
    expect(await groupsNamed(name, other.accountId)).toBe(1);
  });

  it('acts once for 50 parallel creates under one key: the others get its answer or 409 in progress', async () => {
    const key = unique('parallel');
    const name = unique('Folder');
    const answers = await Promise.all(Array.from({ length: 50 }, () => postFolder({ name }, key)));
    expect(await foldersNamed(name)).toBe(1);

    const created = answers.filter((r) => r.status === 200);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    for (const r of created) expect(r.text).toBe(created[0].text);
    for (const r of answers.filter((a) => a.status !== 200)) {
      expect(r.status).toBe(409);
      expectErrorShape(r.body, 409, 'idempotency_key_in_progress');
      expect(r.headers['retry-after']).toBe('1');
    }
    // Once the first is answered, every retry gets that answer.
    const retry = await postFolder({ name }, key);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(created[0].text);
    expect(await foldersNamed(name)).toBe(1);
  });

  it('keeps a 4xx answer and replays it, even once the request would succeed', async () => {
    const name = unique('Group');
    expect((await postGroup({ name })).status).toBe(200);
    const key = unique('taken');
    const refused = await postGroup({ name }, key);
    expect(refused.status).toBe(409);
    expectErrorShape(refused.body, 409, 'group_name_taken');

    await t.sql(`DELETE FROM groups WHERE account_id = $1 AND name = $2`, [t.admin.accountId, name]);
    const again = await postGroup({ name }, key);
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(refused.body);
    expect(await groupsNamed(name)).toBe(0);

    // A validation failure is an answer like any other.
    const invalidKey = unique('invalid-body');
    const invalid = await postGroup({ name: 42 }, invalidKey);
    expect(invalid.status).toBe(400);
    expectErrorShape(invalid.body, 400, 'validation_failed');
    const invalidAgain = await postGroup({ name: 42 }, invalidKey);
    expect(invalidAgain.status).toBe(400);
    expect(invalidAgain.headers['idempotent-replayed']).toBe('true');
    expect(invalidAgain.body).toEqual(invalid.body);
  });

  it('answers 400 invalid_idempotency_key for a key that is not 1 to 255 printable ASCII characters', async () => {
    const name = unique('Group');
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there', '"unterminated', '"bad \\n escape"']) {
      const res = await postGroup({ name }, key);
      expect({ key, status: res.status }).toEqual({ key, status: 400 });
      expectErrorShape(res.body, 400, 'invalid_idempotency_key');
    }
    expect(await groupsNamed(name)).toBe(0);
    const longest = await postGroup({ name }, 'k'.repeat(255));
    expect(longest.status).toBe(200);
  });

  it('leaves a POST without the header alone: each acts', async () => {
    const name = unique('Folder');
    const first = await postFolder({ name });
    const second = await postFolder({ name });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await foldersNamed(name)).toBe(2);
  });

  it('acts anew once the key expired, for the same request or another', async () => {
    const key = unique('expired');
    const name = unique('Folder');
    const first = await postFolder({ name }, key);
    expect(first.status).toBe(200);
    await t.sql(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    const again = await postFolder({ name }, key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await foldersNamed(name)).toBe(2);

    await t.sql(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    const otherName = unique('Folder');
    const otherRequest = await postFolder({ name: otherName }, key);
    expect(otherRequest.status).toBe(200);
    expect(await foldersNamed(otherName)).toBe(1);
  });

  it('answers 409 while the first request holds the key, and takes over a key whose holder died', async () => {
    const key = unique('lease');
    const name = unique('Folder');
    expect((await postFolder({ name }, key)).status).toBe(200);
    // As a request still running in another process leaves it.
    await t.sql(
      `UPDATE idempotency_keys SET state = 'in_progress', lease_until = now() + interval '1 hour' WHERE key = $1`,
      [key],
    );
    const busy = await postFolder({ name }, key);
    expect(busy.status).toBe(409);
    expectErrorShape(busy.body, 409, 'idempotency_key_in_progress');
    expect(busy.headers['retry-after']).toBe('1');

    // Another request under the key is refused all the same.
    expect((await postFolder({ name: unique('Folder') }, key)).status).toBe(422);

    // Its process died: the lease runs out, and the retry acts.
    await t.sql(`UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = $1`, [
      key,
    ]);
    const retried = await postFolder({ name }, key);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await foldersNamed(name)).toBe(2);
    const replayed = await postFolder({ name }, key);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(retried.text);
  });

  it('replays a SCIM create with its status, media type, Location and ETag, and refuses in SCIM’s error shape', async () => {
    const key = unique('scim');
    const userName = `${unique('scim')}@acme.test`;
    const create = (name: string) =>
      t
        .http()
        .post('/api/scim/v2/Users')
        .set(bearer(t.admin.token))
        .set(KEY, key)
        .set('Content-Type', 'application/scim+json')
        .send(
          JSON.stringify({
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
            userName: name,
            emails: [{ value: name, type: 'work', primary: true }],
            active: true,
          }),
        );
    const first = await create(userName);
    expect(first.status).toBe(201);
    const again = await create(userName);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    for (const header of ['content-type', 'location', 'etag'])
      expect({ header, value: again.headers[header] }).toEqual({ header, value: first.headers[header] });
    expect(again.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(again.text).toBe(first.text);
    const users = await t.sql(`SELECT 1 FROM users WHERE username = $1`, [userName]);
    expect(users).toHaveLength(1);

    const reused = await create(`${unique('scim')}@acme.test`);
    expect(reused.status).toBe(422);
    expect(JSON.parse(reused.text)).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '422',
      detail: expect.stringContaining('Idempotency-Key'),
    });
  });

  it('ignores the header on a public route (the embed session exchange)', async () => {
    const session = await t
      .http()
      .post('/api/v1/embed/generate-session')
      .set(bearer(t.admin.token))
      .send({ deploymentId, externalId: unique('viewer') });
    expect(session.status).toBe(200);
    const key = unique('public');
    const exchange = () =>
      t.http().post('/api/v1/embed/session/token').set(KEY, key).send({ sessionId: session.body.sessionId });
    const first = await exchange();
    expect(first.status).toBe(200);
    // The session is single-use: without a replay, the second exchange is refused.
    const second = await exchange();
    expect(second.status).not.toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(await t.sql(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key])).toEqual([]);
  });

  it('is pruned once expired, by a schedule made with the first key', async () => {
    expect(await t.app.get(JobSchedules).listByOwner('idempotency:prune')).toEqual([
      expect.objectContaining({ job: 'idempotency.prune', cron: '17 * * * *', accountId: null }),
    ]);
    const kept = unique('kept');
    const gone = unique('gone');
    expect((await postGroup({ name: unique('Group') }, kept)).status).toBe(200);
    expect((await postGroup({ name: unique('Group') }, gone)).status).toBe(200);
    await t.sql(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [
      gone,
    ]);
    await t.app.get(IdempotencyPrune).run();
    const left = await t.sql<{ key: string }>(`SELECT key FROM idempotency_keys WHERE key = ANY($1)`, [
      [kept, gone],
    ]);
    expect(left).toEqual([{ key: kept }]);
  });

  it('sits outermost on every @Audited() POST handler', () => {
    const discovery = t.app.get(DiscoveryService);
    const scanner = t.app.get(MetadataScanner);
    const missing: string[] = [];
    let posts = 0;
    for (const wrapper of discovery.getControllers()) {
      const proto = wrapper.metatype?.prototype as Record<string, object> | undefined;
      if (!proto) continue;
      for (const name of scanner.getAllMethodNames(proto)) {
        const handler = proto[name];
        if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.POST) continue;
        posts += 1;
        const first = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined)?.[0];
        if (!isAudited(handler) || first !== IdempotencyInterceptor) missing.push(`${wrapper.name}.${name}`);
      }
    }
    expect(posts).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  it('is documented on every POST taking a token and a parsed body, with its error codes', () => {
    const doc = t.app.get(OpenApiDocument).get();
    const excluded = new Set([
      'post /api/v1/embed/session/token',
      'post /build/api/v1/deployments/{deploymentId}/git/git-upload-pack',
      'post /build/api/v1/deployments/{deploymentId}/git/git-receive-pack',
    ]);
    const wrong: string[] = [];
    let documented = 0;
    for (const { method, path, op } of operations(doc)) {
      if (method !== 'post') continue;
      const where = `${method} ${path}`;
      const params = (op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean }>;
      const header = params.find((p) => p.in === 'header' && p.name === KEY);
      if (excluded.has(where)) {
        if (header) wrong.push(`${where}: documents the header`);
        continue;
      }
      documented += 1;
      if (!header || header.required) wrong.push(`${where}: no optional header`);
      const responses = op.responses as Record<string, { description?: string }>;
      for (const [status, code] of [
        ['400', 'invalid_idempotency_key'],
        ['409', 'idempotency_key_in_progress'],
        ['422', 'idempotency_key_reused'],
      ])
        if (!responses[status]?.description?.includes(`\`${code}\``))
          wrong.push(`${where}: no ${status} ${code}`);
    }
    expect(documented).toBeGreaterThan(40);
    expect(wrong).toEqual([]);

    // Merged with the codes the route answers itself, in the one error shape.
    const create = operations(doc).find((o) => o.method === 'post' && o.path === GROUPS)!;
    const conflict = (
      create.op.responses as Record<
        string,
        { content: Record<string, { examples: Record<string, unknown> }> }
      >
    )['409'];
    expect(Object.keys(conflict.content['application/json'].examples)).toEqual([
      'group_name_taken',
      'idempotency_key_in_progress',
    ]);
  });
});
