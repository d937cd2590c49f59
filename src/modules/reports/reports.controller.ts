import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  ConnectReportDto,
  CreateReportDto,
  DisconnectReportDto,
  RefreshReportDto,
  ReportDto,
  ReportsListDto,
  ReportsQueryDto,
  UpdateReportDto,
} from './dto/report.dto.js';
import { PlacementsService } from './placements.service.js';
import { ReportListService } from './report-list.service.js';
import { ReportsService } from './reports.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import {
  CONNECT_REPORT_EXAMPLES,
  CREATE_REPORT_EXAMPLES,
  DISCONNECT_REPORT_EXAMPLES,
  REFRESH_REPORT_EXAMPLES,
  UPDATE_REPORT_EXAMPLES,
  UPSERT_REPORT_EXAMPLES,
} from './report.examples.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** What connect, disconnect and refresh of a placement answer besides success. */
const PLACEMENT_ERRORS = [
  'validation_failed',
  'invalid_location',
  'location_mismatch',
  'deployment_not_found',
  'report_not_found',
] as const satisfies readonly ErrorCode[];

const PLACEMENT_RULES =
  'Needs only read access to the report. The report definition, version and updatedAt never change.';

@ApiTags('Reports')
@Controller('api/v1/deployments/:deploymentId/reports')
@UseFilters(DeploymentScopeFilter)
export class ReportsController {
  constructor(
    private readonly reports: ReportsService,
    private readonly reportList: ReportListService,
    private readonly placements: PlacementsService,
  ) {}

