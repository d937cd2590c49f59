import { bearer, type Actor, type TestApp } from './app.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/** An event as a webhook delivery carries it (`GET /api/v1/webhooks/{id}/deliveries/{deliveryId}`). */
export interface PublishedEvent {
  id: string;
  type: string;
  timestamp: string;
  resource: { type: string; id: string | number };
  data: Json;
}

/** `type resource:id`: what an event is about, whether the id was published as a number or text. */
export const eventKey = (e: Pick<PublishedEvent, 'type' | 'resource'>): string =>
  `${e.type} ${e.resource.type}:${String(e.resource.id)}`;

/**
 * Observes what an account publishes, through the webhooks API alone (docs/webhooks.md): an
 * endpoint of the account subscribed to every event type, whose deliveries are read back; nothing
 * is sent (the test app relays no job). `next()` answers the events published since the last call,
 * oldest first.
 */
export class EventTap {
  private readonly seen = new Set<string>();

  private constructor(
    private readonly t: TestApp,
    private readonly admin: Actor,
    readonly endpointId: string,
  ) {}

  /**
   * An endpoint of `admin`'s account subscribed to `*`, at an address the test app's
   * `OUTBOUND_ALLOWED_HOSTS` opens (nothing listens there: nothing is sent).
   */
  static async open(t: TestApp, admin: Actor, url = 'https://127.0.0.1:9/hook'): Promise<EventTap> {
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(admin.token))
      .send({ url, events: ['*'], description: 'every event, for a test' });
    if (res.status !== 200) throw new Error(`webhook endpoint: ${res.status} ${JSON.stringify(res.body)}`);
    return new EventTap(t, admin, String(res.body.id));
  }

  /** Every delivery of the endpoint, oldest first. */
  async deliveries(): Promise<Json[]> {
    const all: Json[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await this.t
        .http()
        .get(`/api/v1/webhooks/${this.endpointId}/deliveries`)
        .query({ first: 1000, ...(after ? { after } : {}) })
        .set(bearer(this.admin.token));
      if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${JSON.stringify(res.body)}`);
      all.push(...(res.body.items as Json[]));
      if (!res.body.pageInfo?.hasNextPage) break;
      after = res.body.pageInfo.endCursor as string;
    }
    // Newest first as listed; the order they were recorded in is the reverse.
    return all.reverse();
  }

  /** The events published since the previous call (or since the tap was opened), oldest first. */
  async next(): Promise<PublishedEvent[]> {
    const fresh = (await this.deliveries()).filter((d) => !this.seen.has(String(d.id)));
    const events: PublishedEvent[] = [];
    for (const delivery of fresh) {
      this.seen.add(String(delivery.id));
      const res = await this.t
        .http()
        .get(`/api/v1/webhooks/${this.endpointId}/deliveries/${delivery.id}`)
        .set(bearer(this.admin.token));
      if (res.status !== 200) throw new Error(`delivery: ${res.status} ${JSON.stringify(res.body)}`);
      const event = res.body.event as PublishedEvent;
      // The listing says the same of the event as the delivery carries.
      expect({ type: delivery.eventType, resource: delivery.resource }).toEqual({
        type: event.type,
        resource: event.resource,
      });
      events.push(event);
    }
    return events;
  }

  /** Asserts that nothing was published since the previous call. */
  async expectNone(): Promise<void> {
    expect((await this.next()).map(eventKey)).toEqual([]);
  }

  /**
   * Asserts the events published since the previous call (`type resource:id` each, in any order:
   * one change may publish several) and answers them by that key.
   */
  async expectExactly(expected: string[]): Promise<Map<string, PublishedEvent>> {
    const events = await this.next();
    expect(events.map(eventKey).sort()).toEqual([...expected].sort());
    return new Map(events.map((e) => [eventKey(e), e]));
  }

  /**
   * Asserts that exactly one event was published since the previous call, of `type` about
   * `resource`, and answers it.
   */
  async expectOne(type: string, resource: { type: string; id: string | number }): Promise<PublishedEvent> {
    const events = await this.next();
    expect(events.map(eventKey)).toEqual([eventKey({ type, resource })]);
    return events[0];
  }
}
