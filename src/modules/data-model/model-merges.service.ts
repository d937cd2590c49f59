import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type { MergeDto, MergeResponseDto, MergeToDefaultDto } from './dto/data-model.dto.js';
import { ModelBranches } from './model-branches.service.js';
import { ModelBuilds } from './model-builds.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** Merges of a branch into its parent or into the deploy branch. */
@Injectable()
export class ModelMerges {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly branches: ModelBranches,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
  ) {}

  /** Merges a branch into its parent (git-flow). */
  async merge(actor: Principal, deploymentId: number, dto: MergeDto): Promise<MergeResponseDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const source = await this.ws.target(ctx, dto);
    if (!source.parentName) {
      throw dataModelError('nothing_to_merge', `${source.name} has no parent branch to merge into`);
    }
    const target = await this.ws.branch(ctx, source.parentName);
    if (dto.deleteBranch && !source.isOwnDev) await this.ws.require(ctx, Action.SchemaUpdate);
    const merged = await this.mergeInto(ctx, source, target, dto.message, dto.squashCommits ?? false);
    if (dto.switchToParentBranch) {
      await this.repository.setActiveBranch(ctx.accountId, deploymentId, actor.userId, target.name);
    }
    let branchDeleted = false;
    if (dto.deleteBranch) {
      await this.branches.remove(ctx, source, false);
      branchDeleted = true;
    }
    return { merged, branchDeleted };
  }

  /** Merges a branch straight into the deploy branch. */
  async mergeToDefault(
    actor: Principal,
    deploymentId: number,
    dto: MergeToDefaultDto,
  ): Promise<MergeResponseDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    const source = await this.ws.target(ctx, dto);
    const target = await this.ws.branch(ctx, ctx.settings.deployBranchName);
    if (source.isDeploy)
      throw dataModelError('nothing_to_merge', `${source.name} is the deploy branch itself`);
    const merged = await this.mergeInto(ctx, source, target, dto.message, false);
    let branchDeleted = false;
    if (dto.removeBranchAfterMerge) {
      await this.branches.remove(ctx, source, false);
      branchDeleted = true;
    }
    return { merged, branchDeleted };
  }

  /**
   * Merges `source`'s head into `target` under the target's lock: a merge commit (or one squashed
   * commit), pushed first when a repository is connected, then a build of the target. A conflict
   * is 409 with the files and changes nothing; an already merged branch changes nothing.
   */
  private async mergeInto(
    ctx: ModelContext,
    source: Branch & BranchState,
    target: Branch,
    message: string | null | undefined,
    squash: boolean,
  ): Promise<boolean> {
    if (target.kind === 'dev' && !target.isOwnDev) {
      // A shared branch forked from someone's dev branch: merging it would move their branch.
      throw dataModelError('branch_not_writable', `${target.name} is another user's personal dev branch`);
    }
    if (target.isDeploy) {
      await this.ws.require(ctx, Action.SchemaUpdate);
      if (!ctx.settings.deployBranchMergeAllowed || ctx.settings.deployBranchReadOnly) {
        throw dataModelError(
          'merge_not_allowed',
          `Merging into ${target.name} is turned off for this deployment`,
        );
      }
    }
    this.jobs.assertAvailable();
    const git = this.ws.git;
    return this.db.transaction(async () => {
      const next = await this.refs.move(ctx.deploymentId, target.name, 'head', async (head) => {
        const theirs = await this.refs.head(ctx.deploymentId, source.name);
        if (!theirs) throw dataModelError('nothing_to_merge', `${source.name} has no commits`);
        if (head && (await git.isAncestor(ctx.deploymentId, theirs, head))) return null;
        let commit: string;
        if (!head) {
          commit = theirs;
        } else {
          const merged = await git.merge(ctx.deploymentId, head, theirs);
          if (!merged.clean) {
            throw dataModelError(
              'merge_conflict',
              `Merging ${source.name} into ${target.name} conflicts in: ${merged.files.join(', ')}`,
            );
          }
          commit = await git.commit(
            ctx.deploymentId,
            merged.tree,
            squash ? [head] : [head, theirs],
            message?.trim() || `Merge ${source.name} into ${target.name}`,
            this.ws.author(ctx),
          );
        }
        await this.remotes.push(ctx, target.name, commit);
        return { next: commit, result: commit };
      });
      if (next) await this.builds.queue(ctx.accountId, ctx.deploymentId, target.name, next, 'merge');
      return true;
    });
  }
}
