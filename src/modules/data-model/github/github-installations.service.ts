import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../../../core/auth/principal.js';
import { AppConfig } from '../../../core/config/app-config.js';
import { foreignKeyViolation } from '../../../core/database/sql.js';
import { notFound } from '../../../core/errors/not-found.js';
import type { GitHubSetupQueryDto, GitHubSetupResultDto } from './dto/github.dto.js';
import { GitHubInstallationsRepository } from './github-installations.repository.js';
import {
  issueLinkState,
  LINK_STATE_TTL_SECONDS,
  linkStateKey,
  verifyLinkState,
} from './github-link-state.js';
import { GitHost, type GitHubInstallation } from './github.client.js';
import { gitHubError } from './github.errors.js';

/**
 * How far GitHub's clock may be behind ours when the setup redirect is checked against GitHub's
 * record of the installation (created or changed after the state was issued).
 */
export const LINK_CLOCK_SKEW_MS = 5 * 60_000;

const START_AGAIN = 'start again from linkUrl of GET /api/v1/github/status';

/**
 * Which installations of the GitHub App each account may use. One GitHub App serves every
 * account (tenant) of the service, so an installation is usable by an account only once the
 * account has linked it: through the install link (`linkUrl`, whose `state` is signed for the
 * account and user) and GitHub's redirect to the Setup URL (`GET /api/v1/github/setup`).
 *
 * The redirect's `installation_id` is whatever the browser sends (GitHub warns that it can be
 * spoofed), so a link is recorded only when GitHub itself reports that the installation was
 * created or changed after the state was issued: what installing or configuring the App from
 * `linkUrl` does, and what a person who merely knows another tenant's installation id cannot
 * cause. See docs/github.md for what this proves and what it does not.
 *
 * Other modules use {@link requireLinked} before acting through an installation.
 */
@Injectable()
export class GitHubInstallations {
  private readonly logger = new Logger(GitHubInstallations.name);
  private readonly stateKey: Buffer;
  /** Why states cannot be signed (a production process without SECRETS_KEY), or null. */
  private readonly stateKeyProblem: string | null;
  /** False with `GITHUB_INSTALLATION_LINKING=off`: every installation serves every account. */
  readonly linkingRequired: boolean;

  constructor(
    config: AppConfig,
    private readonly git: GitHost,
    private readonly links: GitHubInstallationsRepository,
  ) {
    this.stateKey = linkStateKey(config.secretsKey);
    this.linkingRequired = config.github.linkingRequired;
    this.stateKeyProblem =
      config.env === 'production' && config.secretsKeyIsDevelopmentDefault
        ? 'SECRETS_KEY is not set: GitHub install links are signed with it'
        : null;
  }

  /**
   * 404 `github_installation_not_found` unless the account has linked the installation. For
   * every use of an installation on behalf of an account (discovery, connect).
   */
  async requireLinked(accountId: number, installationId: number): Promise<void> {
    if (!this.linkingRequired) return;
    if (!(await this.links.isLinked(accountId, installationId))) {
      throw notFound('GitHubInstallation', installationId);
    }
  }

  /** Whether the account has linked at least one installation. */
  hasAny(accountId: number): Promise<boolean> {
    return this.links.hasAny(accountId);
  }

  /** The account's linked installation ids after `after`, ascending. */
  page(accountId: number, after: number | null, limit: number): Promise<number[]> {
    return this.links.page(accountId, after, limit);
  }

  /** Drops the account's link to an installation GitHub no longer has (uninstalled). */
  forget(accountId: number, installationId: number): Promise<void> {
    this.logger.log(
      `Account ${accountId}: GitHub installation ${installationId} is gone from GitHub; link removed`,
    );
    return this.links.unlink(accountId, installationId);
  }

  /** The App's install page with a state signed for the caller, valid {@link LINK_STATE_TTL_SECONDS}. */
  linkUrl(actor: Principal): string {
    const { linkUrl } = this.git.links();
    if (this.stateKeyProblem) throw gitHubError('github_not_configured', this.stateKeyProblem);
    return `${linkUrl}?state=${issueLinkState(this.stateKey, actor.accountId, actor.userId)}`;
  }

  /**
   * GitHub's redirect after the App was installed or configured: checks the state, asks GitHub
   * (App JWT) for the installation, and links it to the state's account, once. Linking an
   * installation the account has linked already answers the same, without checking again.
   */
  async setup(query: GitHubSetupQueryDto): Promise<GitHubSetupResultDto> {
    this.git.requireConfigured();
    if (this.stateKeyProblem) throw gitHubError('github_not_configured', this.stateKeyProblem);
    if (query.state === undefined || query.state === '') {
      throw gitHubError(
        'invalid_github_state',
        'The redirect carries no state: an installation is linked to an account only when the App is ' +
          `installed or configured from that account’s linkUrl (GET /api/v1/github/status); ${START_AGAIN}`,
      );
    }
    const check = verifyLinkState(this.stateKey, query.state);
    if (!check.ok) {
      throw gitHubError(
        'invalid_github_state',
        check.problem === 'expired'
          ? `The state has expired (it is valid for ${LINK_STATE_TTL_SECONDS / 60} minutes); ${START_AGAIN}`
          : `The state was not issued by this service or was altered; ${START_AGAIN}`,
      );
    }
    if (query.setup_action === 'request') {
      throw gitHubError(
        'bad_request',
        'GitHub recorded a request to install the App, which an owner of the GitHub account must ' +
          `approve; once it is installed, link it: ${START_AGAIN}`,
      );
    }
    const installationId = query.installation_id;
    if (installationId === undefined) throw gitHubError('validation_failed', ['installation_id is required']);
    const { accountId, userId, iat } = check.claims;

    const installation = await this.git.installation(installationId);
    const result: GitHubSetupResultDto = {
      installationId: String(installationId),
      accountLogin: installation.login,
      linked: true,
    };
    if (await this.links.isLinked(accountId, installationId)) return result;

    if (!changedSince(installation, iat * 1000 - LINK_CLOCK_SKEW_MS)) {
      this.logger.warn(
        `Account ${accountId} (user ${userId}): setup redirect for GitHub installation ${installationId}, ` +
          'which GitHub reports unchanged since the state was issued; not linked',
      );
      throw gitHubError(
        'github_link_unverified',
        `GitHub reports no install or change of installation ${installationId} since this link was started, ` +
          'so this redirect does not show that it was made on GitHub. To link an installation that exists ' +
          'already, open linkUrl (GET /api/v1/github/status), choose its GitHub account and change the ' +
          'repositories it may access (GitHub then redirects here); or install the App anew.',
      );
    }
    try {
      if (await this.links.link(accountId, installationId, userId)) {
        this.logger.log(
          `Account ${accountId}: user ${userId} linked GitHub installation ${installationId} (${installation.login})`,
        );
      }
    } catch (err) {
      // The account or the user of the state was deleted since it was issued.
      if (foreignKeyViolation(err)) {
        throw gitHubError(
          'invalid_github_state',
          `The account or user that started this link no longer exists; ${START_AGAIN}`,
        );
      }
      throw err;
    }
    return result;
  }
}

/** Whether GitHub created or changed the installation at or after `since` (ms). */
function changedSince(installation: GitHubInstallation, since: number): boolean {
  const times = [installation.createdAt, installation.updatedAt]
    .map((t) => (t === null ? NaN : Date.parse(t)))
    .filter((t) => !Number.isNaN(t));
  return times.some((t) => t >= since);
}
