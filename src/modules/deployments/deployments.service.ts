import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import { AccessService, type ResourceRef } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { coreError } from '../../core/http/api-error.js';
import { JobHandlers } from '../../core/queue/job-handlers.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { RunLeases, type RunTable } from '../../core/queue/run-leases.js';
import { RELEASE_CHANNEL_VERSIONS, type ReleaseChannel } from './deployment.constants.js';
import { deploymentsError } from './deployments.errors.js';
import type {
  CreateDeploymentDto,
  DeploymentDto,
  DeploymentSettingsDto,
  DeploymentsQueryDto,
  UpdateDeploymentDto,
} from './dto/deployment.dto.js';
import { queryRows } from '../../core/database/sql.js';

interface DeploymentRow {
  id: number;
  name: string;
  creationStep: string;
  cloudProvider: string;
  region: string | null;
  creationMethod: string | null;
  deployMode: string | null;
  isManaged: boolean;
  targetPlatform: string | null;
  releaseChannel: string;
  releaseChannelVersion: string | null;
  releaseChannelVersionHold: boolean | null;
  template: string;
  templateVariables: Record<string, unknown>;
  defaultLaunchpadViewGroup: string | null;
  launchpadTabs: string[] | null;
  customDomain: string | null;
  deployBranchName: string;
  deployBranchReadOnly: boolean;
  deployBranchMergeAllowed: boolean;
  deployProjectRoot: string;
}

const COLUMNS = `d.id, d.name, d.creation_step AS "creationStep", d.cloud_provider AS "cloudProvider", d.region,
  d.creation_method AS "creationMethod", d.deploy_mode AS "deployMode", d.is_managed AS "isManaged",
  d.target_platform AS "targetPlatform", d.release_channel AS "releaseChannel",
  d.release_channel_version AS "releaseChannelVersion", d.release_channel_version_hold AS "releaseChannelVersionHold",
  d.template, d.template_variables AS "templateVariables", d.default_launchpad_view_group AS "defaultLaunchpadViewGroup",
  d.launchpad_tabs AS "launchpadTabs", d.custom_domain AS "customDomain", d.deploy_branch_name AS "deployBranchName",
  d.deploy_branch_read_only AS "deployBranchReadOnly", d.deploy_branch_merge_allowed AS "deployBranchMergeAllowed",
  d.deploy_project_root AS "deployProjectRoot"`;

