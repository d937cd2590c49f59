import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import {
  CurrentEmbedUser,
  CurrentPrincipal,
  EmbedTokenRequired,
  Public,
  RequireActions,
} from '../../core/auth/access.decorators.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DashboardDto } from '../workspace/dto/dashboard.dto.js';
import { DashboardEmbeddingResponseDto, UpdateDashboardEmbeddingDto } from './dto/embed-access.dto.js';
import {
  GenerateEmbedTokenResponseDto,
  GenerateSessionDto,
  GenerateSessionResponseDto,
  PostTokenBySessionIdDto,
  RevokeEmbedSessionDto,
} from './dto/embed-session.dto.js';
import { EmbedAccessService } from './embed-access.service.js';
import { EmbedSessionsService } from './embed-sessions.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import {
  GENERATE_SESSION_EXAMPLES,
  POST_TOKEN_EXAMPLES,
  REVOKE_SESSION_EXAMPLES,
} from './embedding.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Embed')
@Controller('api/v1/embed')
export class EmbedController {
  constructor(
    private readonly sessions: EmbedSessionsService,
    private readonly access: EmbedAccessService,
  ) {}

  @Post('generate-session')
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Generate an embed session',
    description:
      'Creates or updates the embed user exactly as provisioning does (tenant `embedTenantName`, default ' +
      '`default`, created on demand) and returns a single-use session id, valid 5 minutes, to exchange for an ' +
      'embed token. `tenantGroups` and `tenantGroupDefinitions` need `creatorMode: true`. ' +
      '`ephemeralTtlSeconds` is no longer accepted.',
  })
  @ApiOkResponse({ type: GenerateSessionResponseDto })
  @ApiErrors(
    'validation_failed',
    'unknown_groups',
    'unknown_tenant_groups',
    'tenant_groups_need_creator_mode',
    'invalid_external_id',
    'invalid_embed_tenant_name',
    'deployment_not_found',
    'conflict',
    'embed_user_limit_reached',
  )
  @ApiBodyExamples(GenerateSessionDto, GENERATE_SESSION_EXAMPLES)
  generateSession(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: GenerateSessionDto,
  ): Promise<GenerateSessionResponseDto> {
    return this.sessions.generate(actor, dto);
  }

  @Post('session/token')
  @Audited()
  @HttpCode(200)
  @Public()
  @ApiOperation({
    summary: 'Exchange a session for an embed token',
    description:
      'No other credential: the session id is one. Single use. The token is a JWT signed with the account’s ' +
      'embed key and valid 24 hours. Unknown, used, expired or revoked session id: 401.',
  })
  @ApiOkResponse({ type: GenerateEmbedTokenResponseDto })
  @ApiErrors('validation_failed', 'invalid_embed_session')
  @ApiBodyExamples(PostTokenBySessionIdDto, POST_TOKEN_EXAMPLES)
  postTokenBySessionId(@Body() dto: PostTokenBySessionIdDto): Promise<GenerateEmbedTokenResponseDto> {
    return this.sessions.exchange(dto.sessionId);
  }

  @Post('session/revoke')
  @Audited()
  @HttpCode(204)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Revoke an embed session',
    description:
      'The session id can no longer be exchanged and the token it produced stops working. Idempotent: unknown, ' +
      'expired and revoked ids answer 204 too.',
  })
  @ApiNoContentResponse({ description: 'Revoked, or nothing to revoke' })
  @ApiErrors('validation_failed')
  @ApiBodyExamples(RevokeEmbedSessionDto, REVOKE_SESSION_EXAMPLES)
  revokeSession(@CurrentPrincipal() actor: Principal, @Body() dto: RevokeEmbedSessionDto): Promise<void> {
    return this.sessions.revoke(actor, dto.sessionId);
  }

  @Get('dashboard/:publicId')
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Get an embeddable dashboard',
    description:
      'For an embed token: the published dashboard, when it is shared with every embed user or with the ' +
      'user’s tenant. A tenant share also needs signed embedding allowed (else 403). Anything else, or ' +
      'outside the session’s deployment, is a 404.',
  })
  @ApiOkResponse({ type: DashboardDto })
  @ApiErrors('embedding_not_allowed', 'dashboard_not_found')
  getDashboard(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
  ): Promise<DashboardDto> {
    return this.access.embedDashboard(user, publicId);
  }

  @Patch('dashboard/:publicId')
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Enable or disable signed embedding for a dashboard',
    description: 'With it off, embed tokens of tenants the dashboard is shared with get 403.',
  })
  @ApiOkResponse({ type: DashboardEmbeddingResponseDto })
  @ApiErrors('validation_failed', 'dashboard_not_found')
  updateDashboardEmbedding(
    @CurrentPrincipal() actor: Principal,
    @Param('publicId') publicId: string,
    @Body() dto: UpdateDashboardEmbeddingDto,
  ): Promise<DashboardEmbeddingResponseDto> {
    return this.access.setDashboardEmbedding(actor, publicId, dto);
  }
}
