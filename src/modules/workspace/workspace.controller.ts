import { Body, Controller, Get, HttpCode, Post, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  BulkDeleteWorkspaceObjectsDto,
  BulkDeleteWorkspaceObjectsResponseDto,
  BulkMoveWorkspaceObjectsDto,
  BulkMoveWorkspaceObjectsResponseDto,
  MoveWorkspaceObjectDto,
  WorkspaceConnectionDto,
  WorkspaceItemDto,
  WorkspaceQueryDto,
} from './dto/workspace.dto.js';
import { WorkspaceService } from './workspace.service.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { Audited } from '../../core/audit/audited.decorator.js';

const MOVE_RULES =
  'Folder: FolderManage on it and FolderEdit on the destination; moving it into itself or a sub-folder, ' +
  'or nesting deeper than the limit, is a 400. Workbook: WorkbookManage on it; report: ReportEdit and ' +
  'ReportManage on it; both need FolderEdit on the destination. Moving to the root (`folderId` null) ' +
  'needs FolderEdit account-wide for a folder.';

/**
 * Access depends on each item's type, so these routes take any token and the service checks
 * every item (404 when unreadable, 403 when readable but not allowed).
 */
@ApiTags('Workspace')
@Controller('api/v1/deployments/:deploymentId/workspace')
@UseFilters(DeploymentScopeFilter)
@Authenticated()
export class WorkspaceController {
  constructor(private readonly workspace: WorkspaceService) {}

  @Get()
  @ApiOperation({
    summary: 'List workspace items: folders, workbooks and reports in one feed',
    description:
      'The contents of the root or of `folderId`. Folders come first (by position), then workbooks ' +
      'and reports in the requested order. `search` matches names in every folder, not one level. ' +
      'Reports that belong to a workbook are part of it and not listed. Only items the caller can read.',
  })
  @ApiOkResponse({ type: WorkspaceConnectionDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'folder_not_found')
  workspaceObjects(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: WorkspaceQueryDto,
  ): Promise<WorkspaceConnectionDto> {
    return this.workspace.feed(actor, deploymentId, query);
  }

  @Post('move')
  @Audited()
  @HttpCode(200)
  @ApiOperation({ summary: 'Move a folder, workbook or report', description: MOVE_RULES })
  @ApiOkResponse({ type: WorkspaceItemDto, description: 'The moved item' })
  @ApiErrors(
    'validation_failed',
    'folder_too_deep',
    'folder_into_descendant',
    'deployment_not_found',
    'folder_not_found',
    'workbook_not_found',
    'report_not_found',
  )
  moveWorkspaceObject(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: MoveWorkspaceObjectDto,
  ): Promise<WorkspaceItemDto> {
    return this.workspace.move(actor, deploymentId, dto);
  }

  @Post('bulk-move')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Move up to 100 items into one folder',
    description:
      'Partially successful: items are moved one at a time, in order, each in its own transaction; ' +
      'each refused item is listed in `failed` with the status and message the single move would give. ' +
      MOVE_RULES,
  })
  @ApiOkResponse({ type: BulkMoveWorkspaceObjectsResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'folder_not_found')
  bulkMoveWorkspaceObjects(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: BulkMoveWorkspaceObjectsDto,
  ): Promise<BulkMoveWorkspaceObjectsResponseDto> {
    return this.workspace.bulkMove(actor, deploymentId, dto);
  }

  @Post('bulk-delete')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete up to 100 items',
    description:
      'Partially successful, as bulk-move. Folders need FolderManage and no sub-folders (their content ' +
      'returns to the root); workbooks WorkbookManage; reports ReportManage.',
  })
  @ApiOkResponse({ type: BulkDeleteWorkspaceObjectsResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  bulkDeleteWorkspaceObjects(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: BulkDeleteWorkspaceObjectsDto,
  ): Promise<BulkDeleteWorkspaceObjectsResponseDto> {
    return this.workspace.bulkDelete(actor, deploymentId, dto);
  }
}
