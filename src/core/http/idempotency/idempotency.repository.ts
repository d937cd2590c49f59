import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../crypto/secret-box.service.js';
import { Database } from '../../database/database.js';

/** An answer as kept: replayed to every repeat of its request. */
export interface StoredAnswer {
  status: number;
  /** Lower-case header names (`content-type`, `location`, `etag`). */
  headers: Record<string, string>;
  /** UTF-8 text; null for an answer without a body. */
  body: string | null;
}

/** What claiming a key found. */
export type ClaimOutcome =
  /** The request holds the key (new, expired, or left by a process whose lease ran out): it acts. */
  | { kind: 'claimed'; claim: string }
  /** The same request was answered: its answer. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The key belongs to another request (another method, path, caller or body). */
  | { kind: 'reused' }
  /** The same request is still being processed. */
  | { kind: 'in_progress' };

export interface ClaimTimes {
  /** How long the key is kept from now, ms. */
  ttlMs: number;
  /** How long the claim holds without being renewed, ms. */
  leaseMs: number;
}

/** Where a claim stands. */
export interface HeldKey {
  accountId: number;
  key: string;
  claim: string;
}

/** What a kept body is sealed to: its account and key, so a body cannot be replayed under another. */
const sealContext = (accountId: number, key: string) => `idempotency:${accountId}:${key}`;

/** Keys deleted per statement by {@link IdempotencyRepository.prune}. */
const PRUNE_BATCH = 1_000;

/**
 * All SQL on `idempotency_keys`. Every statement runs on its own (outside any unit of work): a
 * claim must be seen by concurrent requests at once, and a kept answer must not depend on the
 * fate of a transaction. Times are the database's (`now()`), one clock for every process.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBoxService,
  ) {}

  /**
   * Claims `key` for a request, or says who has it. One statement claims it: a new key is
   * inserted; an existing one is taken over, with a compare-and-set under the row's lock, only
   * when it expired (whatever request it was for) or when the same request left it in progress
   * with its lease run out (its process died). Otherwise the row is read: another fingerprint is
   * another request; a completed row is replayed; anything else is still in progress.
   */
  async claim(accountId: number, key: string, fingerprint: string, times: ClaimTimes): Promise<ClaimOutcome> {
    // A row released or pruned between the two statements is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = randomUUID();
      const won = await this.db.one<{ claim: string }>(
        `INSERT INTO idempotency_keys AS k (account_id, key, fingerprint, state, claim, expires_at, lease_until)
         VALUES (:accountId, :key, :fingerprint, 'in_progress', :claim,
                 now() + :ttlMs::float8 * interval '1 millisecond', now() + :leaseMs::float8 * interval '1 millisecond')
         ON CONFLICT (account_id, key) DO UPDATE SET
           fingerprint = EXCLUDED.fingerprint, state = 'in_progress', claim = EXCLUDED.claim,
           response_status = NULL, response_headers = NULL, response_body = NULL, created_at = now(),
           expires_at = EXCLUDED.expires_at, lease_until = EXCLUDED.lease_until
         WHERE k.expires_at <= now()
            OR (k.state = 'in_progress' AND k.lease_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)
         RETURNING claim`,
        { accountId, key, fingerprint, claim, ttlMs: times.ttlMs, leaseMs: times.leaseMs },
      );
      if (won) return { kind: 'claimed', claim };
      const row = await this.db.one<{
        fingerprint: string;
        state: string;
        status: number | null;
        headers: Record<string, string> | null;
        body: string | null;
      }>(
        `SELECT fingerprint, state, response_status AS status, response_headers AS headers, response_body AS body
           FROM idempotency_keys WHERE account_id = :accountId AND key = :key`,
        { accountId, key },
      );
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { kind: 'reused' };
      if (row.state === 'completed' && row.status !== null)
        return {
          kind: 'replay',
          answer: {
            status: row.status,
            headers: row.headers ?? {},
            body:
              row.body === null
                ? null
                : this.box.open(row.body, sealContext(accountId, key)).toString('utf8'),
          },
        };
      return { kind: 'in_progress' };
    }
    return { kind: 'in_progress' };
  }

  /** Keeps the answer of the request holding the claim; false when the claim was lost (taken over). */
  async complete(held: HeldKey, answer: StoredAnswer): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE idempotency_keys SET state = 'completed', response_status = :status,
         response_headers = :headers::jsonb, response_body = :body, lease_until = NULL
       WHERE account_id = :accountId AND key = :key AND claim = :claim AND state = 'in_progress'
       RETURNING 1`,
      {
        ...held,
        status: answer.status,
        headers: JSON.stringify(answer.headers),
        // Sealed: a create's answer may hold a secret shown once (a new API key's token).
        body: answer.body === null ? null : this.box.seal(answer.body, sealContext(held.accountId, held.key)),
      },
    );
    return rows.length > 0;
  }

  /** Gives the key up (an answer not kept): the next request with it acts. */
  async release(held: HeldKey): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_keys
       WHERE account_id = :accountId AND key = :key AND claim = :claim AND state = 'in_progress'`,
      { ...held },
    );
  }

  /** Moves the lease of an in-progress claim `leaseMs` ahead; false when the claim was lost. */
  async renew(held: HeldKey, leaseMs: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE idempotency_keys SET lease_until = now() + :leaseMs::float8 * interval '1 millisecond'
       WHERE account_id = :accountId AND key = :key AND claim = :claim AND state = 'in_progress'
       RETURNING 1`,
      { ...held, leaseMs },
    );
    return rows.length > 0;
  }

  /** Deletes every expired key, in batches; returns how many. */
  async prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.db.query(
        `DELETE FROM idempotency_keys WHERE (account_id, key) IN (
           SELECT account_id, key FROM idempotency_keys WHERE expires_at <= now() LIMIT :batch)
         RETURNING 1`,
        { batch: PRUNE_BATCH },
      );
      total += rows.length;
      if (rows.length < PRUNE_BATCH) return total;
    }
  }
}
