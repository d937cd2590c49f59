import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { TenantSettingsDto, TenantSettingsInputDto } from './dto/tenant-settings.dto.js';
import { SettingsService } from './settings.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** Account-wide settings. Admin only. */
@ApiTags('Tenant Settings')
@Controller('api/v1/tenant/settings')
@RequireActions(Action.All)
export class TenantSettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @ApiOperation({
    summary: 'Get tenant settings',
    description: 'An account that never saved its settings gets the defaults.',
  })
  @ApiOkResponse({ type: TenantSettingsDto })
  getTenantSettings(@CurrentPrincipal() actor: Principal): Promise<TenantSettingsDto> {
    return this.settings.getTenantSettings(actor);
  }

  @Put()
  @Audited()
  @ApiOperation({
    summary: 'Update tenant settings',
    description:
      'A partial update: fields that are omitted or null keep their value. Turning the audit log on ' +
      'records the moment in `auditLogEnabledTimestamp`.',
  })
  @ApiOkResponse({ type: TenantSettingsDto })
  @ApiErrors('validation_failed')
  updateTenantSettings(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: TenantSettingsInputDto,
  ): Promise<TenantSettingsDto> {
    return this.settings.updateTenantSettings(actor, dto);
  }
}
