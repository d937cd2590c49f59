import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { DeploymentLogsDto, DeploymentLogsQueryDto, DeploymentPodsDto } from './dto/runtime.dto.js';
import { RuntimeService } from './runtime.service.js';

const RUNTIME_ERRORS = ['runtime_unavailable', 'runtime_failed'] as const;

@ApiTags('Deployments')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId')
export class RuntimeController {
  constructor(private readonly runtime: RuntimeService) {}

  @Get('pods')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'List the pods currently scheduled for a deployment',
    description:
      'The pods labelled `deployment=<id>` and `source=production|dev` in the configured Kubernetes ' +
      'namespace, by name. With no runtime configured (`DEPLOYMENT_RUNTIME` unset or `none`) the list is empty.',
  })
  @ApiOkResponse({ type: DeploymentPodsDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found', ...RUNTIME_ERRORS)
  pods(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: PageQueryDto,
  ): Promise<DeploymentPodsDto> {
    return this.runtime.pods(actor, id, query);
  }

  @Get('logs')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary:
      'Recent runtime logs (tail) for a deployment. With no `source`, reads both the production API / ' +
      'worker pods and the dev-mode worker, merged chronologically; scope with `?source=production` or ' +
      '`?source=dev`.',
    description:
      'The last `first` lines (default 100), oldest first. `after` (the `endCursor` of a page) returns ' +
      'the lines written since, up to `first`; a page with no new lines keeps that cursor as its ' +
      '`endCursor`, so asking again with it follows the log. With no runtime configured, the lines are ' +
      'the platform’s own records of the deployment (its builds’ logs), `pod` naming the job run.',
  })
  @ApiOkResponse({ type: DeploymentLogsDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'deployment_not_found',
    'pod_not_found',
    ...RUNTIME_ERRORS,
  )
  logs(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: DeploymentLogsQueryDto,
  ): Promise<DeploymentLogsDto> {
    return this.runtime.logs(actor, id, query);
  }
}
