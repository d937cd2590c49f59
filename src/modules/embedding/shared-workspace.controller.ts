import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CurrentEmbedUser,
  CurrentPrincipal,
  EmbedOrPlatformToken,
} from '../../core/auth/access.decorators.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import type { Principal } from '../../core/auth/principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { WorkspaceQueryDto } from '../workspace/dto/workspace.dto.js';
import { SharedWorkspaceConnectionDto } from './dto/embed-catalogue.dto.js';
import { EmbedCatalogueService } from './embed-catalogue.service.js';

/**
 * The shared workspace: what the embedded views list of a deployment's workspace for the embed
 * user's tenant. It takes embed tokens and, for the command line's `workspace shared`, Platform
 * API tokens too (the part every embed user sees, within what the caller can read).
 */
@ApiTags('Workspace')
@Controller('api/v1/deployments/:deploymentId/shared-workspace')
@UseFilters(DeploymentScopeFilter)
@EmbedOrPlatformToken()
export class SharedWorkspaceController {
  constructor(private readonly catalogue: EmbedCatalogueService) {}

  @Get()
  @ApiOperation({
    summary: 'List the shared workspace of the embed user’s tenant',
    description:
      'With an embed token of this deployment: the workbooks shared with the user’s tenant or with every ' +
      'embed user, and the folders that lead to them (nothing else in those folders), with the parameters ' +
      'and order of `GET /workspace`. Every user of a tenant sees the same items. With a Platform API ' +
      'token: the workbooks shared with every embed user that the caller can read, and the folders leading ' +
      'to them. Owners are left out (`userId` and `user` null, no `createdBy`). 404 for a deployment the ' +
      'token does not reach or a folder holding no such workbook; 403 for a session limited to one dashboard.',
  })
  @ApiOkResponse({ type: SharedWorkspaceConnectionDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'shared_workspace_unavailable',
    'deployment_not_found',
    'folder_not_found',
  )
  sharedWorkspaceObjects(
    @CurrentEmbedUser() embedUser: EmbedPrincipal | undefined,
    @CurrentPrincipal() actor: Principal | undefined,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: WorkspaceQueryDto,
  ): Promise<SharedWorkspaceConnectionDto> {
    return this.catalogue.sharedWorkspace(embedUser ? { embedUser } : { actor: actor! }, deploymentId, query);
  }
}
