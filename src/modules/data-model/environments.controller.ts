import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { EnvironmentsListDto, EnvironmentsQueryDto } from './dto/environments.dto.js';
import { ModelEnvironments } from './model-environments.service.js';

@ApiTags('Environments')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId/environments')
export class EnvironmentsController {
  constructor(private readonly environments: ModelEnvironments) {}

  @Get()
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'Get deployment environments',
    description:
      'Production (the deploy branch), staging (each shared branch with its staging environment on) and ' +
      'development (each personal dev-mode branch, with its user), in that order and by branch name, ' +
      'each with the addresses of its APIs. Cursor (`first`, `after`) or legacy (`limit`, `offset`) paging.',
  })
  @ApiOkResponse({ type: EnvironmentsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'pagination_conflict', 'deployment_not_found')
  getDeploymentEnvironments(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: EnvironmentsQueryDto,
  ): Promise<EnvironmentsListDto> {
    return this.environments.list(actor, id, query);
  }
}
