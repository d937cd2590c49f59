import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import {
  DashboardDto,
  PublishDashboardDto,
  WorkbookDashboardDto,
  WorkbookDashboardInputDto,
} from './dto/dashboard.dto.js';
import {
  CreateWorkbookDto,
  DuplicateWorkbookDto,
  UpdateWorkbookDto,
  UpsertWorkbookDto,
  WorkbookDto,
  WorkbooksListDto,
  WorkbooksQueryDto,
} from './dto/workbook.dto.js';
import { DashboardsService } from './dashboards.service.js';
import { WorkbookCopyService } from './workbook-copy.service.js';
import { WorkbooksService } from './workbooks.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import {
  CREATE_WORKBOOK_EXAMPLES,
  UPDATE_WORKBOOK_EXAMPLES,
  UPSERT_WORKBOOK_EXAMPLES,
} from './workspace.examples.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Workbooks')
@Controller('api/v1/deployments/:deploymentId')
@UseFilters(DeploymentScopeFilter)
export class WorkbooksController {
  constructor(
    private readonly workbooks: WorkbooksService,
    private readonly dashboards: DashboardsService,
    private readonly copies: WorkbookCopyService,
  ) {}

  @Get('workbooks')
  @RequireObjectAction(Action.WorkbookRead)
  @ApiOperation({
    summary: 'List the workbooks of a deployment the caller can read',
    description: 'Ordered by id. Workbooks the caller may not read are left out.',
  })
  @ApiOkResponse({ type: WorkbooksListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'folder_not_found')
  getWorkbooks(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: WorkbooksQueryDto,
  ): Promise<WorkbooksListDto> {
    return this.workbooks.list(actor, deploymentId, query);
  }

  @Post('workbooks')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.WorkbookEdit)
  @ApiOperation({
    summary: 'Create a workbook',
    description:
      'The caller becomes its owner. At the workspace root this needs WorkbookEdit; in a folder, ' +
      'FolderEdit on that folder.',
  })
  @ApiBodyExamples(CreateWorkbookDto, CREATE_WORKBOOK_EXAMPLES, { required: false })
  @ApiOkResponse({ type: WorkbookDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'folder_not_found',
    'slug_taken',
    'shared_workspace_unavailable',
  )
  createWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: CreateWorkbookDto,
  ): Promise<WorkbookDto> {
    return this.workbooks.create(actor, deploymentId, dto);
  }

