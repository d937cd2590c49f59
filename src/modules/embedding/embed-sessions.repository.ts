import { Injectable } from '@nestjs/common';
import type { ActiveEmbedSession } from '../../core/auth/embed-token-store.js';
import { Database } from '../../core/database/database.js';

/** A session row as recorded by generate-session. */
export interface NewEmbedSession {
  accountId: number;
  tenantId: number;
  embedUserId: number;
  deploymentId: number;
  sessionHash: string;
  context: Record<string, unknown>;
  createdBy: number;
  ttlSeconds: number;
}

/** A session just exchanged for its token, with its tenant and embed user. */
export interface ExchangedSession {
  id: number;
  accountId: number;
  tenantName: string;
  embedUserId: number;
  externalId: string;
  deploymentId: number;
  context: Record<string, unknown>;
  exchangedAt: Date;
  tokenExpiresAt: Date;
}

/** SQL over `embed_sessions` (with their tenants and embed users for token verification). */
@Injectable()
export class EmbedSessionsRepository {
  constructor(private readonly db: Database) {}

  async insert(s: NewEmbedSession): Promise<void> {
    await this.db.query(
      `INSERT INTO embed_sessions (account_id, tenant_id, embed_user_id, deployment_id, session_hash, context,
         created_by, expires_at)
       VALUES (:accountId, :tenantId, :embedUserId, :deploymentId, :sessionHash, :context::jsonb,
         :createdBy, now() + make_interval(secs => :ttlSeconds))`,
      { ...s, context: JSON.stringify(s.context) },
    );
  }

  /** The account of the session with this hash (whatever its state), or undefined. */
  async accountOf(sessionHash: string): Promise<number | undefined> {
    const row = await this.db.one<{ accountId: number }>(
      `SELECT account_id AS "accountId" FROM embed_sessions WHERE session_hash = :sessionHash`,
      { sessionHash },
    );
    return row?.accountId;
  }

  /**
   * Marks the session exchanged when it is unused, unrevoked and unexpired, in one statement (of
   * parallel exchanges one wins), and starts its token's lifetime; undefined otherwise.
   */
  exchange(sessionHash: string, tokenTtlSeconds: number): Promise<ExchangedSession | undefined> {
    return this.db.one<ExchangedSession>(
      `UPDATE embed_sessions s SET exchanged_at = now(), token_expires_at = now() + make_interval(secs => :ttl)
       FROM embed_tenants t, embed_users u
       WHERE s.session_hash = :sessionHash AND s.exchanged_at IS NULL AND s.revoked_at IS NULL
         AND s.expires_at > now() AND t.id = s.tenant_id AND u.id = s.embed_user_id
       RETURNING s.id, s.account_id AS "accountId", t.name AS "tenantName", s.embed_user_id AS "embedUserId",
         u.external_id AS "externalId", s.deployment_id AS "deploymentId", s.context,
         s.exchanged_at AS "exchangedAt", s.token_expires_at AS "tokenExpiresAt"`,
      { sessionHash, ttl: tokenTtlSeconds },
    );
  }

  async revoke(sessionHash: string, accountId: number): Promise<void> {
    await this.db.query(
      `UPDATE embed_sessions SET revoked_at = now()
       WHERE session_hash = :sessionHash AND account_id = :accountId AND revoked_at IS NULL`,
      { sessionHash, accountId },
    );
  }

  activeSession(sessionId: number, accountId: number): Promise<ActiveEmbedSession | undefined> {
    return this.db.one<ActiveEmbedSession>(
      `SELECT s.tenant_id AS "tenantId", t.name AS "tenantName", s.embed_user_id AS "embedUserId",
              u.external_id AS "externalId", s.deployment_id AS "deploymentId", s.context
       FROM embed_sessions s
       JOIN embed_tenants t ON t.id = s.tenant_id
       JOIN embed_users u ON u.id = s.embed_user_id
       WHERE s.id = :sessionId AND s.account_id = :accountId AND s.revoked_at IS NULL
         AND s.exchanged_at IS NOT NULL AND s.token_expires_at > now()`,
      { sessionId, accountId },
    );
  }
}
