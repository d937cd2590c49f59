import type { Principal } from '../../src/core/auth/principal.js';
import { Database } from '../../src/core/database/database.js';
import { DomainEvents, type EventType } from '../../src/core/events/domain-events.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import { NOTHING_ALLOWED, OUTBOUND_REFUSED } from '../../src/core/net/outbound-address.js';
import type { WebhookDeliveryDetailDto } from '../../src/modules/webhooks/dto/webhook-delivery.dto.js';
import type { CreateWebhookEndpointDto } from '../../src/modules/webhooks/dto/webhook.dto.js';
import { WebhookDeliverJob } from '../../src/modules/webhooks/webhook-deliver.job.js';
import { WebhookDeliveriesService } from '../../src/modules/webhooks/webhook-deliveries.service.js';
import { WEBHOOK_DELIVER_JOB } from '../../src/modules/webhooks/webhook-jobs.js';
import { WebhookMaintenance } from '../../src/modules/webhooks/webhook-maintenance.job.js';
import { WebhookSender } from '../../src/modules/webhooks/webhook-sender.js';
import { WebhooksService } from '../../src/modules/webhooks/webhooks.service.js';
import type { Actor } from '../support/app.js';
import { TestJobs } from '../support/job-context.js';
import { expectApiError, startServiceApp, type ServiceApp } from '../support/service.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The rules of webhook deliveries below HTTP (docs/webhooks.md): events published in a unit of
 * work, one delivery per subscribed endpoint, each `webhook.deliver` job run by calling its handler
 * (test/support/job-context.ts), POSTed to a real receiver on loopback that verifies signatures
 * with the `standardwebhooks` package. Time is not waited for: a retry's time, a lease's end or a
 * retry window's end are reached by moving the delivery's timestamps back.
 */
