import { Injectable } from '@nestjs/common';
import type { DeploymentGitSettings } from '../deployments/deployments.service.js';
import { BranchReviews } from './branch-reviews.service.js';
import type { ImpactItem } from './content-impact.port.js';
import { ModelReview, type ReviewSide } from './model-review.service.js';
import { ModelVerdicts } from './model-verdicts.js';
import type { Branch, ModelContext } from './model-workspace.js';

/** At most this many broken items are named in a refusal; the rest are counted. */
const NAMED_ITEMS = 20;

/** What the content check of the gate found for one pair of commits (kept to check again under the lock). */
export interface ContentCheck {
  base: string | null;
  head: string;
  missing: string[];
}

/** Whether the deployment gates merges into its deploy branch. */
export function gateIsSet(settings: DeploymentGitSettings): boolean {
  return settings.deployBranchRequiredApprovals > 0 || settings.deployBranchBlockNewBrokenContent;
}

/**
 * The merge gate of the deploy branch (docs/data-model.md, "Reviews and the merge gate"), set by
 * two settings of the deployment: `deployBranchRequiredApprovals` current approvals by holders of
 * SchemaUpdate who authored no commit of the change, and, with
 * `deployBranchBlockNewBrokenContent`, no stored content broken by the change (the content impact
 * of the source branch's committed model against the deploy branch's). While a gate is set, a
 * current request for changes blocks too. Each check answers what is missing, as sentences
 * (empty: met).
 */
@Injectable()
export class MergeGate {
  constructor(
    private readonly reviews: BranchReviews,
    private readonly review: ModelReview,
    private readonly verdicts: ModelVerdicts,
  ) {}

  /**
   * The reviews' part, for merging `source` at `head` into the deploy branch at `base`: cheap
   * (one query for the reviews, the commits' authors from git, one access decision per approver),
   * so it runs again under the deploy branch's lock.
   */
  async reviewsMissing(
    ctx: ModelContext,
    source: Branch,
    base: string | null,
    head: string,
  ): Promise<string[]> {
    const required = ctx.settings.deployBranchRequiredApprovals;
    const current = await this.reviews.atHead(source, head);
    const approvals = current.filter((r) => r.verdict === 'approve');
    const [authors, holders] = await Promise.all([
      approvals.length > 0 ? this.reviews.authors(ctx, head, base) : Promise.resolve([]),
      this.reviews.schemaUpdateHolders(
        ctx,
        approvals.map((r) => r.reviewerUserId),
      ),
    ]);
    const missing: string[] = [];
    const ignored: string[] = [];
    let counted = 0;
    for (const a of approvals) {
      if (!holders.has(a.reviewerUserId)) ignored.push(`${a.reviewerEmail}, who does not hold SchemaUpdate`);
      else if (authors.includes(a.reviewerEmail.toLowerCase()))
        ignored.push(`${a.reviewerEmail}, an author of the change`);
      else counted++;
    }
    if (counted < required) {
      const more = required - counted;
      missing.push(
        `needs ${more} more approval${more === 1 ? '' : 's'} by a SchemaUpdate holder other than the ` +
          `authors of the change (${counted} of ${required}` +
          (ignored.length ? `; not counted: ${ignored.join(', ')}` : '') +
          ')',
      );
    }
    const requests = current.filter((r) => r.verdict === 'request_changes');
    if (requests.length > 0) {
      missing.push(`changes requested by ${requests.map((r) => r.reviewerEmail).join(', ')}`);
    }
    return missing;
  }

  /**
   * The content part (with `deployBranchBlockNewBrokenContent`): what stored content the model of
   * `source` at `head` would break, against the deploy branch's model at `base`. Compiles both
   * (through the verdict cache), so the merge runs it before it takes the lock.
   */
  async contentMissing(
    ctx: ModelContext,
    source: Branch,
    target: Branch,
    base: string | null,
    head: string,
  ): Promise<ContentCheck> {
    if (!ctx.settings.deployBranchBlockNewBrokenContent) return { base, head, missing: [] };
    // One after the other, as ModelReview compiles the two sides of a diff (one compile slot each).
    const before = await this.side(ctx, target, base);
    const after = await this.side(ctx, source, head);
    if (!after.verdict.valid) {
      const n = after.verdict.errors.length;
      return {
        base,
        head,
        missing: [
          `the model of ${source.name} does not compile (${n} error${n === 1 ? '' : 's'}; see validate)`,
        ],
      };
    }
    const { impact } = await this.review.compare(ctx, before, after);
    return { base, head, missing: impact.length ? [brokenContent(impact)] : [] };
  }

  private async side(ctx: ModelContext, branch: Branch, commit: string | null): Promise<ReviewSide> {
    const verdict = await this.verdicts.of(ctx.accountId, ctx.deploymentId, commit, ctx.prefix);
    return {
      branch: { ...branch, head: commit, pending: null, refs: { head: null, pending: null } },
      commit,
      verdict,
    };
  }
}

/** `would break 2 items: report 12 "Orders count" (orders.count renamed to orders.order_count), ...` */
export function brokenContent(impact: readonly ImpactItem[]): string {
  const items = new Map<string, { item: ImpactItem; why: string[] }>();
  for (const i of impact) {
    const key = `${i.type}:${i.id}`;
    const entry = items.get(key) ?? { item: i, why: [] };
    entry.why.push(breakage(i));
    items.set(key, entry);
  }
  const named = [...items.values()]
    .slice(0, NAMED_ITEMS)
    .map(({ item, why }) => `${item.type} ${item.id} ${JSON.stringify(item.name)} (${why.join(', ')})`);
  const more = items.size - named.length;
  return (
    `would break ${items.size} item${items.size === 1 ? '' : 's'}: ${named.join(', ')}` +
    (more > 0 ? `, and ${more} more (see the diff's impact)` : '')
  );
}

function breakage(i: ImpactItem): string {
  switch (i.reason) {
    case 'member_renamed':
      return `${i.member} renamed to ${i.renamedTo ?? 'another name'}`;
    case 'member_removed':
      return `${i.member} removed`;
    case 'type_changed':
      return `${i.member} changed type`;
    case 'member_hidden':
      return `${i.member} hidden`;
  }
}
