import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Post,
  Put,
  Query,
  StreamableFile,
  UseFilters,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { PageQueryDto, type Page } from '../../core/http/pagination.js';
import {
  BranchEnvelopeDto,
  BranchesDto,
  CreateBranchDto,
  DeleteBranchQueryDto,
  DevBranchDto,
  StagingEnvironmentDto,
  WriteResponseDto,
  type BranchDto,
} from './dto/data-model.dto.js';
import { DATA_MODEL_ROUTES, legacy, OK } from './data-model.routes.js';
import { ModelBranches } from './model-branches.service.js';
import { ModelDiffDto, ModelDiffQueryDto } from './dto/model-diff.dto.js';
import { ModelReview } from './model-review.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** Branches: list, create, delete, the staging toggle. */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class BranchesController {
  constructor(
    private readonly branches: ModelBranches,
    private readonly review: ModelReview,
  ) {}

  @Get('branches')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({ summary: 'List branches', description: 'In name order; `lastHash` is the head commit.' })
  @ApiOkResponse({ type: BranchesDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  async listBranches(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: PageQueryDto,
  ): Promise<Page<BranchDto> & { data: BranchDto[] }> {
    return legacy(await this.branches.list(actor, id, query));
  }

  @Get('branches/diff')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'Review a branch: the member diff of two compiled models',
    description:
      'Compiles both sides (in the sandbox, reusing kept verdicts) and answers the cubes and views added, ' +
      'removed, renamed or changed, each member change (measures, dimensions, segments, joins, ' +
      'pre-aggregations) marked breaking or not with its reasons, the files that differ, and the stored ' +
      'content head would break (`impact`). `head` defaults to your active dev-mode branch (else the deploy ' +
      'branch); `devMode=true` takes your active dev-mode branch with its pending changes. `base` defaults ' +
      'to head’s parent branch, else the deploy branch. A side that does not compile is 200 with ' +
      '`valid: false` and its errors; `cubes` and `impact` are then empty.',
  })
  @ApiOkResponse({ type: ModelDiffDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'not_in_dev_mode',
    'invalid_branch_name',
    'compiler_unavailable',
    'compile_limit_reached',
  )
  branchDiff(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: ModelDiffQueryDto,
  ): Promise<ModelDiffDto> {
    return this.review.diff(actor, id, query);
  }

  @Get('branches/diff/patch')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'Review a branch: the unified diff of its files',
    description:
      'The files of head against base (the same parameters as `branches/diff`), as `git diff` prints ' +
      'them, paths relative to the project root.',
  })
  @ApiProduces('text/x-diff')
  @ApiOkResponse({
    description: 'The unified diff; empty when the two sides hold the same files',
    content: { 'text/x-diff': { schema: { type: 'string' } } },
  })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'not_in_dev_mode',
    'invalid_branch_name',
  )
  async branchDiffPatch(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: ModelDiffQueryDto,
  ): Promise<StreamableFile> {
    const patch = await this.review.patch(actor, id, query);
    return new StreamableFile(patch, { type: 'text/x-diff; charset=utf-8', length: patch.length });
  }

  @Post('branches')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Create a shared branch',
    description:
      'From `from` (default the deploy branch); with `activate` (or `enterDevMode`) you enter dev mode on it.',
  })
  @ApiOkResponse({ type: DevBranchDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'invalid_branch_name',
    'branch_exists',
  )
  createBranch(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: CreateBranchDto,
  ): Promise<DevBranchDto> {
    return this.branches.create(actor, id, dto);
  }

  @Delete('branches')
  @Audited()
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Delete a branch',
    description:
      'Deletes its git ref; its children move to its parent and anyone on it in dev mode back to the deploy ' +
      'branch. With `removeOnUpstream` the branch is deleted on the connected repository first.',
  })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'invalid_branch_name',
    'deploy_branch_protected',
    'remote_not_connected',
    'remote_failed',
  )
  async deleteBranch(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: DeleteBranchQueryDto,
  ): Promise<WriteResponseDto> {
    await this.branches.delete(actor, id, query);
    return OK;
  }

  @Put('branches/staging-environment')
  @Audited()
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Turn a shared branch’s always-on staging environment on or off',
    description:
      'Served at `<deploymentUrl>/dev-mode/{branchName}/cubejs-api/v1`. Only shared branches qualify.',
  })
  @ApiOkResponse({ type: BranchEnvelopeDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'staging_not_allowed',
    'not_in_dev_mode',
    'invalid_branch_name',
  )
  setStaging(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: StagingEnvironmentDto,
  ): Promise<{ data: BranchDto }> {
    return this.branches.setStaging(actor, id, dto);
  }
}
