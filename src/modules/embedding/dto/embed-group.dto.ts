import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize } from 'class-validator';
import { PageOf } from '../../../core/http/pagination.js';
import { IntField, NestedField, StringField } from '../../../core/http/validation.js';
import { EXTERNAL_ID_MAX } from '../embed-identity.js';
import { EmbedUserDto } from './embed-user.dto.js';

export class EmbedGroupDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Members' }) userCount: number | null;
}

export class EmbedGroupsListDto extends PageOf(EmbedGroupDto) {}

export class CreateEmbedGroupDto {
  @StringField({
    minLength: 1,
    maxLength: 100,
    description: 'Unique in the tenant; may not start with `system:`. Cannot change later.',
  })
  name: string;

  @StringField({ optional: true, nullable: true, maxLength: 500 })
  description?: string | null;
}

export class UpdateEmbedGroupDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 500,
    description: 'Empty string or null clears it; omitted leaves it',
  })
  description?: string | null;
}

/** One member: exactly one of `externalId` or `embedUserId`. */
export class EmbedGroupMemberInputDto {
  @IntField({ optional: true, nullable: true, min: 1, description: 'Id of an existing embed user' })
  embedUserId?: number | null;

  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: EXTERNAL_ID_MAX,
    description: 'External id; when adding, an unknown one is provisioned',
  })
  externalId?: string | null;
}

export class EmbedGroupMembersDto {
  @NestedField(() => EmbedGroupMemberInputDto, { isArray: true, maxItems: 1000, description: '1 to 1000' })
  @ArrayMinSize(1)
  members: EmbedGroupMemberInputDto[];
}

export class EmbedGroupMembersMutationDto {
  @ApiProperty({ type: EmbedUserDto, isArray: true }) addedMembers: EmbedUserDto[];
  @ApiProperty({ type: EmbedUserDto, isArray: true }) unchangedMembers: EmbedUserDto[];
}
