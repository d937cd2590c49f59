import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import type { OAuthErrorDto, UserOAuthTokenDto } from './dto/user-oauth-token.dto.js';
import { integrationsError } from './oauth.errors.js';
import type { TokenSet } from './oauth-token-client.js';
import {
  UserOAuthTokensRepository,
  type TokenOwner,
  type TokenWrite,
} from './user-oauth-tokens.repository.js';

export type { TokenOwner } from './user-oauth-tokens.repository.js';

/** Tokens are sealed for their (account, user, integration): a copied ciphertext does not open. */
const tokenContext = (o: TokenOwner, kind: 'access-token' | 'refresh-token') =>
  `user-oauth-token:${o.accountId}:${o.userId}:${o.integrationId}:${kind}`;

/** The caller's own connections to the account's integrations, and how the callback records them. */
@Injectable()
export class UserOAuthTokensService {
  constructor(
    private readonly db: Database,
    private readonly tokens: UserOAuthTokensRepository,
    private readonly secrets: SecretBoxService,
  ) {}

  list(actor: Principal): Promise<UserOAuthTokenDto[]> {
    return this.tokens.list(actor.accountId, actor.userId);
  }

  async get(actor: Principal, integrationId: number): Promise<UserOAuthTokenDto> {
    const row = await this.tokens.find({ accountId: actor.accountId, userId: actor.userId, integrationId });
    if (!row) throw notFound(integrationId);
    return row;
  }

  /** Forgets the caller's tokens for the integration and abandons its pending authorizations. */
  async revoke(actor: Principal, integrationId: number): Promise<void> {
    const owner: TokenOwner = { accountId: actor.accountId, userId: actor.userId, integrationId };
    await this.db.transaction(async () => {
      if (!(await this.tokens.delete(owner))) throw notFound(integrationId);
      await this.tokens.deleteStates(owner);
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
      lastError: JSON.stringify(error),
    });
  }

  /** The opened access token of an active connection (for the features that call the provider). */
  async accessToken(owner: TokenOwner): Promise<string | null> {
    const sealed = await this.tokens.sealedAccessToken(owner);
    return sealed ? this.secrets.open(sealed, tokenContext(owner, 'access-token')).toString('utf8') : null;
  }

  /** Null when the user or the integration no longer exists. */
  private async upsert(owner: TokenOwner, v: TokenWrite): Promise<UserOAuthTokenDto | null> {
    if (!(await this.tokens.upsert(owner, v))) return null;
    return (await this.tokens.find(owner)) ?? null;
  }
}

const notFound = (integrationId: number) =>
  integrationsError('oauth_token_not_found', `You have no token for OAuth integration ${integrationId}`);
