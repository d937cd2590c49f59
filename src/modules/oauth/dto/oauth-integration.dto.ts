import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { ObjectField, StringArrayField, StringField } from '../../../core/http/validation.js';
import { OAuthUrlField } from '../oauth-url.js';

/** `type`: a lowercase identifier such as `snowflake` or `custom`. */
export const INTEGRATION_TYPE = /^[a-z][a-z0-9_-]{0,63}$/;
/** A scope-token of RFC 6749 3.3: printable ASCII without space, `"` or `\`. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const NOT_BLANK = /\S/;

const AUTH_URL = {
  description: 'The provider’s authorization endpoint. https, or http for 127.0.0.1, ::1 or localhost only',
};
const TOKEN_URL = {
  description: 'The provider’s token endpoint. Same rules as `authUrl`',
};
const REDIRECT_URI = {
  description:
    'Where the provider sends the user back: this service’s `/api/v1/oauth/callback`, exactly as registered ' +
    'with the provider. Same rules as `authUrl`',
};

export class CreateOAuthIntegrationDto {
  @StringField({
    maxLength: 255,
    pattern: NOT_BLANK,
    patternMessage: 'name must not be blank',
    description: 'Unique in the account, ignoring case; stored trimmed',
    example: 'Snowflake (production)',
  })
  name: string;

  @StringField({
    maxLength: 64,
    pattern: INTEGRATION_TYPE,
    patternMessage:
      'type must be a lowercase identifier: a letter, then letters, digits, _ or - (64 at most)',
    description: 'The kind of provider, a lowercase identifier',
    example: 'snowflake',
  })
  type: string;

  @OAuthUrlField(AUTH_URL) authUrl: string;

  @OAuthUrlField(TOKEN_URL) tokenUrl: string;

  @StringField({ minLength: 1, maxLength: 1024, description: 'The client id the provider issued' })
  clientId: string;

  @StringField({
    minLength: 1,
    maxLength: 4096,
    description: 'The client secret. Stored encrypted and never returned',
  })
  clientSecret: string;

  @OAuthUrlField(REDIRECT_URI) redirectUri: string;

  @StringArrayField({
    optional: true,
    maxItems: 100,
    maxLength: 256,
    description: 'Scopes to request; sent space-separated. Duplicates are dropped. Default: none',
    example: ['session:role-any', 'refresh_token'],
  })
  @Matches(SCOPE_TOKEN, { each: true, message: 'each value in scopes must be a scope token without spaces' })
  scopes?: string[];

  @ObjectField({
    optional: true,
    description: 'Free-form settings of the integration, returned as stored. Never put a secret here',
  })
  config?: Record<string, unknown>;
}

export class UpdateOAuthIntegrationDto {
  @StringField({
    maxLength: 255,
    pattern: NOT_BLANK,
    patternMessage: 'name must not be blank',
    description: 'Unique in the account, ignoring case; stored trimmed',
  })
  name: string;

  @StringField({
    maxLength: 64,
    pattern: INTEGRATION_TYPE,
    patternMessage:
      'type must be a lowercase identifier: a letter, then letters, digits, _ or - (64 at most)',
  })
  type: string;

  @OAuthUrlField(AUTH_URL) authUrl: string;

  @OAuthUrlField(TOKEN_URL) tokenUrl: string;

  @StringField({ minLength: 1, maxLength: 1024 }) clientId: string;

  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 4096,
    description: 'A new client secret. Omitted or null keeps the stored one',
  })
  clientSecret?: string | null;

  @OAuthUrlField(REDIRECT_URI) redirectUri: string;

  @StringArrayField({
    optional: true,
    maxItems: 100,
    maxLength: 256,
    description: 'Replaces the scopes when given; omitted keeps them',
  })
  @Matches(SCOPE_TOKEN, { each: true, message: 'each value in scopes must be a scope token without spaces' })
  scopes?: string[];

  @ObjectField({ optional: true, description: 'Replaces the config when given; omitted keeps it' })
  config?: Record<string, unknown>;
}

/** An integration as answered: never with its client secret. */
export class OAuthIntegrationDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'snowflake' }) type: string;
  @ApiProperty({ format: 'uri' }) authUrl: string;
  @ApiProperty({ format: 'uri' }) tokenUrl: string;
  @ApiProperty() clientId: string;
  @ApiProperty({ format: 'uri' }) redirectUri: string;
  @ApiProperty({ type: String, isArray: true }) scopes: string[];
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) config: Record<
    string,
    unknown
  > | null;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
}
