import { Injectable } from '@nestjs/common';
import type { AuditNote } from '../../core/audit/audit-details.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import { gateIsSet, MergeGate, type ContentCheck } from './merge-gate.js';
import type { MergeDto, MergeResponseDto, MergeToDefaultDto } from './dto/data-model.dto.js';
import { ModelBranches } from './model-branches.service.js';
import { ModelBuilds } from './model-builds.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** How a merge meets the merge gate of the deploy branch: an admin's override, and where to record it. */
export interface GateOptions {
  override: boolean;
  note?: AuditNote;
}

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
    private readonly gate: MergeGate,
  ) {}

  /** Merges a branch into its parent (git-flow). */
  async merge(
    actor: Principal,
    deploymentId: number,
    dto: MergeDto,
    note?: AuditNote,
  ): Promise<MergeResponseDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    assertOverrideAllowed(ctx, dto.overrideMergeGate);
    const source = await this.ws.target(ctx, dto);
    if (!source.parentName) {
      throw dataModelError('nothing_to_merge', `${source.name} has no parent branch to merge into`);
    }
    const target = await this.ws.branch(ctx, source.parentName);
    if (dto.deleteBranch && !source.isOwnDev) await this.ws.require(ctx, Action.SchemaUpdate);
    const merged = await this.mergeInto(ctx, source, target, dto.message, dto.squashCommits ?? false, {
      override: dto.overrideMergeGate ?? false,
      note,
    });
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
    note?: AuditNote,
  ): Promise<MergeResponseDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    assertOverrideAllowed(ctx, dto.overrideMergeGate);
    const source = await this.ws.target(ctx, dto);
    const target = await this.ws.branch(ctx, ctx.settings.deployBranchName);
    if (source.isDeploy)
      throw dataModelError('nothing_to_merge', `${source.name} is the deploy branch itself`);
    const merged = await this.mergeInto(ctx, source, target, dto.message, false, {
      override: dto.overrideMergeGate ?? false,
      note,
    });
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
   *
   * Into the deploy branch of a deployment that sets a merge gate, the gate is checked first
   * (its compiles outside the lock), then again under the lock on the commits merged: unmet, it
   * is 409 `merge_gate_unmet` naming what is missing and changes nothing, unless an admin
   * overrides it, which the request's audit entry records with what was missing.
   */
  private async mergeInto(
    ctx: ModelContext,
    source: Branch & BranchState,
    target: Branch & BranchState,
    message: string | null | undefined,
    squash: boolean,
    gate: GateOptions,
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
    const gated = target.isDeploy && gateIsSet(ctx.settings);
    // The gate's compiles happen before the lock; an unmet gate is refused without taking it.
    let content: ContentCheck | null = null;
    if (
      gated &&
      source.head &&
      !(target.head && (await git.isAncestor(ctx.deploymentId, source.head, target.head)))
    ) {
      content = await this.gate.contentMissing(ctx, source, target, target.head, source.head);
      await this.checkGate(ctx, source, target, target.head, source.head, content, {
        ...gate,
        note: undefined,
      });
    }
    return this.db.transaction(async () => {
      const next = await this.refs.move(ctx.deploymentId, target.name, 'head', async (head) => {
        const theirs = await this.refs.head(ctx.deploymentId, source.name);
        if (!theirs) throw dataModelError('nothing_to_merge', `${source.name} has no commits`);
        if (head && (await git.isAncestor(ctx.deploymentId, theirs, head))) return null;
        if (gated) {
          // Checked again on the commits merged (either branch may have moved since).
          const fresh =
            content && content.base === head && content.head === theirs
              ? content
              : await this.gate.contentMissing(ctx, source, target, head, theirs);
          await this.checkGate(ctx, source, target, head, theirs, fresh, gate);
        }
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

  /**
   * 409 `merge_gate_unmet` naming what is missing for merging `source` at `head` into the deploy
   * branch at `base`, unless `gate.override` (an admin: checked by the caller), whose audit entry
   * then records the override and what was missing.
   */
  private async checkGate(
    ctx: ModelContext,
    source: Branch,
    target: Branch,
    base: string | null,
    head: string,
    content: ContentCheck,
    gate: GateOptions,
  ): Promise<void> {
    const missing = [...(await this.gate.reviewsMissing(ctx, source, base, head)), ...content.missing];
    if (gate.override) {
      gate.note?.({ mergeGateOverridden: true, branchName: source.name, headCommit: head, missing });
      return;
    }
    if (missing.length > 0) {
      throw dataModelError(
        'merge_gate_unmet',
        `The merge gate of ${target.name} is not met: ${missing.join('; ')}. Nothing was merged.`,
      );
    }
  }
}

/** Only a tenant admin may override the merge gate; anyone else asking is 403. */
function assertOverrideAllowed(ctx: ModelContext, override: boolean | undefined): void {
  if (override && !ctx.actor.isAdmin) {
    throw dataModelError(
      'merge_gate_override_forbidden',
      'overrideMergeGate is for tenant admins: have the merge gate met (reviews, content), or ask an admin',
    );
  }
}
