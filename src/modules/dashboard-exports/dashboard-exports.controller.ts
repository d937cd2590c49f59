import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  StreamableFile,
  UseFilters,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { Audited } from '../../core/audit/audited.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { DashboardExportsService } from './dashboard-exports.service.js';
import {
  DashboardExportJobDto,
  DashboardExportStatusDto,
  DownloadDashboardExportQueryDto,
  StartDashboardExportDto,
} from './dto/dashboard-export.dto.js';

const JOB_ID = {
  name: 'jobId',
  description: 'The `jobId` the start answered',
  schema: { type: 'string' as const, format: 'uuid' },
};

const BINARY = { schema: { type: 'string' as const, format: 'binary' } };

@ApiTags('Dashboard Exports')
@UseFilters(DeploymentScopeFilter)
@RequireObjectAction(Action.WorkbookManage)
@Controller('api/v1/deployments/:deploymentId/dashboard-exports')
export class DashboardExportsController {
  constructor(private readonly exports: DashboardExportsService) {}

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Export a dashboard as PNG or PDF',
    description:
      'Starts rendering a published dashboard of the deployment (`dashboardId` or `dashboardPublicId`, exactly ' +
      'one; another deployment’s is a 404) and answers at once with the `jobId` to poll and download it by ' +
      'until `expiresAt` (`DASHBOARD_EXPORT_TTL_SECONDS` after the start, 5 minutes by default). `filters`, ' +
      '`timeGrains` and `memberSwitchers` apply as a scheduled notification applies them. Needs manage access ' +
      'to the dashboard’s workbook. The reports are read as the caller, or, for a tenant admin, as `renderAs`: ' +
      'an active console user (by `userId` or `email`), or an embed user (`embedTenantName` and `externalId`, ' +
      'provisioned when new) of a tenant the workbook is shared with (else 403), whose `groups`, ' +
      '`userAttributes` and `securityContext` hold for this render only. 403 when the account restricts data ' +
      'downloads; 429 when the account has `DASHBOARD_EXPORT_MAX_IN_FLIGHT` exports pending or processing.',
  })
  @ApiOkResponse({ type: DashboardExportJobDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'dashboard_not_found',
    'user_not_found',
    'unknown_groups',
    'invalid_embed_tenant_name',
    'invalid_external_id',
    'embed_user_limit_reached',
    'export_subject_not_shared',
    'data_downloads_restricted',
    'dashboard_export_limit_reached',
    'queue_unavailable',
  )
  startExport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: StartDashboardExportDto,
  ): Promise<DashboardExportJobDto> {
    return this.exports.start(actor, deploymentId, dto);
  }

  @Get(':jobId')
  @ApiOperation({
    summary: 'Get the status of a dashboard export',
    description:
      '`pending` and `processing`: poll again; `completed`: download it (`contentType` says what it is); ' +
      '`failed`: `error` says why. 404 once it expired, and for an export another user started.',
  })
  @ApiParam(JOB_ID)
  @ApiOkResponse({ type: DashboardExportStatusDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dashboard_export_not_found')
  getExportStatus(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('jobId') jobId: string,
  ): Promise<DashboardExportStatusDto> {
    return this.exports.status(actor, deploymentId, jobId);
  }

  @Get(':jobId/download')
  @ApiOperation({
    summary: 'Download a completed dashboard export',
    description:
      'The file as an attachment named `dashboard.png` or `dashboard.pdf`, or `<filename>.<format>` with ' +
      '`?filename=`. 409 while it renders (poll its status), 422 when it failed (start a new export), 404 once ' +
      'it expired and for an export another user started; 403 when the account restricts data downloads.',
  })
  @ApiParam(JOB_ID)
  @ApiProduces('image/png', 'application/pdf')
  @ApiOkResponse({
    description: 'The rendered dashboard',
    content: { 'image/png': BINARY, 'application/pdf': BINARY },
  })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'dashboard_export_not_found',
    'dashboard_export_not_ready',
    'dashboard_export_failed',
    'data_downloads_restricted',
  )
  async downloadExport(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('jobId') jobId: string,
    @Query() query: DownloadDashboardExportQueryDto,
  ): Promise<StreamableFile> {
    const file = await this.exports.download(actor, deploymentId, jobId, query.filename);
    return new StreamableFile(file.content, {
      type: file.contentType,
      length: file.content.length,
      disposition: contentDisposition(file.filename),
    });
  }
}

/** `attachment` with an ASCII fallback name and the exact one in RFC 5987 form. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
