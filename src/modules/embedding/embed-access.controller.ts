import { Body, Controller, Get, Put, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { EmbedAccessResponseDto, UpdateEmbedAccessDto } from './dto/embed-access.dto.js';
import { EmbedAccessService } from './embed-access.service.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Dashboard Embed Access')
@Controller('api/v1/deployments/:deploymentId/workbooks/:workbookId/embed-access')
@UseFilters(DeploymentScopeFilter)
export class EmbedAccessController {
  constructor(private readonly access: EmbedAccessService) {}

  @Get()
  @RequireObjectAction(Action.WorkbookRead)
  @ApiOperation({
    summary: 'List a dashboard’s embed access',
    description: 'The allowEmbed flag, the share with every embed user, and the shares with single tenants.',
  })
  @ApiOkResponse({ type: EmbedAccessResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'workbook_not_found')
  getEmbedAccess(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
  ): Promise<EmbedAccessResponseDto> {
    return this.access.get(actor, deploymentId, workbookId);
  }

  @Put()
  @Audited()
  @RequireObjectAction(Action.WorkbookManage)
  @ApiOperation({
    summary: 'Update a dashboard’s embed access',
    description:
      'One target, `embedTenantName` or `allEmbedUsers: true`, with `action` `read` (share) or `none` ' +
      '(unshare); and/or `allowEmbed`. 400 when nothing would change or the workbook has no published ' +
      'dashboard for allowEmbed; 404 for an unknown tenant.',
  })
  @ApiOkResponse({ type: EmbedAccessResponseDto })
  @ApiErrors(
    'validation_failed',
    'no_embed_access_change',
    'ambiguous_embed_access_target',
    'no_published_dashboard',
    'deployment_not_found',
    'workbook_not_found',
  )
  updateEmbedAccess(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
    @Body() dto: UpdateEmbedAccessDto,
  ): Promise<EmbedAccessResponseDto> {
    return this.access.update(actor, deploymentId, workbookId, dto);
  }
}
