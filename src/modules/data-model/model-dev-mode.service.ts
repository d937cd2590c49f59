import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { notFound } from '../../core/errors/not-found.js';
import { DataModelRepository } from './data-model.repository.js';
import type { DevBranchDto, StartDevModeDto } from './dto/data-model.dto.js';
import { ModelRefs } from './model-refs.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** Dev mode: each user's personal dev branch of a deployment, and which branch they work on. */
@Injectable()
export class ModelDevMode {
  constructor(
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
  ) {}

  /**
   * Enters dev mode: forks the caller's personal dev branch from the requested branch (default
   * the deploy branch), or reuses it with its pending changes, and makes it their active branch.
   */
  async start(actor: Principal, deploymentId: number, dto: StartDevModeDto): Promise<DevBranchDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const source = await this.ws.branch(ctx, dto.branchName ?? ctx.settings.deployBranchName);
    return this.enter(ctx, source);
  }

  /** Makes the caller's personal dev branch forked from `source` their active branch. */
  async enter(ctx: ModelContext, source: Branch & BranchState): Promise<DevBranchDto> {
    if (source.isOwnDev) {
      await this.repository.setActiveBranch(ctx.accountId, ctx.deploymentId, ctx.actor.userId, source.name);
      return { active: true, branchName: source.name, parentBranch: source.parentName };
    }
    // A deploy branch with no commit yet (a deployment created from GitHub, not connected).
    if (!source.head) throw notFound('Branch', source.name);
    const head = source.head;
    const dev = this.ws.devBranchName(ctx.actor.userId, source.name);
    // Kept if it exists (create answers false): a personal branch survives leaving dev mode,
    // pending changes and all.
    await this.refs.create(ctx.deploymentId, dev, head, async () => {
      await this.repository.insertBranch(ctx.accountId, ctx.deploymentId, {
        name: dev,
        parentName: source.name,
        kind: 'dev',
        ownerUserId: ctx.actor.userId,
      });
      await this.repository.setActiveBranch(ctx.accountId, ctx.deploymentId, ctx.actor.userId, dev);
    });
    const row = await this.repository.branch(ctx.deploymentId, dev);
    return { active: true, branchName: dev, parentBranch: row?.parentName ?? source.name };
  }

  async stop(actor: Principal, deploymentId: number): Promise<void> {
    await this.ws.open(actor, deploymentId, Action.SchemaRead);
    await this.repository.leaveDevMode(deploymentId, actor.userId);
  }
}
