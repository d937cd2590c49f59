import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ResourcePoliciesDto,
  ResourcePolicyQueryDto,
  SetGroupResourcePolicyDto,
  SetUserResourcePolicyDto,
} from './dto/resource-policy.dto.js';
import { ResourcePoliciesService } from './resource-policies.service.js';

const NOT_FOUND = [
  'deployment_not_found',
  'folder_not_found',
  'workbook_not_found',
  'report_not_found',
] as const;

const ONE_ACTION =
  "Replaces the principal's grants on this one resource with `action` (omitted or null: removes them); its " +
  'grants on other resources stay. The resource is a Deployment, Folder, Workbook or Report of the account, or ' +
  'Global (every resource; its `resourceId` is not read). Answers the policies of the resource.';

/**
 * The command-line tool's view of policies, from the resource: the grants of
 * `/users/{id}/policies` and `/groups/{id}/policies` (docs/command-line-tool.md). Admin only, as those are.
 */
@ApiTags('Groups')
@Controller('api/v1/resource-policies')
@RequireActions(Action.All)
export class ResourcePoliciesController {
  constructor(private readonly policies: ResourcePoliciesService) {}

  @Get()
  @ApiOperation({
    summary: 'The user and group policies of one resource',
    description:
      'The grants users hold directly and groups hold on the resource, as `GET /users/{id}/policies` and ' +
      '`GET /groups/{id}/policies` list them per principal (grants of custom roles are listed with the role). ' +
      'Only grants naming this resource: those on every resource of its type (`["All"]`) are read with ' +
      '`resourceType` and the principal. Also served with a trailing slash, as the command-line tool calls it.',
  })
  @ApiOkResponse({ type: ResourcePoliciesDto })
  @ApiErrors('validation_failed', 'unsupported_resource_type', ...NOT_FOUND)
  getResourcePolicies(
    @CurrentPrincipal() actor: Principal,
    @Query() query: ResourcePolicyQueryDto,
  ): Promise<ResourcePoliciesDto> {
    return this.policies.get(actor, query);
  }

  @Put('user')
  @Audited()
  @ApiOperation({
    summary: "Set or clear a user's policy on one resource",
    description: `The user's direct grants, as \`PUT /users/{id}/policies\` stores them. ${ONE_ACTION}`,
  })
  @ApiOkResponse({ type: ResourcePoliciesDto })
  @ApiErrors('validation_failed', 'unsupported_resource_type', 'user_not_found', ...NOT_FOUND)
  setUserResourcePolicy(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: SetUserResourcePolicyDto,
  ): Promise<ResourcePoliciesDto> {
    return this.policies.setUser(actor, dto);
  }

  @Put('group')
  @Audited()
  @ApiOperation({
    summary: "Set or clear a group's policy on one resource",
    description: `The group's grants, as \`PUT /groups/{id}/policies\` stores them; its members hold them. ${ONE_ACTION}`,
  })
  @ApiOkResponse({ type: ResourcePoliciesDto })
  @ApiErrors('validation_failed', 'unsupported_resource_type', 'group_not_found', ...NOT_FOUND)
  setGroupResourcePolicy(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: SetGroupResourcePolicyDto,
  ): Promise<ResourcePoliciesDto> {
    return this.policies.setGroup(actor, dto);
  }
}
