import { Body, Controller, Delete, Get, Post, Put, Query, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import {
  Authenticated,
  CurrentPrincipal,
  RequireActions,
  RequireObjectAction,
} from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { refuseBody } from '../../core/http/no-body.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import { DeploymentsService } from './deployments.service.js';
import {
  AdvanceCreationStepDto,
  CreateDeploymentDto,
  DeploymentDeleteResponseDto,
  DeploymentDto,
  DeploymentSettingsDto,
  DeploymentsListDto,
  DeploymentsQueryDto,
  RegionsListDto,
  UpdateDeploymentDto,
} from './dto/deployment.dto.js';
import { DeploymentVersionsListDto } from './dto/deployment-version.dto.js';
import { RegionsService } from './regions.service.js';
import { ReleasesService } from './releases.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_DEPLOYMENT_EXAMPLES, UPDATE_DEPLOYMENT_EXAMPLES } from './deployment.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Deployments')
@Controller('api/v1/deployments')
export class DeploymentsController {
  constructor(
    private readonly deployments: DeploymentsService,
    private readonly releases: ReleasesService,
  ) {}

  @Get()
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({ summary: 'List deployments the caller can read' })
  @ApiOkResponse({ type: DeploymentsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'pagination_conflict')
  getDeployments(
    @CurrentPrincipal() actor: Principal,
    @Query() query: DeploymentsQueryDto,
  ): Promise<DeploymentsListDto> {
    return this.deployments.list(actor, query);
  }

  @Get(':deploymentId')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({ summary: 'Get a deployment' })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  getDeployment(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
  ): Promise<DeploymentDto> {
    return this.deployments.get(actor, id);
  }

  @Get(':deploymentId/settings')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'Every setting of a deployment in one payload',
    description: 'The same payload PUT /deployments/{deploymentId} answers. Secrets are never part of it.',
  })
  @ApiOkResponse({ type: DeploymentSettingsDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  getDeploymentSettings(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
  ): Promise<DeploymentSettingsDto> {
    return this.deployments.settings(actor, id);
  }

  @Get(':deploymentId/versions')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'The versions the deployment can switch to',
    description:
      'The head of each release channel (its highest release in semantic-version order) and the versions ' +
      'the deployment ran before, once per channel; by channel, newest first. `version` is the image tag ' +
      '(`v1.6.2`), `releaseChannelVersion` what PUT /deployments/{deploymentId} takes (`1.6.2`).',
  })
  @ApiOkResponse({ type: DeploymentVersionsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  listDeploymentVersions(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: PageQueryDto,
  ): Promise<DeploymentVersionsListDto> {
    return this.releases.versions(actor, id, query);
  }

  @Put(':deploymentId')
  @Audited()
  @RequireObjectAction(Action.DeploymentUpdate)
  @ApiOperation({
    summary: 'Update a deployment',
    description:
      'A partial merge: omitted fields are left alone and templateVariables is merged key by key. ' +
      'releaseChannelVersion must be one of the versions GET .../versions lists for the target channel; ' +
      'a version other than the head is held (releaseChannelVersionHold), the head follows the channel.',
  })
  @ApiOkResponse({ type: DeploymentSettingsDto })
  @ApiErrors('validation_failed', 'release_version_invalid', 'deployment_not_found')
  @ApiBodyExamples(UpdateDeploymentDto, UPDATE_DEPLOYMENT_EXAMPLES)
  updateDeployment(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: UpdateDeploymentDto,
  ): Promise<DeploymentSettingsDto> {
    return this.deployments.update(actor, id, dto);
  }

  @Post(':deploymentId/creation-step/advance')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.DeploymentUpdate)
  @ApiOperation({
    summary: 'Advance the setup wizard',
    description:
      'To a later step of project, upload, schema, github, ssh, databases, ready (steps may be skipped), ' +
      'or to demo from project; the current step again changes nothing. Anything else is 400 creation_step_invalid.',
  })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiErrors('validation_failed', 'creation_step_invalid', 'deployment_not_found')
  advanceCreationStep(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: AdvanceCreationStepDto,
  ): Promise<DeploymentDto> {
    return this.deployments.advanceCreationStep(actor, id, dto.creationStep);
  }

  @Post(':deploymentId/creation-step/reset')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.DeploymentUpdate)
  @ApiOperation({ summary: 'Reset the setup wizard to its first step (project)' })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  resetCreationStep(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() body: unknown,
  ): Promise<DeploymentDto> {
    refuseBody(body, 'creation-step/reset');
    return this.deployments.resetCreationStep(actor, id);
  }

  @Delete(':deploymentId')
  @Audited()
  @RequireObjectAction(Action.DeploymentDelete)
  @ApiOperation({ summary: 'Delete a deployment and everything in it' })
  @ApiOkResponse({ type: DeploymentDeleteResponseDto })
  @ApiErrors('validation_failed', 'deployment_not_found')
  async deleteDeployment(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
  ): Promise<DeploymentDeleteResponseDto> {
    await this.deployments.remove(actor, id);
    return { success: true };
  }
}

@ApiTags('Deployment Creation')
@Controller('build/api/v1/deployments')
export class DeploymentCreationController {
  constructor(private readonly deployments: DeploymentsService) {}

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.DeploymentCreate)
  @ApiOperation({ summary: 'Create a deployment with an empty starter project and queue its first build' })
  @ApiOkResponse({ type: DeploymentDto })
  @ApiErrors('validation_failed', 'unknown_region', 'release_version_invalid', 'queue_unavailable')
  @ApiBodyExamples(CreateDeploymentDto, CREATE_DEPLOYMENT_EXAMPLES)
  createDeployment(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: CreateDeploymentDto,
  ): Promise<DeploymentDto> {
    return this.deployments.create(actor, dto);
  }
}

@ApiTags('Regions')
@Controller('api/v1/regions')
export class RegionsController {
  constructor(private readonly regions: RegionsService) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'Regions available to the account' })
  @ApiOkResponse({ type: RegionsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  listRegions(@Query() query: PageQueryDto): Promise<RegionsListDto> {
    return this.regions.list(query);
  }
}