  @Put('workbooks/by-slug/:slug')
  @Audited()
  @RequireObjectAction(Action.WorkbookEdit)
  @ApiOperation({
    summary: 'Create or update a workbook by slug',
    description:
      'The slug is trimmed and lowercased, then must be 1 to 255 characters of letters, digits, ' +
      '".", "_" and "-". An existing workbook with that slug gets the sent fields, with meta merged ' +
      'key by key; re-sending the same request changes nothing. Otherwise a workbook with that slug ' +
      'is created. If a concurrent request creates or deletes the workbook holding the slug ' +
      'between the decision and the write, the answer is 409 upsert_branch_changed: retry.',
  })
  @ApiBodyExamples(UpsertWorkbookDto, UPSERT_WORKBOOK_EXAMPLES, { required: false })
  @ApiOkResponse({ type: WorkbookDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'folder_not_found',
    'slug_taken',
    'upsert_branch_changed',
    'shared_workspace_unavailable',
  )
  upsertWorkbookBySlug(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('slug') slug: string,
    @Body() dto: UpsertWorkbookDto,
  ): Promise<WorkbookDto> {
    return this.workbooks.upsertBySlug(actor, deploymentId, slug, dto);
  }

  @Get('workbooks/:workbookId')
  @RequireObjectAction(Action.WorkbookRead)
  @ApiOperation({ summary: 'Get a workbook with its draft and published dashboard' })
  @ApiOkResponse({ type: WorkbookDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'workbook_not_found')
  getWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
  ): Promise<WorkbookDto> {
    return this.workbooks.get(actor, deploymentId, workbookId);
  }

  @Put('workbooks/:workbookId')
  @Audited()
  @RequireObjectAction(Action.WorkbookEdit)
  @ApiOperation({
    summary: 'Update a workbook',
    description:
      'Only sent fields change. Renaming, metadata and slug need WorkbookEdit on the workbook; ' +
      'moving (any request with folderId) also needs WorkbookManage on it and FolderEdit on the ' +
      'destination folder. A slug held by another workbook of the deployment is a 409 unless ' +
      'slugTakeover is true, which removes it from that workbook (WorkbookEdit on it needed).',
  })
  @ApiBodyExamples(UpdateWorkbookDto, UPDATE_WORKBOOK_EXAMPLES, { required: false })
  @ApiOkResponse({ type: WorkbookDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'workbook_not_found',
    'folder_not_found',
    'slug_taken',
  )
  updateWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
    @Body() dto: UpdateWorkbookDto,
  ): Promise<WorkbookDto> {
    return this.workbooks.update(actor, deploymentId, workbookId, dto);
  }

  @Delete('workbooks/:workbookId')
  @Audited()
  @RequireObjectAction(Action.WorkbookManage)
  @ApiOperation({
    summary: 'Delete a workbook',
    description: 'Its reports, its published dashboard and the grants on all of them are deleted with it.',
  })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'deployment_not_found', 'workbook_not_found')
  async deleteWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
  ): Promise<SuccessResponseDto> {
    await this.workbooks.remove(actor, deploymentId, workbookId);
    return SUCCESS;
  }

  @Post('workbooks/:workbookId/duplicate')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.WorkbookRead)
  @ApiOperation({
    summary: 'Duplicate a workbook',
    description:
      'Copies the workbook as "Copy of <name>", owned by the caller, with copies of its reports and ' +
      'of its draft and published dashboards, whose widgets are re-pointed at the copied reports. ' +
      'Grants, view history, spreadsheet placements and signed embedding are not copied. The copy ' +
      'is placed next to the original when the caller has FolderEdit on its folder, otherwise at ' +
      'the workspace root, which needs WorkbookEdit. shared: true (cloning from the shared ' +
      'workspace) is refused with 403 outside creator-mode embed sessions.',
  })
  @ApiBody({ type: DuplicateWorkbookDto, required: false })
  @ApiOkResponse({ type: WorkbookDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'workbook_not_found', 'folder_not_found')
  duplicateWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
    @Body() dto: DuplicateWorkbookDto,
  ): Promise<WorkbookDto> {
    return this.copies.duplicate(actor, deploymentId, workbookId, dto);
  }

  @Put('workbooks/:workbookId/dashboard')
  @Audited()
  @RequireObjectAction(Action.WorkbookEdit)
  @ApiOperation({
    summary: 'Save the draft dashboard of a workbook',
    description: 'The published dashboard is unchanged until the next publish.',
  })
  @ApiBody({ type: WorkbookDashboardInputDto, required: false })
  @ApiOkResponse({ type: WorkbookDashboardDto })
  @ApiErrors('validation_failed', 'workbook_id_mismatch', 'deployment_not_found', 'workbook_not_found')
  updateWorkbookDashboard(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
    @Body() dto: WorkbookDashboardInputDto,
  ): Promise<WorkbookDashboardDto> {
    return this.dashboards.updateDashboard(actor, deploymentId, workbookId, dto);
  }

  @Post('workbooks/:workbookId/publish')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.WorkbookEdit)
  @ApiOperation({
    summary: 'Publish the dashboard of a workbook',
    description:
      'Publishes config, or the current draft when config is omitted (400 when there is neither; ' +
      'every published widget needs an id). The first publish creates the dashboard with a new ' +
      'public id and versionNumber 1; each later one replaces its config and adds one to versionNumber.',
  })
  @ApiOkResponse({ type: DashboardDto })
  @ApiErrors('validation_failed', 'nothing_to_publish', 'deployment_not_found', 'workbook_not_found')
  publishDashboard(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('workbookId') workbookId: number,
    @Body() dto: PublishDashboardDto,
  ): Promise<DashboardDto> {
    return this.dashboards.publish(actor, deploymentId, workbookId, dto);
  }
}
