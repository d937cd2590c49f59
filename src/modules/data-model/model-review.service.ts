import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { ContentImpact, type ImpactItem } from './content-impact.port.js';
import type { ModelDiffDto, ModelDiffQueryDto, ModelDiffSideDto } from './dto/model-diff.dto.js';
import { changedFiles, unifiedDiff } from './git/tree-diff.js';
import { diffModels, type ModelDiff } from './model-diff.js';
import type { ModelSummary } from './model-summary.js';
import { ModelVerdicts, type Verdict } from './model-verdicts.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** One side of a review: a branch at a commit, and the compiler's verdict on its model. */
export interface ReviewSide {
  branch: Branch & BranchState;
  /** The commit compared: the branch's head, or with pending changes their commit; null: none. */
  commit: string | null;
  verdict: Verdict;
}

/** Two sides compared: the member diff and the content impact (both empty unless both compile). */
export interface Comparison {
  diff: ModelDiff;
  impact: ImpactItem[];
}

const NO_DIFF: ModelDiff = { breaking: false, cubes: [], renames: new Map() };

/**
 * Reviewing a model change (issue 33, docs/data-model.md "Reviewing a change"): the compiled
 * summaries of two branches (through {@link ModelVerdicts}: the sandbox and its cache), their
 * member diff, the file diff, and the stored content the change would break (the
 * {@link ContentImpact} port, provided by the content-impact module).
 */
@Injectable()
export class ModelReview {
  constructor(
    private readonly ws: ModelWorkspace,
    private readonly verdicts: ModelVerdicts,
    private readonly impact: ContentImpact,
  ) {}

  /** `GET .../branches/diff`. */
  async diff(actor: Principal, deploymentId: number, query: ModelDiffQueryDto): Promise<ModelDiffDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const { base, head } = await this.sides(ctx, query);
    const [compared, files] = await Promise.all([
      this.compare(ctx, base, head),
      changedFiles(this.ws.git.dir(deploymentId), base.commit, head.commit, ctx.prefix).catch(
        (err: unknown) => {
          throw this.ws.gitFailure(err);
        },
      ),
    ]);
    return {
      deploymentId,
      base: sideDto(base),
      head: sideDto(head),
      // A head that no longer compiles breaks everything a compiling base served.
      breaking: compared.diff.breaking || (base.verdict.valid && !head.verdict.valid),
      cubes: compared.diff.cubes,
      files,
      impact: compared.impact,
    };
  }

  /** `GET .../branches/diff/patch`: the unified diff of the two sides' files. */
  async patch(actor: Principal, deploymentId: number, query: ModelDiffQueryDto): Promise<Buffer> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const { base, head } = await this.refsOf(ctx, query);
    try {
      return await unifiedDiff(this.ws.git.dir(deploymentId), base.commit, head.commit, ctx.prefix);
    } catch (err) {
      throw this.ws.gitFailure(err);
    }
  }

  /**
   * The member diff and the content impact of `head` against `base`; empty when either side does
   * not compile (its verdict has the errors).
   */
  async compare(ctx: ModelContext, base: ReviewSide, head: ReviewSide): Promise<Comparison> {
    const before = summaryOf(base.verdict);
    const after = summaryOf(head.verdict);
    if (!before || !after) return { diff: NO_DIFF, impact: [] };
    const diff = diffModels(before, after);
    const impact = await this.impact.between(ctx.accountId, ctx.deploymentId, before, after, diff.renames);
    return { diff, impact };
  }

  /**
   * What `validate` adds (issue 33): the stored content that the model `verdict` (of `branch`)
   * would break, compared with the deploy branch's committed model. Empty for the deploy branch
   * itself, and when either model does not compile.
   */
  async impactAgainstDeploy(
    ctx: ModelContext,
    branch: Branch & BranchState,
    verdict: Verdict,
  ): Promise<ImpactItem[]> {
    if (branch.isDeploy || !verdict.valid) return [];
    const deploy = await this.side(ctx, await this.ws.branch(ctx, ctx.settings.deployBranchName), false);
    return (await this.compare(ctx, deploy, { branch, commit: null, verdict })).impact;
  }

  /** A branch at its head (or, `pending`, at its pending changes when it has some) and its verdict. */
  async side(ctx: ModelContext, branch: Branch & BranchState, pending: boolean): Promise<ReviewSide> {
    const commit = pending && branch.pending ? branch.pending : branch.head;
    const verdict = await this.verdicts.of(ctx.accountId, ctx.deploymentId, commit, ctx.prefix);
    return { branch, commit, verdict };
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Both sides, compiled one after the other: an account's share of compiles may be a single
   * slot (MODEL_COMPILE_ACCOUNT_CONCURRENCY), and a second compile of the same request waiting
   * for it would run out of MODEL_COMPILE_QUEUE_MS behind the first on a busy machine (429).
   */
  private async sides(
    ctx: ModelContext,
    query: ModelDiffQueryDto,
  ): Promise<{ base: ReviewSide; head: ReviewSide }> {
    const refs = await this.refsOf(ctx, query);
    const base = await this.side(ctx, refs.base.branch, false);
    const head = await this.side(ctx, refs.head.branch, refs.head.pending);
    return { base, head };
  }

  /**
   * The branches a diff compares. head: `head`, else with `devMode` your active dev-mode branch with
   * its pending changes, else your active branch, else the deploy branch. base: `base`, else
   * head's parent, else the deploy branch.
   */
  private async refsOf(ctx: ModelContext, query: ModelDiffQueryDto) {
    if (query.head !== undefined && query.devMode) {
      throw coreError('validation_failed', ['head and devMode are mutually exclusive']);
    }
    const head = query.devMode
      ? await this.ws.target(ctx, {})
      : await this.ws.target(ctx, { branchName: query.head }, 'active-or-deploy');
    const pending = query.devMode === true && head.isOwnDev;
    const base = await this.ws.branch(ctx, query.base ?? head.parentName ?? ctx.settings.deployBranchName);
    return {
      base: { branch: base, commit: base.head },
      head: { branch: head, pending, commit: pending && head.pending ? head.pending : head.head },
    };
  }
}

function summaryOf(verdict: Verdict): ModelSummary | null {
  return verdict.valid && verdict.summary ? verdict.summary : null;
}

function sideDto(side: ReviewSide): ModelDiffSideDto {
  return {
    branchName: side.branch.name,
    commit: side.commit,
    valid: side.verdict.valid,
    errors: side.verdict.errors,
  };
}
