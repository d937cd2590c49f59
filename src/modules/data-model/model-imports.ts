import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { ApiError } from '../../core/errors/api-error.js';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { notFound } from '../../core/errors/not-found.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { DataModelRepository } from './data-model.repository.js';
import { dataModelError } from './data-model.errors.js';
import { branchNameProblem } from './git/branch-names.js';
import type { CommitAuthor, TreeChanges } from './git/git-store.js';
import { ModelBuilds } from './model-builds.js';
import { normalisePath, rootPrefix } from './model-paths.js';
import { ModelRefs } from './model-refs.js';
import { ModelWorkspace } from './model-workspace.js';

/** Files another module generated for a deployment's model, to land on a branch of their own. */
export interface ModelImport {
  accountId: number;
  deploymentId: number;
  /** The branch to create (or, on a retry of the same import, to find). */
  branch: string;
  /** The branch it starts from; null: the deploy branch. */
  base: string | null;
  /** Paths relative to the project root; they replace files of the same path on the base. */
  files: ReadonlyArray<{ path: string; content: string }>;
  message: string;
  author: CommitAuthor;
  /** What the build records as its trigger (`dbt-sync`). */
  trigger: string;
}

export interface ImportOutcome {
  branch: string;
  base: string;
  commit: string;
  buildId: number;
}

/**
 * What the model refuses of an import: its input (a name, a path, a limit, a deployment gone),
 * refused again on a retry; and a branch that kept changing under the ref move's own retries
 * (`conflict`), which a caller has failed for good so far.
 */
const REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_branch_name',
  'invalid_path',
  'file_too_large',
  'too_many_files',
  'deployment_not_found',
  'conflict',
]);

/**
 * The model refused the import (`code` says why, {@link REFUSALS}): a job fails for good rather
 * than try again. Other failures (git or the database unavailable) may pass on a retry.
 */
export class ImportRefused extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ImportRefused';
  }
}

/**
 * The way generated files (a dbt sync's cubes) enter a deployment's model: one commit of the
 * files over the base branch, on a new shared branch, with a build queued. Idempotent, so a job
 * that died half-way can run it again: a branch already holding the same tree is kept as it is,
 * and a build of that commit is not queued twice. The branch keeps the model's limits
 * (`file_too_large`, `too_many_files`); what the model refuses of the input is thrown as
 * {@link ImportRefused}.
 */
@Injectable()
export class ModelImports {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly builds: ModelBuilds,
    private readonly deployments: DeploymentsService,
  ) {}

  /** The branch an import would start from (`name`, else the deploy branch), or 404 `branch_not_found`. */
  async baseBranch(accountId: number, deploymentId: number, name: string | null): Promise<string> {
    const settings = await this.deployments.gitSettings(accountId, deploymentId);
    await this.ws.prepare(accountId, settings);
    const base = name ?? settings.deployBranchName;
    if (!(await this.refs.head(deploymentId, base))) throw notFound('Branch', base);
    return base;
  }

  /** Whether the branch exists (its ref does). */
  async branchExists(deploymentId: number, name: string): Promise<boolean> {
    return (await this.refs.head(deploymentId, name)) !== null;
  }

  async commitBranch(input: ModelImport): Promise<ImportOutcome> {
    try {
      return await this.commit(input);
    } catch (err) {
      if (err instanceof ApiError && REFUSALS.has(err.code))
        throw new ImportRefused(err.code, String(err.messages));
      throw err;
    }
  }

  private async commit(input: ModelImport): Promise<ImportOutcome> {
    const { accountId, deploymentId, branch } = input;
    // A name from another module: the same rule as a name from a request.
    const problem = await branchNameProblem(branch, { isNew: true });
    if (problem)
      throw dataModelError('invalid_branch_name', `Branch name ${JSON.stringify(branch)} ${problem}`);
    const settings = await this.deployments.gitSettings(accountId, deploymentId);
    await this.ws.prepare(accountId, settings);
    const base = input.base ?? settings.deployBranchName;
    const git = this.ws.git;
    const prefix = rootPrefix(settings.deployProjectRoot);
    const paths = input.files.map((f) => prefix + normalisePath(f.path));
    const contents = input.files.map((f) => Buffer.from(f.content, 'utf8'));
    // The limits every other write of the model keeps (MODEL_MAX_FILE_BYTES, MODEL_MAX_FILES).
    this.ws.assertLimits(
      paths.map((p, i) => ({ path: p, size: contents[i].length })),
      0,
    );
    const oids = await git.writeBlobs(deploymentId, contents);
    const changes: TreeChanges = new Map(paths.map((p, i) => [p, oids[i]]));
    return this.db.transaction(async () => {
      // The change always answers a commit.
      const commit = (await this.refs.move(deploymentId, branch, 'head', async (current) => {
        const baseHead = await this.refs.head(deploymentId, base);
        if (!baseHead) throw notFound('Branch', base);
        const existing = new Set((await git.listFiles(deploymentId, baseHead)).map((f) => f.path));
        this.ws.assertLimits([], existing.size + paths.filter((p) => !existing.has(p)).length);
        const tree = await git.writeTree(deploymentId, await git.treeOf(deploymentId, baseHead), changes);
        // An earlier attempt of this import got this far.
        if (current && (await git.treeOf(deploymentId, current)) === tree)
          return { next: current, result: current };
        const next = await git.commit(deploymentId, tree, [baseHead], input.message, input.author);
        return { next, result: next };
      }))!;
      await this.repository.insertBranch(accountId, deploymentId, {
        name: branch,
        parentName: base,
        kind: 'shared',
        ownerUserId: null,
      });
      const latest = await this.repository.latestBuild(deploymentId, branch);
      const buildId =
        latest && latest.commitSha === commit
          ? latest.id
          : await this.builds.queue(accountId, deploymentId, branch, commit, input.trigger);
      return { branch, base, commit, buildId };
    });
  }
}
