import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { notFound } from '../../core/errors/not-found.js';
import { DeploymentsService, type DeploymentGitSettings } from '../deployments/deployments.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository, type BranchRow } from './data-model.repository.js';
import { GitError } from '../../core/git/git.js';
import { GitStore, type CommitAuthor, type TreeChanges } from './git/git-store.js';
import { rootPrefix } from './model-paths.js';
import { ModelRefs, type BranchRefs } from './model-refs.js';
import { STARTER_FILES } from './starter-project.js';

/** A deployment's model as one request sees it: who asks, where its files live. */
export interface ModelContext {
  actor: Principal;
  accountId: number;
  deploymentId: number;
  settings: DeploymentGitSettings;
  /** Repository-relative prefix of the project (`''` or `analytics/`). */
  prefix: string;
}

/** A branch as the model sees it: its row and what kind of branch it is for the caller. */
export interface Branch extends BranchRow {
  isDeploy: boolean;
  /** A personal dev-mode branch of the caller: the only kind that accepts file writes. */
  isOwnDev: boolean;
}

/** The state of a branch to read files from: its head and, for pending work, the pending commit. */
export interface BranchState {
  head: string | null;
  pending: string | null;
  /** Both refs as read, with their trees and parents: a write's first attempt starts from them. */
  refs: BranchRefs;
}

/**
 * The shared ground of the data-model services: access to a deployment's model, its repository
 * (created on first use, with the starter project on its deploy branch) and branch lookups. Refs
 * change only through {@link ModelRefs}.
 */
@Injectable()
export class ModelWorkspace {
  private readonly logger = new Logger('DataModel');
  /** Repositories known to be set up in this process (`<deployment>:<deploy branch>`). */
  private readonly ready = new Set<string>();

  constructor(
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
    private readonly repository: DataModelRepository,
    readonly git: GitStore,
    readonly refs: ModelRefs,
    private readonly config: AppConfig,
  ) {}

