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
import { AuditDetails, type AuditNote } from '../../core/audit/audit-details.js';

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
    description:
      'Default: your active branch. A conflict is 409 listing the files and changes nothing. Into the deploy ' +
      'branch, its merge gate applies (409 `merge_gate_unmet` naming what is missing; `overrideMergeGate` for ' +
      'tenant admins, recorded in the audit log).',
  })
  @ApiOkResponse({ type: MergeResponseDto })
  @ApiErrors(...MERGE_ERRORS)
  merge(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: MergeDto,
    @AuditDetails() note: AuditNote,
  ): Promise<MergeResponseDto> {
    return this.merges.merge(actor, id, dto, note);
  }

  @Post('merge-to-default')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdate)
  @ApiOperation({
    summary: 'Merge a branch straight into the deploy (default) branch',
    description:
      'The deploy branch’s merge gate applies: approvals, no request for changes and no newly broken content ' +
      'as the deployment sets them, else 409 `merge_gate_unmet` naming what is missing and nothing changes. ' +
      '`overrideMergeGate: true` lets a tenant admin merge anyway (others: 403 ' +
      '`merge_gate_override_forbidden`); the audit entry records the override and what was missing.',
  })
  @ApiOkResponse({ type: MergeResponseDto })
  @ApiErrors(...MERGE_ERRORS)
  mergeToDefault(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: MergeToDefaultDto,
    @AuditDetails() note: AuditNote,
  ): Promise<MergeResponseDto> {
    return this.merges.mergeToDefault(actor, id, dto, note);
  }
}
