import {
  Body,
  Controller,
  createParamDecorator,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  UseFilters,
  type ExecutionContext,
} from '@nestjs/common';
import type { Request } from 'express';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiBodyExamples, bodyExamples } from '../../core/openapi/api-body-examples.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto, type Page } from '../../core/http/pagination.js';
import { JsonBodyLimit } from '../../core/http/route-behaviour.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { DbtIntegrations } from './dbt-integrations.service.js';
import { DbtSyncs } from './dbt-sync.service.js';
import { DbtIntegrationDto, PutDbtIntegrationDto } from './dto/dbt-integration.dto.js';
import {
  DbtSyncCancelResponseDto,
  DbtSyncGeneratedFilesListDto,
  DbtSyncLogListDto,
  DbtSyncResponseDto,
  DbtSyncResultDto,
  DbtSyncRunListDto,
  DbtSyncStatusDto,
  ListDbtSyncsQueryDto,
  StartDbtSyncDto,
  type DbtGeneratedFileContentDto,
  type DbtSyncLogEntryDto,
  type DbtSyncRunDto,
} from './dto/dbt-sync.dto.js';
import { Audited } from '../../core/audit/audited.decorator.js';

const START_EXAMPLES = bodyExamples(StartDbtSyncDto, {
  tracked: { summary: 'Sync the integration’s branch', value: {} },
  ref: { summary: 'Sync a pull request’s branch', value: { ref: 'feature/orders' } },
  files: {
    summary: 'Keep the generated files with the sync instead of committing them',
    value: { ref: 'main', output: 'files' },
  },
});

/**
 * `manifest` of the start body as the JSON parser made it: the DTO leaves it out of the
 * validation pipe's copy of the body (a real manifest is megabytes), the service checks it.
 */
const PostedManifest = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): unknown =>
    (ctx.switchToHttp().getRequest<Request>().body as { manifest?: unknown } | undefined)?.manifest,
);

const SYNC_ID_PARAM = ApiParam({ name: 'syncJobId', schema: { type: 'string', format: 'uuid' } });

@ApiTags('dbt Sync')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId/dbt-integration')
export class DbtIntegrationController {
  constructor(private readonly integrations: DbtIntegrations) {}

