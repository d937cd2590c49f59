import { Controller, Get, Param, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { EmbedTenantWorkbooksListDto, EmbedTenantWorkbooksQueryDto } from './dto/embed-catalogue.dto.js';
import { EmbedCatalogueService } from './embed-catalogue.service.js';

/** The workbooks of a deployment an embed tenant reaches, for admins (see also `SharedWorkspaceController`). */
@ApiTags('Dashboard Embed Access')
@Controller('api/v1/deployments/:deploymentId/embed-tenants/:embedTenantName/workbooks')
@UseFilters(DeploymentScopeFilter)
@RequireActions(Action.All)
export class EmbedCatalogueController {
  constructor(private readonly catalogue: EmbedCatalogueService) {}

  @Get()
  @ApiParam({
    name: 'embedTenantName',
    description: 'The embed tenant (the name used to generate embed sessions); lowercased here',
  })
  @ApiOperation({
    summary: 'List the workbooks an embed tenant reaches',
    description:
      'Admin only. The workbooks of the deployment whose dashboard is shared with the tenant or with every ' +
      'embed user, by id, with cursor paging. `accessSource` keeps one way of reaching them: `tenant`, ' +
      '`allEmbedUsers` or `folder` (folders cannot be shared with embed users yet: nothing). A workbook ' +
      'reached both ways is listed once. 404 for a deployment outside the account or an unknown tenant.',
  })
  @ApiOkResponse({ type: EmbedTenantWorkbooksListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'invalid_embed_tenant_name',
    'deployment_not_found',
    'embed_tenant_not_found',
  )
  listEmbedTenantWorkbooks(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('embedTenantName') embedTenantName: string,
    @Query() query: EmbedTenantWorkbooksQueryDto,
  ): Promise<EmbedTenantWorkbooksListDto> {
    return this.catalogue.tenantWorkbooks(actor, deploymentId, embedTenantName, query);
  }
}
