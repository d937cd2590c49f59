import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { Audited } from '../../core/audit/audited.decorator.js';

/** Branches: list, create, delete, the staging toggle. */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class BranchesController {
  constructor(private readonly branches: ModelBranches) {}

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
