import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService, type ResourceRef } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobRuns } from '../../core/queue/job-runs.service.js';
import { canAdvance, CREATION_STEP_ORDER, type CreationStep } from './deployment.constants.js';
import { DeploymentEvents } from './deployment-events.js';
import { DeploymentLifecycle } from './deployment-lifecycle.js';
import { deploymentShape, settingsShape } from './deployment-shapes.js';
import { deploymentsError } from './deployments.errors.js';
import {
  DeploymentsRepository,
  type DeploymentListRow,
  type DeploymentRow,
} from './deployments.repository.js';
import type {
  CreateDeploymentDto,
  DeploymentDto,
  DeploymentSettingsDto,
  DeploymentsQueryDto,
  UpdateDeploymentDto,
} from './dto/deployment.dto.js';
import { effectiveVersion, ReleasesService } from './releases.service.js';

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

/** The fields of a `PUT` that {@link ReleasesService.resolve} settles together. */
const VERSION_FIELDS: ReadonlySet<string> = new Set([
  'releaseChannel',
  'releaseChannelVersion',
  'releaseChannelVersionHold',
]);

/** The owner key of a deployment's job runs (builds, syncs), to list and forget them. */
export const deploymentOwner = (deploymentId: number): string => `deployment:${deploymentId}`;

/** Where a deployment's data model is served from. */
export interface DeploymentGitSettings {
  id: number;
  name: string;
  creationMethod: string | null;
  deployBranchName: string;
  deployBranchReadOnly: boolean;
  deployBranchMergeAllowed: boolean;
  /** The merge gate (docs/data-model.md, "Reviews and the merge gate"): approvals needed, 0 to 10. */
  deployBranchRequiredApprovals: number;
  /** The merge gate: a merge into the deploy branch may not break stored content. */
  deployBranchBlockNewBrokenContent: boolean;
  deployProjectRoot: string;
}

/** `name` is trimmed before it is stored, so a name of only whitespace would be stored empty. */
function assertNameNotBlank(name: string): void {
  if (name.trim() === '') throw coreError('validation_failed', ['name must not be blank']);
}

@Injectable()
export class DeploymentsService implements OnModuleInit {
  constructor(
    private readonly db: Database,
    private readonly repository: DeploymentsRepository,
    private readonly access: AccessService,
    private readonly jobs: JobQueue,
    private readonly runs: JobRuns,
    private readonly config: AppConfig,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly releases: ReleasesService,
    private readonly events: DeploymentEvents,
  ) {}

  onModuleInit(): void {
    this.access.register('Deployment', {
      resolve: async (accountId, ids) => {
        const found = await this.repository.existing(accountId, ids);
        return new Map(found.map((id) => [id, [{ type: 'Deployment', id } satisfies ResourceRef]]));
      },
    });
  }

  async list(actor: Principal, query: DeploymentsQueryDto): Promise<LegacyPage<DeploymentDto>> {
    const paging = resolvePaging(query, ['number']);
    const { rows, total } = await this.repository.page({
      accountId: actor.accountId,
      creationSteps: query.creationStep?.length ? query.creationStep : null,
      filter: this.access.listScopeSql(actor, 'Deployment', Action.DeploymentRead, 'd.id'),
      afterId: paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null,
      limit: fetchLimit(paging),
      offset: paging.mode === 'offset' ? paging.offset : 0,
    });
    return withLegacyFields(
      buildPage(
        rows,
        paging,
        (r) => [r.id],
        (r) => this.toDeployment(r),
      ),
      paging,
      total,
    );
  }

