import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { GroupsQueryDto } from './dto/group.dto.js';
import { UserGroupsListDto } from './dto/user-group.dto.js';
import { GroupsService } from './groups.service.js';

/** The command-line tool's list of groups (docs/command-line-tool.md): `GET /groups` under its name. */
@ApiTags('Groups')
@Controller('api/v1/user-groups')
@RequireActions(Action.All)
export class UserGroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get()
  @ApiOperation({
    summary: 'List account-wide groups (the command-line tool’s path)',
    description:
      'The list of `GET /groups`, paged and filtered the same way, each group with `userCount` (its console ' +
      'members, the same number as `memberCount`). Also served with a trailing slash.',
  })
  @ApiOkResponse({ type: UserGroupsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor')
  listUserGroupsOfTool(
    @CurrentPrincipal() actor: Principal,
    @Query() query: GroupsQueryDto,
  ): Promise<UserGroupsListDto> {
    return this.groups.listWithUserCount(actor, query);
  }
}
