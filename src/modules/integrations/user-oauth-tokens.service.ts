import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { isoSql, queryRows } from '../../core/database/sql.js';
import type { OAuthErrorDto, UserOAuthTokenDto } from './dto/user-oauth-token.dto.js';
import { integrationsError } from './integrations.errors.js';
import type { TokenSet } from './oauth-token-client.js';

/** Whose connection: one user, one integration, one account. */
export interface TokenOwner {
  accountId: number;
  userId: number;
  integrationId: number;
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

/** Tokens are sealed for their (account, user, integration): a copied ciphertext does not open. */
const tokenContext = (o: TokenOwner, kind: 'access-token' | 'refresh-token') =>
  `user-oauth-token:${o.accountId}:${o.userId}:${o.integrationId}:${kind}`;

/** The caller's own connections to the account's integrations, and how the callback records them. */
@Injectable()
export class UserOAuthTokensService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SecretBoxService,
  ) {}

  list(actor: Principal): Promise<UserOAuthTokenDto[]> {
    return queryRows<UserOAuthTokenDto>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM user_oauth_tokens t
       WHERE t.account_id = $1 AND t.user_id = $2 ORDER BY t.integration_id`,
      [actor.accountId, actor.userId],
    );
  }

  async get(actor: Principal, integrationId: number): Promise<UserOAuthTokenDto> {
    const [row] = await this.find({ accountId: actor.accountId, userId: actor.userId, integrationId });
    if (!row) throw notFound(integrationId);
    return row;
  }

  /** Forgets the caller's tokens for the integration and abandons its pending authorizations. */
  async revoke(actor: Principal, integrationId: number): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const rows = await queryRows<{ id: number }>(
        m,
        `DELETE FROM user_oauth_tokens WHERE account_id = $1 AND user_id = $2 AND integration_id = $3 RETURNING id`,
        [actor.accountId, actor.userId, integrationId],
      );
      if (rows.length === 0) throw notFound(integrationId);
      await m.query(
        `DELETE FROM oauth_states WHERE account_id = $1 AND user_id = $2 AND integration_id = $3`,
        [actor.accountId, actor.userId, integrationId],
      );
    });
  }

  /** Stores the tokens of a successful exchange (sealed) over whatever the row held. */
  async saveTokens(owner: TokenOwner, tokens: TokenSet): Promise<UserOAuthTokenDto | null> {
    return this.upsert(owner, {
      accessToken: this.secrets.seal(tokens.accessToken, tokenContext(owner, 'access-token')),
      refreshToken:
        tokens.refreshToken === null
          ? null
          : this.secrets.seal(tokens.refreshToken, tokenContext(owner, 'refresh-token')),
      tokenType: tokens.tokenType,
      scope: tokens.scope,
      expiresIn: tokens.expiresIn,
      refreshTokenExpiresIn: tokens.refreshTokenExpiresIn,
      status: 'active',
      lastError: null,
    });
  }

  /** Records a failed authorization: the row then describes that attempt and holds no token. */
  async saveError(owner: TokenOwner, error: OAuthErrorDto): Promise<UserOAuthTokenDto | null> {
    return this.upsert(owner, {
      accessToken: null,
      refreshToken: null,
      tokenType: null,
      scope: null,
      expiresIn: null,
      refreshTokenExpiresIn: null,
      status: 'error',
      lastError: error,
    });
  }

  /** The opened access token of an active connection (for the features that call the provider). */
  async accessToken(owner: TokenOwner): Promise<string | null> {
    const [row] = await queryRows<{ accessToken: string | null }>(
      this.dataSource,
      `SELECT access_token AS "accessToken" FROM user_oauth_tokens
       WHERE account_id = $1 AND user_id = $2 AND integration_id = $3 AND status = 'active'`,
      [owner.accountId, owner.userId, owner.integrationId],
    );
    return row?.accessToken
      ? this.secrets.open(row.accessToken, tokenContext(owner, 'access-token')).toString('utf8')
      : null;
  }

  /**
   * One statement per outcome, unique on (user, integration), so parallel callbacks leave one row.
   * Null when the user or the integration no longer exists.
   */
  private async upsert(
    owner: TokenOwner,
    v: {
      accessToken: string | null;
      refreshToken: string | null;
      tokenType: string | null;
      scope: string | null;
      expiresIn: number | null;
      refreshTokenExpiresIn: number | null;
      status: 'active' | 'error';
      lastError: OAuthErrorDto | null;
    },
  ): Promise<UserOAuthTokenDto | null> {
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `INSERT INTO user_oauth_tokens (account_id, user_id, integration_id, access_token, refresh_token, token_type,
         scope, access_token_expires_at, refresh_token_expires_at, status, last_error)
       SELECT $1, $2, $3, $4, $5, $6, $7,
         now() + make_interval(secs => $8::double precision), now() + make_interval(secs => $9::double precision),
         $10, $11::jsonb
       WHERE EXISTS (SELECT 1 FROM users WHERE id = $2 AND account_id = $1)
         AND EXISTS (SELECT 1 FROM oauth_integrations WHERE id = $3 AND account_id = $1)
       ON CONFLICT (user_id, integration_id) DO UPDATE SET
         access_token = EXCLUDED.access_token, refresh_token = EXCLUDED.refresh_token,
         token_type = EXCLUDED.token_type, scope = EXCLUDED.scope,
         access_token_expires_at = EXCLUDED.access_token_expires_at,
         refresh_token_expires_at = EXCLUDED.refresh_token_expires_at,
         status = EXCLUDED.status, last_error = EXCLUDED.last_error, updated_at = now()
       RETURNING id`,
      [
        owner.accountId,
        owner.userId,
        owner.integrationId,
        v.accessToken,
        v.refreshToken,
        v.tokenType,
        v.scope,
        v.expiresIn,
        v.refreshTokenExpiresIn,
        v.status,
        v.lastError === null ? null : JSON.stringify(v.lastError),
      ],
    );
    if (rows.length === 0) return null;
    const [row] = await this.find(owner);
    return row ?? null;
  }

  private find(owner: TokenOwner): Promise<UserOAuthTokenDto[]> {
    return queryRows<UserOAuthTokenDto>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM user_oauth_tokens t
       WHERE t.account_id = $1 AND t.user_id = $2 AND t.integration_id = $3`,
      [owner.accountId, owner.userId, owner.integrationId],
    );
  }
}

const notFound = (integrationId: number) =>
  integrationsError('oauth_token_not_found', `You have no token for OAuth integration ${integrationId}`);
