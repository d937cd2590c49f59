import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../../core/http/pagination.js';
import { GroupDto } from './group.dto.js';

/** A group as `GET /user-groups/` lists it: the group, and its member count as `userCount` too. */
export class UserGroupDto extends GroupDto {
  @ApiProperty({ description: 'Console users in the group: `memberCount` under the name the tool reads' })
  userCount: number;
}

export class UserGroupsListDto extends PageOf(UserGroupDto) {}
