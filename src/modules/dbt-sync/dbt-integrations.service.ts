import { Injectable, Logger } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import { checkUrl as checkOutboundUrl, OutboundRefused, urlHost } from '../../core/net/outbound-address.js';
import { isValidRefName, type DbtRepositoryAuth } from './dbt-git.js';
import { dbtSyncError } from './dbt-sync.errors.js';
import { DbtSyncRepository, type IntegrationRow } from './dbt-sync.repository.js';
import type { DbtIntegrationDto, PutDbtIntegrationDto } from './dto/dbt-integration.dto.js';

export const DEFAULT_GIT_USERNAME = 'x-access-token';

/** `scheme://host` of a URL: what credentials are bound to. */
function originOf(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`.toLowerCase();
}

/** What a sealed secret is bound to: a copy in another row, deployment or host does not open. */
const credentialsContext = (accountId: number, deploymentId: number, url: string) =>
  `dbt-integration:${accountId}:${deploymentId}:${originOf(url)}`;

const PROJECT_ROOT_MAX = 1024;

/**
 * The dbt project's directory as stored: `/` or `/a/b`, from `/`, ``, `a/b/`, `/a/b`. No `.` or
 * `..` segment, no `.git`, no empty segment, no backslash or control character: 400 `invalid_path`.
 */
export function normaliseProjectRoot(raw: string): string {
  const trimmed = raw.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '/';
  const problem =
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f\\]/.test(trimmed)
      ? 'holds a backslash or a control character'
      : trimmed.length > PROJECT_ROOT_MAX
        ? `is longer than ${PROJECT_ROOT_MAX} characters`
        : trimmed.split('/').some((s) => s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git')
          ? 'has an empty, `.`, `..` or `.git` segment'
          : null;
  if (problem) throw dbtSyncError('invalid_path', `projectRoot ${JSON.stringify(raw)} ${problem}`);
  return `/${trimmed}`;
}

/**
 * Each deployment's dbt repository (`GET, PUT .../dbt-integration`): where syncs from git read
 * the dbt project. Credentials are sealed for the account, the deployment and the repository's
 * origin; they leave this service in clear only through {@link credentials}, for the sync job,
 * and never in a response, a log line or an error.
 */
@Injectable()
export class DbtIntegrations {
  private readonly logger = new Logger(DbtIntegrations.name);

  constructor(
    private readonly db: Database,
    private readonly repository: DbtSyncRepository,
    private readonly access: AccessService,
    private readonly secrets: SecretBoxService,
    private readonly config: AppConfig,
  ) {}

  async get(actor: Principal, deploymentId: number): Promise<DbtIntegrationDto> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const row = await this.repository.integration(deploymentId);
    if (!row) {
      throw dbtSyncError(
        'dbt_integration_not_found',
        `Deployment ${deploymentId} has no dbt integration; PUT /api/v1/deployments/${deploymentId}/dbt-integration configures one`,
      );
    }
    return toDto(row);
  }

  /**
   * Saves the integration. `credentials` left out keeps the stored ones while the repository's
   * origin stays the same (they are bound to it), `null` removes them; sending either needs
   * SecretsManage besides DeploymentUpdate.
   */
  async put(actor: Principal, deploymentId: number, dto: PutDbtIntegrationDto): Promise<DbtIntegrationDto> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentUpdate);
    if (dto.credentials !== undefined) {
      await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SecretsManage);
    }
    const url = await this.checkUrl(dto.repositoryUrl);
    if (!(await isValidRefName(dto.branch))) {
      throw dbtSyncError(
        'invalid_branch_name',
        `branch ${JSON.stringify(dto.branch)} is not a valid git branch name`,
      );
    }
    const projectRoot = dto.projectRoot === undefined ? undefined : normaliseProjectRoot(dto.projectRoot);
    const context = credentialsContext(actor.accountId, deploymentId, url);
    const row = await this.db.transaction(async () => {
      const current = await this.repository.integration(deploymentId, true);
      let sealed: string | null = null;
      if (dto.credentials) {
        const secret = {
          username: dto.credentials.username ?? DEFAULT_GIT_USERNAME,
          token: dto.credentials.token,
        };
        sealed = this.secrets.seal(JSON.stringify(secret), context);
      } else if (dto.credentials === undefined && current?.credentialsSealed) {
        sealed = originOf(current.repositoryUrl) === originOf(url) ? current.credentialsSealed : null;
      }
      return this.repository.upsertIntegration({
        deploymentId,
        accountId: actor.accountId,
        repositoryUrl: url,
        branch: dto.branch,
        projectRoot: projectRoot ?? current?.projectRoot ?? '/',
        credentialsSealed: sealed,
      });
    });
    return toDto(row);
  }

  /** The integration, for a sync from git (no access check: the caller checked). */
  integration(deploymentId: number): Promise<IntegrationRow | undefined> {
    return this.repository.integration(deploymentId);
  }

  /**
   * The stored credentials in clear, for the sync job, when the integration still points at the
   * origin of `url` (the URL the sync was started with); null otherwise or without credentials.
   */
  async credentials(accountId: number, deploymentId: number, url: string): Promise<DbtRepositoryAuth | null> {
    const row = await this.repository.integration(deploymentId);
    if (!row?.credentialsSealed || originOf(row.repositoryUrl) !== originOf(url)) return null;
    try {
      const opened = this.secrets
        .open(row.credentialsSealed, credentialsContext(accountId, deploymentId, row.repositoryUrl))
        .toString('utf8');
      return JSON.parse(opened) as DbtRepositoryAuth;
    } catch {
      this.logger.warn(
        { deploymentId },
        'The dbt integration’s credentials do not open; fetching without them',
      );
      return null;
    }
  }

  /**
   * An absolute URL without credentials, whose transport is allowed (`DBT_GIT_PROTOCOLS`), whose
   * host, when `DBT_GIT_HOSTS` limits them, is one of those, and (but for `file://`) which the
   * outbound rule takes (core/net: a host, not in or resolving into the platform's own network
   * unless `OUTBOUND_ALLOWED_HOSTS` opens it). The reason of a refusal by that rule is the same
   * whatever the host was; what it was goes to the debug log.
   */
  async checkUrl(raw: string): Promise<string> {
    const refuse = (why: string) => dbtSyncError('invalid_dbt_repository_url', `repositoryUrl ${why}`);
    // eslint-disable-next-line no-control-regex
    if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw refuse('must not contain spaces or control characters');
    let url: URL;
    try {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw new Error('not absolute');
      url = new URL(raw);
    } catch {
      throw refuse('must be an absolute URL such as https://github.com/acme/analytics-dbt.git');
    }
    if (url.username !== '' || url.password !== '') {
      throw refuse(
        'must not hold credentials; send them in `credentials`, where they are sealed and never returned',
      );
    }
    const protocol = url.protocol.slice(0, -1).toLowerCase();
    const allowed = this.config.dbtSync.gitProtocols;
    if (!(allowed as readonly string[]).includes(protocol)) {
      throw refuse(`uses ${protocol}://, which this service does not allow (allowed: ${allowed.join(', ')})`);
    }
    if (protocol === 'file') return raw;
    let host: string;
    try {
      host = urlHost(raw).host;
    } catch (err) {
      if (err instanceof OutboundRefused) throw refuse(err.message);
      throw err;
    }
    const hosts = this.config.dbtSync.gitHosts;
    if (hosts !== null && !hostAllowed(host, hosts)) {
      throw refuse(`points at ${host}, which this service does not allow (allowed: ${hosts.join(', ')})`);
    }
    try {
      await checkOutboundUrl(raw, { allow: this.config.outboundAllowList });
    } catch (err) {
      if (!(err instanceof OutboundRefused)) throw err;
      this.logger.debug({ reason: err.reason, detail: err.detail }, 'dbt repository URL refused');
      throw refuse(err.message);
    }
    return raw;
  }
}

/** Whether `hostname` is one of `patterns`: a host itself, or `*.<domain>` for any host below it. */
export function hostAllowed(hostname: string, patterns: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return patterns.some((pattern) =>
    pattern.startsWith('*.')
      ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
      : host === pattern,
  );
}

function toDto(row: IntegrationRow): DbtIntegrationDto {
  return {
    repositoryUrl: row.repositoryUrl,
    branch: row.branch,
    projectRoot: row.projectRoot,
    hasCredentials: row.credentialsSealed !== null,
    updatedAt: row.updatedAt,
  };
}
