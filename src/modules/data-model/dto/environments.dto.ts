import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { LegacyPageQueryDto, PageOf } from '../../../core/http/pagination.js';
import { EnumField } from '../../../core/http/validation.js';

export const ENVIRONMENT_TYPES = ['production', 'staging', 'development'] as const;
export type EnvironmentType = (typeof ENVIRONMENT_TYPES)[number];

export class EnvironmentsQueryDto extends LegacyPageQueryDto {
  @EnumField(ENVIRONMENT_TYPES, {
    optional: true,
    enumName: 'DeploymentEnvironmentType',
    description: 'Only environments of this type',
  })
  type?: EnvironmentType;
}

export class EnvironmentApiCredentialDto {
  @ApiProperty({ enum: ['rest', 'sql'], enumName: 'DeploymentEnvironmentApiCredentialType' })
  type: 'rest' | 'sql';

  @ApiProperty({ minimum: 1, description: 'Version of the API' }) version: number;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'REST: the base URL of the API' })
  url?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'SQL: the host to connect to' })
  host?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 1, description: 'SQL: the port' })
  port?: number | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'SQL: the database name' })
  database?: string | null;
}

export class EnvironmentDto {
  @ApiProperty({
    description:
      'Stable numeric id, as a string: the `environmentId` its tokens are issued for ' +
      '(`POST .../environments/{environmentId}/tokens`). Production keeps its id; a staging or development ' +
      'environment keeps it while it exists and goes with its branch (or staging toggle), tokens and all',
    example: '42',
  })
  id: string;

  @ApiProperty({ enum: ENVIRONMENT_TYPES, enumName: 'DeploymentEnvironmentType' }) type: EnvironmentType;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'The branch whose data model it serves' })
  branch?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Development: the email of the user whose dev-mode branch it is',
  })
  user?: string | null;

  @ApiProperty({ type: [EnvironmentApiCredentialDto] }) api_credentials: EnvironmentApiCredentialDto[];

  @ApiPropertyOptional({
    enum: ['deploying', 'deployed', 'failed', 'not_deployed'],
    enumName: 'DeploymentEnvironmentStatus',
    description:
      'Only with `DEPLOYMENT_RUNTIME=kubernetes`, for production and staging: where the environment’s ' +
      'rollout stands; `not_deployed` before its branch’s first successful build is deployed',
  })
  status?: 'deploying' | 'deployed' | 'failed' | 'not_deployed';

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'With `status`: why the rollout failed, or what it waits for; null when deployed',
  })
  statusReason?: string | null;
}

export class EnvironmentsListDto extends PageOf(EnvironmentDto, {
  legacy: 'offset',
  dataDescription: 'Deprecated: the same as items',
  count: { description: 'Deprecated: the total number of environments' },
  order: ['items', 'data', 'count', 'pageInfo', 'pagination'],
}) {}
