import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';

export interface EnvironmentTokenRow {
  id: number;
  tokenSealed: string;
  securityContext: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date;
}

const COLUMNS = `id, token_sealed AS "tokenSealed", security_context AS "securityContext",
  created_at AS "createdAt", expires_at AS "expiresAt"`;

/** The `environment_tokens` table: tokens issued for an environment, kept until they expire. */
@Injectable()
export class DataApiTokensRepository {
  constructor(private readonly db: Database) {}

  /** Drops the environment's expired tokens; how many are left, and when the first of them expires. */
  async pruneAndCount(environmentId: number): Promise<{ count: number; firstExpiry: Date | null }> {
    await this.db.query(
      `DELETE FROM environment_tokens WHERE environment_id = :environmentId AND expires_at <= now()`,
      {
        environmentId,
      },
    );
    const [row] = await this.db.query<{ count: number; firstExpiry: Date | null }>(
      `SELECT count(*)::int AS count, min(expires_at) AS "firstExpiry" FROM environment_tokens
        WHERE environment_id = :environmentId`,
      { environmentId },
    );
    return row;
  }

  async insert(token: {
    accountId: number;
    environmentId: number;
    tokenSealed: string;
    securityContext: Record<string, unknown>;
    scopes: string[] | null;
    purpose: 'api' | 'meta-sync';
    createdBy: number | null;
    createdAt: Date;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO environment_tokens
         (account_id, environment_id, token_sealed, security_context, scopes, purpose, created_by, created_at, expires_at)
       VALUES (:accountId, :environmentId, :tokenSealed, :securityContext::jsonb, :scopes, :purpose, :createdBy,
               :createdAt, :expiresAt)`,
      { ...token, securityContext: JSON.stringify(token.securityContext) },
    );
  }

  /**
   * A page of the environment's tokens that have not expired, oldest first, with how many there
   * are in all. An empty page is one row with a null id.
   */
  page(q: {
    environmentId: number;
    afterId: number | null;
    limit: number;
    offset: number;
  }): Promise<Array<(EnvironmentTokenRow & { total: number }) | { id: null; total: number }>> {
    return this.db.query(
      `WITH live AS (
         SELECT * FROM environment_tokens WHERE environment_id = :environmentId AND expires_at > now()
       )
       SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM live) t
         LEFT JOIN LATERAL (
           SELECT ${COLUMNS} FROM live WHERE :afterId::int IS NULL OR id > :afterId::int
            ORDER BY id LIMIT :limit OFFSET :offset
         ) p ON TRUE`,
      q,
    );
  }
}
