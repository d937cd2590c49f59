import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize } from 'class-validator';
import { BulkActionErrorDto } from '../../../core/http/bulk.js';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EmailField, NestedField, StringArrayField, StringField } from '../../../core/http/validation.js';
import { EXTERNAL_ID_MAX } from '../embed-identity.js';

export const MAX_GROUPS_PER_USER = 1000;

export class EmbedUserProfileDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Shown wherever the user appears (`firstName` in responses)',
  })
  displayName?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 2048, description: 'Avatar URL' })
  picture?: string | null;
}

/**
 * The desired state of one embed user. Omitted (or null) fields keep their stored value; each
 * group list replaces the stored one when present and `[]` clears it.
 */
export class ProvisionEmbedUserDto {
  @StringField({
    minLength: 1,
    maxLength: EXTERNAL_ID_MAX,
    description: 'Your system’s id for the user. Trimmed and lowercased before storage.',
  })
  externalId: string;

  @EmailField({
    optional: true,
    nullable: true,
    description: 'Stored lowercased. Without one, a new user gets a placeholder under `embed-users.invalid`.',
  })
  email?: string | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: MAX_GROUPS_PER_USER,
    maxLength: 100,
    description: 'Account-wide groups (must exist). Replaces the user’s groups; `[]` clears them.',
  })
  groups?: string[] | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: MAX_GROUPS_PER_USER,
    maxLength: 100,
    description:
      'Groups of this embed tenant (must exist). Replaces the user’s tenant groups; `[]` clears them.',
  })
  tenantGroups?: string[] | null;

  @NestedField(() => EmbedUserProfileDto, { optional: true, nullable: true })
  userProfile?: EmbedUserProfileDto | null;
}

export class ProvisionEmbedUsersDto {
  @NestedField(() => ProvisionEmbedUserDto, { isArray: true, maxItems: 100, description: '1 to 100 users' })
  @ArrayMinSize(1)
  users: ProvisionEmbedUserDto[];
}

export class EmbedUserDto {
  @ApiProperty() id: number;
  @ApiProperty({ description: 'The external id' }) username: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty() email: string;
  @ApiProperty() externalId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The profile’s display name' }) firstName:
    string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Last session exchange' })
  lastLogin: string | null;
}

export class EmbedUsersListDto extends PageOf(EmbedUserDto) {}

export class EmbedUsersQueryDto extends PageQueryDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 320,
    description: 'Case-insensitive substring of the email or external id',
  })
  search?: string | null;
}

export class ProvisionEmbedUserFailureDto {
  @ApiProperty({ description: 'Normalised as a stored external id' }) externalId: string;
  @ApiProperty({ type: BulkActionErrorDto }) error: BulkActionErrorDto;
}

export class ProvisionEmbedUsersResponseDto {
  @ApiProperty({ type: EmbedUserDto, isArray: true, description: 'In the order requested' })
  succeeded: EmbedUserDto[];
  @ApiProperty({ type: ProvisionEmbedUserFailureDto, isArray: true })
  failed: ProvisionEmbedUserFailureDto[];
}
