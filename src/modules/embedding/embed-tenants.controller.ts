import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import {
  CreateEmbedGroupDto,
  EmbedGroupDto,
  EmbedGroupMembersDto,
  EmbedGroupMembersMutationDto,
  EmbedGroupsListDto,
  UpdateEmbedGroupDto,
} from './dto/embed-group.dto.js';
import { EmbedTenantsListDto, EmbedTenantsQueryDto } from './dto/embed-tenant.dto.js';
import {
  EmbedUserDto,
  EmbedUsersListDto,
  EmbedUsersQueryDto,
  ProvisionEmbedUserDto,
  ProvisionEmbedUsersDto,
  ProvisionEmbedUsersResponseDto,
} from './dto/embed-user.dto.js';
import { EmbedGroupsService } from './embed-groups.service.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { EmbedUsersService } from './embed-users.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { PROVISION_EMBED_USER_EXAMPLES, PROVISION_EMBED_USERS_EXAMPLES } from './embedding.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

const TENANT_PARAM = {
  name: 'embedTenantName',
  description: 'The embed tenant (the name used to generate embed sessions); lowercased here',
};

/** Embed tenants, their users and their groups. Every route is admin only. */
@ApiTags('Embed Tenants')
@Controller('api/v1/embed-tenants')
@RequireActions(Action.All)
export class EmbedTenantsController {
  constructor(
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersService,
    private readonly groups: EmbedGroupsService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List embed tenants', description: 'By name; `search` matches part of the name.' })
  @ApiOkResponse({ type: EmbedTenantsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  listEmbedTenants(
    @CurrentPrincipal() actor: Principal,
    @Query() query: EmbedTenantsQueryDto,
  ): Promise<EmbedTenantsListDto> {
    return this.tenants.list(actor, query);
  }

  @Delete(':embedTenantName')
  @Audited()
  @HttpCode(204)
  @ApiParam({ name: 'embedTenantName', description: 'Exactly as stored (lowercase); never lowercased here' })
  @ApiOperation({
    summary: 'Delete an embed tenant',
    description:
      'Deletes the tenant with its users, groups, memberships, sessions and shares. Idempotent: an unknown ' +
      'tenant answers 204 too. A name that is not in canonical lowercase form is a 400.',
  })
  @ApiNoContentResponse({ description: 'Deleted, or did not exist' })
  @ApiErrors('validation_failed', 'invalid_embed_tenant_name')
  deleteEmbedTenant(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
  ): Promise<void> {
    return this.tenants.remove(actor, name);
  }

  @Get(':embedTenantName/users')
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'List embed users',
    description: 'Ordered by email; `search` matches part of the email or external id, ignoring case.',
  })
  @ApiOkResponse({ type: EmbedUsersListDto })
  @ApiErrors('validation_failed', 'invalid_embed_tenant_name', 'invalid_cursor', 'embed_tenant_not_found')
  listEmbedUsers(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @Query() query: EmbedUsersQueryDto,
  ): Promise<EmbedUsersListDto> {
    return this.users.list(actor, name, query);
  }

  @Post(':embedTenantName/user')
  @Audited()
  @HttpCode(200)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'Provision an embed user',
    description:
      'Creates or updates the embed user `externalId` (trimmed, lowercased) as the body describes; the tenant ' +
      'is created on demand. Omitted fields keep their value; `groups` and `tenantGroups` replace the stored ' +
      'lists when given (`[]` clears). Unknown groups: 400 naming them, nothing changed. Past the account’s ' +
      'embed-user limit: 429.',
  })
  @ApiOkResponse({ type: EmbedUserDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'invalid_external_id',
    'unknown_groups',
    'unknown_tenant_groups',
    'conflict',
    'embed_user_limit_reached',
  )
  @ApiBodyExamples(ProvisionEmbedUserDto, PROVISION_EMBED_USER_EXAMPLES)
  provisionEmbedUser(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @Body() dto: ProvisionEmbedUserDto,
  ): Promise<EmbedUserDto> {
    return this.users.provision(actor, name, dto);
  }

  @Post(':embedTenantName/users')
  @Audited()
  @HttpCode(200)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'Provision embed users in bulk',
    description:
      'Up to 100 users, applied one by one in order as the single endpoint would. 200 whenever the request is ' +
      'well formed; `failed` lists the users that were not applied, with the status and message.',
  })
  @ApiOkResponse({ type: ProvisionEmbedUsersResponseDto })
  @ApiErrors('validation_failed', 'invalid_embed_tenant_name')
  @ApiBodyExamples(ProvisionEmbedUsersDto, PROVISION_EMBED_USERS_EXAMPLES)
  provisionEmbedUsers(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @Body() dto: ProvisionEmbedUsersDto,
  ): Promise<ProvisionEmbedUsersResponseDto> {
    return this.users.provisionMany(actor, name, dto);
  }

  @Get(':embedTenantName/groups')
  @ApiParam(TENANT_PARAM)
  @ApiOperation({ summary: 'List embed groups', description: 'Newest first, with member counts.' })
  @ApiOkResponse({ type: EmbedGroupsListDto })
  @ApiErrors('validation_failed', 'invalid_embed_tenant_name', 'embed_tenant_not_found')
  getGroups(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @Query() query: PageQueryDto,
  ): Promise<EmbedGroupsListDto> {
    return this.groups.list(actor, name, query);
  }

  @Post(':embedTenantName/groups')
  @Audited()
  @HttpCode(200)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'Create an embed group',
    description:
      'The name is unique in the tenant, may not start with `system:` and never changes. The tenant is created ' +
      'on demand.',
  })
  @ApiOkResponse({ type: EmbedGroupDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'embed_group_name_taken',
    'embed_group_name_reserved',
  )
  createGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @Body() dto: CreateEmbedGroupDto,
  ): Promise<EmbedGroupDto> {
    return this.groups.create(actor, name, dto);
  }

  @Get(':embedTenantName/groups/:id')
  @ApiParam(TENANT_PARAM)
  @ApiOperation({ summary: 'Get an embed group' })
  @ApiOkResponse({ type: EmbedGroupDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'embed_tenant_not_found',
    'embed_group_not_found',
  )
  getGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
  ): Promise<EmbedGroupDto> {
    return this.groups.get(actor, name, id);
  }

  @Patch(':embedTenantName/groups/:id')
  @Audited()
  @ApiParam(TENANT_PARAM)
  @ApiOperation({ summary: 'Update an embed group', description: 'Only the description; empty clears it.' })
  @ApiOkResponse({ type: EmbedGroupDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'embed_group_name_taken',
    'embed_group_name_reserved',
    'embed_tenant_not_found',
    'embed_group_not_found',
  )
  updateGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
    @Body() dto: UpdateEmbedGroupDto,
  ): Promise<EmbedGroupDto> {
    return this.groups.update(actor, name, id, dto);
  }

  @Delete(':embedTenantName/groups/:id')
  @Audited()
  @HttpCode(204)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({ summary: 'Delete an embed group', description: 'Refused (400) while it has members.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'embed_group_has_members',
    'embed_tenant_not_found',
    'embed_group_not_found',
  )
  deleteGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
  ): Promise<void> {
    return this.groups.remove(actor, name, id);
  }

  @Get(':embedTenantName/groups/:id/users')
  @ApiParam(TENANT_PARAM)
  @ApiOperation({ summary: 'List embed group members', description: 'Most recently added first.' })
  @ApiOkResponse({ type: EmbedUsersListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'invalid_cursor',
    'embed_tenant_not_found',
    'embed_group_not_found',
  )
  getGroupMembers(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
    @Query() query: PageQueryDto,
  ): Promise<EmbedUsersListDto> {
    return this.groups.members(actor, name, id, query);
  }

  @Post(':embedTenantName/groups/:id/users')
  @Audited()
  @HttpCode(200)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'Add embed group members',
    description:
      'Each member by exactly one of `externalId` or `embedUserId`. An unknown external id is provisioned; an ' +
      'unknown embed user id is a 404 and nothing is added. Idempotent: members already in the group come back ' +
      'in `unchangedMembers`.',
  })
  @ApiOkResponse({ type: EmbedGroupMembersMutationDto })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'invalid_member',
    'embed_tenant_not_found',
    'embed_group_not_found',
    'embed_user_limit_reached',
  )
  addGroupMembers(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
    @Body() dto: EmbedGroupMembersDto,
  ): Promise<EmbedGroupMembersMutationDto> {
    return this.groups.addMembers(actor, name, id, dto);
  }

  @Delete(':embedTenantName/groups/:id/users')
  @Audited()
  @HttpCode(204)
  @ApiParam(TENANT_PARAM)
  @ApiOperation({
    summary: 'Remove embed group members',
    description: 'Idempotent; unknown users and non-members are ignored, and nobody is provisioned.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors(
    'validation_failed',
    'invalid_embed_tenant_name',
    'invalid_member',
    'embed_tenant_not_found',
    'embed_group_not_found',
  )
  removeGroupMembers(
    @CurrentPrincipal() actor: Principal,
    @Param('embedTenantName') name: string,
    @IdParam('id') id: number,
    @Body() dto: EmbedGroupMembersDto,
  ): Promise<void> {
    return this.groups.removeMembers(actor, name, id, dto);
  }
}
