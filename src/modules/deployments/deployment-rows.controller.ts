import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { CREATE_DEPLOYMENT_EXAMPLES } from './deployment.examples.js';
import { DeploymentsService } from './deployments.service.js';
import { CreateDeploymentDto, DeploymentDto } from './dto/deployment.dto.js';

/**
 * `POST /api/v1/deployments`, which the command-line tool calls to create a deployment without a
 * scaffold (docs/command-line-tool.md): the create of `POST /build/api/v1/deployments`, less the
 * starter project and the first build.
 */
@ApiTags('Deployment Creation')
@Controller('api/v1/deployments')
export class DeploymentRowsController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.DeploymentCreate)
  @ApiOperation({
    summary: 'Create a deployment without a scaffold',
    description:
      'The body, rules and answer of `POST /build/api/v1/deployments`, but the data model gets no starter ' +
      'project and no build is queued: the deploy branch starts with one commit of no files (none at all when ' +
      '`creationMethod` is `github`), and the first build comes with the first code (an upload, a commit, a ' +
      'GitHub connection). Nothing is queued, so a job queue that is down does not refuse it.',
  })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiErrors('validation_failed', 'unknown_region', 'release_version_invalid')
  @ApiBodyExamples(CreateDeploymentDto, CREATE_DEPLOYMENT_EXAMPLES)
  createDeploymentWithoutScaffold(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: CreateDeploymentDto,
  ): Promise<DeploymentDto> {
    return this.deployments.create(actor, dto, { scaffold: false });
  }
}
