import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { userInAccountSql } from '../users/users.fragments.js';
import type { UserOAuthTokenDto } from './dto/user-oauth-token.dto.js';

/** Whose connection: one user, one integration, one account. */
export interface TokenOwner {
  accountId: number;
  userId: number;
  integrationId: number;
}

/** The outcome of an authorization as stored; the tokens already sealed. */
export interface TokenWrite {
  accessToken: string | null;
  refreshToken: string | null;
  tokenType: string | null;
  scope: string | null;
  expiresIn: number | null;
  refreshTokenExpiresIn: number | null;
  status: 'active' | 'error';
  /** JSON text, or null. */
  lastError: string | null;
}

/** A pending authorization as initiate records it; the code verifier already sealed. */
export interface NewOAuthState extends TokenOwner {
  stateHash: string;
  codeVerifier: string;
  redirectUri: string;
  ttlSeconds: number;
}

/** A pending authorization as the callback consumes it. */
export interface ConsumedOAuthState extends TokenOwner {
  codeVerifier: string;
  redirectUri: string;
  live: boolean;
}

/** `expired` is computed: the access token is past its expiry and no usable refresh token is left. */
const COLUMNS = `t.id, t.user_id AS "userId", t.integration_id AS "integrationId",
  CASE WHEN t.status = 'active' AND t.access_token_expires_at <= now()
         AND (t.refresh_token IS NULL OR t.refresh_token_expires_at <= now())
       THEN 'expired' ELSE t.status END AS status,
  t.last_error AS "lastError",
  ${isoSql('t.access_token_expires_at')} AS "accessTokenExpiresAt",
  ${isoSql('t.refresh_token_expires_at')} AS "refreshTokenExpiresAt",
  ${isoSql('t.created_at')} AS "createdAt", ${isoSql('t.updated_at')} AS "updatedAt"`;

/** SQL over `user_oauth_tokens` and the pending authorizations of the flow, `oauth_states`. */
@Injectable()
export class UserOAuthTokensRepository {
  constructor(private readonly db: Database) {}

  list(accountId: number, userId: number): Promise<UserOAuthTokenDto[]> {
    return this.db.query<UserOAuthTokenDto>(
      `SELECT ${COLUMNS} FROM user_oauth_tokens t
       WHERE t.account_id = :accountId AND t.user_id = :userId ORDER BY t.integration_id`,
      { accountId, userId },
    );
  }

  find(o: TokenOwner): Promise<UserOAuthTokenDto | undefined> {
    return this.db.one<UserOAuthTokenDto>(
      `SELECT ${COLUMNS} FROM user_oauth_tokens t
       WHERE t.account_id = :accountId AND t.user_id = :userId AND t.integration_id = :integrationId`,
      { accountId: o.accountId, userId: o.userId, integrationId: o.integrationId },
    );
  }

  /** The sealed access token of an active connection. */
  async sealedAccessToken(o: TokenOwner): Promise<string | null> {
    const row = await this.db.one<{ accessToken: string | null }>(
      `SELECT access_token AS "accessToken" FROM user_oauth_tokens
       WHERE account_id = :accountId AND user_id = :userId AND integration_id = :integrationId AND status = 'active'`,
      { accountId: o.accountId, userId: o.userId, integrationId: o.integrationId },
    );
    return row?.accessToken ?? null;
  }

  async delete(o: TokenOwner): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM user_oauth_tokens
       WHERE account_id = :accountId AND user_id = :userId AND integration_id = :integrationId RETURNING id`,
      { accountId: o.accountId, userId: o.userId, integrationId: o.integrationId },
    );
    return rows.length > 0;
  }

  /**
   * One statement, unique on (user, integration), so parallel callbacks leave one row. False when
   * the user or the integration no longer exists in the account.
   */
  async upsert(o: TokenOwner, v: TokenWrite): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO user_oauth_tokens (account_id, user_id, integration_id, access_token, refresh_token, token_type,
         scope, access_token_expires_at, refresh_token_expires_at, status, last_error)
       SELECT :accountId, :userId, :integrationId, :accessToken, :refreshToken, :tokenType, :scope,
         now() + make_interval(secs => :expiresIn::double precision),
         now() + make_interval(secs => :refreshTokenExpiresIn::double precision),
         :status, :lastError::jsonb
       WHERE ${userInAccountSql(':userId', ':accountId')}
         AND EXISTS (SELECT 1 FROM oauth_integrations WHERE id = :integrationId AND account_id = :accountId)
       ON CONFLICT (user_id, integration_id) DO UPDATE SET
         access_token = EXCLUDED.access_token, refresh_token = EXCLUDED.refresh_token,
         token_type = EXCLUDED.token_type, scope = EXCLUDED.scope,
         access_token_expires_at = EXCLUDED.access_token_expires_at,
         refresh_token_expires_at = EXCLUDED.refresh_token_expires_at,
         status = EXCLUDED.status, last_error = EXCLUDED.last_error, updated_at = now()
       RETURNING id`,
      { accountId: o.accountId, userId: o.userId, integrationId: o.integrationId, ...v },
    );
    return rows.length > 0;
  }

  /** Records a pending authorization; returns when it expires. */
  async insertState(s: NewOAuthState): Promise<Date> {
    const row = await this.db.one<{ expiresAt: Date }>(
      `INSERT INTO oauth_states (account_id, user_id, integration_id, state_hash, code_verifier, redirect_uri, expires_at)
       VALUES (:accountId, :userId, :integrationId, :stateHash, :codeVerifier, :redirectUri,
         now() + make_interval(secs => :ttlSeconds))
       RETURNING expires_at AS "expiresAt"`,
      { ...s },
    );
    return row!.expiresAt;
  }

  /** Drops the user's expired pending authorizations, and any past the newest `keep`. */
  async pruneStates(userId: number, keep: number): Promise<void> {
    await this.db.query(
      `DELETE FROM oauth_states WHERE user_id = :userId AND (expires_at <= now() OR id IN (
         SELECT id FROM oauth_states WHERE user_id = :userId ORDER BY created_at DESC, id DESC OFFSET :keep))`,
      { userId, keep },
    );
  }

  /** Deletes the pending authorization with this state hash and returns it (one statement: used once). */
  consumeState(stateHash: string): Promise<ConsumedOAuthState | undefined> {
    return this.db.one<ConsumedOAuthState>(
      `DELETE FROM oauth_states WHERE state_hash = :stateHash
       RETURNING account_id AS "accountId", user_id AS "userId", integration_id AS "integrationId",
         code_verifier AS "codeVerifier", redirect_uri AS "redirectUri", expires_at > now() AS live`,
      { stateHash },
    );
  }

  /** Abandons the user's pending authorizations of the integration. */
  async deleteStates(o: TokenOwner): Promise<void> {
    await this.db.query(
      `DELETE FROM oauth_states WHERE account_id = :accountId AND user_id = :userId AND integration_id = :integrationId`,
      { accountId: o.accountId, userId: o.userId, integrationId: o.integrationId },
    );
  }
}
