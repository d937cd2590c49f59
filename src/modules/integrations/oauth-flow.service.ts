import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { coreError } from '../../core/http/api-error.js';
import { queryRows } from '../../core/database/sql.js';
import type { InitiateOAuthFlowResponseDto, UserOAuthTokenDto } from './dto/user-oauth-token.dto.js';
import { integrationsError } from './integrations.errors.js';
import { OAuthIntegrationsService } from './oauth-integrations.service.js';
import { OAuthTokenClient, OAuthTokenExchangeError } from './oauth-token-client.js';
import { codeChallenge, hashState, newCodeVerifier, newState, STATE_PATTERN } from './pkce.js';
import { UserOAuthTokensService, type TokenOwner } from './user-oauth-tokens.service.js';

/** How long an authorization may take, from initiate to callback. */
export const STATE_TTL_SECONDS = 10 * 60;
/** Pending authorizations kept per user; older ones are dropped. */
export const MAX_PENDING_PER_USER = 20;

/** What the provider sends back to the callback (RFC 6749 4.1.2 and 4.1.2.1). */
export interface CallbackParams {
  state: string;
  code: string | null;
  error: string | null;
  errorDescription: string | null;
}

interface PendingAuthorization extends TokenOwner {
  codeVerifier: string;
  redirectUri: string;
  live: boolean;
}

const verifierContext = (stateHash: string) => `oauth-state:${stateHash}:code-verifier`;

/**
 * The authorization-code flow with PKCE (RFC 6749 4.1, RFC 7636): initiate records a pending
 * authorization and builds the provider URL; the callback consumes it once and exchanges the
 * code for tokens.
 */
@Injectable()
export class OAuthFlowService {
  private readonly logger = new Logger(OAuthFlowService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SecretBoxService,
    private readonly integrations: OAuthIntegrationsService,
    private readonly tokens: UserOAuthTokensService,
    private readonly client: OAuthTokenClient,
  ) {}

  async initiate(actor: Principal, integrationId: number): Promise<InitiateOAuthFlowResponseDto> {
    const integration = await this.integrations.authorizationTarget(actor.accountId, integrationId);
    if (!integration) {
      throw integrationsError(
        'oauth_integration_not_found',
        `OAuth integration ${integrationId} was not found`,
      );
    }
    const state = newState();
    const stateHash = hashState(state);
    const verifier = newCodeVerifier();
    const [{ expiresAt }] = await this.dataSource.transaction(async (m) => {
      const inserted = await queryRows<{ expiresAt: Date }>(
        m,
        `INSERT INTO oauth_states (account_id, user_id, integration_id, state_hash, code_verifier, redirect_uri, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
         RETURNING expires_at AS "expiresAt"`,
        [
          actor.accountId,
          actor.userId,
          integrationId,
          stateHash,
          this.secrets.seal(verifier, verifierContext(stateHash)),
          integration.redirectUri,
          STATE_TTL_SECONDS,
        ],
      );
      // Housekeeping: the user's expired authorizations, and any past the newest few.
      await m.query(
        `DELETE FROM oauth_states WHERE user_id = $1 AND (expires_at <= now() OR id IN (
           SELECT id FROM oauth_states WHERE user_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2))`,
        [actor.userId, MAX_PENDING_PER_USER],
      );
      return inserted;
    });
    const url = new URL(integration.authUrl);
    const params: Array<[string, string | null]> = [
      ['response_type', 'code'],
      ['client_id', integration.clientId],
      ['redirect_uri', integration.redirectUri],
      ['scope', integration.scopes.length > 0 ? integration.scopes.join(' ') : null],
      ['state', state],
      ['code_challenge', codeChallenge(verifier)],
      ['code_challenge_method', 'S256'],
    ];
    for (const [name, value] of params) {
      if (value === null) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
    }
    return { authorizationUrl: url.toString(), state, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * Consumes the state (one statement: of parallel callbacks with one state, exactly one goes on),
   * then records the provider's refusal or exchanges the code.
   */
  async callback(params: CallbackParams): Promise<UserOAuthTokenDto> {
    const invalidState = () =>
      integrationsError(
        'invalid_oauth_state',
        'The state is unknown, already used or expired; start the authorization again',
      );
    if (!STATE_PATTERN.test(params.state)) throw invalidState();
    const stateHash = hashState(params.state);
    const [pending] = await queryRows<PendingAuthorization>(
      this.dataSource,
      `DELETE FROM oauth_states WHERE state_hash = $1
       RETURNING account_id AS "accountId", user_id AS "userId", integration_id AS "integrationId",
         code_verifier AS "codeVerifier", redirect_uri AS "redirectUri", expires_at > now() AS live`,
      [stateHash],
    );
    if (!pending?.live) throw invalidState();
    const owner: TokenOwner = {
      accountId: pending.accountId,
      userId: pending.userId,
      integrationId: pending.integrationId,
    };

    if (params.error !== null) {
      await this.tokens.saveError(owner, { error: params.error, errorDescription: params.errorDescription });
      throw integrationsError(
        'oauth_authorization_denied',
        `The provider did not grant the authorization: ${params.error}`,
      );
    }

    const integration = await this.integrations.credentials(owner.accountId, owner.integrationId);
    if (!integration) throw invalidState();
    try {
      const tokens = await this.client.exchangeCode({
        tokenUrl: integration.tokenUrl,
        clientId: integration.clientId,
        clientSecret: integration.clientSecret,
        code: params.code!,
        redirectUri: pending.redirectUri,
        codeVerifier: this.secrets.open(pending.codeVerifier, verifierContext(stateHash)).toString('ascii'),
      });
      const saved = await this.tokens.saveTokens(owner, tokens);
      if (!saved) throw invalidState();
      return saved;
    } catch (err) {
      if (!(err instanceof OAuthTokenExchangeError)) throw err;
      this.logger.warn(
        `Token exchange failed for integration ${owner.integrationId} (account ${owner.accountId}): ${err.error}`,
      );
      await this.tokens.saveError(owner, { error: err.error, errorDescription: err.description });
      throw integrationsError(
        'oauth_token_exchange_failed',
        `The provider's token endpoint did not issue tokens (${err.error}): ${err.description}`,
      );
    }
  }
}

/** Reads the callback's query: every known parameter at most once, as a bounded string. */
export function callbackParams(query: Record<string, unknown>): CallbackParams {
  const problems: string[] = [];
  const read = (name: string, max: number): string | null => {
    const value = query[name];
    if (value === undefined || value === '') return null;
    if (typeof value !== 'string') {
      problems.push(`${name} must be given once, as a string`);
      return null;
    }
    if (value.length > max) {
      problems.push(`${name} must be at most ${max} characters`);
      return null;
    }
    if (/\p{Cc}/u.test(value)) {
      problems.push(`${name} must not contain control characters`);
      return null;
    }
    return value;
  };
  const state = read('state', 512);
  const code = read('code', 4096);
  const error = read('error', 128);
  const errorDescription = read('error_description', 1024);
  if (problems.length === 0 && state === null) problems.push('state is required');
  if (problems.length === 0 && code === null && error === null) problems.push('code or error is required');
  if (problems.length > 0) throw coreError('validation_failed', problems);
  return { state: state!, code, error, errorDescription };
}
