import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import { EnvVariablesListDto, SetEnvVariablesDto } from './dto/env-vars.dto.js';
import { SET_ENV_VARIABLES_EXAMPLES } from './deployment.examples.js';
import { EnvVarsService } from './env-vars.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Deployments')
@Controller('api/v1/deployments/:deploymentId/env-vars')
export class EnvVarsController {
  constructor(private readonly envVars: EnvVarsService) {}

  @Get()
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'List the environment variables of a deployment',
    description:
      'In name order, with cursor paging. The value of a variable whose name contains PASS, SECRET, TOKEN, ' +
      'KEY or CREDENTIAL (in any case) reads back as `[ENCRYPTED]`.',
  })
  @ApiOkResponse({ type: EnvVariablesListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'deployment_not_found')
  getEnvVariables(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Query() query: PageQueryDto,
  ): Promise<EnvVariablesListDto> {
    return this.envVars.list(actor, deploymentId, query);
  }

  @Put()
  @Audited()
  @RequireObjectAction(Action.SecretsManage)
  @ApiOperation({
    summary: 'Set environment variables of a deployment',
    description:
      'Upserts by name; variables left out keep their values and `value: null` removes one. New names must ' +
      'match `^[A-Za-z_][A-Za-z0-9_]*$` (a stored name may be resent as it is); the `[ENCRYPTED]` placeholder ' +
      'is refused. Answers every variable of the deployment, secret-named values masked.',
  })
  @ApiOkResponse({ type: EnvVariablesListDto })
  @ApiErrors(
    'validation_failed',
    'duplicate_env_var_name',
    'env_var_placeholder',
    'invalid_env_var_name',
    'too_many_env_vars',
    'deployment_not_found',
  )
  @ApiBodyExamples(SetEnvVariablesDto, SET_ENV_VARIABLES_EXAMPLES)
  setEnvVariables(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') deploymentId: number,
    @Body() dto: SetEnvVariablesDto,
  ): Promise<EnvVariablesListDto> {
    return this.envVars.set(actor, deploymentId, dto.env_variables);
  }
}
