import { ApiProperty } from '@nestjs/swagger';
import { NestedField, StringField } from '../../../core/http/validation.js';

/** Credentials for an HTTP(S) dbt repository: sent to git as a Basic authorization header. */
export class DbtCredentialsDto {
  @StringField({
    optional: true,
    minLength: 1,
    maxLength: 256,
    pattern: /^[^:\s]+$/,
    patternMessage: '$property must not contain spaces or ":"',
    example: 'x-access-token',
    description: 'Default `x-access-token` (what GitHub, GitLab and Bitbucket accept with a token)',
  })
  username?: string;

  @StringField({
    minLength: 1,
    maxLength: 4096,
    pattern: /^\S+$/,
    patternMessage: '$property must not contain spaces or line breaks',
    example: 'ghp_0123456789abcdef',
    description: 'A token (or password) with read access to the repository. Never returned',
  })
  token: string;
}

export class PutDbtIntegrationDto {
  @StringField({
    minLength: 1,
    maxLength: 2048,
    description:
      'An absolute URL of the dbt repository (for example `github.com/acme/analytics-dbt.git` after `https://`), ' +
      'without credentials, whose transport is allowed by the service (`DBT_GIT_PROTOCOLS`, default `https`)',
  })
  repositoryUrl: string;

  @StringField({
    minLength: 1,
    maxLength: 255,
    example: 'main',
    description: 'The branch a sync reads when its request names no `ref`',
  })
  branch: string;

  @StringField({
    optional: true,
    maxLength: 1024,
    example: '/',
    description:
      'The dbt project’s directory in the repository (where `dbt_project.yml` is); a sync reads ' +
      '`<projectRoot>/target/manifest.json`. Left out: unchanged (`/` for a new integration)',
  })
  projectRoot?: string;

  @NestedField(() => DbtCredentialsDto, {
    optional: true,
    nullable: true,
    description:
      'Left out: the stored credentials are kept (removed when the repository’s host changes); null removes ' +
      'them. Setting or removing them needs the SecretsManage action',
  })
  credentials?: DbtCredentialsDto | null;
}

export class DbtIntegrationDto {
  @ApiProperty() repositoryUrl: string;
  @ApiProperty({ example: 'main' }) branch: string;
  @ApiProperty({ example: '/' }) projectRoot: string;
  @ApiProperty({ description: 'Whether credentials are stored (they are never returned)' })
  hasCredentials: boolean;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}
