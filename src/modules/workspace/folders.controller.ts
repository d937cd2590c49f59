import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { MAX_FOLDER_DEPTH } from './content.sql.js';
import {
  CreateFolderDto,
  FolderDto,
  FoldersListDto,
  FoldersQueryDto,
  UpdateFolderDto,
} from './dto/folder.dto.js';
import { FoldersService } from './folders.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_FOLDER_EXAMPLES, UPDATE_FOLDER_EXAMPLES } from './workspace.examples.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Folders')
@Controller('api/v1/deployments/:deploymentId')
@UseFilters(DeploymentScopeFilter)
export class FoldersController {
  constructor(private readonly folders: FoldersService) {}

  @Get('folders')
  @RequireObjectAction(Action.FolderRead)
  @ApiOperation({
    summary: 'List one level of folders',
    description:
      'The folders at the root, or the direct sub-folders of `parentId`, ordered by position then id. ' +
      'Only folders the caller can read: held account-wide, owned, or granted on the folder or a folder above it.',
  })
  @ApiOkResponse({ type: FoldersListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'folder_not_found')
  getFolders(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: FoldersQueryDto,
  ): Promise<FoldersListDto> {
    return this.folders.list(actor, deploymentId, query);
  }

  @Post('folders')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.FolderEdit)
  @ApiOperation({
    summary: 'Create a folder',
    description:
      'At the root this needs FolderEdit account-wide; inside `parentId`, FolderEdit on that folder. ' +
      `Folders nest at most ${MAX_FOLDER_DEPTH} levels deep (a root folder is level 1); deeper is a 400. ` +
      'The caller owns the new folder.',
  })
  @ApiOkResponse({ type: FolderDto })
  @ApiErrors('validation_failed', 'folder_too_deep', 'deployment_not_found', 'folder_not_found')
  @ApiBodyExamples(CreateFolderDto, CREATE_FOLDER_EXAMPLES)
  createFolder(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: CreateFolderDto,
  ): Promise<FolderDto> {
    return this.folders.create(actor, deploymentId, dto);
  }

  @Put('folders/:folderId')
  @Audited()
  @RequireObjectAction(Action.FolderEdit)
  @ApiOperation({
    summary: 'Rename or reorder a folder',
    description:
      'Changes only the fields sent. Moving to another parent is POST /workspace/move with type FOLDER.',
  })
  @ApiOkResponse({ type: FolderDto })
  @ApiErrors(
    'validation_failed',
    'folder_too_deep',
    'folder_into_descendant',
    'deployment_not_found',
    'folder_not_found',
  )
  @ApiBodyExamples(UpdateFolderDto, UPDATE_FOLDER_EXAMPLES)
  updateFolder(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('folderId') folderId: number,
    @Body() dto: UpdateFolderDto,
  ): Promise<FolderDto> {
    return this.folders.update(actor, deploymentId, folderId, dto);
  }

  @Delete('folders/:folderId')
  @Audited()
  @RequireObjectAction(Action.FolderManage)
  @ApiOperation({
    summary: 'Delete an empty folder',
    description:
      'Refused with 400 (`folder_not_empty`) while the folder has sub-folders. Workbooks and reports ' +
      'directly inside it are kept and return to the root; grants on the folder are removed.',
  })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'folder_not_empty', 'deployment_not_found', 'folder_not_found')
  async deleteFolder(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('folderId') folderId: number,
  ): Promise<SuccessResponseDto> {
    await this.folders.remove(actor, deploymentId, folderId);
    return SUCCESS;
  }

  @Get('folders/:folderId/ancestors')
  @RequireObjectAction(Action.FolderRead)
  @ApiOperation({
    summary: 'The breadcrumb of a folder',
    description: 'The folders from the root down to this one, the folder itself last.',
  })
  @ApiOkResponse({ type: FolderDto, isArray: true })
  @ApiErrors('validation_failed', 'deployment_not_found', 'folder_not_found')
  getFolderAncestors(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('folderId') folderId: number,
  ): Promise<FolderDto[]> {
    return this.folders.ancestors(actor, deploymentId, folderId);
  }
}