  @Get()
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'Get the dbt integration of a deployment',
    description:
      'The dbt repository syncs read from. Credentials are never returned: `hasCredentials` says whether any are stored.',
  })
  @ApiOkResponse({ type: DbtIntegrationDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dbt_integration_not_found')
  getDbtIntegration(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
  ): Promise<DbtIntegrationDto> {
    return this.integrations.get(actor, deploymentId);
  }

  @Put()
  @Audited()
  @RequireObjectAction(Action.DeploymentUpdate)
  @ApiOperation({
    summary: 'Set the dbt integration of a deployment',
    description:
      'Creates or replaces the repository, branch and project directory. `credentials` left out keeps the stored ' +
      'ones (unless the repository’s host changes), `null` removes them; sending `credentials` also needs ' +
      'SecretsManage. The URL may not hold credentials, and its transport must be allowed (`DBT_GIT_PROTOCOLS`).',
  })
  @ApiOkResponse({ type: DbtIntegrationDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'invalid_dbt_repository_url',
    'invalid_branch_name',
    'invalid_path',
  )
  putDbtIntegration(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: PutDbtIntegrationDto,
  ): Promise<DbtIntegrationDto> {
    return this.integrations.put(actor, deploymentId, dto);
  }
}

@ApiTags('dbt Sync')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId/dbt-sync')
export class DbtSyncController {
  constructor(private readonly syncs: DbtSyncs) {}

  @Get()
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'List dbt syncs for a deployment',
    description: 'Newest first, with cursor paging; filter by `status` and `trigger`.',
  })
  @ApiOkResponse({ type: DbtSyncRunListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  listDbtSyncs(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: ListDbtSyncsQueryDto,
  ): Promise<Page<DbtSyncRunDto>> {
    return this.syncs.list(actor, deploymentId, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  // The one route whose JSON body may be the size of a real dbt manifest.
  @JsonBodyLimit((config) => config.dbtSync.manifestMaxBytes)
  @ApiOperation({
    summary: 'Start a dbt sync for a deployment',
    description:
      'Converts the dbt project’s compiled manifest (read from the dbt repository at `ref`, or posted in the body) ' +
      'into cube files, committed on a new branch (`output: branch`) or kept with the sync (`output: files`). ' +
      'Answers at once; poll `GET .../dbt-sync/{syncJobId}` until COMPLETED or FAILED. This route takes a JSON ' +
      'body up to `DBT_MANIFEST_MAX_BYTES` (default 50 MB).',
  })
  @ApiOkResponse({ type: DbtSyncResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'invalid_dbt_ref',
    'invalid_branch_name',
    'branch_exists',
    'dbt_integration_not_configured',
    'invalid_dbt_repository_url',
    'invalid_manifest',
    'payload_too_large',
    'queue_unavailable',
  )
  @ApiBodyExamples(StartDbtSyncDto, START_EXAMPLES, { required: false })
  startDbtSync(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: StartDbtSyncDto,
    @PostedManifest() manifest: unknown,
  ): Promise<DbtSyncResponseDto> {
    return this.syncs.start(actor, deploymentId, dto, manifest);
  }

  @Get(':syncJobId')
  @RequireObjectAction(Action.SchemaRead)
  @SYNC_ID_PARAM
  @ApiOperation({
    summary: 'Get the status of a dbt sync',
    description:
      'COMPLETED and FAILED are the only terminal statuses; a cancelled sync reads FAILED here (the history says ' +
      'CANCELLED). `percentComplete` is derived from the stage, for display only.',
  })
  @ApiOkResponse({ type: DbtSyncStatusDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dbt_sync_not_found')
  getDbtSyncStatus(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('syncJobId') syncJobId: string,
  ): Promise<DbtSyncStatusDto> {
    return this.syncs.status(actor, deploymentId, syncJobId);
  }

  @Get(':syncJobId/result')
  @RequireObjectAction(Action.SchemaRead)
  @SYNC_ID_PARAM
  @ApiOperation({
    summary: 'Get the result of a completed dbt sync',
    description: '409 `dbt_sync_not_completed` while the sync runs, or when it failed or was cancelled.',
  })
  @ApiOkResponse({ type: DbtSyncResultDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dbt_sync_not_found', 'dbt_sync_not_completed')
  getDbtSyncResult(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('syncJobId') syncJobId: string,
  ): Promise<DbtSyncResultDto> {
    return this.syncs.result(actor, deploymentId, syncJobId);
  }

  @Get(':syncJobId/logs')
  @RequireObjectAction(Action.SchemaRead)
  @SYNC_ID_PARAM
  @ApiOperation({
    summary: 'Get the log of a dbt sync',
    description:
      'Oldest first, every attempt’s lines, with cursor paging. Each line names its phase; the line closing a ' +
      'phase carries its `durationMs`.',
  })
  @ApiOkResponse({ type: DbtSyncLogListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', 'dbt_sync_not_found')
  getDbtSyncLogs(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('syncJobId') syncJobId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<DbtSyncLogEntryDto>> {
    return this.syncs.logs(actor, deploymentId, syncJobId, query);
  }

  @Get(':syncJobId/generated-files')
  @RequireObjectAction(Action.SchemaRead)
  @SYNC_ID_PARAM
  @ApiOperation({
    summary: 'Get the files generated by a dbt sync that did not commit them',
    description:
      'For a sync started with `output: files`, once COMPLETED; by path, with cursor paging. A sync with ' +
      '`output: branch` committed its files: 409 `dbt_sync_files_on_branch`.',
  })
  @ApiOkResponse({ type: DbtSyncGeneratedFilesListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'deployment_not_found',
    'dbt_sync_not_found',
    'dbt_sync_files_on_branch',
    'dbt_sync_not_completed',
  )
  getDbtSyncGeneratedFiles(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('syncJobId') syncJobId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<DbtGeneratedFileContentDto>> {
    return this.syncs.generatedFiles(actor, deploymentId, syncJobId, query);
  }

  @Delete(':syncJobId')
  @Audited()
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @SYNC_ID_PARAM
  @ApiOperation({
    summary: 'Cancel a running dbt sync',
    description:
      'A queued sync is cancelled at once; a running one stops before its next phase and ends CANCELLED. A branch ' +
      'already written is kept. A finished sync: 409 `dbt_sync_finished`.',
  })
  @ApiOkResponse({ type: DbtSyncCancelResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'dbt_sync_not_found', 'dbt_sync_finished')
  cancelDbtSync(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Param('syncJobId') syncJobId: string,
  ): Promise<DbtSyncCancelResponseDto> {
    return this.syncs.cancel(actor, deploymentId, syncJobId);
  }
}
