import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { ReportFoldersListDto } from './dto/report-folder.dto.js';
import { ReportFoldersService } from './report-folders.service.js';

/** The command-line tool's `reports folders` (docs/command-line-tool.md), over the workspace's folders. */
@ApiTags('Reports')
@Controller('api/v1/deployments/:deploymentId/report-folders')
@UseFilters(DeploymentScopeFilter)
export class ReportFoldersController {
  constructor(private readonly folders: ReportFoldersService) {}

  @Get()
  @RequireObjectAction(Action.FolderRead)
  @ApiOperation({
    summary: 'List report folders',
    description:
      'Reports live in the workspace’s folders (`GET .../folders`): this lists every folder of the deployment, ' +
      'all levels, that the caller can read (held account-wide, owned, or granted on the folder or a folder ' +
      'above it), by id, each with `reportsCount`, the reports directly in it that the caller can read.',
  })
  @ApiOkResponse({ type: ReportFoldersListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  listReportFolders(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: PageQueryDto,
  ): Promise<ReportFoldersListDto> {
    return this.folders.list(actor, deploymentId, query);
  }
}