  /**
   * Checks the caller may do `action` on the deployment's model (404 when they cannot see the
   * deployment, 403 when they may not act) and makes sure its repository exists.
   */
  async open(actor: Principal, deploymentId: number, action: Action): Promise<ModelContext> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, action);
    const settings = await this.deployments.gitSettings(actor.accountId, deploymentId);
    const ctx = {
      actor,
      accountId: actor.accountId,
      deploymentId,
      settings,
      prefix: rootPrefix(settings.deployProjectRoot),
    };
    await this.prepare(ctx.accountId, settings);
    return ctx;
  }

  /** 403 unless the caller holds `action` on the deployment (beyond the one `open` checked). */
  async require(ctx: ModelContext, action: Action): Promise<void> {
    await this.access.requireAccess(ctx.actor, 'Deployment', ctx.deploymentId, action);
  }

  /**
   * The repository of a deployment, created on first use; a deployment not created from a
   * git host gets the starter project committed on its deploy branch (with `starter` false, a
   * commit of no files). Idempotent and safe to race: the deploy branch is created with a
   * compare-and-swap from "absent".
   */
  async prepare(accountId: number, settings: DeploymentGitSettings, starter = true): Promise<void> {
    const key = `${settings.id}:${settings.deployBranchName}`;
    if (this.ready.has(key)) return;
    try {
      await this.git.ensure(settings.id);
      const branch = settings.deployBranchName;
      if (!(await this.refs.head(settings.id, branch)) && settings.creationMethod !== 'github') {
        const files = starter ? STARTER_FILES : [];
        const contents = files.map((f) => Buffer.from(f.content));
        const oids = contents.length ? await this.git.writeBlobs(settings.id, contents) : [];
        const prefix = rootPrefix(settings.deployProjectRoot);
        const changes: TreeChanges = new Map(files.map((f, i) => [prefix + f.path, oids[i]]));
        const tree = await this.git.writeTree(settings.id, null, changes);
        const message = starter ? 'Starter project' : 'Empty project';
        const commit = await this.git.commit(settings.id, tree, [], message, {
          name: 'Platform API',
          email: 'platform-api@localhost',
        });
        // Lost the race: another request created it; theirs stands.
        await this.refs.create(settings.id, branch, commit);
      }
      await this.git.setHead(settings.id, settings.deployBranchName);
      await this.repository.insertBranch(accountId, settings.id, {
        name: settings.deployBranchName,
        parentName: null,
        kind: 'shared',
        ownerUserId: null,
      });
    } catch (err) {
      throw this.gitFailure(err);
    }
    this.ready.add(key);
  }

  /**
   * Sets up the repository of a deployment created without a scaffold (`POST /api/v1/deployments`,
   * after its creation commits): the deploy branch starts with a commit of no files, so the starter
   * project, which a repository set up on first use would get, never comes.
   */
  async prepareEmpty(accountId: number, deploymentId: number): Promise<void> {
    await this.prepare(accountId, await this.deployments.gitSettings(accountId, deploymentId), false);
  }

  /** Forgets the set-up state of a deployment (its repository is about to go). */
  forget(deploymentId: number): void {
    for (const key of this.ready) if (key.startsWith(`${deploymentId}:`)) this.ready.delete(key);
  }

  // --- Branches -------------------------------------------------------------------------------------

  /**
   * A branch by name, or 404 `branch_not_found`. The ref decides: a row alone is not a branch.
   * `lastKnown`: the refs as this process last read or moved them will do, if it has them (a
   * write, which verifies them when it moves the ref).
   */
  async branch(ctx: ModelContext, name: string, lastKnown = false): Promise<Branch & BranchState> {
    const known = lastKnown ? this.refs.lastKnown(ctx.deploymentId, name) : undefined;
    const [row, refs] = await Promise.all([
      this.repository.branch(ctx.deploymentId, name),
      known ?? this.refs.states(ctx.deploymentId, name),
    ]);
    const head = refs.head?.commit ?? null;
    if (!head && !(row && name === ctx.settings.deployBranchName)) throw notFound('Branch', name);
    const base: BranchRow = row ?? {
      // A ref made outside the API (pushed by hand): a shared branch without a parent.
      id: 0,
      name,
      parentName: null,
      kind: 'shared',
      ownerUserId: null,
      stagingEnabled: false,
    };
    return { ...this.describe(ctx, base), head, pending: refs.pending?.commit ?? null, refs };
  }

  /** A branch by its row id, or 404. */
  async branchById(ctx: ModelContext, id: number): Promise<Branch & BranchState> {
    const row = await this.repository.branchById(ctx.deploymentId, id);
    if (!row) throw notFound('Branch', id);
    return this.branch(ctx, row.name);
  }

  describe(ctx: ModelContext, row: BranchRow): Branch {
    return {
      ...row,
      isDeploy: row.name === ctx.settings.deployBranchName,
      isOwnDev: row.kind === 'dev' && row.ownerUserId === ctx.actor.userId,
    };
  }

  /** The branch a request addresses: `branchName`, else `branchId`, else the caller's active one. */
  async target(
    ctx: ModelContext,
    ref: { branchName?: string | null; branchId?: number | null },
    fallback: 'active' | 'active-or-deploy' = 'active',
    lastKnown = false,
  ): Promise<Branch & BranchState> {
    // A name from a request: its DTO checked it (`BranchNameField`).
    if (ref.branchName !== undefined && ref.branchName !== null)
      return this.branch(ctx, ref.branchName, lastKnown);
    if (ref.branchId !== undefined && ref.branchId !== null) return this.branchById(ctx, ref.branchId);
    const active = await this.repository.activeBranch(ctx.deploymentId, ctx.actor.userId);
    if (active) return this.branch(ctx, active, lastKnown);
    if (fallback === 'active-or-deploy') return this.branch(ctx, ctx.settings.deployBranchName);
    throw dataModelError(
      'not_in_dev_mode',
      'You are not in dev mode on this deployment: POST /dev-mode first, or name the branch',
    );
  }

  /** The personal dev branch of `userId` forked from `source`. */
  devBranchName(userId: number, source: string): string {
    return `dev-${userId}-${createHash('sha1').update(source).digest('hex').slice(0, 8)}`;
  }

  // --- Writing --------------------------------------------------------------------------------------

  author(ctx: ModelContext): CommitAuthor {
    return { name: ctx.actor.email, email: ctx.actor.email };
  }

  /** Checks a set of files against the size and count limits. */
  assertLimits(files: Array<{ path: string; size: number }>, total: number): void {
    const { maxFileBytes, maxFiles } = this.config.dataModel;
    const big = files.find((f) => f.size > maxFileBytes);
    if (big) {
      throw dataModelError(
        'file_too_large',
        `${big.path} is ${big.size} bytes; files may be at most ${maxFileBytes} bytes`,
      );
    }
    if (total > maxFiles) {
      throw dataModelError(
        'too_many_files',
        `The branch would hold ${total} files; the most allowed is ${maxFiles}`,
      );
    }
  }

  /** A git failure as an API error: git missing is 503; anything else is logged and 503 too. */
  gitFailure(err: unknown): unknown {
    if (!(err instanceof GitError)) return err;
    this.logger.error(`git failed: ${err.message}`);
    return dataModelError('service_unavailable', 'The data model repository is unavailable; retry shortly');
  }
}
