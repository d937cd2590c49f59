import { ApiProperty } from '@nestjs/swagger';
import { IntField, ObjectField, StringArrayField } from '../../../core/http/validation.js';
import { LegacyPageQueryDto, PageOf } from '../../../core/http/pagination.js';

/** The API scopes of Cube's data API (`contextToApiScopes`): what a token may be used for. */
export const DATA_API_SCOPES = ['graphql', 'meta', 'data', 'sql', 'jobs'] as const;
export type DataApiScope = (typeof DATA_API_SCOPES)[number];

/** Claims this service sets itself; a security context may not hold them. */
export const RESERVED_CLAIMS = ['iat', 'exp', 'scopes'] as const;

export const DEPLOYMENT_TOKEN_DEFAULT_SECONDS = 86_400;
export const ENVIRONMENT_TOKEN_DEFAULT_SECONDS = 3_600;

export class CreateDeploymentTokenDto {
  @IntField({
    optional: true,
    nullable: true,
    min: 60,
    max: 86_400,
    description:
      'Lifetime in seconds, 60 to 86400; default 86400. A caller that keeps the token outside a browser session ' +
      'should ask for a short one and issue another when it runs out',
  })
  expiresIn?: number | null;
}

export class DeploymentTokenDto {
  @ApiProperty({
    description:
      "A data API token for the deployment's production environment: a JWT (HS256) signed with its " +
      '`CUBEJS_API_SECRET`, with an empty security context; send it in `Authorization` with no prefix',
  })
  cubeApiToken: string;
}

export class CreateEnvironmentTokenDto {
  @ObjectField({
    description:
      'The security context the data API hands the data model: the claims of the token, exactly as given ' +
      '(`iat`, `exp` and `scopes` are set by this service and may not appear). At most 8 KiB as JSON',
  })
  security_context: Record<string, unknown>;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    max: 3_600,
    description: 'Lifetime in seconds, 1 to 3600; default 3600',
  })
  expires_in?: number | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: DATA_API_SCOPES.length,
    enum: DATA_API_SCOPES,
    description:
      'The API scopes the token is for, carried as its `scopes` claim; absent or null: no `scopes` claim ' +
      '(the data API applies its own defaults)',
  })
  scopes?: DataApiScope[] | null;
}

export class EnvironmentTokenDto {
  @ApiProperty({
    description: 'The JWT: send it to the environment’s data API in `Authorization`, no prefix',
  })
  token: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The security context it carries' })
  security_context: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' }) created_at: string;

  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

export class EnvironmentTokenResponseDto {
  @ApiProperty({ type: EnvironmentTokenDto }) data: EnvironmentTokenDto;
}

export class EnvironmentTokensQueryDto extends LegacyPageQueryDto {}

export class EnvironmentTokensListDto extends PageOf(EnvironmentTokenDto, {
  legacy: 'offset',
  dataDescription: 'Deprecated: the same as items',
  count: { description: 'Deprecated: the number of tokens that have not expired' },
  order: ['items', 'data', 'count', 'pageInfo', 'pagination'],
}) {}
