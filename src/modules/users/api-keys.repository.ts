import { Injectable } from '@nestjs/common';
import {
  PrincipalSource,
  type TokenPrincipalRow,
  type UserPrincipalRow,
} from '../../core/auth/principal-source.js';
import { Database } from '../../core/database/database.js';
import { TOKEN_SQL, TOUCH_KEY_SQL, USER_PRINCIPALS_SQL } from './token.sql.js';
import { PrincipalCache } from '../../core/auth/principal-cache.js';

export interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  userId: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

const COLUMNS = `id, name, token_prefix AS prefix, user_id AS "userId", created_at AS "createdAt",
  last_used_at AS "lastUsedAt", expires_at AS "expiresAt"`;

/**
 * All SQL on `api_keys`, and the token lookup of every authenticated request (core/auth's
 * {@link PrincipalSource}, over this module's tables in one round trip).
 */
@Injectable()
export class ApiKeysRepository implements PrincipalSource {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  async byTokenHash(tokenHash: string): Promise<TokenPrincipalRow | null> {
    return (await this.db.one<TokenPrincipalRow>(TOKEN_SQL, { tokenHash }, { prepare: true })) ?? null;
  }

  async touch(keyId: number): Promise<void> {
    await this.db.query(TOUCH_KEY_SQL, { keyId }, { prepare: true });
  }

  byUserIds(accountId: number, userIds: readonly number[]): Promise<UserPrincipalRow[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db.query<UserPrincipalRow>(USER_PRINCIPALS_SQL, { accountId, userIds: [...userIds] });
  }

  /** A page of the user's live keys by id, after `afterId`. */
  page(accountId: number, userId: number, afterId: number | null, limit: number): Promise<ApiKeyRow[]> {
    return this.db.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys
       WHERE account_id = :accountId AND user_id = :userId AND revoked_at IS NULL
         AND ${afterId === null ? 'TRUE' : 'id > :afterId'}
       ORDER BY id LIMIT :limit`,
      { accountId, userId, ...(afterId === null ? {} : { afterId }), limit },
    );
  }

  /** One live (not revoked) key of the user; undefined when there is none. */
  find(accountId: number, userId: number, id: number): Promise<ApiKeyRow | undefined> {
    return this.db.one<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys
       WHERE account_id = :accountId AND user_id = :userId AND id = :id AND revoked_at IS NULL`,
      { accountId, userId, id },
    );
  }

  async insert(key: {
    accountId: number;
    userId: number;
    name: string;
    tokenHash: string;
    tokenPrefix: string;
    expiresAt: Date | null;
  }): Promise<ApiKeyRow> {
    const row = await this.db.one<ApiKeyRow>(
      `INSERT INTO api_keys (account_id, user_id, name, token_hash, token_prefix, expires_at)
       VALUES (:accountId, :userId, :name, :tokenHash, :tokenPrefix, :expiresAt) RETURNING ${COLUMNS}`,
      key,
    );
    return row!;
  }

  /** Revokes one live key of the user; false when there is none. */
  async revoke(accountId: number, userId: number, id: number): Promise<boolean> {
    const rows = await this.principals.invalidatedBy(
      this.db.query(
        `UPDATE api_keys SET revoked_at = now()
       WHERE account_id = :accountId AND user_id = :userId AND id = :id AND revoked_at IS NULL RETURNING id`,
        { accountId, userId, id },
      ),
    );
    return rows.length > 0;
  }
}
