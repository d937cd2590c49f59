import { Body, Controller, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import { MergeDto, MergeResponseDto, MergeToDefaultDto } from './dto/data-model.dto.js';
import { DATA_MODEL_ROUTES, MERGE_ERRORS } from './data-model.routes.js';
import { ModelMerges } from './model-merges.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** Merges into the parent branch or the deploy branch. */
@ApiTags('Data Model')
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class MergesController {
  constructor(private readonly merges: ModelMerges) {}

  @Post('merge')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Merge a branch into its parent branch (git-flow merge)',
    description: 'Default: your active branch. A conflict is 409 listing the files and changes nothing.',
  })
  @ApiOkResponse({ type: MergeResponseDto })
  @ApiErrors(...MERGE_ERRORS)
  merge(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: MergeDto,
  ): Promise<MergeResponseDto> {
    return this.merges.merge(actor, id, dto);
  }

  @Post('merge-to-default')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({ summary: 'Merge a branch straight into the deploy (default) branch' })
  @ApiOkResponse({ type: MergeResponseDto })
  @ApiErrors(...MERGE_ERRORS)
  mergeToDefault(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: MergeToDefaultDto,
  ): Promise<MergeResponseDto> {
    return this.merges.mergeToDefault(actor, id, dto);
  }
}
