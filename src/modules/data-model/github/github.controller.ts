import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Public, RequireActions } from '../../../core/auth/access.decorators.js';
import { Action } from '../../../core/auth/action.js';
import type { Principal } from '../../../core/auth/principal.js';
import { ApiErrors } from '../../../core/openapi/api-errors.decorator.js';
import { PageQueryDto } from '../../../core/http/pagination.js';
import {
  GitHubBranchesListDto,
  GitHubBranchesQueryDto,
  GitHubInstallationsListDto,
  GitHubRepositoriesListDto,
  GitHubSetupQueryDto,
  GitHubSetupResultDto,
  GitHubStatusDto,
} from './dto/github.dto.js';
import { GitHubDiscoveryService } from './github-discovery.service.js';
import { GitHubInstallations } from './github-installations.service.js';
import { GitHubIdParam, GitHubNameParam } from './github-params.js';

/**
 * Git host discovery: what a person setting up a deployment's repository picks from before
 * `POST /deployments/{id}/github/connect`. These routes name no deployment, so the right is
 * checked account-wide: changing the data model (`SchemaUpdate`, which Developers and Admins
 * hold) is what connecting a repository is for, and what the GitHub App's reach is revealed to.
 * Every route sees only the installations the caller's account has linked (docs/github.md).
 */
@ApiTags('GitHub')
@Controller('api/v1/github')
@RequireActions(Action.SchemaUpdate)
export class GitHubController {
  constructor(private readonly github: GitHubDiscoveryService) {}

  @Get('status')
  @ApiOperation({
    summary: 'Whether the account has linked a GitHub App installation, with the link and settings pages',
    description:
      '`connected` is true when the caller’s account has linked at least one installation of the GitHub ' +
      'App (GitHub is not asked). `linkUrl` installs the App on a GitHub account, or configures an ' +
      'existing installation, and links it to the caller’s account: it carries a `state` signed for the ' +
      'caller, valid for an hour, which GitHub hands to the Setup URL (`GET /api/v1/github/setup`). ' +
      '`settingsUrl` changes which repositories an installation may see. 409 `github_not_configured` ' +
      'when this installation has no GitHub App (the message names the settings to make).',
  })
  @ApiOkResponse({ type: GitHubStatusDto })
  @ApiErrors('github_not_configured')
  status(@CurrentPrincipal() actor: Principal): Promise<GitHubStatusDto> {
    return this.github.status(actor);
  }

  @Get('installations')
  @ApiOperation({
    summary: 'List the GitHub App installations linked to the caller’s account',
    description:
      'Ordered by installation id; the cursor is an installation id. Each installation is read from GitHub. ' +
      'One GitHub no longer has (uninstalled) is left out and its link removed, so a page may hold fewer ' +
      'than `first` items while `hasNextPage` is true.',
  })
  @ApiOkResponse({ type: GitHubInstallationsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'github_not_configured', 'github_unavailable')
  installations(
    @CurrentPrincipal() actor: Principal,
    @Query() query: PageQueryDto,
  ): Promise<GitHubInstallationsListDto> {
    return this.github.installations(actor, query);
  }

  @Get('installations/:installationId/repositories')
  @ApiOperation({
    summary: 'List the repositories a linked GitHub App installation may access',
    description:
      '404 `github_installation_not_found` for an installation the caller’s account has not linked. ' +
      'Cursors are positions in GitHub’s list, which GitHub pages by number: a list that changes ' +
      'between two requests may repeat or skip an entry.',
  })
  @ApiOkResponse({ type: GitHubRepositoriesListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'github_installation_not_found',
    'github_not_configured',
    'github_unavailable',
  )
  repositories(
    @CurrentPrincipal() actor: Principal,
    @GitHubIdParam('installationId') installationId: number,
    @Query() query: PageQueryDto,
  ): Promise<GitHubRepositoriesListDto> {
    return this.github.repositories(actor, installationId, query);
  }

  @Get('repositories/:owner/:repo/branches')
  @ApiOperation({
    summary: 'List the branches of a repository',
    description:
      'Read through the installation `installationId`, which the caller’s account must have linked ' +
      '(404 `github_installation_not_found` otherwise); `isDefault` marks the repository’s default branch.',
  })
  @ApiOkResponse({ type: GitHubBranchesListDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'github_installation_not_found',
    'github_repository_not_found',
    'github_not_configured',
    'github_unavailable',
  )
  branches(
    @CurrentPrincipal() actor: Principal,
    @GitHubNameParam('owner', 'owner') owner: string,
    @GitHubNameParam('repo', 'repo') repo: string,
    @Query() query: GitHubBranchesQueryDto,
  ): Promise<GitHubBranchesListDto> {
    const { installationId, ...paging } = query;
    return this.github.branches(actor, installationId, owner, repo, paging);
  }
}

/** The GitHub App's Setup URL: where GitHub sends the person's browser back. The state is the credential. */
@ApiTags('GitHub')
@Controller('api/v1/github')
export class GitHubSetupController {
  constructor(private readonly installations: GitHubInstallations) {}

  @Get('setup')
  @Public()
  @ApiOperation({
    summary: 'Link a GitHub App installation to an account (the App’s Setup URL)',
    description:
      'GitHub redirects the person’s browser here after they install or configure the App from `linkUrl` ' +
      '(`GET /api/v1/github/status`), with `installation_id`, `setup_action` and the `state` of `linkUrl`. ' +
      'No token: the state, signed for an account and user and valid for an hour, is the credential ' +
      '(missing, altered or expired: 400 `invalid_github_state`). The installation is read from GitHub ' +
      '(unknown: 404 `github_installation_not_found`) and linked to the state’s account when GitHub reports ' +
      'it installed or changed since the state was issued (otherwise 400 `github_link_unverified`: a ' +
      'redirect naming someone else’s installation proves nothing). Linking again answers the same. ' +
      'The answer is JSON, shown as is in the browser. Other query parameters are refused.',
  })
  @ApiOkResponse({ type: GitHubSetupResultDto })
  @ApiErrors(
    'validation_failed',
    'bad_request',
    'invalid_github_state',
    'github_link_unverified',
    'github_installation_not_found',
    'github_not_configured',
    'github_unavailable',
  )
  setup(@Query() query: GitHubSetupQueryDto): Promise<GitHubSetupResultDto> {
    return this.installations.setup(query);
  }
}
