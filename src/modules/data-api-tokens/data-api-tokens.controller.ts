import { Body, Controller, Get, HttpCode, Post, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { DataApiTokens } from './data-api-tokens.service.js';
import {
  CreateDeploymentTokenDto,
  CreateEnvironmentTokenDto,
  DeploymentTokenDto,
  EnvironmentTokenResponseDto,
  EnvironmentTokensListDto,
  EnvironmentTokensQueryDto,
} from './dto/data-api-tokens.dto.js';

// The routes admit holders of SchemaUpdateDevBranches (which SchemaUpdate implies); the service
// asks SchemaUpdate of production and staging environments.
const WHO_MAY =
  'Needs `SchemaUpdate` on the deployment (a token reads the data as any security context, which is the power ' +
  "of changing the model's access rules); a development environment's tokens are its owner's only, with " +
  '`SchemaUpdateDevBranches`.';

const SIGNED =
  "Signed (HS256) for this environment only: production's with the deployment's `CUBEJS_API_SECRET`, a staging " +
  "or development environment's with its own secret (HMAC-SHA256 of `environment:<id>` keyed with " +
  '`CUBEJS_API_SECRET`, hex), so another environment refuses it.';

const ISSUE_ERRORS = [
  'validation_failed',
  'deployment_not_found',
  'environment_not_found',
  'data_api_not_configured',
  'token_limit_reached',
] as const;

@ApiTags('Deployments')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId/token')
export class DeploymentTokenController {
  constructor(private readonly tokens: DataApiTokens) {}

  @Post()
  @HttpCode(200)
  @Audited()
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Deployment token',
    description:
      "A data API token for the deployment's production environment: a JWT (HS256) signed with its " +
      '`CUBEJS_API_SECRET`, whose claims are `iat` and `exp` only (an empty security context), valid for ' +
      '`expiresIn` seconds (60 to 86400, default 86400). Not stored: issue another when it runs out. Needs ' +
      '`SchemaUpdate` on the deployment. Without `CUBEJS_API_SECRET` the answer is 409 `data_api_not_configured`.',
  })
  @ApiOkResponse({ type: DeploymentTokenDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'data_api_not_configured')
  deploymentToken(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() body: CreateDeploymentTokenDto,
  ): Promise<DeploymentTokenDto> {
    return this.tokens.deploymentToken(actor, deploymentId, body);
  }
}

@ApiTags('Environments')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId/environments/:environmentId')
export class EnvironmentTokensController {
  constructor(private readonly tokens: DataApiTokens) {}

  @Get('tokens')
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Get deployment environment tokens',
    description:
      "The environment's data API tokens that have not expired, oldest first, each with its security context. " +
      `Cursor (\`first\`, \`after\`) or legacy (\`limit\`, \`offset\`) paging. ${WHO_MAY}`,
  })
  @ApiOkResponse({ type: EnvironmentTokensListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'pagination_conflict',
    'deployment_not_found',
    'environment_not_found',
  )
  getDeploymentEnvironmentTokens(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('environmentId') environmentId: number,
    @Query() query: EnvironmentTokensQueryDto,
  ): Promise<EnvironmentTokensListDto> {
    return this.tokens.list(actor, deploymentId, environmentId, query);
  }

  @Post('tokens')
  @HttpCode(200)
  @Audited()
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Create deployment environment token',
    description:
      'A data API token for one environment (`environmentId` from `GET .../environments`): a JWT whose claims are ' +
      'exactly `security_context`, `iat`, `exp` (`expires_in` seconds on, 1 to 3600, default 3600) and, when ' +
      `given, \`scopes\`. ${SIGNED} Kept, sealed, until it expires (see the list); the audit log records the ` +
      `issuance without the token. ${WHO_MAY}`,
  })
  @ApiOkResponse({ type: EnvironmentTokenResponseDto })
  @ApiErrors(...ISSUE_ERRORS)
  createDeploymentEnvironmentToken(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('environmentId') environmentId: number,
    @Body() body: CreateEnvironmentTokenDto,
  ): Promise<EnvironmentTokenResponseDto> {
    return this.tokens.issue(actor, deploymentId, environmentId, body, 'api');
  }

  @Post('tokens-for-meta-sync')
  @HttpCode(200)
  @Audited()
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Create deployment environment token for meta sync',
    description:
      "As `POST .../tokens`, for a tool that syncs the data model's metadata (a BI tool's semantic layer sync): " +
      'its `scopes` claim is `["meta"]` whatever `scopes` says, so the data API answers it metadata and no data.',
  })
  @ApiOkResponse({ type: EnvironmentTokenResponseDto })
  @ApiErrors(...ISSUE_ERRORS)
  createDeploymentEnvironmentTokenForMetaSync(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @IdParam('environmentId') environmentId: number,
    @Body() body: CreateEnvironmentTokenDto,
  ): Promise<EnvironmentTokenResponseDto> {
    return this.tokens.issue(actor, deploymentId, environmentId, body, 'meta-sync');
  }
}
