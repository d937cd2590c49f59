import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import {
  Authenticated,
  CurrentPrincipal,
  Public,
  RequireActions,
} from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  InitiateOAuthFlowDto,
  InitiateOAuthFlowResponseDto,
  UserOAuthTokenDto,
} from './dto/user-oauth-token.dto.js';
import { callbackParams, OAuthFlowService, STATE_TTL_SECONDS } from './oauth-flow.service.js';
import { UserOAuthTokensService } from './user-oauth-tokens.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** The caller's own OAuth connections: never another user's, never the tokens themselves. */
@ApiTags('User OAuth Tokens')
@Controller('api/v1/user-oauth-tokens')
export class UserOAuthTokensController {
  constructor(
    private readonly tokens: UserOAuthTokensService,
    private readonly flow: OAuthFlowService,
  ) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'List my OAuth tokens', description: 'The caller’s connections, by integration.' })
  @ApiOkResponse({ type: UserOAuthTokenDto, isArray: true })
  listUserOAuthTokens(@CurrentPrincipal() actor: Principal): Promise<UserOAuthTokenDto[]> {
    return this.tokens.list(actor);
  }

  @Get(':integrationId')
  @Authenticated()
  @ApiOperation({
    summary: 'Get my OAuth token for an integration',
    description: '404 when the caller has no token for it (or it is another account’s).',
  })
  @ApiOkResponse({ type: UserOAuthTokenDto })
  @ApiErrors('validation_failed', 'oauth_token_not_found')
  getUserOAuthToken(
    @CurrentPrincipal() actor: Principal,
    @IdParam('integrationId') integrationId: number,
  ): Promise<UserOAuthTokenDto> {
    return this.tokens.get(actor, integrationId);
  }

  @Delete(':integrationId')
  @Audited()
  @Authenticated()
  @ApiOperation({
    summary: 'Revoke my OAuth token for an integration',
    description:
      'Deletes the caller’s stored tokens for the integration and abandons its pending authorizations. The ' +
      'grant at the provider is not revoked.',
  })
  @ApiSuccessResponse('Revoked')
  @ApiErrors('validation_failed', 'oauth_token_not_found')
  async revokeUserOAuthToken(
    @CurrentPrincipal() actor: Principal,
    @IdParam('integrationId') integrationId: number,
  ): Promise<SuccessResponseDto> {
    await this.tokens.revoke(actor, integrationId);
    return SUCCESS;
  }

  @Post(':integrationId/initiate')
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.OAuthIntegrationsIssueTokens)
  @ApiOperation({
    summary: 'Start an OAuth authorization',
    description:
      'Returns the URL to send the user’s browser to: the authorization-code flow with PKCE (S256) and a ' +
      `single-use state, valid ${STATE_TTL_SECONDS / 60} minutes. The provider then redirects to the ` +
      'integration’s redirect URI, `GET /api/v1/oauth/callback`.',
  })
  @ApiBody({ type: InitiateOAuthFlowDto, required: false })
  @ApiOkResponse({ type: InitiateOAuthFlowResponseDto })
  @ApiErrors('validation_failed', 'oauth_integration_not_found')
  initiateOAuthFlow(
    @CurrentPrincipal() actor: Principal,
    @IdParam('integrationId') integrationId: number,
    @Body() body: Record<string, unknown>,
  ): Promise<InitiateOAuthFlowResponseDto> {
    // No fields: validated here, as a class without properties cannot go through the pipe.
    const unknown =
      typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : null;
    if (unknown === null) throw coreError('validation_failed', ['The request body must be a JSON object']);
    if (unknown.length > 0) {
      throw coreError(
        'validation_failed',
        unknown.map((k) => `property ${k} should not exist`),
      );
    }
    return this.flow.initiate(actor, integrationId);
  }
}

/** Where the provider sends the user's browser back. The state is the credential. */
@ApiTags('User OAuth Tokens')
@Controller('api/v1/oauth')
export class OAuthCallbackController {
  constructor(private readonly flow: OAuthFlowService) {}

  @Get('callback')
  @Public()
  @ApiOperation({
    summary: 'Complete an OAuth authorization',
    description:
      'The redirect URI of the integrations. No token: the single-use `state` from initiate is the credential ' +
      '(unknown, used or expired: 400 `invalid_oauth_state`). A provider `error` is recorded on the user’s ' +
      'token (status `error`) and answered 400 `oauth_authorization_denied`. Otherwise the code is exchanged ' +
      'at the token endpoint and the tokens stored encrypted; if that fails, the error is recorded and the ' +
      'answer is 502 `oauth_token_exchange_failed`. Other query parameters are ignored.',
  })
  @ApiQuery({ name: 'state', required: true, type: String })
  @ApiQuery({ name: 'code', required: false, type: String, description: 'The authorization code' })
  @ApiQuery({ name: 'error', required: false, type: String, description: 'The provider’s error code' })
  @ApiQuery({ name: 'error_description', required: false, type: String })
  @ApiOkResponse({ type: UserOAuthTokenDto })
  @ApiErrors(
    'validation_failed',
    'invalid_oauth_state',
    'oauth_authorization_denied',
    'oauth_token_exchange_failed',
  )
  completeOAuthFlow(@Query() query: Record<string, unknown>): Promise<UserOAuthTokenDto> {
    return this.flow.callback(callbackParams(query));
  }
}
