import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { BoolField, EnumField, ObjectField, StringField } from '../../../core/http/validation.js';

export const AUDIENCE_TYPES = ['aws', 'gcp', 'azure', 'custom'] as const;
export type AudienceType = (typeof AUDIENCE_TYPES)[number];

/** A short, filesystem-safe slug (from the reference). */
export const CONFIG_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
/** Template of the `sub` claim: `[A-Za-z0-9:_-]` and the three placeholders (from the reference). */
export const SUB_FORMAT = /^(?:[A-Za-z0-9:_-]|\{(?:deployment_id|component|region)\})+$/;
/** An environment variable name (from the reference). */
export const ENV_VAR = /^[A-Z_][A-Z0-9_]*$/;

const NAME_OPTS = {
  optional: true,
  nullable: true,
  maxLength: 64,
  pattern: CONFIG_NAME,
  patternMessage: 'name must be lowercase letters, digits and inner hyphens',
} as const;
const SUB_FORMAT_OPTS = {
  optional: true,
  nullable: true,
  maxLength: 200,
  pattern: SUB_FORMAT,
  patternMessage:
    'subFormat may contain only A-Z, a-z, 0-9, :, _, - and the placeholders {deployment_id}, {component}, {region}',
  description: 'Template of the `sub` claim. Null: the default format',
  example: 'deployment:{deployment_id}:component:{component}',
} as const;
const TARGET_ENV_VAR_OPTS = {
  optional: true,
  nullable: true,
  maxLength: 128,
  pattern: ENV_VAR,
  patternMessage:
    'targetEnvVar must be an environment variable name: A-Z, 0-9 and _, not starting with a digit',
  description: '`custom` only: the environment variable that receives the token file’s path',
  example: 'SNOWFLAKE_OAUTH_TOKEN_PATH',
} as const;
const CUSTOM_AUDIENCE_DESCRIPTION =
  'Required for `gcp` (the Workload Identity Federation provider resource path, ' +
  '`//iam.googleapis.com/projects/…/providers/…`) and `custom`; not allowed for `aws` and `azure`, whose ' +
  'audience is fixed';
const CUSTOM_CLAIMS_DESCRIPTION =
  'Extra claims of every token: names to a string or an array of strings. Registered JWT claims ' +
  '(iss, sub, aud, exp, iat, nbf, jti) cannot be set';

const lowercase = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  );

export class CreateOidcTokenConfigDto {
  @lowercase()
  @EnumField(AUDIENCE_TYPES, {
    enumName: 'OidcAudienceType',
    description: 'Case-insensitive on input. Decides the audience: see `customAudience`',
  })
  audienceType: AudienceType;

  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 1024,
    description: CUSTOM_AUDIENCE_DESCRIPTION,
  })
  customAudience?: string | null;

  @ObjectField({ optional: true, nullable: true, description: CUSTOM_CLAIMS_DESCRIPTION })
  customClaims?: Record<string, unknown> | null;

  @BoolField({ optional: true, nullable: true, description: 'Default true' }) isEnabled?: boolean | null;

  @StringField({
    ...NAME_OPTS,
    description:
      'Unique in the account. Default for `aws`, `gcp` and `azure`: the type; required for `custom`',
  })
  name?: string | null;

  @StringField(SUB_FORMAT_OPTS) subFormat?: string | null;

  @StringField(TARGET_ENV_VAR_OPTS) targetEnvVar?: string | null;
}

/** Omitted fields keep their value; null clears `subFormat`, `targetEnvVar` and `customClaims`. */
export class UpdateOidcTokenConfigDto {
  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 1024,
    description: CUSTOM_AUDIENCE_DESCRIPTION,
  })
  customAudience?: string | null;

  @ObjectField({ optional: true, nullable: true, description: `${CUSTOM_CLAIMS_DESCRIPTION}. Null clears` })
  customClaims?: Record<string, unknown> | null;

  @BoolField({ optional: true, nullable: true, description: 'Null keeps the value' }) isEnabled?:
    boolean | null;

  @StringField({ ...NAME_OPTS, description: 'Null keeps the name' }) name?: string | null;

  @StringField(SUB_FORMAT_OPTS) subFormat?: string | null;

  @StringField(TARGET_ENV_VAR_OPTS) targetEnvVar?: string | null;
}

export class OidcTokenConfigDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: AUDIENCE_TYPES, enumName: 'OidcAudienceType' }) audienceType: AudienceType;

  @ApiProperty({
    description:
      'The `aud` claim: `sts.amazonaws.com` for aws, `api://AzureADTokenExchange` for azure, else customAudience',
  })
  audience: string;

  @ApiProperty({ type: String, nullable: true }) subFormat: string | null;
  @ApiProperty({ type: String, nullable: true }) targetEnvVar: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) customClaims: Record<
    string,
    unknown
  > | null;

  @ApiProperty() isEnabled: boolean;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
}
