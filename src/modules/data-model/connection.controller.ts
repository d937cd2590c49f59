import { Body, Controller, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import type { DeploymentDto } from '../deployments/dto/deployment.dto.js';
import { DeploymentDto as DeploymentResponse } from '../deployments/dto/deployment.dto.js';
import { ConnectGitHubDto, PullDto, PullResponseDto } from './dto/data-model.dto.js';
import { DATA_MODEL_ROUTES } from './data-model.routes.js';
import { ModelConnection } from './model-connection.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** The connected git-host repository: connect and pull. */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class ConnectionController {
  constructor(private readonly connection: ModelConnection) {}

  @Post('pull')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({ summary: 'Pull the latest for a branch from its remote and rebuild if changed' })
  @ApiOkResponse({ type: PullResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'remote_not_connected',
    'branch_not_writable',
    'remote_failed',
    'merge_conflict',
    'nothing_to_merge',
    'queue_unavailable',
    'invalid_branch_name',
  )
  pull(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: PullDto,
  ): Promise<PullResponseDto> {
    return this.connection.pull(actor, id, dto);
  }

  @Post('github/connect')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Connect a deployment to a GitHub repository and trigger a build',
    description:
      'The deploy branch is `deployBranchName`, or `branch` as the reference command-line tool sends it ' +
      '(both given and different: 400 `validation_failed`), else the repository’s default branch.',
  })
  @ApiOkResponse({ type: DeploymentResponse })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'github_not_configured',
    'github_installation_not_found',
    'github_repository_not_found',
    'github_unavailable',
    'invalid_branch_name',
    'remote_failed',
    'queue_unavailable',
  )
  connect(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: ConnectGitHubDto,
  ): Promise<DeploymentDto> {
    return this.connection.connect(actor, id, dto);
  }
}
