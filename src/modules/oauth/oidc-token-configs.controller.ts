import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  CreateOidcTokenConfigDto,
  OidcTokenConfigDto,
  UpdateOidcTokenConfigDto,
} from './dto/oidc-token-config.dto.js';
import { OIDC_CONFIG_RULE_ERRORS } from './oauth.errors.js';
import { OidcTokenConfigsService } from './oidc-token-configs.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** Audiences of the account's workload-identity tokens. Admin only. */
@ApiTags('OIDC Token Configs')
@Controller('api/v1/oidc-token-configs')
@RequireActions(Action.All)
export class OidcTokenConfigsController {
  constructor(private readonly configs: OidcTokenConfigsService) {}

  @Get()
  @ApiOperation({ summary: 'List OIDC token configs', description: 'Every config of the account, by id.' })
  @ApiOkResponse({ type: OidcTokenConfigDto, isArray: true })
  listOidcTokenConfigs(@CurrentPrincipal() actor: Principal): Promise<OidcTokenConfigDto[]> {
    return this.configs.list(actor);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create an OIDC token config',
    description:
      '`audience` follows `audienceType`: fixed for `aws` and `azure`, `customAudience` for `gcp` (a Workload ' +
      'Identity Federation provider) and `custom`. One config per well-known type, any number of `custom` ' +
      'ones (409 otherwise). `targetEnvVar` is for `custom` only. Names are unique in the account (409).',
  })
  @ApiOkResponse({ type: OidcTokenConfigDto })
  @ApiErrors(
    'validation_failed',
    ...OIDC_CONFIG_RULE_ERRORS,
    'oidc_token_config_name_taken',
    'oidc_audience_type_taken',
  )
  createOidcTokenConfig(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: CreateOidcTokenConfigDto,
  ): Promise<OidcTokenConfigDto> {
    return this.configs.create(actor, dto);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an OIDC token config' })
  @ApiOkResponse({ type: OidcTokenConfigDto })
  @ApiErrors('validation_failed', 'oidc_token_config_not_found')
  getOidcTokenConfig(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<OidcTokenConfigDto> {
    return this.configs.get(actor, id);
  }

  @Put(':id')
  @Audited()
  @ApiOperation({
    summary: 'Update an OIDC token config',
    description:
      'Omitted fields keep their value; null clears `subFormat`, `targetEnvVar` and `customClaims`. The ' +
      'audience type never changes.',
  })
  @ApiOkResponse({ type: OidcTokenConfigDto })
  @ApiErrors(
    'validation_failed',
    ...OIDC_CONFIG_RULE_ERRORS,
    'oidc_token_config_not_found',
    'oidc_token_config_name_taken',
    'oidc_audience_type_taken',
  )
  updateOidcTokenConfig(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UpdateOidcTokenConfigDto,
  ): Promise<OidcTokenConfigDto> {
    return this.configs.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @ApiOperation({ summary: 'Delete an OIDC token config' })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'oidc_token_config_not_found')
  async deleteOidcTokenConfig(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<SuccessResponseDto> {
    await this.configs.remove(actor, id);
    return SUCCESS;
  }
}
