import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A delivery as the API lists it. */
export interface DeliveryRow {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  resource: { type: string; id: string | number };
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastDurationMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  redeliveryOf: string | null;
  createdAt: string;
}

export interface AttemptRow {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** A delivery with the event it carries and its attempts. */
export interface DeliveryDetailRow extends DeliveryRow {
  payload: Record<string, unknown>;
  attemptLog: AttemptRow[];
}

/** What an attempt needs, taken with the delivery's send lease ({@link WebhookDeliveriesRepository.claim}). */
export interface ClaimedDelivery {
  id: string;
  accountId: number;
  endpointId: number;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  eventPublicId: string;
  payload: Record<string, unknown>;
  resourceType: string;
  resourceId: string;
  /** Attempts recorded before this one: the compare-and-set token of its outcome. */
  attempts: number;
}

/** The outcome of one attempt, to record. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** A delivery due to be queued, with the account its job is run for. */
export interface DueDelivery {
  id: string;
  accountId: number;
}

/** A new event, with the deliveries it made (one per enabled endpoint of the account subscribed to it). */
export interface RecordedEvent {
  eventId: string;
  deliveries: DueDelivery[];
}

const DELIVERY_COLUMNS = `d.id::text AS id, d.endpoint_id::text AS "endpointId", ev.public_id AS "eventId",
  d.event_type AS "eventType", ev.payload -> 'resource' AS resource, d.status, d.attempts,
  d.last_status_code AS "lastStatusCode", d.last_duration_ms AS "lastDurationMs", d.last_error AS "lastError",
  ${isoSql('d.next_attempt_at')} AS "nextAttemptAt", ${isoSql('d.delivered_at')} AS "deliveredAt",
  d.redelivery_of::text AS "redeliveryOf", ${isoSql('d.created_at')} AS "createdAt"`;

/**
 * An older delivery of the same endpoint and resource is still pending (`d` waits behind it): one
 * probe of `ix_webhook_deliveries_pending_resource`.
 */
const WAITING = `EXISTS (SELECT 1 FROM webhook_deliveries o
  WHERE o.endpoint_id = d.endpoint_id AND o.resource_type = d.resource_type AND o.resource_id = d.resource_id
    AND o.status = 'pending' AND o.id < d.id)`;

/**
 * All SQL on `webhook_events`, `webhook_deliveries` and `webhook_delivery_attempts`. Runs on the
 * caller's unit of work when one is open.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly db: Database) {}

  /**
   * Records an event and, in the same statement, one pending delivery (due now) for each enabled
   * endpoint of the account subscribed to its type or to `*`. Fixed text, prepared: publishing is
   * on the write path of content changes.
   */
  async recordEvent(event: {
    publicId: string;
    accountId: number;
    type: string;
    resourceType: string;
    resourceId: string;
    payload: string;
    occurredAt: string;
  }): Promise<RecordedEvent> {
    const rows = await this.db.query<{ eventId: string; deliveryId: string | null }>(
      `WITH ev AS (
         INSERT INTO webhook_events (public_id, account_id, type, resource_type, resource_id, payload, occurred_at)
         VALUES (:publicId, :accountId, :type, :resourceType, :resourceId, :payload::jsonb, :occurredAt)
         RETURNING id, account_id, type, resource_type, resource_id),
       d AS (
         INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, event_type, resource_type, resource_id,
           next_attempt_at)
         SELECT ev.account_id, e.id, ev.id, ev.type, ev.resource_type, ev.resource_id, now()
         FROM ev JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.enabled
           AND (ev.type = ANY(e.events) OR '*' = ANY(e.events))
         ORDER BY e.id
         RETURNING id)
       SELECT ev.id::text AS "eventId", d.id::text AS "deliveryId" FROM ev LEFT JOIN d ON TRUE`,
      event,
      { prepare: true },
    );
    return {
      eventId: rows[0].eventId,
      deliveries: rows
        .filter((r) => r.deliveryId !== null)
        .map((r) => ({ id: r.deliveryId!, accountId: event.accountId })),
    };
  }

