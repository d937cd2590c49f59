import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/http/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { CreateGroupDto, GroupDto, GroupsListDto, GroupsQueryDto } from './dto/group.dto.js';
import { GroupsService } from './groups.service.js';

@ApiTags('Groups')
@Controller('api/v1/groups')
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get()
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'List account-wide groups',
    description: 'The groups embed users join through `groups` when provisioned or given a session.',
  })
  @ApiOkResponse({ type: GroupsListDto })
  @ApiErrors(400)
  listUserGroups(
    @CurrentPrincipal() actor: Principal,
    @Query() query: GroupsQueryDto,
  ): Promise<GroupsListDto> {
    return this.groups.list(actor, query);
  }

  @Post()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({ summary: 'Create an account-wide group', description: 'Names are unique in the account.' })
  @ApiOkResponse({ type: GroupDto })
  @ApiErrors(400, 409)
  createUserGroup(@CurrentPrincipal() actor: Principal, @Body() dto: CreateGroupDto): Promise<GroupDto> {
    return this.groups.create(actor, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireActions(Action.All)
  @ApiOperation({ summary: 'Delete an account-wide group', description: 'Its members leave it.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(400, 404)
  deleteUserGroup(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<void> {
    return this.groups.remove(actor, id);
  }
}
