import { ApiHideProperty, ApiProperty } from '@nestjs/swagger';
import { Equals, ValidateBy, ValidateIf } from 'class-validator';
import {
  BoolField,
  EmailField,
  EnumField,
  IntField,
  NestedField,
  ObjectField,
  StringArrayField,
  StringField,
} from '../../../core/http/validation.js';
import { EXTERNAL_ID_MAX } from '../embed-identity.js';
import { EmbedUserProfileDto, MAX_GROUPS_PER_USER } from './embed-user.dto.js';

export const USER_ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'string_array', 'number_array'] as const;

export class EmbedTenantProfileDto {
  @StringField({ optional: true, nullable: true, maxLength: 255 }) displayName?: string | null;
}

export class GroupDefinitionDto {
  @StringField({ minLength: 1, maxLength: 100 }) name: string;
  @StringField({ optional: true, nullable: true, maxLength: 500 }) description?: string | null;
}

export class EmbedSessionSettingsDto {
  @BoolField({ optional: true, nullable: true, description: 'Master switch for AI in the session' })
  allowAi?: boolean | null;
  @BoolField({
    optional: true,
    nullable: true,
    description: 'AI chat may create or change workspace content',
  })
  allowChatWorkspaceAuthoring?: boolean | null;
  @StringField({ optional: true, nullable: true, maxLength: 35, description: 'BCP-47 UI language' })
  locale?: string | null;
  @BoolField({ optional: true, nullable: true }) showAiWidgets?: boolean | null;
  @BoolField({ optional: true, nullable: true, description: 'Show the AI chat on dashboards' })
  showDashboardChat?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showDashboardSettings?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showGroupByCube?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showMemberNames?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showWorkbookChat?: boolean | null;
  @BoolField({ optional: true, nullable: true }) showWorkbookShare?: boolean | null;
  @StringField({ optional: true, nullable: true, maxLength: 64, description: 'IANA time zone' })
  timezone?: string | null;
}

const isAttributeValue = (v: unknown): boolean =>
  v === null ||
  typeof v === 'string' ||
  typeof v === 'boolean' ||
  (typeof v === 'number' && Number.isFinite(v)) ||
  (Array.isArray(v) &&
    v.length <= 1000 &&
    (v.every((x) => typeof x === 'string') || v.every((x) => typeof x === 'number' && Number.isFinite(x))));

export class UserAttributeInputDto {
  @StringField({ minLength: 1, maxLength: 100 }) name: string;

  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'number' } },
    ],
  })
  @ValidateBy({
    name: 'isAttributeValue',
    validator: {
      validate: isAttributeValue,
      defaultMessage: () => 'value must be a string, number, boolean, or an array of strings or of numbers',
    },
  })
  value?: unknown;
}

export class UserAttributeDefinitionDto {
  @StringField({ minLength: 1, maxLength: 100 }) name: string;
  @EnumField(USER_ATTRIBUTE_TYPES, { enumName: 'UserAttributeType' }) type: string;
  @StringField({ optional: true, nullable: true, maxLength: 255 }) displayName?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 500 }) description?: string | null;
  @StringField({ optional: true, nullable: true, maxLength: 1000 }) defaultValue?: string | null;
}

/**
 * A request for an embed session. The embed user is provisioned from `externalId`, `email`,
 * `userProfile`, `groups` and `tenantGroups` exactly as `POST /embed-tenants/{name}/user` does.
 */
export class GenerateSessionDto {
  @IntField({ min: 1, description: 'The deployment the session queries; must be in the account' })
  deploymentId: number;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 36,
    description: 'The embed tenant (default `default`); created on demand',
  })
  embedTenantName?: string | null;

  @StringField({
    minLength: 1,
    maxLength: EXTERNAL_ID_MAX,
    description: 'Your system’s id for the user; the embed user is created or updated from it',
  })
  externalId: string;

  @EmailField({ optional: true, nullable: true }) email?: string | null;

  @NestedField(() => EmbedUserProfileDto, { optional: true, nullable: true })
  userProfile?: EmbedUserProfileDto | null;

  @NestedField(() => EmbedTenantProfileDto, { optional: true, nullable: true })
  embedTenantProfile?: EmbedTenantProfileDto | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: MAX_GROUPS_PER_USER,
    maxLength: 100,
    description: 'Account-wide groups for data-model access; they must exist',
  })
  groups?: string[] | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: MAX_GROUPS_PER_USER,
    maxLength: 100,
    description: 'Groups of the embed tenant; needs `creatorMode: true`',
  })
  tenantGroups?: string[] | null;

  @NestedField(() => GroupDefinitionDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
    description:
      'Tenant groups created or updated before `tenantGroups` is applied; needs `creatorMode: true`',
  })
  tenantGroupDefinitions?: GroupDefinitionDto[] | null;

  @NestedField(() => GroupDefinitionDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
    deprecated: true,
    description: 'Ignored: account-wide groups are created beforehand',
  })
  groupDefinitions?: GroupDefinitionDto[] | null;

  @BoolField({ optional: true, nullable: true }) creatorMode?: boolean | null;

  @StringField({ optional: true, nullable: true, maxLength: 255, description: 'Branch of the data model' })
  branchName?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 32,
    description: 'When set, the token opens only this dashboard',
  })
  publicDashboardId?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) internalId?: string | null;

  @BoolField({ optional: true, nullable: true }) isEphemeral?: boolean | null;

  @StringArrayField({ optional: true, nullable: true, maxItems: 100, maxLength: 100 })
  roles?: string[] | null;

  @ObjectField({ optional: true, nullable: true, description: 'Passed to the data model as is' })
  securityContext?: Record<string, unknown> | null;

  @NestedField(() => EmbedSessionSettingsDto, { optional: true, nullable: true })
  settings?: EmbedSessionSettingsDto | null;

  @ObjectField({ optional: true, nullable: true, description: 'Theme of the embedded views' })
  embedTheme?: Record<string, unknown> | null;

  @NestedField(() => UserAttributeInputDto, { optional: true, nullable: true, isArray: true, maxItems: 200 })
  userAttributes?: UserAttributeInputDto[] | null;

  @NestedField(() => UserAttributeDefinitionDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 200,
  })
  userAttributeDefinitions?: UserAttributeDefinitionDto[] | null;

  /** Removed from the API; named here only to refuse it with a clear message. */
  @ApiHideProperty()
  @ValidateIf((o: { ephemeralTtlSeconds?: unknown }) => o.ephemeralTtlSeconds !== undefined)
  @Equals(undefined, { message: 'ephemeralTtlSeconds is no longer accepted; sessions last 5 minutes' })
  ephemeralTtlSeconds?: never;
}

export class GenerateSessionResponseDto {
  @ApiProperty({ description: 'Single use; exchange it within 5 minutes', pattern: '^[0-9a-f]{32}$' })
  sessionId: string;
}

export class PostTokenBySessionIdDto {
  @StringField({ maxLength: 64, description: 'The session id from generate-session' }) sessionId: string;
}

export class GenerateEmbedTokenResponseDto {
  @ApiProperty({ description: 'Embed token (JWT, HS256), valid 24 hours' }) token: string;
}

export class RevokeEmbedSessionDto {
  @StringField({
    pattern: /^[0-9a-f]{32}$/,
    patternMessage: 'sessionId must be 32 lowercase hexadecimal characters',
    description: 'The session id, exchanged or not',
  })
  sessionId: string;
}
