import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { notFound } from '../../core/errors/not-found.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { DataModelRepository, type EnvironmentRow } from './data-model.repository.js';
import { DeployStates } from './deploy-states.service.js';
import {
  ENVIRONMENT_TYPES,
  type EnvironmentApiCredentialDto,
  type EnvironmentDto,
  type EnvironmentType,
  type EnvironmentsQueryDto,
} from './dto/environments.dto.js';

/** The port the SQL API of a deployment listens on (the PostgreSQL wire protocol's own). */
export const SQL_API_PORT = 5432;

/**
 * Where a deployment's data is served, one environment per branch that is served:
 * - production: the deploy branch, at `<deploymentUrl>/cubejs-api/v1` and over SQL;
 * - staging: each shared branch with its staging toggle on, at
 *   `<deploymentUrl>/dev-mode/<branch>/cubejs-api/v1` (the address the reference gives a staging
 *   environment);
 * - development: each user's personal dev-mode branch, at the same kind of address.
 * Each has a stable numeric id (a row of `environments`, kept by the branch writes of
 * {@link DataModelRepository}): data API tokens are issued for it.
 */
@Injectable()
export class ModelEnvironments {
  constructor(
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
    private readonly repository: DataModelRepository,
    private readonly deployStates: DeployStates,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    query: EnvironmentsQueryDto,
  ): Promise<LegacyPage<EnvironmentDto>> {
    const paging = resolvePaging(query, ['number', 'string']);
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const [settings, deployment] = await Promise.all([
      this.deployments.gitSettings(actor.accountId, deploymentId),
      this.deployments.describe(actor.accountId, deploymentId),
    ]);
    const ranks = query.type ? [ENVIRONMENT_TYPES.indexOf(query.type)] : ENVIRONMENT_TYPES.map((_, i) => i);
    const after = paging.mode === 'cursor' && paging.after ? paging.after : null;
    const rows = await this.repository.environments({
      deploymentId,
      deployBranch: settings.deployBranchName,
      ranks,
      after: after ? [after[0] as number, after[1] as string] : null,
      limit: fetchLimit(paging),
      offset: paging.mode === 'offset' ? paging.offset : 0,
    });
    const total = rows[0]?.total ?? 0;
    const page = rows.filter((r): r is EnvironmentRow => r.rank !== null);
    const served = page.filter((r) => r.rank !== 2).map((r) => r.id);
    const states = await this.deployStates.read(deploymentId, served);
    return withLegacyFields(
      buildPage(
        page,
        paging,
        (r) => [r.rank, r.branch],
        (r) => {
          const env = toEnvironment(deployment.deploymentUrl, r);
          if (!this.deployStates.reported || r.rank === 2) return env;
          const state = states.get(r.id);
          return state
            ? { ...env, status: state.status, statusReason: state.reason }
            : { ...env, status: 'not_deployed', statusReason: 'Waiting for a successful build to deploy' };
        },
      ),
      paging,
      total,
    );
  }

  /**
   * One environment of a deployment of `accountId` (404 `deployment_not_found`, then
   * `environment_not_found`). No access check: the caller checks the action its operation needs.
   * `lock` (inside a unit of work): the environment cannot go until the unit of work ends, and
   * writers for one environment take turns.
   */
  async find(
    accountId: number,
    deploymentId: number,
    environmentId: number,
    options: { lock?: boolean } = {},
  ): Promise<ServedEnvironment> {
    const settings = await this.deployments.gitSettings(accountId, deploymentId);
    const row = await this.repository.environment(
      deploymentId,
      settings.deployBranchName,
      environmentId,
      options,
    );
    if (!row) throw notFound('Environment', environmentId);
    return { id: row.id, type: ENVIRONMENT_TYPES[row.rank], branch: row.branch, userId: row.userId };
  }

  /**
   * The environments a runtime runs for the deployment (production, and each staging branch whose
   * toggle is on), each with its branch's last successful build; 404 `deployment_not_found` when
   * it is gone. For the runtime module: no access check.
   */
  async runnable(accountId: number, deploymentId: number): Promise<RunnableDeployment> {
    const settings = await this.deployments.gitSettings(accountId, deploymentId);
    const rows = await this.repository.runnableEnvironments(deploymentId, settings.deployBranchName);
    return {
      deployBranch: settings.deployBranchName,
      projectRoot: settings.deployProjectRoot,
      environments: rows.map((r) => ({
        id: r.id,
        type: r.rank === 0 ? 'production' : 'staging',
        branch: r.branch,
        builtCommit: r.builtCommit,
      })),
    };
  }

  /** The environment serving `branch` (production or staging), or null. */
  async servingBranch(deploymentId: number, deployBranch: string, branch: string): Promise<number | null> {
    return this.repository.environmentServing(deploymentId, deployBranch, branch);
  }
}

/** An environment a runtime runs: production or a staging branch, with the commit to run. */
export interface RunnableEnvironment {
  id: number;
  type: 'production' | 'staging';
  branch: string;
  /** The branch's last successful build's commit; null before its first (nothing to run yet). */
  builtCommit: string | null;
}

/** What a deployment's runtime must run, read in one unit of work. */
export interface RunnableDeployment {
  deployBranch: string;
  /** The folder of the repository that holds the project (`''`: the root). */
  projectRoot: string;
  environments: RunnableEnvironment[];
}

/** An environment as the services that issue its credentials need it. */
export interface ServedEnvironment {
  id: number;
  type: EnvironmentType;
  branch: string;
  /** Development: the user whose dev branch it serves. */
  userId: number | null;
}

function toEnvironment(deploymentUrl: string, row: EnvironmentRow): EnvironmentDto {
  const type = ENVIRONMENT_TYPES[row.rank];
  if (type === 'production') {
    return {
      id: String(row.id),
      type,
      branch: row.branch,
      user: null,
      api_credentials: [
        rest(`${deploymentUrl}/cubejs-api/v1`),
        {
          type: 'sql',
          version: 1,
          url: null,
          host: new URL(deploymentUrl).hostname,
          port: SQL_API_PORT,
          database: null,
        },
      ],
    };
  }
  return {
    id: String(row.id),
    type,
    branch: row.branch,
    user: type === 'development' ? row.email : null,
    api_credentials: [rest(`${deploymentUrl}/dev-mode/${encodeURIComponent(row.branch)}/cubejs-api/v1`)],
  };
}

function rest(url: string): EnvironmentApiCredentialDto {
  return { type: 'rest', version: 1, url, host: null, port: null, database: null };
}
