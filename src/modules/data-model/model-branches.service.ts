import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { buildPage, resolvePaging, type Page, type PageQueryDto } from '../../core/http/pagination.js';
import { BranchReviews, type BranchReviewCounts } from './branch-reviews.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository, type BranchRow } from './data-model.repository.js';
import type {
  BranchDto,
  CreateBranchDto,
  DeleteBranchQueryDto,
  DevBranchDto,
  StagingEnvironmentDto,
} from './dto/data-model.dto.js';
import { ModelDevMode } from './model-dev-mode.service.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type ModelContext } from './model-workspace.js';
import { DeploymentLifecycle } from '../deployments/deployment-lifecycle.js';

/** Branches of a deployment's model: listing, creating, deleting and the staging toggle. */
@Injectable()
export class ModelBranches {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly remotes: ModelRemotes,
    private readonly devMode: ModelDevMode,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly reviews: BranchReviews,
  ) {}

  // --- Listing ------------------------------------------------------------------------------------

  async list(actor: Principal, deploymentId: number, query: PageQueryDto): Promise<Page<BranchDto>> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const paging = resolvePaging(query, ['string']);
    const [heads, rows] = await Promise.all([
      this.ws.git.refs(deploymentId, 'refs/heads/'),
      this.repository.branches(deploymentId),
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const names = [...heads.keys()].sort();
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : null;
    const page = names.filter((n) => after === null || n > after);
    const size = paging.mode === 'cursor' ? paging.first : paging.limit;
    // The reviews of the page's branches at their heads, in one query.
    const reviews = await this.reviews.counts(
      ctx,
      page.slice(0, size).map((n) => ({ name: n, head: heads.get(n) ?? null })),
    );
    return buildPage(
      page,
      paging,
      (n) => [n],
      (n) => this.toDto(byName.get(n) ?? null, n, heads.get(n) ?? null, reviews.get(n)),
    );
  }

  private toDto(
    row: BranchRow | null,
    name: string,
    head: string | null,
    reviews: BranchReviewCounts | undefined,
  ): BranchDto {
    return {
      id: row?.id ?? 0,
      name,
      parentBranch: row?.parentName ?? null,
      lastHash: head,
      isStagingEnvironmentEnabled: row?.stagingEnabled ?? false,
      approvals: reviews?.approvals ?? 0,
      changesRequested: reviews?.changesRequested ?? 0,
    };
  }

  // --- Create, delete, staging ----------------------------------------------------------------------

  async create(actor: Principal, deploymentId: number, dto: CreateBranchDto): Promise<DevBranchDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const from = await this.ws.branch(ctx, dto.from ?? ctx.settings.deployBranchName);
    if (!from.head)
      throw dataModelError('nothing_to_merge', `${from.name} has no commits to branch from yet`);
    const exists = () =>
      // git cannot hold both `a` and `a/b`: such a name is taken as much as an equal one.
      dataModelError(
        'branch_exists',
        `Branch ${dto.name} exists, or clashes with a branch named like its path`,
      );
    await this.db.transaction(async () => {
      const created = await this.refs.create(deploymentId, dto.name, from.head!, async () => {
        const inserted = await this.repository.insertBranch(ctx.accountId, deploymentId, {
          name: dto.name,
          parentName: from.name,
          kind: 'shared',
          ownerUserId: null,
        });
        if (!inserted) throw exists();
      });
      // Thrown inside the unit of work, so the row goes with it.
      if (!created) throw exists();
    });
    if (dto.activate || dto.enterDevMode) return this.devMode.enter(ctx, await this.ws.branch(ctx, dto.name));
    return { active: false, branchName: dto.name, parentBranch: from.name };
  }

  /**
   * Deletes a branch: its ref (on the connected repository too with `removeOnUpstream`, first,
   * so a refusal changes nothing), its pending changes; its children move to its parent and its
   * viewers back to the deploy branch.
   */
  async delete(actor: Principal, deploymentId: number, query: DeleteBranchQueryDto): Promise<void> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    const branch = await this.ws.branch(ctx, query.branchName);
    if (branch.isDeploy) {
      throw dataModelError(
        'deploy_branch_protected',
        `${branch.name} is the deploy branch and cannot be deleted`,
      );
    }
    await this.remove(ctx, branch, query.removeOnUpstream ?? false);
  }

  /** Deletes a branch's refs and row (on the connected repository first with `upstream`). */
  async remove(ctx: ModelContext, branch: Branch, upstream: boolean): Promise<void> {
    await this.db.transaction(async () => {
      await this.refs.remove(ctx.deploymentId, branch.name, async () => {
        if (!upstream) return;
        if (!(await this.remotes.remote(ctx))) {
          throw dataModelError('remote_not_connected', 'removeOnUpstream needs a connected repository');
        }
        await this.remotes.push(ctx, branch.name, null);
      });
      if (branch.id !== 0)
        await this.repository.deleteBranch(ctx.deploymentId, branch, ctx.settings.deployBranchName);
      // A staging environment went with it.
      if (branch.kind !== 'dev') await this.lifecycle.changed(ctx.accountId, ctx.deploymentId);
    });
  }

  async setStaging(
    actor: Principal,
    deploymentId: number,
    dto: StagingEnvironmentDto,
  ): Promise<{ data: BranchDto }> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    const branch = await this.ws.target(ctx, dto);
    if (branch.isDeploy || branch.kind === 'dev') {
      throw dataModelError(
        'staging_not_allowed',
        `${branch.name} is ${branch.isDeploy ? 'the deploy branch' : 'a personal dev branch'}; only shared branches have staging environments`,
      );
    }
    await this.db.transaction(async () => {
      if (branch.id === 0) {
        await this.repository.insertBranch(ctx.accountId, deploymentId, {
          name: branch.name,
          parentName: null,
          kind: 'shared',
          ownerUserId: null,
        });
      }
      await this.repository.setStaging(deploymentId, branch.name, dto.enabled);
      await this.lifecycle.changed(ctx.accountId, deploymentId);
    });
    const row = (await this.repository.branch(deploymentId, branch.name))!;
    const reviews = await this.reviews.counts(ctx, [{ name: branch.name, head: branch.head }]);
    return { data: this.toDto(row, branch.name, branch.head, reviews.get(branch.name)) };
  }
}