  /**
   * Takes a delivery for one attempt: leases it for `leaseMs` (`locked_until`) and answers what
   * the attempt sends, or nothing when the delivery is not to be sent now: it is finished, not due
   * yet, leased by another attempt, waiting behind an older pending delivery of the same endpoint
   * and resource, or its endpoint is disabled. A lease that ran out (its worker died) is taken over.
   */
  claim(deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | undefined> {
    return this.db.one<ClaimedDelivery>(
      `UPDATE webhook_deliveries d
       SET locked_until = now() + make_interval(secs => :leaseMs / 1000.0),
         first_attempt_at = COALESCE(d.first_attempt_at, now()), updated_at = now()
       FROM webhook_endpoints e, webhook_events ev
       WHERE d.id = :deliveryId AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.enabled
         AND d.status = 'pending' AND d.next_attempt_at <= now()
         AND (d.locked_until IS NULL OR d.locked_until < now())
         AND NOT ${WAITING}
       RETURNING d.id::text AS id, d.account_id AS "accountId", d.endpoint_id AS "endpointId", e.url,
         e.secret_sealed AS "secretSealed",
         CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_sealed END AS "previousSecretSealed",
         ev.public_id AS "eventPublicId", ev.payload, d.resource_type AS "resourceType",
         d.resource_id AS "resourceId", d.attempts`,
      { deliveryId, leaseMs },
    );
  }

  /**
   * Records attempt `attempts + 1` of a claimed delivery and its outcome, by compare-and-set on
   * `attempts` (an attempt is recorded once). A 2xx ends it `succeeded`; a failure schedules the
   * next attempt after `retryInSeconds`, or ends it `failed` once `retryHours` have passed since its
   * first attempt. A delivery another path ended meanwhile (its endpoint disabled) keeps its
   * status, unless this attempt succeeded. Answers the status before and after, or nothing when
   * another attempt recorded this one first.
   */
  async recordAttempt(
    claimed: Pick<ClaimedDelivery, 'id' | 'attempts'>,
    outcome: AttemptOutcome,
    retryInSeconds: number,
    retryHours: number,
  ): Promise<{ before: DeliveryStatus; after: DeliveryStatus } | undefined> {
    const attempt = claimed.attempts + 1;
    const inserted = await this.db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, at, status_code, duration_ms, error)
       VALUES (:id, :attempt, now(), :statusCode, :durationMs, :error)
       ON CONFLICT (delivery_id, attempt) DO NOTHING RETURNING attempt`,
      {
        id: claimed.id,
        attempt,
        statusCode: outcome.statusCode,
        durationMs: Math.max(0, Math.round(outcome.durationMs)),
        error: outcome.error,
      },
    );
    if (inserted.length === 0) return undefined;
    return this.db.one(
      `WITH old AS (
         SELECT id, status FROM webhook_deliveries WHERE id = :id AND attempts = :before FOR UPDATE),
       decided AS (
         SELECT d.id, old.status AS before,
           CASE WHEN :ok THEN 'succeeded'
             WHEN d.status <> 'pending' THEN d.status
             WHEN d.first_attempt_at + make_interval(hours => :retryHours) <= now() THEN 'failed'
             ELSE 'pending' END AS after
         FROM webhook_deliveries d JOIN old ON old.id = d.id)
       UPDATE webhook_deliveries d SET attempts = :attempt, status = decided.after, locked_until = NULL,
         last_status_code = :statusCode, last_duration_ms = :durationMs, last_error = :error,
         delivered_at = CASE WHEN :ok THEN now() ELSE d.delivered_at END,
         next_attempt_at = CASE WHEN decided.after = 'pending'
           THEN now() + make_interval(secs => :retryInSeconds) END,
         updated_at = now()
       FROM decided WHERE d.id = decided.id
       RETURNING decided.before, decided.after`,
      {
        id: claimed.id,
        before: claimed.attempts,
        attempt,
        ok: outcome.ok,
        retryHours,
        retryInSeconds,
        statusCode: outcome.statusCode,
        durationMs: Math.max(0, Math.round(outcome.durationMs)),
        error: outcome.error,
      },
    );
  }

  /** The oldest pending delivery of the endpoint about the resource (the next in line), if any. */
  nextInLine(endpointId: number, resourceType: string, resourceId: string): Promise<DueDelivery | undefined> {
    return this.db.one<DueDelivery>(
      `SELECT id::text AS id, account_id AS "accountId" FROM webhook_deliveries
       WHERE endpoint_id = :endpointId AND resource_type = :resourceType AND resource_id = :resourceId
         AND status = 'pending'
       ORDER BY id LIMIT 1`,
      { endpointId, resourceType, resourceId },
    );
  }

  /**
   * Pending deliveries that are due (their time came and no attempt holds a live lease), of
   * enabled endpoints, not waiting behind an older one: the retry sweep queues a job for each.
   */
  due(limit: number): Promise<DueDelivery[]> {
    return this.db.query<DueDelivery>(
      `SELECT d.id::text AS id, d.account_id AS "accountId" FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
       WHERE d.status = 'pending' AND d.next_attempt_at <= now()
         AND (d.locked_until IS NULL OR d.locked_until < now())
         AND NOT ${WAITING}
       ORDER BY d.next_attempt_at LIMIT :limit`,
      { limit },
    );
  }

  /** Ends the endpoint's pending deliveries as `failed` with `reason` (it was disabled). */
  async failPending(endpointId: number, reason: string): Promise<number> {
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = :reason,
         updated_at = now()
       WHERE endpoint_id = :endpointId AND status = 'pending' RETURNING id`,
      { endpointId, reason },
    );
    return rows.length;
  }

  /** A page of the endpoint's deliveries, newest first, after `afterId`. */
  page(
    endpointId: number,
    filter: { status?: DeliveryStatus; eventType?: string },
    afterId: number | null,
    limit: number,
  ): Promise<DeliveryRow[]> {
    return this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = :endpointId
         AND ${filter.status === undefined ? 'TRUE' : 'd.status = :status'}
         AND ${filter.eventType === undefined ? 'TRUE' : 'd.event_type = :eventType'}
         AND ${afterId === null ? 'TRUE' : 'd.id < :afterId'}
       ORDER BY d.id DESC LIMIT :limit`,
      {
        endpointId,
        limit,
        ...(filter.status === undefined ? {} : { status: filter.status }),
        ...(filter.eventType === undefined ? {} : { eventType: filter.eventType }),
        ...(afterId === null ? {} : { afterId }),
      },
    );
  }

  /** One delivery of the endpoint with its event and attempts. */
  find(endpointId: number, deliveryId: string): Promise<DeliveryDetailRow | undefined> {
    return this.db.one<DeliveryDetailRow>(
      `SELECT ${DELIVERY_COLUMNS}, ev.payload,
         COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', ${isoSql('a.at')},
             'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error) ORDER BY a.attempt)
           FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS "attemptLog"
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = :endpointId AND d.id = :deliveryId`,
      { endpointId, deliveryId },
    );
  }

  /** A new pending delivery (due now) of the same event to the same endpoint. */
  async redeliver(endpointId: number, deliveryId: string): Promise<DueDelivery | undefined> {
    return this.db.one<DueDelivery>(
      `INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, event_type, resource_type, resource_id,
         next_attempt_at, redelivery_of)
       SELECT d.account_id, d.endpoint_id, d.event_id, d.event_type, d.resource_type, d.resource_id, now(), d.id
       FROM webhook_deliveries d WHERE d.endpoint_id = :endpointId AND d.id = :deliveryId
       RETURNING id::text AS id, account_id AS "accountId"`,
      { endpointId, deliveryId },
    );
  }

  /**
   * Deletes finished deliveries created more than `days` ago, then the events of that age no
   * delivery points at any more, `batch` rows per statement. Answers how many of each went.
   */
  async prune(days: number, batch = 5000): Promise<{ deliveries: number; events: number }> {
    const drain = async (sql: string): Promise<number> => {
      let total = 0;
      for (;;) {
        const n = (await this.db.query(sql, { days, batch })).length;
        total += n;
        if (n < batch) return total;
      }
    };
    const deliveries = await drain(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE created_at < now() - make_interval(days => :days) AND status <> 'pending' LIMIT :batch)
       RETURNING id`,
    );
    const events = await drain(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT ev.id FROM webhook_events ev
         WHERE ev.occurred_at < now() - make_interval(days => :days)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id) LIMIT :batch)
       RETURNING id`,
    );
    return { deliveries, events };
  }
}
