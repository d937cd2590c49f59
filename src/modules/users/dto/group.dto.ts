import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { StringField } from '../../../core/http/validation.js';

export const GROUP_NAME_MAX = 100;
export const GROUP_DESCRIPTION_MAX = 500;

export class GroupDto {
  @ApiProperty() id: number;
  @ApiProperty({ description: 'As the data model sees it; compared exactly' }) name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true, description: "The identity provider's id (SCIM externalId)" })
  externalId: string | null;
  @ApiProperty({ description: 'Console users in the group' }) memberCount: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class GroupsListDto extends PageOf(GroupDto) {}

export class GroupsQueryDto extends PageQueryDto {
  @StringField({ optional: true, maxLength: 200, description: 'Case-insensitive substring of the name' })
  search?: string;
}

export class CreateGroupDto {
  @StringField({ minLength: 1, maxLength: GROUP_NAME_MAX, description: 'Unique in the account' })
  name: string;

  @StringField({ optional: true, nullable: true, maxLength: GROUP_DESCRIPTION_MAX })
  description?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 })
  externalId?: string | null;
}

export class UpdateGroupDto {
  @StringField({
    optional: true,
    minLength: 1,
    maxLength: GROUP_NAME_MAX,
    description: 'Renaming keeps members, roles and grants',
  })
  name?: string;

  @StringField({ optional: true, nullable: true, maxLength: GROUP_DESCRIPTION_MAX })
  description?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 })
  externalId?: string | null;
}

export class GroupMemberDto {
  @ApiProperty() id: number;
  @ApiProperty() email: string;
  @ApiProperty() username: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty() isDeactivated: boolean;
}

export class GroupMembersListDto extends PageOf(GroupMemberDto) {}
