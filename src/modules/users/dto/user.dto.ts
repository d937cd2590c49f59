import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { BUILT_IN_ROLE_NAMES, canonicalRoleNames } from '../../../core/auth/action.js';
import { LegacyPageQueryDto, PageOf } from '../../../core/http/pagination.js';
import { BulkActionErrorDto } from '../../../core/http/bulk.js';
import {
  BoolField,
  EmailField,
  EnumField,
  IdArrayField,
  IntField,
  NestedField,
  StringArrayField,
  StringField,
} from '../../../core/http/validation.js';
import { isNoEmail, NO_EMAIL_DOMAIN } from '../no-email.js';
import { PolicyDto } from './policy.dto.js';

export class SheetsUserSettingsDto {
  @BoolField({ optional: true, nullable: true }) autoRunQueryOnChange?: boolean | null;
  @BoolField({ optional: true, nullable: true }) openExplorationFromSheet?: boolean | null;
  @BoolField({ optional: true, nullable: true }) revealSheetOnOpen?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showAppliedFilters?: boolean | null;
  @BoolField({ optional: true, nullable: true }) suppressDuplicateValues?: boolean | null;
}

export class UserSettingsDto {
  @StringField({ optional: true, nullable: true, maxLength: 35, example: 'en-US' }) locale?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 32, example: 'dark' }) theme?: string | null;
  @IntField({ optional: true, nullable: true, min: 1 }) defaultDeploymentId?: number | null;
  @StringField({ optional: true, nullable: true, maxLength: 64, example: 'Europe/Berlin' }) timezone?:
    string | null;
  @BoolField({ optional: true, nullable: true }) alternatingRowColors?: boolean | null;
  @NestedField(() => SheetsUserSettingsDto, {
    optional: true,
    nullable: true,
    description: 'Spreadsheet add-in preferences; merged field by field, `null` clears them',
  })
  sheets?: SheetsUserSettingsDto | null;
  @IntField({
    optional: true,
    nullable: true,
    deprecated: true,
    description: 'Deprecated: accepted for older clients and ignored',
  })
  lastSeenChangelogId?: number | null;
}

/** Built-in role names, the former names accepted and stored as their successors. */
const DefaultRolesField = () =>
  applyDecorators(
    StringArrayField({
      optional: true,
      nullable: true,
      maxItems: 10,
      enum: BUILT_IN_ROLE_NAMES,
      description:
        'Built-in role names. The former names `Explorer` and `Viewer` are accepted as `AIBIUser` and `AIBIViewer`.',
    }),
    Transform(({ value }) => canonicalRoleNames(value)),
  );

export class UserCreateDto {
  @EmailField()
  // Placeholders of users provisioned without an address live there (see no-email.ts).
  @ValidateBy({
    name: 'notReservedDomain',
    validator: {
      validate: (v: unknown) => typeof v !== 'string' || !isNoEmail(v),
      defaultMessage: () => `email: the domain ${NO_EMAIL_DOMAIN} is reserved`,
    },
  })
  email: string;

  @StringField({ minLength: 1, maxLength: 255 }) username: string;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) firstName?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) externalId?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 2048 }) picture?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) title?: string | null;

  @BoolField({ optional: true, nullable: true, description: 'Shorthand for the Admin built-in role' })
  isAdmin?: boolean | null;

  @DefaultRolesField() defaultRoles?: string[] | null;

  @NestedField(() => UserSettingsDto, { optional: true, nullable: true }) settings?: UserSettingsDto | null;
}

export class UserUpdateDto {
  @StringField({ optional: true, nullable: true, maxLength: 255 }) firstName?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 2048 }) picture?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) title?: string | null;

  @BoolField({ optional: true, nullable: true }) isAdmin?: boolean | null;

  @BoolField({ optional: true, nullable: true }) isDeactivated?: boolean | null;

  @DefaultRolesField() defaultRoles?: string[] | null;

  @NestedField(() => UserSettingsDto, { optional: true, nullable: true }) settings?: UserSettingsDto | null;
}

export class UsersQueryDto extends LegacyPageQueryDto {
  @StringField({
    optional: true,
    maxLength: 255,
    description: 'Case-insensitive substring of first name, username or email',
  })
  search?: string;
}

export class UserDto {
  @ApiProperty() id: number;
  @ApiProperty() email: string;
  @ApiProperty() username: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true }) picture: string | null;
  @ApiProperty({ type: String, nullable: true }) title: string | null;
  @ApiProperty({ type: String, nullable: true }) externalId: string | null;
  @ApiProperty() isAdmin: boolean;
  @ApiProperty({ type: Boolean, nullable: true }) isDeactivated: boolean | null;
  @ApiProperty({ type: String, isArray: true, nullable: true }) defaultRoles: string[] | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) settings: Record<
    string,
    unknown
  > | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) notifications: Record<string, unknown>;
  @ApiProperty({ type: Number, nullable: true }) activeRoleId: number | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastLogin: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) createdAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) updatedAt: string | null;
  @ApiPropertyOptional({
    type: PolicyDto,
    isArray: true,
    nullable: true,
    description: 'Only on GET /users/me',
  })
  userPolicies?: PolicyDto[] | null;
}

export class UsersListDto extends PageOf(UserDto, { legacy: 'offset' }) {}

export const BULK_USER_ACTIONS = ['DEACTIVATE', 'ACTIVATE', 'DELETE'] as const;
export type BulkUserAction = (typeof BULK_USER_ACTIONS)[number];

export class BulkUserActionDto {
  @EnumField(BULK_USER_ACTIONS, { enumName: 'BulkUserAction' }) action: BulkUserAction;

  @IdArrayField({ minItems: 1, maxItems: 100, description: 'Users to act on; repeated ids collapse' })
  userIds: number[];
}

export class BulkUserActionFailureDto {
  @ApiProperty() userId: number;
  @ApiProperty({ type: BulkActionErrorDto }) error: BulkActionErrorDto;
}

export class BulkUserActionResultDto {
  @ApiProperty({ enum: BULK_USER_ACTIONS, enumName: 'BulkUserAction' }) action: BulkUserAction;
  @ApiProperty({ type: Number, isArray: true, description: 'Users the action was applied to, in order' })
  succeeded: number[];
  @ApiProperty({ type: BulkUserActionFailureDto, isArray: true }) failed: BulkUserActionFailureDto[];
}
