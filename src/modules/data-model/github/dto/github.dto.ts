import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../../core/http/pagination.js';
import { EnumField, IntField, StringField } from '../../../../core/http/validation.js';
import { MAX_LINK_STATE_LENGTH } from '../github-link-state.js';

/** GitHub ids are 64-bit; JSON numbers carry them exactly up to 2^53 - 1. */
export const MAX_GITHUB_ID = Number.MAX_SAFE_INTEGER;

export class GitHubStatusDto {
  @ApiProperty({
    description: 'Whether the caller’s account has linked at least one installation of the GitHub App',
  })
  connected: boolean;

  @ApiProperty({
    description:
      'Installs the GitHub App on a GitHub user or organization account, or configures an existing ' +
      'installation, and links it to the caller’s account (on github.com: ' +
      '`/apps/<app slug>/installations/new?state=…`). The `state` is signed for the caller and valid ' +
      'for an hour; GitHub hands it to the App’s Setup URL, `GET /api/v1/github/setup`.',
    format: 'uri',
  })
  linkUrl: string;

  @ApiProperty({
    description:
      'GitHub’s page of installed apps, where the repositories an installation may see are changed ' +
      '(`/settings/installations`)',
    format: 'uri',
  })
  settingsUrl: string;
}

export class GitHubInstallationDto {
  @ApiProperty({ description: 'Id of the GitHub account (user or organization) the App is installed on' })
  id: string;

  @ApiProperty({ description: 'Id of the installation: what the other GitHub routes and connect take' })
  installationId: string;

  @ApiProperty({ description: 'Login of the GitHub account', example: 'acme-analytics' })
  login: string;

  @ApiProperty({ format: 'uri', description: 'The account’s avatar image' })
  avatarUrl: string;
}

export class GitHubInstallationsListDto extends PageOf(GitHubInstallationDto, {
  legacy: 'data',
  nullablePageInfo: true,
}) {}

export class GitHubRepositoryDto {
  @ApiProperty({ description: 'GitHub’s repository id' }) id: number;
  @ApiProperty({ description: 'Name of the repository, without its owner', example: 'cube-model' })
  name: string;
  @ApiProperty({ description: '`owner/name`', example: 'acme-analytics/cube-model' }) fullName: string;
  @ApiProperty({ format: 'uri', description: 'The repository’s page on GitHub' }) htmlUrl: string;
}

export class GitHubRepositoriesListDto extends PageOf(GitHubRepositoryDto, {
  legacy: 'data',
  nullablePageInfo: true,
}) {}

export class GitHubBranchDto {
  @ApiProperty({ example: 'main' }) name: string;
  @ApiProperty({ description: 'Whether it is the repository’s default branch' }) isDefault: boolean;
}

export class GitHubBranchesListDto extends PageOf(GitHubBranchDto, {
  legacy: 'data',
  nullablePageInfo: true,
}) {}

export class GitHubBranchesQueryDto extends PageQueryDto {
  @IntField({
    query: true,
    min: 1,
    max: MAX_GITHUB_ID,
    description: 'The installation through which the repository is read',
  })
  installationId: number;
}

export const SETUP_ACTIONS = ['install', 'update', 'request'] as const;

/** What GitHub appends to the App's Setup URL (GitHub's names, hence snake case). */
export class GitHubSetupQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 1,
    max: MAX_GITHUB_ID,
    description: 'The installation GitHub redirected for (absent when an installation was only requested)',
  })
  installation_id?: number;

  @EnumField(SETUP_ACTIONS, {
    optional: true,
    description:
      '`install`: the App was installed; `update`: an installation was changed; `request`: a member ' +
      'asked the organization’s owners to install it (nothing to link yet)',
  })
  setup_action?: (typeof SETUP_ACTIONS)[number];

  @StringField({
    optional: true,
    maxLength: MAX_LINK_STATE_LENGTH,
    description: 'The state of `linkUrl` (`GET /api/v1/github/status`), handed back by GitHub',
  })
  state?: string;
}

export class GitHubSetupResultDto {
  @ApiProperty({ description: 'The installation now linked to the account that issued the state' })
  installationId: string;

  @ApiProperty({
    description: 'Login of the GitHub account the App is installed on',
    example: 'acme-analytics',
  })
  accountLogin: string;

  @ApiProperty({ enum: [true], description: 'Always true: the installation is linked' })
  linked: true;
}
