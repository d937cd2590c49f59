import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PageQueryDto } from '../../core/http/pagination.js';
import {
  CreateGroupDto,
  GroupDto,
  GroupMembersListDto,
  GroupsListDto,
  GroupsQueryDto,
  UpdateGroupDto,
} from './dto/group.dto.js';
import { PoliciesInputDto, PoliciesResponseDto } from './dto/policy.dto.js';
import { GroupsService } from './groups.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_GROUP_EXAMPLES, POLICIES_EXAMPLES } from './users.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Groups')
@Controller('api/v1/groups')
@RequireActions(Action.All)
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get()
  @ApiOperation({
    summary: 'List account-wide groups',
    description: 'Groups of console users (managed here or by SCIM) and of embed users (joined by name).',
  })
  @ApiOkResponse({ type: GroupsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  listUserGroups(
    @CurrentPrincipal() actor: Principal,
    @Query() query: GroupsQueryDto,
  ): Promise<GroupsListDto> {
    return this.groups.list(actor, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create an account-wide group', description: 'Names are unique in the account.' })
  @ApiOkResponse({ type: GroupDto })
  @ApiErrors('validation_failed', 'group_name_taken')
  @ApiBodyExamples(CreateGroupDto, CREATE_GROUP_EXAMPLES)
  createUserGroup(@CurrentPrincipal() actor: Principal, @Body() dto: CreateGroupDto): Promise<GroupDto> {
    return this.groups.create(actor, dto);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a group' })
  @ApiOkResponse({ type: GroupDto })
  @ApiErrors('validation_failed', 'group_not_found')
  getUserGroup(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<GroupDto> {
    return this.groups.get(actor, id);
  }

  @Put(':id')
  @Audited()
  @ApiOperation({
    summary: 'Rename a group or change its description',
    description: 'Omitted fields are left alone. Members, roles and grants stay.',
  })
  @ApiOkResponse({ type: GroupDto })
  @ApiErrors('validation_failed', 'group_not_found', 'group_name_taken')
  updateUserGroup(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UpdateGroupDto,
  ): Promise<GroupDto> {
    return this.groups.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete an account-wide group',
    description: 'Its members leave it and its roles and grants go with it; the users stay.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors('validation_failed', 'group_not_found')
  deleteUserGroup(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<void> {
    return this.groups.remove(actor, id);
  }

  @Get(':id/users')
  @ApiOperation({ summary: 'List the console users in a group', description: 'Ordered by user id.' })
  @ApiOkResponse({ type: GroupMembersListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'group_not_found')
  listUserGroupMembers(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Query() query: PageQueryDto,
  ): Promise<GroupMembersListDto> {
    return this.groups.listMembers(actor, id, query);
  }

  @Put(':id/users/:userId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Add a console user to a group', description: 'Idempotent.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'group_not_found', 'user_not_found')
  async addUserGroupMember(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @IdParam('userId') userId: number,
  ): Promise<void> {
    await this.groups.addMembers(actor, id, [userId]);
  }

  @Delete(':id/users/:userId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a console user from a group', description: 'Idempotent.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'group_not_found', 'user_not_found')
  async removeUserGroupMember(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @IdParam('userId') userId: number,
  ): Promise<void> {
    await this.groups.removeMembers(actor, id, [userId]);
  }

  @Get(':id/policies')
  @ApiOperation({ summary: "A group's object-level and global grants", description: 'Members hold them.' })
  @ApiOkResponse({ type: PoliciesResponseDto })
  @ApiErrors('validation_failed', 'group_not_found')
  getUserGroupPolicies(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<PoliciesResponseDto> {
    return this.groups.getPolicies(actor, id);
  }

  @Put(':id/policies')
  @Audited()
  @ApiOperation({ summary: "Replace a group's grants" })
  @ApiOkResponse({ type: PoliciesResponseDto })
  @ApiErrors('validation_failed', 'unknown_resource', 'unsupported_resource_type', 'group_not_found')
  @ApiBodyExamples(PoliciesInputDto, POLICIES_EXAMPLES)
  replaceUserGroupPolicies(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: PoliciesInputDto,
  ): Promise<PoliciesResponseDto> {
    return this.groups.replacePolicies(actor, id, dto);
  }
}