describe('webhook deliveries', () => {
  let s: ServiceApp;
  let receiver: WebhookReceiver;
  let sink: SmtpSink;
  let jobs: TestJobs;
  const principals = new Map<string, Principal>();

  const principal = async (actor: Actor) => {
    let p = principals.get(actor.email);
    if (!p) principals.set(actor.email, (p = await s.make.principal(actor)));
    return p;
  };
  const webhooks = () => s.app.get(WebhooksService);
  const deliveryLog = () => s.app.get(WebhookDeliveriesService);

  /** A new account with an endpoint at the receiver (`path` tells its requests apart). */
  const setUp = async (fields: Partial<CreateWebhookEndpointDto> = {}, path = '/hook') => {
    const actor = await s.make.account();
    const endpoint = await webhooks().create(await principal(actor), {
      url: receiver.url(path),
      events: ['*'],
      ...fields,
    });
    return { actor, endpoint, id: Number(endpoint.id) };
  };
  const publish = (accountId: number, type: EventType, resource: { type: string; id: number | string }) =>
    s.app
      .get(Database)
      .transaction(() =>
        s.app
          .get(DomainEvents)
          .publish({ accountId, type, resource, data: { name: `${type} ${resource.id}` } }),
      );
  /** The endpoint's deliveries, oldest first. */
  const deliveries = async (actor: Actor, endpointId: number) =>
    (await deliveryLog().list(await principal(actor), endpointId, { first: 1000 })).items.reverse();
  const detail = async (actor: Actor, endpointId: number, id: string): Promise<WebhookDeliveryDetailDto> =>
    deliveryLog().get(await principal(actor), endpointId, id);
  /** One run of the delivery's `webhook.deliver` job, as its queue would run it. */
  const deliver = async (deliveryId: string) => {
    const run = await jobs.plain(WEBHOOK_DELIVER_JOB, { deliveryId }, (p) =>
      s.app.get(WebhookDeliverJob).deliver(p),
    );
    expect(run.status).toBe('succeeded');
  };
  /** The delivery's next attempt is due now (its back-off passed). */
  const due = (deliveryId: string) =>
    s.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [
      deliveryId,
    ]);
  /** The delivery's retry window is over: its first attempt was made longer ago than WEBHOOK_RETRY_HOURS. */
  const windowOver = (deliveryId: string) =>
    s.sql(
      `UPDATE webhook_deliveries SET first_attempt_at = now() - interval '25 hours',
         next_attempt_at = now() - interval '1 second' WHERE id = $1`,
      [deliveryId],
    );
  /** The `webhook.deliver` jobs recorded and not run (pending or handed to the queue), by delivery id. */
  const queuedJobs = async (): Promise<string[]> =>
    (
      await s.sql<{ deliveryId: string }>(
        `SELECT payload->>'deliveryId' AS "deliveryId" FROM job_outbox
         WHERE name = 'webhook.deliver' AND status IN ('pending', 'dispatched') ORDER BY id`,
      )
    ).map((r) => r.deliveryId);
  /** Marks every recorded `webhook.deliver` job done, as a worker running them would. */
  const drainJobs = () =>
    s.sql(`UPDATE job_outbox SET status = 'done' WHERE name = 'webhook.deliver' AND status <> 'done'`);

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startWebhookReceiver();
    s = await startServiceApp({
      // The receiver listens on loopback: this app may connect there, as an operator could allow.
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      // Nothing relays the queue: jobs are recorded, and run here by calling their handler.
      OUTBOX_RELAY_INTERVAL_MS: '600000',
      WEBHOOK_DISABLE_AFTER_FAILURES: '3',
      WEBHOOK_TIMEOUT_MS: '2000',
      ...sink.env,
    });
    jobs = new TestJobs(s.app);
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    await sink?.close();
  });
  beforeEach(async () => {
    receiver.clear();
    receiver.answer();
    await drainJobs();
  });

  it('records an event with no delivery for an account without endpoints, in the unit of work', async () => {
    const actor = await s.make.account();
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 1 });
    // A rolled-back change publishes nothing.
    await expect(
      s.app.get(Database).transaction(async () => {
        await s.app.get(DomainEvents).publish({
          accountId: actor.accountId,
          type: 'folder.deleted',
          resource: { type: 'folder', id: 1 },
          data: {},
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const events = await s.sql<{ type: string; n: number }>(
      `SELECT ev.type, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = ev.id) AS n
       FROM webhook_events ev WHERE ev.account_id = $1`,
      [actor.accountId],
    );
    expect(events).toEqual([{ type: 'folder.created', n: 0 }]);
    expect(await queuedJobs()).toEqual([]);
  });

  it('sends a 500 again after its back-off, records both attempts, and never sends after the 2xx', async () => {
    const { actor, endpoint, id } = await setUp({ events: ['folder.created'] });
    receiver.answer(500, 200);
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 11 });
    // Another type: the endpoint does not subscribe to it.
    await publish(actor.accountId, 'folder.changed', { type: 'folder', id: 11 });
    const [d] = await deliveries(actor, id);
    expect(await deliveries(actor, id)).toHaveLength(1);
    expect(await queuedJobs()).toEqual([d.id]);
    await drainJobs();

    await deliver(d.id);
    expect(receiver.received.map((r) => r.status)).toEqual([500]);
    const failed = await detail(actor, id, d.id);
    expect(failed).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'HTTP 500: receiver says: try later',
      deliveredAt: null,
    });
    expect(failed.lastDurationMs).toEqual(expect.any(Number));
    // The next attempt is 30 s after the first.
    const wait = Date.parse(failed.nextAttemptAt!) - Date.parse(failed.attemptLog[0].at);
    expect(wait).toBeGreaterThanOrEqual(29_000);
    expect(wait).toBeLessThanOrEqual(31_000);

    // Run again before its time: nothing is sent.
    await deliver(d.id);
    expect(receiver.received).toHaveLength(1);

    await due(d.id);
    await deliver(d.id);
    const done = await detail(actor, id, d.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
    });
    expect(done.attemptLog).toEqual([
      {
        attempt: 1,
        at: expect.any(String),
        statusCode: 500,
        durationMs: expect.any(Number),
        error: failed.lastError,
      },
      { attempt: 2, at: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null },
    ]);

    // Both POSTs: the same event id, the same body, signed with the endpoint's secret.
    const [first, second] = receiver.received;
    for (const r of [first, second]) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe(done.eventId);
      expect(receiver.verifies(r, endpoint.secret)).toBe(true);
      expect(r.body).toBe(first.body);
    }
    expect(JSON.parse(first.body)).toEqual(done.event);
    expect(done.event).toEqual({
      id: done.eventId,
      type: 'folder.created',
      timestamp: expect.any(String),
      resource: { type: 'folder', id: 11 },
      data: { name: 'folder.created 11' },
    });
    expect(first.body.startsWith(`{"id":"${done.eventId}","type":"folder.created","timestamp":`)).toBe(true);

    // A third run, or the retry sweep, sends nothing.
    await due(d.id);
    await deliver(d.id);
    await s.app.get(WebhookMaintenance).retryDue();
    expect(await queuedJobs()).toEqual([]);
    expect(receiver.received).toHaveLength(2);
  });

  it('sends once when two runs of the job race', async () => {
    const { actor, id } = await setUp();
    await publish(actor.accountId, 'report.created', { type: 'report', id: 3 });
    const [d] = await deliveries(actor, id);
    await Promise.all([deliver(d.id), deliver(d.id), deliver(d.id)]);
    expect(receiver.received).toHaveLength(1);
    expect((await detail(actor, id, d.id)).attemptLog).toHaveLength(1);
  });

  it('sends again a delivery whose worker died mid-send, once its lease ran out', async () => {
    const { actor, endpoint, id } = await setUp();
    await publish(actor.accountId, 'workbook.created', { type: 'workbook', id: 5 });
    const [d] = await deliveries(actor, id);
    // What a worker killed after taking the delivery and before recording an answer leaves behind.
    await s.sql(
      `UPDATE webhook_deliveries SET locked_until = now() + interval '40 seconds', first_attempt_at = now()
       WHERE id = $1`,
      [d.id],
    );
    // While the lease holds, another run leaves it to the worker that may still be sending it.
    await deliver(d.id);
    await s.app.get(WebhookMaintenance).retryDue();
    expect(receiver.received).toHaveLength(0);
    await drainJobs();

    // The lease ran out: the retry sweep queues it again, and it is sent.
    await s.sql(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [
      d.id,
    ]);
    await s.app.get(WebhookMaintenance).retryDue();
    expect(await queuedJobs()).toEqual([d.id]);
    await deliver(d.id);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.verifies(receiver.received[0], endpoint.secret)).toBe(true);
    expect(await detail(actor, id, d.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('sends the deliveries of one resource in order, and others past a failing one', async () => {
    const { actor, id } = await setUp();
    receiver.answer(500);
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 21 });
    await publish(actor.accountId, 'folder.changed', { type: 'folder', id: 21 });
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 22 });
    const [first, second, other] = await deliveries(actor, id);
    await drainJobs();

    await deliver(first.id);
    // The second waits behind the first (still pending); another folder's does not.
    await deliver(second.id);
    await deliver(other.id);
    expect(
      receiver.received.map((r) => [
        receiver.event(r).type,
        (receiver.event(r).resource as { id: number }).id,
      ]),
    ).toEqual([
      ['folder.created', 21],
      ['folder.created', 22],
    ]);
    expect((await detail(actor, id, second.id)).attempts).toBe(0);
    await s.app.get(WebhookMaintenance).retryDue();
    expect(await queuedJobs()).toEqual([]);

    // The first succeeds: the second is queued at once, and goes.
    await due(first.id);
    await deliver(first.id);
    expect(await queuedJobs()).toEqual([second.id]);
    await deliver(second.id);
    expect(receiver.received.map((r) => receiver.event(r).type)).toEqual([
      'folder.created',
      'folder.created',
      'folder.created',
      'folder.changed',
    ]);
    expect((await deliveries(actor, id)).map((d) => d.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });

  it('gives up after WEBHOOK_RETRY_HOURS, and disables the endpoint after 3 deliveries failed in a row', async () => {
    const { actor, id } = await setUp();
    receiver.answerAlways(503);
    for (const n of [1, 2, 3, 4]) await publish(actor.accountId, 'report.changed', { type: 'report', id: n });
    const list = await deliveries(actor, id);

    // The first fails for good once its retry window is over; the endpoint counts it.
    await deliver(list[0].id);
    await windowOver(list[0].id);
    await deliver(list[0].id);
    expect(await detail(actor, id, list[0].id)).toMatchObject({
      status: 'failed',
      attempts: 2,
      nextAttemptAt: null,
      lastStatusCode: 503,
    });
    expect((await webhooks().get(await principal(actor), id)).consecutiveFailures).toBe(1);

    for (const d of list.slice(1, 3)) {
      await deliver(d.id);
      await windowOver(d.id);
      await deliver(d.id);
    }
    const disabled = await webhooks().get(await principal(actor), id);
    expect(disabled).toMatchObject({
      enabled: false,
      consecutiveFailures: 3,
      disabledAt: expect.any(String),
      disabledReason: expect.stringMatching(/^3 deliveries in a row failed .*HTTP 503/),
    });
    // Its pending delivery is not sent; nothing new is recorded for it.
    expect(await detail(actor, id, list[3].id)).toMatchObject({
      status: 'failed',
      attempts: 0,
      lastError: 'Not sent: the endpoint was disabled',
    });
    const sent = receiver.received.length;
    await deliver(list[3].id);
    await publish(actor.accountId, 'report.changed', { type: 'report', id: 9 });
    expect(await deliveries(actor, id)).toHaveLength(4);
    expect(receiver.received).toHaveLength(sent);

    // Its creator is told, once.
    const [mail, ...more] = await sink.waitForMessages(1).then(() => sink.messagesTo(actor.email));
    expect(more).toEqual([]);
    expect(mail.subject).toBe(`Webhook endpoint ${id} was disabled`);
    expect(mail.text).toContain(disabled.disabledReason!);

    // Enabling it clears the count and the reason; a success would too.
    const enabled = await webhooks().update(await principal(actor), id, { enabled: true });
    expect(enabled).toMatchObject({
      enabled: true,
      consecutiveFailures: 0,
      disabledReason: null,
      disabledAt: null,
    });
  });

  it('resets the failure count on a success', async () => {
    const { actor, id } = await setUp();
    receiver.answer(500, 200);
    await publish(actor.accountId, 'dashboard.created', { type: 'dashboard', id: 1 });
    await publish(actor.accountId, 'dashboard.created', { type: 'dashboard', id: 2 });
    const [a, b] = await deliveries(actor, id);
    await deliver(a.id);
    await windowOver(a.id);
    receiver.answerAlways(500);
    await deliver(a.id);
    expect((await webhooks().get(await principal(actor), id)).consecutiveFailures).toBe(1);
    receiver.answer(200);
    await deliver(b.id);
    expect((await webhooks().get(await principal(actor), id)).consecutiveFailures).toBe(0);
  });

  it('signs with the new and the previous secret for 24 hours after a rotation', async () => {
    const { actor, endpoint, id } = await setUp();
    const rotated = await webhooks().rotateSecret(await principal(actor), id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    const overlap = Date.parse(rotated.previousSecretExpiresAt!) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);

    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 31 });
    const [d] = await deliveries(actor, id);
    await deliver(d.id);
    const [during] = receiver.received;
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(receiver.verifies(during, rotated.secret)).toBe(true);
    expect(receiver.verifies(during, endpoint.secret)).toBe(true);

    // The overlap is over: the new secret alone signs.
    await s.sql(
      `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    expect((await webhooks().get(await principal(actor), id)).previousSecretExpiresAt).toBeNull();
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 32 });
    const [, d2] = await deliveries(actor, id);
    await deliver(d2.id);
    const after = receiver.received[1];
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(receiver.verifies(after, rotated.secret)).toBe(true);
    expect(receiver.verifies(after, endpoint.secret)).toBe(false);
  });

  it('redelivers an event as a new delivery with the same webhook-id, whatever became of the first', async () => {
    const { actor, endpoint, id } = await setUp();
    await publish(actor.accountId, 'build.finished', { type: 'build', id: 'b-1' });
    const [d] = await deliveries(actor, id);
    await deliver(d.id);
    await drainJobs();
    const again = await deliveryLog().redeliver(await principal(actor), id, d.id);
    expect(again).toMatchObject({ status: 'pending', attempts: 0, redeliveryOf: d.id, eventId: d.eventId });
    expect(await queuedJobs()).toEqual([again.id]);
    await deliver(again.id);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([d.eventId, d.eventId]);
    expect(receiver.received[1].body).toBe(receiver.received[0].body);
    expect(receiver.verifies(receiver.received[1], endpoint.secret)).toBe(true);
    expect((await detail(actor, id, d.id)).attempts).toBe(1);
    expect((await detail(actor, id, again.id)).status).toBe('succeeded');

    // Not for a disabled endpoint, nor for another account's delivery.
    await webhooks().update(await principal(actor), id, { enabled: false });
    await expectApiError(deliveryLog().redeliver(await principal(actor), id, d.id), 409, 'webhook_disabled');
    const stranger = await s.make.account();
    await expectApiError(
      deliveryLog().redeliver(await principal(stranger), id, d.id),
      404,
      'webhook_not_found',
    );
  });

  it('records nothing for an endpoint deleted while its delivery was being sent', async () => {
    const { actor, id } = await setUp();
    await publish(actor.accountId, 'folder.created', { type: 'folder', id: 51 });
    const [d] = await deliveries(actor, id);
    receiver.beforeAnswer(async () => webhooks().remove(await principal(actor), id));
    try {
      await deliver(d.id);
    } finally {
      receiver.beforeAnswer(null);
    }
    expect(receiver.received).toHaveLength(1);
    const rows = await s.sql(`SELECT id FROM webhook_deliveries WHERE id = $1`, [d.id]);
    expect(rows).toEqual([]);
  });

  it('delivers an account’s events to its own endpoints only', async () => {
    const mine = await setUp({}, '/mine');
    const theirs = await setUp({}, '/theirs');
    await publish(mine.actor.accountId, 'scim.user_deprovisioned', { type: 'user', id: 4 });
    expect(await deliveries(theirs.actor, theirs.id)).toEqual([]);
    const [d] = await deliveries(mine.actor, mine.id);
    await deliver(d.id);
    expect(receiver.received.map((r) => r.path)).toEqual(['/mine']);
  });

  it('records no answer within WEBHOOK_TIMEOUT_MS as a failed attempt', async () => {
    const { actor, id } = await setUp();
    receiver.answer('hang');
    await publish(actor.accountId, 'deployment.changed', { type: 'deployment', id: 8 });
    const [d] = await deliveries(actor, id);
    await deliver(d.id);
    expect(await detail(actor, id, d.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'No answer within 2 s',
    });
  });

  it('connects to no address the outbound rule refuses, and says so in neutral words', async () => {
    // The same sender with the operator's allow-list empty (the default): loopback is refused.
    const sender = new WebhookSender({ ...s.config, outboundAllowList: NOTHING_ALLOWED } as AppConfig);
    const result = await sender.post(receiver.url('/refused'), '{}', {});
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      error: `The endpoint's URL ${OUTBOUND_REFUSED}`,
    });
    expect(receiver.received).toEqual([]);
    // A redirect is not followed: it is a failure.
    const followed = new WebhookSender(s.config);
    receiver.answer(302);
    expect(await followed.post(receiver.url('/moved'), '{}', {})).toMatchObject({
      ok: false,
      statusCode: 302,
    });
    expect(receiver.received).toHaveLength(1);
  });

  it('prunes finished deliveries and unreferenced events past WEBHOOK_RETENTION_DAYS', async () => {
    const { actor, id } = await setUp();
    await publish(actor.accountId, 'folder.deleted', { type: 'folder', id: 41 });
    await publish(actor.accountId, 'folder.deleted', { type: 'folder', id: 42 });
    const [old, pending] = await deliveries(actor, id);
    await deliver(old.id);
    await s.sql(
      `UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE endpoint_id = $1`,
      [id],
    );
    await s.sql(`UPDATE webhook_events SET occurred_at = now() - interval '31 days' WHERE account_id = $1`, [
      actor.accountId,
    ]);
    await s.app.get(WebhookMaintenance).prune();
    // The finished one went with its event; the pending one stays, and its event with it.
    expect((await deliveries(actor, id)).map((d) => d.id)).toEqual([pending.id]);
    const events = await s.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1`,
      [actor.accountId],
    );
    expect(events[0].n).toBe(1);
  });

  it('refuses a 21st endpoint of an account (WEBHOOK_MAX_ENDPOINTS)', async () => {
    const actor = await s.make.account();
    const p = await principal(actor);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        webhooks().create(p, { url: receiver.url(`/n${i}`), events: ['*'] }),
      ),
    );
    await expectApiError(
      webhooks().create(p, { url: receiver.url('/n20'), events: ['*'] }),
      409,
      'webhook_limit_reached',
    );
    expect((await webhooks().list(p, { first: 100 })).items).toHaveLength(20);
  });
});