  @Get()
  @RequireObjectAction(Action.ReportRead)
  @ApiOperation({
    summary: 'List the reports the caller can read',
    description:
      'Cursor pagination (first/after) or the legacy limit/page, not both. Sorting by lastViewedAt ' +
      '(the caller’s own views) has no cursor: use limit/page with it.',
  })
  @ApiOkResponse({ type: ReportsListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'pagination_conflict',
    'cursor_unavailable_for_sort',
    'deployment_not_found',
  )
  getReports(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: ReportsQueryDto,
  ): Promise<ReportsListDto> {
    return this.reportList.list(actor, deploymentId, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.ReportEdit)
  @ApiOperation({
    summary: 'Create a report',
    description:
      'At the root it needs ReportEdit; in a folder, FolderEdit on it; in a workbook, WorkbookEdit on it. ' +
      'publicId is optional (12 letters or digits); ids shaped like R plus 11 digits are reserved.',
  })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(
    'validation_failed',
    'blank_name',
    'public_id_reserved',
    'invalid_location',
    'location_mismatch',
    'deployment_not_found',
    'folder_not_found',
    'workbook_not_found',
    'public_id_taken',
    'public_id_in_other_deployment',
  )
  @ApiBodyExamples(CreateReportDto, CREATE_REPORT_EXAMPLES)
  createReport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: CreateReportDto,
  ): Promise<ReportDto> {
    return this.reports.create(actor, deploymentId, dto);
  }

  @Put('by-public-id/:publicId')
  @Audited()
  @RequireObjectAction(Action.ReportEdit)
  @ApiOperation({
    summary: 'Create or update a report by its public id',
    description:
      'Updates the report with this publicId (ReportEdit on it) or creates one. source is kept from creation. ' +
      '409 public_id_in_other_deployment: the id belongs to another deployment (permanent); ' +
      '409 upsert_branch_changed: a parallel request created it first (retry).',
  })
  @ApiParam({ name: 'publicId', schema: { type: 'string', pattern: '^[0-9A-Za-z]{12}$' } })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(
    'validation_failed',
    'blank_name',
    'public_id_reserved',
    'public_id_mismatch',
    'invalid_location',
    'location_mismatch',
    'deployment_not_found',
    'folder_not_found',
    'workbook_not_found',
    'public_id_in_other_deployment',
    'upsert_branch_changed',
  )
  @ApiBodyExamples(CreateReportDto, UPSERT_REPORT_EXAMPLES)
  upsertReportByPublicId(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('publicId') publicId: string,
    @Body() dto: CreateReportDto,
  ): Promise<ReportDto> {
    return this.reports.upsertByPublicId(actor, deploymentId, publicId, dto);
  }

  @Get(':reportId')
  @RequireObjectAction(Action.ReportRead)
  @ApiOperation({ summary: 'Get a report', description: 'Also records the caller’s view (lastViewedAt).' })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'report_not_found')
  getReport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
  ): Promise<ReportDto> {
    return this.reports.get(actor, deploymentId, reportId);
  }

  @Put(':reportId')
  @Audited()
  @RequireObjectAction(Action.ReportEdit)
  @ApiOperation({
    summary: 'Update a report',
    description:
      'Only the fields sent change; version increases. With expectedVersion, a report changed meanwhile is a 409. ' +
      'publicId is write-once. Changing folderId also needs ReportManage and FolderEdit on the destination.',
  })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(
    'validation_failed',
    'blank_name',
    'public_id_immutable',
    'deployment_not_found',
    'report_not_found',
    'folder_not_found',
    'workbook_not_found',
    'version_conflict',
  )
  @ApiBodyExamples(UpdateReportDto, UPDATE_REPORT_EXAMPLES)
  updateReport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
    @Body() dto: UpdateReportDto,
  ): Promise<ReportDto> {
    return this.reports.update(actor, deploymentId, reportId, dto);
  }

  @Delete(':reportId')
  @Audited()
  @RequireObjectAction(Action.ReportManage)
  @ApiOperation({ summary: 'Delete a report with its placements' })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'deployment_not_found', 'report_not_found')
  async deleteReport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
  ): Promise<SuccessResponseDto> {
    await this.reports.remove(actor, deploymentId, reportId);
    return SUCCESS;
  }

  @Put(':reportId/connect-workbook')
  @Audited()
  @RequireObjectAction(Action.ReportRead)
  @ApiOperation({
    summary: 'Connect a report to a spot in the caller’s spreadsheet',
    description:
      'An upsert of one placement: the same placementId, or the same spreadsheet, sheet and anchor, updates ' +
      'that placement; otherwise a new one is recorded with a new id. ' +
      PLACEMENT_RULES,
  })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(...PLACEMENT_ERRORS)
  @ApiBodyExamples(ConnectReportDto, CONNECT_REPORT_EXAMPLES)
  connectReportToWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
    @Body() dto: ConnectReportDto,
  ): Promise<ReportDto> {
    return this.placements.connect(actor, deploymentId, reportId, dto);
  }

  @Delete(':reportId/connect-workbook')
  @Audited()
  @RequireObjectAction(Action.ReportRead)
  @ApiOperation({
    summary: 'Disconnect a report from one spot in a spreadsheet',
    description:
      'Removes exactly one placement, addressed by placementId, or by externalWorkbookId with sheetName and ' +
      'anchorCell (or a resultLocation naming both). sheetId alone addresses nothing; sent with a name it ' +
      'narrows: a placement stored under another sheet id is not matched. A target that matches nothing ' +
      'answers 200 and changes nothing. ' +
      PLACEMENT_RULES,
  })
  @ApiBodyExamples(DisconnectReportDto, DISCONNECT_REPORT_EXAMPLES, { required: false })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(...PLACEMENT_ERRORS)
  disconnectReportFromWorkbook(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
    @Body() dto: DisconnectReportDto,
  ): Promise<ReportDto> {
    return this.placements.disconnect(actor, deploymentId, reportId, dto ?? {});
  }

  @Put(':reportId/refresh')
  @Audited()
  @RequireObjectAction(Action.ReportRead)
  @ApiOperation({
    summary: 'Record a refresh of one placement',
    description:
      'Addresses the placement as disconnect does and records when and by whom it was refreshed. A target ' +
      'that matches nothing answers 200 and changes nothing. ' +
      PLACEMENT_RULES,
  })
  @ApiBodyExamples(RefreshReportDto, REFRESH_REPORT_EXAMPLES, { required: false })
  @ApiOkResponse({ type: ReportDto })
  @ApiErrors(...PLACEMENT_ERRORS)
  refreshReport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('reportId') reportId: number,
    @Body() dto: RefreshReportDto,
  ): Promise<ReportDto> {
    return this.placements.refresh(actor, deploymentId, reportId, dto ?? {});
  }
}
