import { Body, Controller, Delete, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { DevBranchDto, StartDevModeDto, WriteResponseDto } from './dto/data-model.dto.js';
import { DATA_MODEL_ROUTES, OK } from './data-model.routes.js';
import { ModelDevMode } from './model-dev-mode.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** Dev mode: your personal dev branch. */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class DevModeController {
  constructor(private readonly devMode: ModelDevMode) {}

  @Post('dev-mode')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Enter dev mode',
    description:
      'Forks your personal `dev-...` branch from `branchName` (default the deploy branch), or reopens it ' +
      'with its pending changes, and makes it your active branch.',
  })
  @ApiOkResponse({ type: DevBranchDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'branch_not_found', 'invalid_branch_name')
  startDevMode(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: StartDevModeDto,
  ): Promise<DevBranchDto> {
    return this.devMode.start(actor, id, dto);
  }

  @Delete('dev-mode')
  @Audited()
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({ summary: 'Leave dev mode (your dev branch and its pending changes are kept)' })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  async stopDevMode(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
  ): Promise<WriteResponseDto> {
    await this.devMode.stop(actor, id);
    return OK;
  }
}