  async get(actor: Principal, id: number): Promise<DeploymentDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentRead);
    return this.toDeployment(await this.row(actor.accountId, id));
  }

  /**
   * Creates the deployment; the modules hanging from it set it up in the same unit of work (the
   * data model queues its first build). 503 before any write if the queue is down. Without
   * `scaffold` (`POST /api/v1/deployments`) the model gets no starter project and no build, and
   * nothing is queued.
   */
  async create(
    actor: Principal,
    dto: CreateDeploymentDto,
    options: { scaffold?: boolean } = {},
  ): Promise<DeploymentDto> {
    const scaffold = options.scaffold ?? true;
    assertNameNotBlank(dto.name);
    if (scaffold) this.jobs.assertAvailable();
    await this.assertRegion(dto.region);
    const row = await this.db.transaction(async () => {
      await this.releases.lockForDeploymentWrite();
      const deployment = await this.repository.insert({
        accountId: actor.accountId,
        name: dto.name.trim(),
        cloudProvider: dto.cloudProvider,
        region: dto.region,
        creationMethod: dto.creationMethod ?? null,
        deployMode: dto.deployMode ?? null,
        creationStep: dto.creationStep,
        isManaged: dto.isManaged,
        targetPlatform: dto.targetPlatform,
      });
      // It follows its channel: its history starts with the channel's head.
      await this.releases.recordChange(actor.accountId, null, deployment);
      await this.lifecycle.created({
        id: deployment.id,
        accountId: actor.accountId,
        creationMethod: deployment.creationMethod,
        deployBranchName: deployment.deployBranchName,
        scaffold,
      });
      return deployment;
    });
    return this.toDeployment(row);
  }

  /** Every setting in one payload (`GET .../settings`), as `update` answers it. */
  async settings(actor: Principal, id: number): Promise<DeploymentSettingsDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentRead);
    return this.toSettings(await this.row(actor.accountId, id));
  }

  async update(actor: Principal, id: number, dto: UpdateDeploymentDto): Promise<DeploymentSettingsDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentUpdate);
    if (dto.name !== undefined) assertNameNotBlank(dto.name);
    // An empty string is a region name too (and not in the catalogue); only null clears it.
    if (dto.region !== undefined && dto.region !== null) await this.assertRegion(dto.region);
    const versionChange =
      dto.releaseChannel !== undefined ||
      dto.releaseChannelVersion !== undefined ||
      dto.releaseChannelVersionHold !== undefined;
    const row = await this.db.transaction(async () => {
      if (versionChange) await this.releases.lockForDeploymentWrite();
      const current = await this.row(actor.accountId, id, true);
      const next: DeploymentRow = { ...current };
      for (const [key, value] of Object.entries(dto) as Array<[keyof UpdateDeploymentDto, unknown]>) {
        if (value === undefined || key === 'templateVariables' || VERSION_FIELDS.has(key)) continue;
        (next as unknown as Record<string, unknown>)[key] = value;
      }
      if (dto.templateVariables !== undefined) {
        next.templateVariables =
          dto.templateVariables === null
            ? {}
            : mergeVariables(current.templateVariables, dto.templateVariables);
      }
      if (versionChange) Object.assign(next, await this.releases.resolve(id, current, dto));
      next.name = next.name.trim();
      const updated = await this.repository.update(actor.accountId, next);
      if (!updated) throw notFound('Deployment', id);
      if (versionChange) await this.releases.recordChange(actor.accountId, current, updated);
      await this.lifecycle.changed(actor.accountId, id);
      await this.events.changed(actor.accountId, id, updated);
      return updated;
    });
    return this.toSettings(row);
  }

  /**
   * Moves the setup wizard forward (`creation-step/advance`): to a later step of the reference's
   * order, or to the same one (a retry changes nothing). The row is locked, so two advances
   * take turns and each is checked against the step the other left.
   */
  async advanceCreationStep(actor: Principal, id: number, step: CreationStep): Promise<DeploymentDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentUpdate);
    const row = await this.db.transaction(async () => {
      const current = await this.row(actor.accountId, id, true);
      if (!canAdvance(current.creationStep, step)) {
        throw deploymentsError(
          'creation_step_invalid',
          `The setup wizard cannot advance from ${current.creationStep} to ${step}: it goes forward through ` +
            `${CREATION_STEP_ORDER.join(', ')} (demo from project only); reset goes back to project`,
        );
      }
      if (current.creationStep === step) return current;
      const updated = (await this.repository.setCreationStep(actor.accountId, id, step))!;
      await this.events.changed(actor.accountId, id, updated);
      return updated;
    });
    return this.toDeployment(row);
  }

  /** Takes the setup wizard back to its first step, `project` (`creation-step/reset`). */
  async resetCreationStep(actor: Principal, id: number): Promise<DeploymentDto> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentUpdate);
    const row = await this.db.transaction(async () => {
      const updated = await this.repository.setCreationStep(actor.accountId, id, 'project');
      if (!updated) throw notFound('Deployment', id);
      await this.events.changed(actor.accountId, id, updated);
      return updated;
    });
    return this.toDeployment(row);
  }

  /**
   * Deletes the deployment with everything hanging from it, its runs and the grants on it.
   * Publishes `deployment.changed` with `{ id, name, deleted: true }`; what goes with it (its
   * content, builds, syncs) publishes nothing of its own.
   */
  async remove(actor: Principal, id: number): Promise<void> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentDelete);
    await this.db.transaction(async () => {
      const deployment = await this.row(actor.accountId, id, true);
      await this.events.deleted(actor.accountId, deployment);
      await this.access.forget(actor.accountId, 'Deployment', [id]);
      await this.runs.forgetOwner(deploymentOwner(id));
      await this.lifecycle.deleted(actor.accountId, id);
      await this.repository.delete(actor.accountId, id);
    });
  }

  private async assertRegion(region: string): Promise<void> {
    if (!(await this.repository.regionExists(region)))
      throw deploymentsError('unknown_region', `Region ${region} does not exist; see GET /api/v1/regions`);
  }

  /** Whether deployment `id` belongs to the account: workspace routes scope everything by it. */
  existsInAccount(accountId: number, id: number): Promise<boolean> {
    return this.repository.exists(accountId, id);
  }

  /** 404 `deployment_not_found` unless deployment `id` belongs to the account. */
  async requireInAccount(accountId: number, id: number): Promise<void> {
    if (!(await this.repository.exists(accountId, id))) throw notFound('Deployment', id);
  }

  /** Where the deployment's data model is served from, or 404 `deployment_not_found`. */
  async gitSettings(accountId: number, id: number): Promise<DeploymentGitSettings> {
    const row = await this.row(accountId, id);
    return {
      id: row.id,
      name: row.name,
      creationMethod: row.creationMethod,
      deployBranchName: row.deployBranchName,
      deployBranchReadOnly: row.deployBranchReadOnly,
      deployBranchMergeAllowed: row.deployBranchMergeAllowed,
      deployBranchRequiredApprovals: row.deployBranchRequiredApprovals,
      deployBranchBlockNewBrokenContent: row.deployBranchBlockNewBrokenContent,
      deployProjectRoot: row.deployProjectRoot,
    };
  }

  /** Points the deployment at a deploy branch and project root (a connected repository's). */
  async setGitSettings(
    accountId: number,
    id: number,
    settings: { deployBranchName: string; deployProjectRoot: string; creationMethod: string | null },
  ): Promise<void> {
    await this.db.transaction(async () => {
      await this.repository.setGitSettings(accountId, id, settings);
      await this.lifecycle.changed(accountId, id);
      await this.events.changed(accountId, id);
    });
  }

  /** The version the deployment runs (the one it holds, else its channel's head), or 404. */
  async runningVersion(accountId: number, id: number): Promise<string | null> {
    return effectiveVersion(await this.row(accountId, id));
  }

  /**
   * Every deployment of every account, in id order, a page at a time (for platform work such as
   * the runtime's resync; never for a response).
   */
  allDeployments(afterId: number, limit: number): Promise<Array<{ id: number; accountId: number }>> {
    return this.repository.allIds(afterId, limit);
  }

  /** The deployment in the `Deployment` shape, or 404. */
  async describe(accountId: number, id: number): Promise<DeploymentDto> {
    return this.toDeployment(await this.row(accountId, id));
  }

  /** The deployment, or 404; `lock` holds its row for the rest of the unit of work. */
  private async row(accountId: number, id: number, lock = false): Promise<DeploymentRow> {
    const row = await this.repository.find(accountId, id, lock);
    if (!row) throw notFound('Deployment', id);
    return row;
  }

  private toDeployment(row: Pick<DeploymentListRow, 'id' | 'name' | 'creationStep'>): DeploymentDto {
    return deploymentShape(row, this.config.deploymentDomain);
  }

  /** The settings payload (`settingsShape`). */
  private toSettings(row: DeploymentRow): DeploymentSettingsDto {
    return settingsShape(row, this.config.deploymentDomain);
  }
}