/** Applies a JSON merge patch (RFC 7396) of one level: null removes a key. */
function mergeVariables(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** `name` is trimmed before it is stored, so a name of only whitespace would be stored empty. */
function assertNameNotBlank(name: string): void {
  if (name.trim() === '') throw coreError('validation_failed', ['name must not be blank']);
}

/** Builds are runs of the `deployment.build` job (see src/core/queue/README.md). */
const BUILD_RUNS: RunTable<'deployment.build'> = {
  table: 'deployment_builds',
  job: 'deployment.build',
  payload: (buildId) => ({ buildId }),
  payloadKey: 'buildId',
  maxAttempts: 3,
};

@Injectable()
export class DeploymentsService implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly jobs: JobQueue,
    private readonly handlers: JobHandlers,
    private readonly config: AppConfig,
    private readonly runs: RunLeases,
  ) {}

  onModuleInit(): void {
    this.access.register('Deployment', {
      resolve: async (accountId, ids) => {
        const rows: Array<{ id: number }> = await this.dataSource.query(
          `SELECT id FROM deployments WHERE account_id = $1 AND id = ANY($2)`,
          [accountId, ids],
        );
        return new Map(rows.map((r) => [r.id, [{ type: 'Deployment', id: r.id } satisfies ResourceRef]]));
      },
    });
    this.handlers.register('deployment.build', (payload) => this.runBuild(payload.buildId));
    this.runs.register(BUILD_RUNS);
  }

  async list(actor: Principal, query: DeploymentsQueryDto): Promise<LegacyPage<DeploymentDto>> {
    const paging = resolvePaging(query, ['number']);
    const params: unknown[] = [actor.accountId];
    let filter = 'd.account_id = $1';
    if (query.creationStep?.length) {
      params.push(query.creationStep);
      filter += ` AND d.creation_step = ANY($${params.length})`;
    }
    const scope = this.access.listScope(
      actor,
      'Deployment',
      Action.DeploymentRead,
      'd.id',
      params.length + 1,
    );
    params.push(...scope.params);
    filter += ` AND ${scope.sql}`;
    const keyset = keysetPredicate(
      ['d.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const offset = paging.mode === 'offset' ? ` OFFSET ${paging.offset}` : '';
    const [rows, count] = await Promise.all([
      queryRows<DeploymentRow>(
        this.dataSource,
        `SELECT ${COLUMNS} FROM deployments d WHERE ${filter} AND ${keyset.sql}
         ORDER BY d.id LIMIT ${fetchLimit(paging)}${offset}`,
        [...params, ...keyset.params],
      ),
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM deployments d WHERE ${filter}`,
        params,
      ),
    ]);
    return withLegacyFields(
      buildPage(
        rows,
        paging,
        (r) => [r.id],
        (r) => this.toDeployment(r),
      ),
      paging,
      count[0].n,
    );
  }

  async get(actor: Principal, id: number): Promise<DeploymentDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentRead);
    return this.toDeployment(await this.row(actor.accountId, id));
  }

  /** Creates the deployment and queues its first build; 503 before any write if the queue is down. */
  async create(actor: Principal, dto: CreateDeploymentDto): Promise<DeploymentDto> {
    assertNameNotBlank(dto.name);
    this.jobs.assertAvailable();
    await this.assertRegion(dto.region);
    const { row, job } = await this.dataSource.transaction(async (manager) => {
      const rows: DeploymentRow[] = await manager.query(
        `INSERT INTO deployments AS d (account_id, name, cloud_provider, region, creation_method, deploy_mode,
           creation_step, is_managed, target_platform)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
        [
          actor.accountId,
          dto.name.trim(),
          dto.cloudProvider,
          dto.region,
          dto.creationMethod ?? null,
          dto.deployMode ?? null,
          dto.creationStep,
          dto.isManaged,
          dto.targetPlatform,
        ],
      );
      const job = await this.queueBuild(manager, actor.accountId, rows[0], 'creation');
      return { row: rows[0], job };
    });
    await this.jobs.dispatch(job);
    return this.toDeployment(row);
  }

  async update(actor: Principal, id: number, dto: UpdateDeploymentDto): Promise<DeploymentSettingsDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentUpdate);
    if (dto.name !== undefined) assertNameNotBlank(dto.name);
    // An empty string is a region name too (and not in the catalogue); only null clears it.
    if (dto.region !== undefined && dto.region !== null) await this.assertRegion(dto.region);
    const row = await this.dataSource.transaction(async (manager) => {
      const current = await this.row(actor.accountId, id, manager, true);
      const next: DeploymentRow = { ...current };
      for (const [key, value] of Object.entries(dto) as Array<[keyof UpdateDeploymentDto, unknown]>) {
        if (value === undefined || key === 'templateVariables') continue;
        (next as unknown as Record<string, unknown>)[key] = value;
      }
      if (dto.templateVariables !== undefined) {
        next.templateVariables =
          dto.templateVariables === null
            ? {}
            : mergeVariables(current.templateVariables, dto.templateVariables);
      }
      // Versions are stored without the optional `v` prefix clients may send.
      if (next.releaseChannelVersion)
        next.releaseChannelVersion = next.releaseChannelVersion.replace(/^v/, '');
      if (dto.releaseChannelVersion !== undefined || dto.releaseChannel !== undefined) {
        this.assertReleaseVersion(next.releaseChannel as ReleaseChannel, next.releaseChannelVersion);
      }
      const rows = await queryRows<DeploymentRow>(
        manager,
        `UPDATE deployments d SET name = $3, cloud_provider = $4, region = $5, release_channel = $6,
           release_channel_version = $7, release_channel_version_hold = $8, template = $9, template_variables = $10,
           default_launchpad_view_group = $11, launchpad_tabs = $12, creation_method = $13, deploy_mode = $14,
           custom_domain = $15, deploy_branch_name = $16, deploy_branch_read_only = $17,
           deploy_branch_merge_allowed = $18, deploy_project_root = $19, updated_at = now()
         WHERE d.account_id = $1 AND d.id = $2 RETURNING ${COLUMNS}`,
        [
          actor.accountId,
          id,
          next.name.trim(),
          next.cloudProvider,
          next.region,
          next.releaseChannel,
          next.releaseChannelVersion,
          next.releaseChannelVersionHold,
          next.template,
          JSON.stringify(next.templateVariables),
          next.defaultLaunchpadViewGroup,
          next.launchpadTabs,
          next.creationMethod,
          next.deployMode,
          next.customDomain,
          next.deployBranchName,
          next.deployBranchReadOnly,
          next.deployBranchMergeAllowed,
          next.deployProjectRoot,
        ],
      );
      return rows[0];
    });
    return this.toSettings(row);
  }

  async remove(actor: Principal, id: number): Promise<void> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentDelete);
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `DELETE FROM policies WHERE account_id = $1 AND resource_type = 'Deployment' AND resource_id = $2`,
        [actor.accountId, String(id)],
      );
      await manager.query(`DELETE FROM deployments WHERE account_id = $1 AND id = $2`, [actor.accountId, id]);
    });
  }

  /**
   * Runs one build; safe to run again. It claims a `queued` build, or takes over one left
   * `running` by a worker that died (its lease expired), and restarts it from the beginning; a
   * finished build, or one a live worker holds, is left alone.
   */
  async runBuild(buildId: number): Promise<void> {
    const claim = await this.runs.claim(BUILD_RUNS, buildId);
    if (!claim) return;
    // The starter project has nothing to compile; the build records its outcome.
    await this.runs.hold(BUILD_RUNS, claim, () => Promise.resolve());
    await this.runs.finish(BUILD_RUNS, claim, 'succeeded');
  }

  private async queueBuild(
    manager: EntityManager,
    accountId: number,
    deployment: DeploymentRow,
    trigger: string,
  ) {
    const [build]: Array<{ id: number }> = await manager.query(
      `INSERT INTO deployment_builds (account_id, deployment_id, branch, status, trigger)
       VALUES ($1, $2, $3, 'queued', $4) RETURNING id`,
      [accountId, deployment.id, deployment.deployBranchName, trigger],
    );
    return this.jobs.record(manager, 'deployment.build', { buildId: build.id });
  }

  private assertReleaseVersion(channel: ReleaseChannel, version: string | null): void {
    if (version === null) return;
    const versions = RELEASE_CHANNEL_VERSIONS[channel];
    if (!versions.includes(version.replace(/^v/, ''))) {
      throw deploymentsError(
        'release_version_invalid',
        `releaseChannelVersion ${version} is not offered on the ${channel} channel; choose one of ${versions.join(', ')}`,
      );
    }
  }

  private async assertRegion(region: string): Promise<void> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM regions WHERE name = $1`, [region]);
    if (rows.length === 0)
      throw deploymentsError('unknown_region', `Region ${region} does not exist; see GET /api/v1/regions`);
  }

  /** Whether deployment `id` belongs to the account: workspace routes scope everything by it. */
  async existsInAccount(accountId: number, id: number): Promise<boolean> {
    const rows = await queryRows(
      this.dataSource,
      `SELECT 1 FROM deployments WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    );
    return rows.length > 0;
  }

  private async row(
    accountId: number,
    id: number,
    manager = this.dataSource.manager,
    lock = false,
  ): Promise<DeploymentRow> {
    const rows: DeploymentRow[] = await manager.query(
      `SELECT ${COLUMNS} FROM deployments d WHERE d.account_id = $1 AND d.id = $2${lock ? ' FOR UPDATE' : ''}`,
      [accountId, id],
    );
    if (!rows[0]) throw deploymentsError('deployment_not_found', `Deployment ${id} was not found`);
    return rows[0];
  }

  private toDeployment(row: DeploymentRow): DeploymentDto {
    return {
      id: row.id,
      name: row.name,
      deploymentUrl: `https://deployment-${row.id}.${this.config.deploymentDomain}`,
      creationStep: row.creationStep,
    };
  }

  private toSettings(row: DeploymentRow): DeploymentSettingsDto {
    const { id: _id, name: _name, creationStep: _step, ...rest } = row;
    return { ...this.toDeployment(row), ...rest, isCubeSqlEnabled: true, isSupportPreAggregations: true };
  }
}
