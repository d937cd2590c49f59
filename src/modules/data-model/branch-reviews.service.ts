import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { BranchReviewsRepository, type ReviewRow } from './branch-reviews.repository.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type { CreateReviewDto, ReviewDto, ReviewsQueryDto } from './dto/reviews.dto.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** What `GET .../branches` shows of a branch's current reviews. */
export interface BranchReviewCounts {
  /** Current approvals by users who hold SchemaUpdate on the deployment now. */
  approvals: number;
  /** Current requests for changes. */
  changesRequested: number;
}

const NO_REVIEWS: BranchReviewCounts = { approvals: 0, changesRequested: 0 };

/**
 * Reviews of a branch's head (docs/data-model.md, "Reviews and the merge gate"): `approve` or
 * `request_changes` by holders of SchemaUpdate who did not author the change. A review counts
 * while the branch's head is the commit it was given on; any move of the head dismisses it.
 */
@Injectable()
export class BranchReviews {
  constructor(
    private readonly ws: ModelWorkspace,
    private readonly repository: BranchReviewsRepository,
    private readonly branches: DataModelRepository,
    private readonly access: AccessService,
  ) {}

  /** `POST .../branches/reviews`: records the caller's review of the branch at its head. */
  async record(actor: Principal, deploymentId: number, dto: CreateReviewDto): Promise<ReviewDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    const branch = await this.ws.branch(ctx, dto.branchName);
    if (branch.isDeploy) {
      throw dataModelError(
        'deploy_branch_protected',
        `${branch.name} is the deploy branch: review the branch that is merged into it`,
      );
    }
    const head = branch.head!;
    const authors = await this.authors(ctx, head);
    if (authors.includes(actor.email.toLowerCase())) {
      throw dataModelError(
        'cannot_review_own_change',
        `You authored a commit of ${branch.name} that ${ctx.settings.deployBranchName} does not have: ` +
          'another SchemaUpdate holder reviews it',
      );
    }
    const branchId = await this.rowOf(ctx, branch);
    const row = await this.repository.upsert({
      accountId: ctx.accountId,
      deploymentId,
      branchId,
      branchName: branch.name,
      headCommit: head,
      reviewerUserId: actor.userId,
      verdict: dto.verdict,
      comment: dto.comment?.length ? dto.comment : null,
    });
    return toDto(row, head);
  }

  /** `GET .../branches/reviews`: every review of the branch, newest first, each dismissed or not. */
  async list(actor: Principal, deploymentId: number, query: ReviewsQueryDto): Promise<Page<ReviewDto>> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const paging = resolvePaging(query, ['number']);
    const branch = await this.ws.branch(ctx, query.branchName);
    const rows =
      branch.id === 0
        ? []
        : await this.repository.page(
            branch.id,
            paging.mode === 'cursor' ? paging.after : null,
            fetchLimit(paging),
          );
    return buildPage(
      rows,
      paging,
      (r) => [r.id],
      (r) => toDto(r, branch.head),
    );
  }

  /**
   * The current approvals (by users who hold SchemaUpdate now) and change requests of each of
   * `branches` at its head: one query for the reviews, one access decision per distinct approver.
   */
  async counts(
    ctx: ModelContext,
    branches: ReadonlyArray<{ name: string; head: string | null }>,
  ): Promise<Map<string, BranchReviewCounts>> {
    const withHead = branches.filter((b): b is { name: string; head: string } => b.head !== null);
    const rows = await this.repository.counts(ctx.deploymentId, withHead);
    const holders = await this.schemaUpdateHolders(
      ctx,
      rows.flatMap((r) => r.approverIds),
    );
    const out = new Map<string, BranchReviewCounts>();
    for (const b of branches) out.set(b.name, NO_REVIEWS);
    for (const r of rows) {
      out.set(r.branchName, {
        approvals: r.approverIds.filter((id) => holders.has(id)).length,
        changesRequested: r.changesRequested,
      });
    }
    return out;
  }

  /** The reviews of `branch` given on `head` (its current reviews while `head` is its head). */
  async atHead(branch: Branch, head: string): Promise<ReviewRow[]> {
    if (branch.id === 0) return [];
    return this.repository.atHead(branch.id, head);
  }

  /**
   * The authors of the change `head` brings to the deploy branch: the author emails (lowercased)
   * of the commits reachable from `head` and not from `deployHead` (default: the deploy branch's
   * head now). Commits are authored with the email of the user whose request made them.
   */
  async authors(ctx: ModelContext, head: string, deployHead?: string | null): Promise<string[]> {
    const base =
      deployHead === undefined
        ? await this.ws.refs.head(ctx.deploymentId, ctx.settings.deployBranchName)
        : deployHead;
    try {
      return await this.ws.git.authorEmails(ctx.deploymentId, base, head);
    } catch (err) {
      throw this.ws.gitFailure(err);
    }
  }

  /** Which of `userIds` hold SchemaUpdate on the deployment now (decided by the access service). */
  schemaUpdateHolders(ctx: ModelContext, userIds: readonly number[]): Promise<Set<number>> {
    return this.access.usersHolding(
      ctx.accountId,
      'Deployment',
      ctx.deploymentId,
      Action.SchemaUpdate,
      userIds,
    );
  }

  /** The id of the branch's row, recorded now for a branch made outside the API (reviews hang from it). */
  private async rowOf(ctx: ModelContext, branch: Branch & BranchState): Promise<number> {
    if (branch.id !== 0) return branch.id;
    await this.branches.insertBranch(ctx.accountId, ctx.deploymentId, {
      name: branch.name,
      parentName: null,
      kind: 'shared',
      ownerUserId: null,
    });
    const row = await this.branches.branch(ctx.deploymentId, branch.name);
    return row!.id;
  }
}

function toDto(row: ReviewRow, head: string | null): ReviewDto {
  return {
    id: row.id,
    branchName: row.branchName,
    headCommit: row.headCommit,
    reviewer: { id: row.reviewerUserId, email: row.reviewerEmail },
    verdict: row.verdict,
    comment: row.comment,
    createdAt: row.createdAt,
    dismissed: row.headCommit !== head,
  };
}
