import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { RoleCreateDto, RoleDto, RolesListDto, RolesQueryDto, RoleUpdateDto } from './dto/role.dto.js';
import { RolesService } from './roles.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_ROLE_EXAMPLES, UPDATE_ROLE_EXAMPLES } from './users.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Roles')
@Controller('api/v1/roles')
@RequireActions(Action.All)
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @ApiOperation({ summary: 'List custom roles' })
  @ApiOkResponse({ type: RolesListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  getRoles(@CurrentPrincipal() actor: Principal, @Query() query: RolesQueryDto): Promise<RolesListDto> {
    return this.roles.list(actor, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a custom role' })
  @ApiOkResponse({ type: RoleDto })
  @ApiErrors(
    'validation_failed',
    'role_name_reserved',
    'unknown_resource',
    'unsupported_resource_type',
    'role_name_taken',
  )
  @ApiBodyExamples(RoleCreateDto, CREATE_ROLE_EXAMPLES)
  createRole(@CurrentPrincipal() actor: Principal, @Body() dto: RoleCreateDto): Promise<RoleDto> {
    return this.roles.create(actor, dto);
  }

  @Get(':roleId')
  @ApiOperation({ summary: 'Get a custom role' })
  @ApiOkResponse({ type: RoleDto })
  @ApiErrors('validation_failed', 'role_not_found')
  getRole(@CurrentPrincipal() actor: Principal, @IdParam('roleId') id: number): Promise<RoleDto> {
    return this.roles.get(actor, id);
  }

  @Put(':roleId')
  @Audited()
  @ApiOperation({
    summary: 'Update a custom role',
    description: 'Sent policies replace the role’s policies.',
  })
  @ApiOkResponse({ type: RoleDto })
  @ApiErrors(
    'validation_failed',
    'role_name_reserved',
    'unknown_resource',
    'unsupported_resource_type',
    'role_not_found',
    'role_name_taken',
  )
  @ApiBodyExamples(RoleUpdateDto, UPDATE_ROLE_EXAMPLES)
  updateRole(
    @CurrentPrincipal() actor: Principal,
    @IdParam('roleId') id: number,
    @Body() dto: RoleUpdateDto,
  ): Promise<RoleDto> {
    return this.roles.update(actor, id, dto);
  }

  @Delete(':roleId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a custom role' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'role_not_found')
  async deleteRole(@CurrentPrincipal() actor: Principal, @IdParam('roleId') id: number): Promise<void> {
    await this.roles.remove(actor, id);
  }

  @Put(':roleId/users/:userId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Assign a role to a user', description: 'Idempotent.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'role_not_found', 'user_not_found')
  async assignRoleToUser(
    @CurrentPrincipal() actor: Principal,
    @IdParam('roleId') roleId: number,
    @IdParam('userId') userId: number,
  ): Promise<void> {
    await this.roles.assign(actor, roleId, userId);
  }

  @Delete(':roleId/users/:userId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a role from a user', description: 'Idempotent.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'role_not_found', 'user_not_found')
  async removeRoleFromUser(
    @CurrentPrincipal() actor: Principal,
    @IdParam('roleId') roleId: number,
    @IdParam('userId') userId: number,
  ): Promise<void> {
    await this.roles.unassign(actor, roleId, userId);
  }

  @Put(':roleId/groups/:groupId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Assign a role to a group',
    description: 'Every member of the group holds the role while they are a member. Idempotent.',
  })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'role_not_found', 'group_not_found')
  async assignRoleToGroup(
    @CurrentPrincipal() actor: Principal,
    @IdParam('roleId') roleId: number,
    @IdParam('groupId') groupId: number,
  ): Promise<void> {
    await this.roles.assignToGroup(actor, roleId, groupId);
  }

  @Delete(':roleId/groups/:groupId')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a role from a group', description: 'Idempotent.' })
  @ApiNoContentResponse()
  @ApiErrors('validation_failed', 'role_not_found', 'group_not_found')
  async removeRoleFromGroup(
    @CurrentPrincipal() actor: Principal,
    @IdParam('roleId') roleId: number,
    @IdParam('groupId') groupId: number,
  ): Promise<void> {
    await this.roles.unassignFromGroup(actor, roleId, groupId);
  }
}
