import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { userJoin } from '../users/users.fragments.js';

/** An endpoint as the API shows it (never its secrets). */
export interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  consecutiveFailures: number;
  createdBy: number | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The sealed secrets of an endpoint, the previous one only while it still signs. */
export interface EndpointSecrets {
  secretSealed: string;
  previousSecretSealed: string | null;
}

/** A column of an endpoint to change, or undefined to keep it. */
export interface EndpointChanges {
  url?: string;
  description?: string | null;
  events?: string[];
  /** true: enabled, and the failure count, reason and time cleared; false: disabled for `disabledReason`. */
  enabled?: boolean;
  disabledReason?: string;
}

/** Whom to tell that an endpoint was disabled. */
export interface EndpointOwner {
  id: string;
  accountId: number;
  url: string;
  disabledReason: string | null;
  creatorEmail: string | null;
}

const ENDPOINT_COLUMNS = `e.id::text AS id, e.url, e.description, e.events, e.enabled,
  e.disabled_reason AS "disabledReason", ${isoSql('e.disabled_at')} AS "disabledAt",
  e.consecutive_failures AS "consecutiveFailures", e.created_by AS "createdBy",
  CASE WHEN e.previous_secret_expires_at > now() THEN ${isoSql('e.previous_secret_expires_at')} END
    AS "previousSecretExpiresAt",
  ${isoSql('e.created_at')} AS "createdAt", ${isoSql('e.updated_at')} AS "updatedAt"`;

