import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { Authenticated, CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  CreateOAuthIntegrationDto,
  OAuthIntegrationDto,
  UpdateOAuthIntegrationDto,
} from './dto/oauth-integration.dto.js';
import { OAuthIntegrationsService } from './oauth-integrations.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** The account's OAuth client registrations. Anyone may read them; the secret is never returned. */
@ApiTags('OAuth Integrations')
@Controller('api/v1/oauth-integrations')
export class OAuthIntegrationsController {
  constructor(private readonly integrations: OAuthIntegrationsService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'List OAuth integrations',
    description: 'Every integration of the account, by id.',
  })
  @ApiOkResponse({ type: OAuthIntegrationDto, isArray: true })
  listOAuthIntegrations(@CurrentPrincipal() actor: Principal): Promise<OAuthIntegrationDto[]> {
    return this.integrations.list(actor);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.OAuthIntegrationsManage)
  @ApiOperation({
    summary: 'Create an OAuth integration',
    description:
      'Registers an OAuth 2.0 client of an external provider. URLs must be https (plain http only for a ' +
      'loopback host), without credentials or fragment. The client secret is stored encrypted and never ' +
      'returned. Names are unique in the account, ignoring case (409).',
  })
  @ApiOkResponse({ type: OAuthIntegrationDto })
  @ApiErrors('validation_failed', 'config_too_large', 'oauth_integration_name_taken')
  createOAuthIntegration(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: CreateOAuthIntegrationDto,
  ): Promise<OAuthIntegrationDto> {
    return this.integrations.create(actor, dto);
  }

  @Get(':id')
  @Authenticated()
  @ApiOperation({ summary: 'Get an OAuth integration' })
  @ApiOkResponse({ type: OAuthIntegrationDto })
  @ApiErrors('validation_failed', 'oauth_integration_not_found')
  getOAuthIntegration(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<OAuthIntegrationDto> {
    return this.integrations.get(actor, id);
  }

  @Put(':id')
  @Audited()
  @RequireActions(Action.OAuthIntegrationsManage)
  @ApiOperation({
    summary: 'Update an OAuth integration',
    description:
      'The required fields replace the stored ones. `scopes` and `config` are replaced when given and kept ' +
      'when omitted; `clientSecret` is replaced by a string and kept when omitted or null.',
  })
  @ApiOkResponse({ type: OAuthIntegrationDto })
  @ApiErrors(
    'validation_failed',
    'config_too_large',
    'oauth_integration_not_found',
    'oauth_integration_name_taken',
  )
  updateOAuthIntegration(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UpdateOAuthIntegrationDto,
  ): Promise<OAuthIntegrationDto> {
    return this.integrations.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @RequireActions(Action.OAuthIntegrationsManage)
  @ApiOperation({
    summary: 'Delete an OAuth integration',
    description: 'Also deletes every user’s tokens for it and its pending authorizations.',
  })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'oauth_integration_not_found')
  async deleteOAuthIntegration(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<SuccessResponseDto> {
    await this.integrations.remove(actor, id);
    return SUCCESS;
  }
}
