import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import type { InitiateOAuthFlowResponseDto, UserOAuthTokenDto } from './dto/user-oauth-token.dto.js';
import { integrationsError } from './oauth.errors.js';
import { OAuthIntegrationsService } from './oauth-integrations.service.js';
import { OAuthTokenClient, OAuthTokenExchangeError } from './oauth-token-client.js';
import { codeChallenge, hashState, newCodeVerifier, newState, STATE_PATTERN } from './pkce.js';
import { UserOAuthTokensRepository } from './user-oauth-tokens.repository.js';
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
    private readonly db: Database,
    private readonly states: UserOAuthTokensRepository,
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
    const expiresAt = await this.db.transaction(async () => {
      const expires = await this.states.insertState({
        accountId: actor.accountId,
        userId: actor.userId,
        integrationId,
        stateHash,
        codeVerifier: this.secrets.seal(verifier, verifierContext(stateHash)),
        redirectUri: integration.redirectUri,
        ttlSeconds: STATE_TTL_SECONDS,
      });
      // Housekeeping: the user's expired authorizations, and any past the newest few.
      await this.states.pruneStates(actor.userId, MAX_PENDING_PER_USER);
      return expires;
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
    const pending = await this.states.consumeState(stateHash);
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