/** All SQL on `webhook_endpoints`. Runs on the caller's unit of work when one is open. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Database) {}

  /**
   * Serialises the creates of one account until the unit of work ends, so two at once cannot both
   * pass the endpoint limit.
   */
  async lockAccount(accountId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `webhook-endpoints:${accountId}`,
    });
  }

  async count(accountId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = :accountId`,
      { accountId },
    );
    return row?.n ?? 0;
  }

  /** The id the next endpoint takes (its secret is sealed for it before the row is written). */
  async nextId(): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `SELECT nextval(pg_get_serial_sequence('webhook_endpoints', 'id'))::int AS id`,
    );
    return row!.id;
  }

  async insert(row: {
    id: number;
    accountId: number;
    url: string;
    description: string | null;
    events: string[];
    secretSealed: string;
    enabled: boolean;
    createdBy: number;
  }): Promise<EndpointRow> {
    const created = await this.db.one<EndpointRow>(
      `WITH e AS (
         INSERT INTO webhook_endpoints (id, account_id, url, description, events, secret_sealed, enabled,
           disabled_reason, disabled_at, created_by)
         VALUES (:id, :accountId, :url, :description, :events::text[], :secretSealed, :enabled,
           CASE WHEN :enabled THEN NULL ELSE 'Created disabled' END, CASE WHEN :enabled THEN NULL ELSE now() END,
           :createdBy)
         RETURNING *)
       SELECT ${ENDPOINT_COLUMNS} FROM e`,
      row,
    );
    return created!;
  }

  /** A page of the account's endpoints by id, after `afterId`. */
  page(accountId: number, afterId: number | null, limit: number): Promise<EndpointRow[]> {
    return this.db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e
       WHERE e.account_id = :accountId AND ${afterId === null ? 'TRUE' : 'e.id > :afterId'}
       ORDER BY e.id LIMIT :limit`,
      { accountId, limit, ...(afterId === null ? {} : { afterId }) },
    );
  }

  find(accountId: number, id: number): Promise<EndpointRow | undefined> {
    return this.db.one<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e WHERE e.account_id = :accountId AND e.id = :id`,
      { accountId, id },
    );
  }

  /** Locks the account's endpoint until the unit of work ends; false when there is none. */
  async lock(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM webhook_endpoints WHERE account_id = :accountId AND id = :id FOR UPDATE`,
      { accountId, id },
    );
    return rows.length > 0;
  }

  /**
   * Changes the endpoint. Enabling a disabled endpoint clears its failure count, reason and time;
   * disabling one records `disabledReason` and the time (an endpoint already disabled keeps both).
   */
  async update(accountId: number, id: number, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    const sets: string[] = [];
    const params: Record<string, unknown> = { accountId, id };
    if (changes.url !== undefined) {
      sets.push('url = :url');
      params.url = changes.url;
    }
    if (changes.description !== undefined) {
      sets.push('description = :description');
      params.description = changes.description;
    }
    if (changes.events !== undefined) {
      sets.push('events = :events::text[]');
      params.events = changes.events;
    }
    if (changes.enabled === true) {
      sets.push(
        'enabled = true',
        `disabled_reason = NULL`,
        `disabled_at = NULL`,
        `consecutive_failures = CASE WHEN enabled THEN consecutive_failures ELSE 0 END`,
      );
    } else if (changes.enabled === false) {
      sets.push(
        'enabled = false',
        `disabled_reason = CASE WHEN enabled THEN :disabledReason ELSE disabled_reason END`,
        `disabled_at = CASE WHEN enabled THEN now() ELSE disabled_at END`,
      );
      params.disabledReason = changes.disabledReason ?? 'Disabled';
    }
    sets.push('updated_at = now()');
    return this.db.one<EndpointRow>(
      `WITH e AS (
         UPDATE webhook_endpoints SET ${sets.join(', ')}
         WHERE account_id = :accountId AND id = :id RETURNING *)
       SELECT ${ENDPOINT_COLUMNS} FROM e`,
      params,
    );
  }

  async delete(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM webhook_endpoints WHERE account_id = :accountId AND id = :id RETURNING id`,
      { accountId, id },
    );
    return rows.length > 0;
  }

  /** The endpoint's sealed secrets (the previous one while it still signs). */
  secrets(accountId: number, id: number): Promise<EndpointSecrets | undefined> {
    return this.db.one<EndpointSecrets>(
      `SELECT secret_sealed AS "secretSealed",
         CASE WHEN previous_secret_expires_at > now() THEN previous_secret_sealed END AS "previousSecretSealed"
       FROM webhook_endpoints WHERE account_id = :accountId AND id = :id`,
      { accountId, id },
    );
  }

  /**
   * Replaces the secret: the current one becomes the previous one, signing beside the new one
   * for `overlapSeconds`.
   */
  async rotate(
    accountId: number,
    id: number,
    secretSealed: string,
    previousSealed: string,
    overlapSeconds: number,
  ): Promise<EndpointRow | undefined> {
    return this.db.one<EndpointRow>(
      `WITH e AS (
         UPDATE webhook_endpoints SET secret_sealed = :secretSealed, previous_secret_sealed = :previousSealed,
           previous_secret_expires_at = now() + make_interval(secs => :overlapSeconds), updated_at = now()
         WHERE account_id = :accountId AND id = :id RETURNING *)
       SELECT ${ENDPOINT_COLUMNS} FROM e`,
      { accountId, id, secretSealed, previousSealed, overlapSeconds },
    );
  }

  /** A delivery succeeded: the endpoint's run of failures is over. */
  async noteSuccess(id: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = :id AND consecutive_failures <> 0`,
      { id },
    );
  }

  /**
   * A delivery failed for good: counts it, and disables the endpoint for `reason` once `bound`
   * deliveries in a row failed. `disabledNow`: this call disabled it.
   */
  async noteFailure(
    id: number,
    bound: number,
    reason: string,
  ): Promise<{ consecutiveFailures: number; disabledNow: boolean } | undefined> {
    return this.db.one(
      `WITH old AS (SELECT id, enabled, consecutive_failures + 1 >= :bound AS bound_reached
         FROM webhook_endpoints WHERE id = :id FOR UPDATE)
       UPDATE webhook_endpoints e SET consecutive_failures = e.consecutive_failures + 1,
         enabled = e.enabled AND NOT old.bound_reached,
         disabled_reason = CASE WHEN e.enabled AND old.bound_reached THEN :reason ELSE e.disabled_reason END,
         disabled_at = CASE WHEN e.enabled AND old.bound_reached THEN now() ELSE e.disabled_at END,
         updated_at = CASE WHEN e.enabled AND old.bound_reached THEN now() ELSE e.updated_at END
       FROM old WHERE e.id = old.id
       RETURNING e.consecutive_failures AS "consecutiveFailures", old.enabled AND NOT e.enabled AS "disabledNow"`,
      { id, bound, reason },
    );
  }

  /** The endpoint and the address of the user who created it (null when gone or without one). */
  owner(id: number): Promise<EndpointOwner | undefined> {
    return this.db.one<EndpointOwner>(
      `SELECT e.id::text AS id, e.account_id AS "accountId", e.url, e.disabled_reason AS "disabledReason",
         u.email AS "creatorEmail"
       FROM webhook_endpoints e ${userJoin('e.created_by', 'u')}
       WHERE e.id = :id`,
      { id },
    );
  }
}
