import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { AppConfigDto, AppConfigInputDto } from './dto/app-config.dto.js';
import { SettingsService } from './settings.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** The account's look and client-app switches. Every user reads it; admins change it. */
@ApiTags('App Theme')
@Controller('api/v1/app-config')
export class AppConfigController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'Get app config',
    description:
      'Theme, creator mode, embedding, Sheets UI and time-zone settings of the account, for client ' +
      'apps to configure themselves. Any user of the account may read it. Objects never set are null.',
  })
  @ApiOkResponse({ type: AppConfigDto })
  getAppConfig(@CurrentPrincipal() actor: Principal): Promise<AppConfigDto> {
    return this.settings.getAppConfig(actor);
  }

  @Put()
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Update app config',
    description:
      'A partial update, admin only. Omitted fields keep their value. A boolean sent as null is left ' +
      'unchanged. An object replaces the stored object as a whole; null removes it.',
  })
  @ApiOkResponse({ type: AppConfigDto })
  @ApiErrors('validation_failed')
  updateAppConfig(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: AppConfigInputDto,
  ): Promise<AppConfigDto> {
    return this.settings.updateAppConfig(actor, dto);
  }
}
