import { OUTBOUND_REFUSED } from '../../src/core/net/outbound-address.js';
import { WebhookDeliverJob } from '../../src/modules/webhooks/webhook-deliver.job.js';
import { WEBHOOK_DELIVER_JOB } from '../../src/modules/webhooks/webhook-jobs.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { TestJobs } from '../support/job-context.js';
import { newDeployment } from '../support/reports.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/**
 * The webhook routes (docs/webhooks.md): access, shapes, validation, the outbound rule on the URL,
 * and a delivery end to end: a folder created over HTTP, its `folder.created` POSTed to a receiver
 * on loopback that verifies the signatures and answers 500, then 200. Nothing consumes the queues:
 * each `webhook.deliver` job is run by calling its handler (test/support/job-context.ts). The
 * rules of retries, ordering, leases and disabling are tested in
 * test/service/webhooks.service.spec.ts.
 */
describe('webhooks: routes and deliveries', () => {
  let t: TestApp;
  let jobs: TestJobs;
  let receiver: WebhookReceiver;
  let other: Actor;
  let viewer: Actor;
  let dep: number;
  const admin = () => bearer(t.admin.token);
  const hooks = '/api/v1/webhooks';

  const ok = async (req: PromiseLike<{ status: number; body: Json }>, status = 200): Promise<Json> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const create = (body: Json, as = admin()) => ok(t.http().post(hooks).set(as).send(body), 200);
  const count = async (as = admin()) =>
    ((await ok(t.http().get(hooks).set(as).query({ first: 100 }))).items as Json[]).length;
  const deliveries = async (endpointId: string, query: Json = {}) =>
    ((await ok(t.http().get(`${hooks}/${endpointId}/deliveries`).set(admin()).query(query))).items as Json[])
      .slice()
      .reverse();
  const delivery = (endpointId: string, id: string) =>
    ok(t.http().get(`${hooks}/${endpointId}/deliveries/${id}`).set(admin()));
  /** One run of the delivery's `webhook.deliver` job, as a worker would run it. */
  const deliver = async (deliveryId: string) => {
    const run = await jobs.plain(WEBHOOK_DELIVER_JOB, { deliveryId }, (p) =>
      t.app.get(WebhookDeliverJob).deliver(p),
    );
    expect(run.status).toBe('succeeded');
  };
  /** The delivery's back-off has passed. */
  const due = (deliveryId: string) =>
    t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [
      deliveryId,
    ]);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // The receiver is on loopback, which this app may reach (OUTBOUND_ALLOWED_HOSTS); nothing else
    // private. Nothing relays the queue: jobs run when a test runs them.
    t = await startApp({
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      WEBHOOK_DISABLE_AFTER_FAILURES: '2',
    });
    jobs = new TestJobs(t.app);
    other = await newAccount(t, 'webhooks-other');
    viewer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    dep = await newDeployment(t, t.admin, 'Webhooks');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.clear();
    receiver.answer();
  });

  it('creates an endpoint, showing its secret once, and lists, reads, changes and deletes it', async () => {
    const created = await create({
      url: receiver.url('/crud'),
      events: ['folder.created', 'report.deleted'],
      description: 'Sales sync',
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      url: receiver.url('/crud'),
      description: 'Sales sync',
      events: ['folder.created', 'report.deleted'],
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
      createdBy: t.admin.userId,
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = created;
    expect(await ok(t.http().get(`${hooks}/${created.id}`).set(admin()))).toEqual(shown);
    const list = await ok(t.http().get(hooks).set(admin()));
    expect(list.items).toContainEqual(shown);
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(list.pageInfo).toEqual(expect.objectContaining({ hasNextPage: false }));

    const changed = await ok(
      t
        .http()
        .patch(`${hooks}/${created.id}`)
        .set(admin())
        .send({ events: ['*'], description: null, enabled: false }),
    );
    expect(changed).toMatchObject({
      events: ['*'],
      description: null,
      enabled: false,
      disabledReason: `Disabled by ${t.admin.email}`,
      disabledAt: expect.any(String),
      url: receiver.url('/crud'),
    });
    expect(changed).not.toHaveProperty('secret');
    const enabled = await ok(t.http().patch(`${hooks}/${created.id}`).set(admin()).send({ enabled: true }));
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });

    const rotated = await ok(t.http().post(`${hooks}/${created.id}/rotate-secret`).set(admin()).send({}));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(rotated.previousSecretExpiresAt).toEqual(expect.any(String));

    await t.http().delete(`${hooks}/${created.id}`).set(admin()).expect(204);
    const gone = await t.http().get(`${hooks}/${created.id}`).set(admin()).expect(404);
    expectErrorShape(gone.body, 404, 'webhook_not_found');
  });

  it('refuses private, loopback and metadata addresses the operator did not open, in neutral words', async () => {
    const before = await count();
    for (const url of [
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:8080/hook',
      'http://metadata.google.internal/computeMetadata/v1',
      'http://127.0.0.2/hook',
    ]) {
      const res = await t
        .http()
        .post(hooks)
        .set(admin())
        .send({ url, events: ['*'] });
      expectErrorShape(res.body, 400, 'invalid_webhook_url');
      expect({ url, message: res.body.message }).toEqual({ url, message: `url ${OUTBOUND_REFUSED}` });
    }
    for (const url of [
      'hooks.example.com/x',
      'ftp://hooks.example.com/x',
      'https://u:p@hooks.example.com/x',
    ]) {
      const res = await t
        .http()
        .post(hooks)
        .set(admin())
        .send({ url, events: ['*'] });
      expectErrorShape(res.body, 400, 'invalid_webhook_url');
    }
    // The address the operator opened (127.0.0.1) is taken.
    const opened = await create({ url: receiver.url('/opened'), events: ['*'] });
    const res = await t
      .http()
      .patch(`${hooks}/${opened.id}`)
      .set(admin())
      .send({ url: 'http://192.168.1.1/hook' });
    expectErrorShape(res.body, 400, 'invalid_webhook_url');
    expect((await ok(t.http().get(`${hooks}/${opened.id}`).set(admin()))).url).toBe(receiver.url('/opened'));
    expect(await count()).toBe(before + 1);
    await t.http().delete(`${hooks}/${opened.id}`).set(admin()).expect(204);
  });

  it('refuses bad input with 400, changing nothing', async () => {
    const before = await count();
    const bodies: Json[] = [
      { events: ['*'] },
      { url: receiver.url(), events: [] },
      { url: receiver.url(), events: ['folder.moved'] },
      { url: receiver.url(), events: ['*', 'folder.created'] },
      { url: receiver.url(), events: ['folder.created', 'folder.created'] },
      { url: receiver.url(), events: '*' },
      { url: receiver.url(), events: ['*'], description: 'x'.repeat(501) },
      { url: receiver.url(), events: ['*'], enabled: 'yes' },
      { url: receiver.url(), events: ['*'], secret: 'whsec_mine' },
    ];
    for (const body of bodies) {
      const res = await t.http().post(hooks).set(admin()).send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expectErrorShape(res.body, 400, 'validation_failed');
    }
    const endpoint = await create({ url: receiver.url('/bad'), events: ['*'] });
    for (const [method, path, body] of [
      ['patch', `${hooks}/${endpoint.id}`, { events: ['nope'] }],
      ['patch', `${hooks}/${endpoint.id}`, { url: '' }],
      ['patch', `${hooks}/x`, {}],
      ['post', `${hooks}/${endpoint.id}/rotate-secret`, { force: true }],
      ['get', `${hooks}/${endpoint.id}/deliveries?status=done`, undefined],
      ['get', `${hooks}/${endpoint.id}/deliveries?after=nonsense`, undefined],
      ['get', `${hooks}/${endpoint.id}/deliveries/0`, undefined],
      ['get', `${hooks}/${endpoint.id}/deliveries/99999999999999999999`, undefined],
      ['post', `${hooks}/${endpoint.id}/deliveries/1/redeliver`, { now: true }],
    ] as const) {
      const req = t.http()[method](path).set(admin());
      const res = await (body === undefined ? req : req.send(body));
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 400 });
      expectErrorShape(res.body, 400);
    }
    const unchanged = await ok(t.http().get(`${hooks}/${endpoint.id}`).set(admin()));
    expect(unchanged).toMatchObject({ events: ['*'], url: receiver.url('/bad') });
    expect(await count()).toBe(before + 1);
    await t.http().delete(`${hooks}/${endpoint.id}`).set(admin()).expect(204);
  });

  it('answers 401 without a token, 403 to a user who is not an admin, 404 for another account’s', async () => {
    const endpoint = await create({ url: receiver.url('/access'), events: ['*'] });
    const theirs = await create({ url: receiver.url('/theirs'), events: ['*'] }, bearer(other.token));
    const routes = (id: string): Array<['get' | 'post' | 'patch' | 'delete', string, Json?]> => [
      ['get', hooks],
      ['post', hooks, { url: receiver.url('/x'), events: ['*'] }],
      ['get', `${hooks}/${id}`],
      ['patch', `${hooks}/${id}`, { description: 'mine now' }],
      ['delete', `${hooks}/${id}`],
      ['post', `${hooks}/${id}/rotate-secret`, {}],
      ['get', `${hooks}/${id}/deliveries`],
      ['get', `${hooks}/${id}/deliveries/1`],
      ['post', `${hooks}/${id}/deliveries/1/redeliver`, {}],
    ];
    for (const [method, path, body] of routes(endpoint.id)) {
      const anonymous = await t.http()[method](path).send(body);
      expect({ method, path, status: anonymous.status }).toEqual({ method, path, status: 401 });
      expectErrorShape(anonymous.body, 401, 'unauthorized');
      const refused = await t.http()[method](path).set(bearer(viewer.token)).send(body);
      expect({ method, path, status: refused.status }).toEqual({ method, path, status: 403 });
      expectErrorShape(refused.body, 403, 'forbidden');
    }
    for (const [method, path, body] of routes(theirs.id).slice(2)) {
      const res = await t.http()[method](path).set(admin()).send(body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expectErrorShape(res.body, 404, 'webhook_not_found');
    }
    // Nothing of theirs changed, and they still have it.
    const still = await ok(t.http().get(`${hooks}/${theirs.id}`).set(bearer(other.token)));
    expect(still).toMatchObject({ description: null, url: receiver.url('/theirs') });
    expect(await count()).toBeGreaterThan(0);
    await t.http().delete(`${hooks}/${endpoint.id}`).set(admin()).expect(204);
    await t.http().delete(`${hooks}/${theirs.id}`).set(bearer(other.token)).expect(204);
  });

  describe('a folder created over HTTP, delivered to a receiver that answers 500, then 200', () => {
    let endpoint: Json;
    let otherEndpoint: Json;
    let folderId: number;
    let first: Json;

    beforeAll(async () => {
      endpoint = await create({ url: receiver.url('/folders'), events: ['folder.created'] });
      otherEndpoint = await create({ url: receiver.url('/other'), events: ['*'] }, bearer(other.token));
    });

    it('records the event and its delivery with the change', async () => {
      folderId = (
        await ok(t.http().post(`/api/v1/deployments/${dep}/folders`).set(admin()).send({ name: 'Sales' }))
      ).id as number;
      const [d, ...more] = await deliveries(endpoint.id);
      expect(more).toEqual([]);
      expect(d).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        endpointId: endpoint.id,
        eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        eventType: 'folder.created',
        resource: { type: 'folder', id: folderId },
        status: 'pending',
        attempts: 0,
        lastStatusCode: null,
        lastDurationMs: null,
        lastError: null,
        nextAttemptAt: expect.any(String),
        deliveredAt: null,
        redeliveryOf: null,
        createdAt: expect.any(String),
      });
      first = d;
      // Another account's endpoint hears nothing of it.
      const theirs = await ok(
        t.http().get(`${hooks}/${otherEndpoint.id}/deliveries`).set(bearer(other.token)),
      );
      expect(theirs.items).toEqual([]);
    });

    it('records the 500, sends again, records the 200, and the receiver verified both signatures', async () => {
      receiver.answer(500, 200);
      await deliver(first.id);
      const failed = await delivery(endpoint.id, first.id);
      expect(failed).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatusCode: 500,
        lastDurationMs: expect.any(Number),
        lastError: 'HTTP 500: receiver says: try later',
      });
      await due(first.id);
      await deliver(first.id);
      const done = await delivery(endpoint.id, first.id);
      expect(done).toMatchObject({ status: 'succeeded', attempts: 2, lastStatusCode: 200, lastError: null });
      expect(done.attemptLog).toEqual([
        {
          attempt: 1,
          at: expect.any(String),
          statusCode: 500,
          durationMs: expect.any(Number),
          error: 'HTTP 500: receiver says: try later',
        },
        { attempt: 2, at: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null },
      ]);
      expect(receiver.received.map((r) => [r.path, r.status])).toEqual([
        ['/folders', 500],
        ['/folders', 200],
      ]);
      for (const r of receiver.received) {
        expect(r.headers['webhook-id']).toBe(first.eventId);
        expect(receiver.verifies(r, endpoint.secret)).toBe(true);
        expect(JSON.parse(r.body)).toEqual(done.event);
      }
      expect(done.event).toEqual({
        id: first.eventId,
        type: 'folder.created',
        timestamp: expect.any(String),
        resource: { type: 'folder', id: folderId },
        data: expect.objectContaining({ id: folderId, name: 'Sales' }),
      });
    });

    it('sends nothing when the job runs a third time', async () => {
      await due(first.id);
      await deliver(first.id);
      expect(receiver.received).toEqual([]);
      expect((await delivery(endpoint.id, first.id)).attempts).toBe(2);
    });

    it('redelivers once more with the same webhook-id', async () => {
      const again = await ok(
        t.http().post(`${hooks}/${endpoint.id}/deliveries/${first.id}/redeliver`).set(admin()),
        200,
      );
      expect(again).toMatchObject({ redeliveryOf: first.id, eventId: first.eventId, status: 'pending' });
      await deliver(again.id);
      await deliver(again.id);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([first.eventId]);
      expect(receiver.verifies(receiver.received[0], endpoint.secret)).toBe(true);
      expect((await deliveries(endpoint.id, { status: 'succeeded' })).map((d) => d.id)).toEqual([
        first.id,
        again.id,
      ]);
      expect(await deliveries(endpoint.id, { eventType: 'folder.deleted' })).toEqual([]);
      const page = await ok(
        t.http().get(`${hooks}/${endpoint.id}/deliveries`).set(admin()).query({ first: 1 }),
      );
      expect(page.items.map((d: Json) => d.id)).toEqual([again.id]);
      const next = await ok(
        t
          .http()
          .get(`${hooks}/${endpoint.id}/deliveries`)
          .set(admin())
          .query({ first: 1, after: page.pageInfo.endCursor }),
      );
      expect(next.items.map((d: Json) => d.id)).toEqual([first.id]);
      // A delivery of another endpoint, or another account's, is not found through this one.
      const elsewhere = await t
        .http()
        .get(`${hooks}/${otherEndpoint.id}/deliveries/${first.id}`)
        .set(admin());
      expectErrorShape(elsewhere.body, 404, 'webhook_not_found');
      const spare = await create({ url: receiver.url('/spare'), events: ['*'] });
      const missing = await t.http().get(`${hooks}/${spare.id}/deliveries/${first.id}`).set(admin());
      expectErrorShape(missing.body, 404, 'webhook_delivery_not_found');
      const redeliverMissing = await t
        .http()
        .post(`${hooks}/${spare.id}/deliveries/${first.id}/redeliver`)
        .set(admin());
      expectErrorShape(redeliverMissing.body, 404, 'webhook_delivery_not_found');
      await t.http().delete(`${hooks}/${spare.id}`).set(admin()).expect(204);
    });

    it('signs with the new secret after a rotation, and with the old one too during the overlap', async () => {
      const rotated = await ok(t.http().post(`${hooks}/${endpoint.id}/rotate-secret`).set(admin()));
      await ok(t.http().post(`/api/v1/deployments/${dep}/folders`).set(admin()).send({ name: 'Ops' }));
      const latest = (await deliveries(endpoint.id)).at(-1)!;
      await deliver(latest.id);
      const [r] = receiver.received;
      expect(receiver.verifies(r, rotated.secret)).toBe(true);
      expect(receiver.verifies(r, endpoint.secret)).toBe(true);
      expect(JSON.parse(r.body)).toMatchObject({ type: 'folder.created', data: { name: 'Ops' } });
      endpoint = { ...endpoint, secret: rotated.secret };
    });

    it('disables the endpoint after 2 deliveries failed for good, and enabling it clears that', async () => {
      receiver.answerAlways(500);
      for (const name of ['Q1', 'Q2']) {
        await ok(t.http().post(`/api/v1/deployments/${dep}/folders`).set(admin()).send({ name }));
        const d = (await deliveries(endpoint.id)).at(-1)!;
        await deliver(d.id);
        // Its retry window (WEBHOOK_RETRY_HOURS) is over.
        await t.sql(
          `UPDATE webhook_deliveries SET first_attempt_at = now() - interval '25 hours',
             next_attempt_at = now() - interval '1 second' WHERE id = $1`,
          [d.id],
        );
        await deliver(d.id);
        expect((await delivery(endpoint.id, d.id)).status).toBe('failed');
      }
      const disabled = await ok(t.http().get(`${hooks}/${endpoint.id}`).set(admin()));
      expect(disabled).toMatchObject({
        enabled: false,
        consecutiveFailures: 2,
        disabledReason: expect.stringContaining('HTTP 500'),
        disabledAt: expect.any(String),
      });
      const refused = await t
        .http()
        .post(`${hooks}/${endpoint.id}/deliveries/${first.id}/redeliver`)
        .set(admin());
      expectErrorShape(refused.body, 409, 'webhook_disabled');
      // A disabled endpoint is given nothing new.
      const before = (await deliveries(endpoint.id)).length;
      await ok(t.http().post(`/api/v1/deployments/${dep}/folders`).set(admin()).send({ name: 'Q3' }));
      expect(await deliveries(endpoint.id)).toHaveLength(before);

      const enabled = await ok(
        t.http().patch(`${hooks}/${endpoint.id}`).set(admin()).send({ enabled: true }),
      );
      expect(enabled).toMatchObject({
        enabled: true,
        consecutiveFailures: 0,
        disabledReason: null,
        disabledAt: null,
      });
    });

    it('gave another account’s endpoint nothing of this account', async () => {
      const theirs = await ok(
        t.http().get(`${hooks}/${otherEndpoint.id}/deliveries`).set(bearer(other.token)),
      );
      expect(theirs.items).toEqual([]);
      const events = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`,
        [otherEndpoint.id],
      );
      expect(events[0].n).toBe(0);
    });
  });

  it('refuses an endpoint past WEBHOOK_MAX_ENDPOINTS with 409, writing nothing', async () => {
    const account = await newAccount(t, 'webhooks-many');
    const as = bearer(account.token);
    for (let i = 0; i < 20; i++) await create({ url: receiver.url(`/n${i}`), events: ['*'] }, as);
    const res = await t
      .http()
      .post(hooks)
      .set(as)
      .send({ url: receiver.url('/n20'), events: ['*'] });
    expectErrorShape(res.body, 409, 'webhook_limit_reached');
    expect(await count(as)).toBe(20);
  });
});
