import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/http/not-found.js';
import { buildPage, resolvePaging, type Page, type PageQueryDto } from '../../core/http/pagination.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository, type BranchRow } from './data-model.repository.js';
import type {
  BranchDto,
  ConnectGitHubDto,
  CreateBranchDto,
  DeleteBranchQueryDto,
  DevBranchDto,
  MergeDto,
  MergeResponseDto,
  MergeToDefaultDto,
  PullDto,
  StagingEnvironmentDto,
  StartDevModeDto,
} from './dto/data-model.dto.js';
import type { DeploymentDto } from '../deployments/dto/deployment.dto.js';
import { branchRef, GitStore, pendingRef } from './git/git-store.js';
import { GitHost } from './github/github.client.js';
import { GitHubInstallations } from './github/github-installations.service.js';
import { ModelBuilds } from './model-builds.js';
import { rootPrefix } from './model-paths.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** Names of personal dev branches; reserved so no shared branch can take one. */
const DEV_BRANCH = /^dev-\d+-[0-9a-f]{8}$/;

/**
 * Branches of a deployment's model: listing, creating, deleting, the staging toggle, dev mode,
 * merges, and the connected repository (connect and pull).
 */
@Injectable()
export class ModelBranches {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly repository: DataModelRepository,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
    private readonly host: GitHost,
    private readonly deployments: DeploymentsService,
    private readonly installations: GitHubInstallations,
  ) {}

  // --- Listing ------------------------------------------------------------------------------------

  async list(actor: Principal, deploymentId: number, query: PageQueryDto): Promise<Page<BranchDto>> {
    await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const paging = resolvePaging(query, ['string']);
    const [heads, rows] = await Promise.all([
      this.ws.git.refs(deploymentId, 'refs/heads/'),
      this.repository.branches(deploymentId),
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const names = [...heads.keys()].sort();
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : null;
    const page = names.filter((n) => after === null || n > after);
    return buildPage(
      page,
      paging,
      (n) => [n],
      (n) => this.toDto(byName.get(n) ?? null, n, heads.get(n) ?? null),
    );
  }

  private toDto(row: BranchRow | null, name: string, head: string | null): BranchDto {
    return {
      id: row?.id ?? 0,
      name,
      parentBranch: row?.parentName ?? null,
      lastHash: head,
      isStagingEnvironmentEnabled: row?.stagingEnabled ?? false,
    };
  }

  // --- Dev mode -----------------------------------------------------------------------------------

  /**
   * Enters dev mode: forks the caller's personal dev branch from the requested branch (default
   * the deploy branch), or reuses it with its pending changes, and makes it their active branch.
   */
  async startDevMode(actor: Principal, deploymentId: number, dto: StartDevModeDto): Promise<DevBranchDto> {
    if (dto.branchName !== undefined && dto.branchName.trim() === '') {
      throw dataModelError('invalid_branch_name', 'branchName must not be empty');
    }
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const source = await this.ws.branch(ctx, dto.branchName ?? ctx.settings.deployBranchName);
    return this.enterDevMode(ctx, source);
  }

  private async enterDevMode(ctx: ModelContext, source: Branch & BranchState): Promise<DevBranchDto> {
    if (source.isOwnDev) {
      await this.repository.setActiveBranch(ctx.accountId, ctx.deploymentId, ctx.actor.userId, source.name);
      return { active: true, branchName: source.name, parentBranch: source.parentName };
    }
    // A deploy branch with no commit yet (a deployment created from GitHub, not connected).
    if (!source.head) throw notFound('Branch', source.name);
    const dev = this.ws.devBranchName(ctx.actor.userId, source.name);
    await this.db.transaction(async () => {
      await this.repository.lockBranch(ctx.deploymentId, dev);
      await this.repository.insertBranch(ctx.accountId, ctx.deploymentId, {
        name: dev,
        parentName: source.name,
        kind: 'dev',
        ownerUserId: ctx.actor.userId,
      });
      // Kept if it exists: a personal branch survives leaving dev mode, pending changes and all.
      if (!(await this.ws.git.resolve(ctx.deploymentId, branchRef(dev)))) {
        await this.ws.git.updateRef(ctx.deploymentId, branchRef(dev), source.head, null);
      }
      await this.repository.setActiveBranch(ctx.accountId, ctx.deploymentId, ctx.actor.userId, dev);
    });
    const row = await this.repository.branch(ctx.deploymentId, dev);
    return { active: true, branchName: dev, parentBranch: row?.parentName ?? source.name };
  }

  async stopDevMode(actor: Principal, deploymentId: number): Promise<void> {
    await this.ws.open(actor, deploymentId, Action.SchemaRead);
    await this.repository.leaveDevMode(deploymentId, actor.userId);
  }

  // --- Create, delete, staging ----------------------------------------------------------------------

  async create(actor: Principal, deploymentId: number, dto: CreateBranchDto): Promise<DevBranchDto> {
    if (!(await GitStore.isValidBranchName(dto.name)) || DEV_BRANCH.test(dto.name)) {
      throw dataModelError(
        'invalid_branch_name',
        DEV_BRANCH.test(dto.name)
          ? `${dto.name} has the form of a personal dev branch; choose another name`
          : `${JSON.stringify(dto.name)} is not a valid git branch name`,
      );
    }
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const from = await this.ws.branch(ctx, dto.from ?? ctx.settings.deployBranchName);
    if (!from.head)
      throw dataModelError('nothing_to_merge', `${from.name} has no commits to branch from yet`);
    await this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, dto.name);
      const inserted = await this.repository.insertBranch(ctx.accountId, deploymentId, {
        name: dto.name,
        parentName: from.name,
        kind: 'shared',
        ownerUserId: null,
      });
      if (!inserted || !(await this.ws.git.updateRef(deploymentId, branchRef(dto.name), from.head, null))) {
        // git cannot hold both `a` and `a/b`: such a name is taken as much as an equal one.
        throw dataModelError(
          'branch_exists',
          `Branch ${dto.name} exists, or clashes with a branch named like its path`,
        );
      }
    });
    if (dto.activate || dto.enterDevMode) return this.enterDevMode(ctx, await this.ws.branch(ctx, dto.name));
    return { active: false, branchName: dto.name, parentBranch: from.name };
  }

  /**
   * Deletes a branch: its ref (on the connected repository too with `removeOnUpstream`, first,
   * so a refusal changes nothing), its pending changes; its children move to its parent and its
   * viewers back to the deploy branch.
   */
  async delete(actor: Principal, deploymentId: number, query: DeleteBranchQueryDto): Promise<void> {
    if (query.branchName.trim() === '')
      throw dataModelError('invalid_branch_name', 'branchName must not be empty');
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

  private async remove(ctx: ModelContext, branch: Branch, upstream: boolean): Promise<void> {
    await this.db.transaction(async () => {
      await this.repository.lockBranch(ctx.deploymentId, branch.name);
      if (upstream) {
        if (!(await this.remotes.remote(ctx))) {
          throw dataModelError('remote_not_connected', 'removeOnUpstream needs a connected repository');
        }
        await this.remotes.push(ctx, branch.name, null);
      }
      const pending = await this.ws.git.resolve(ctx.deploymentId, pendingRef(branch.name));
      if (pending) await this.ws.git.updateRef(ctx.deploymentId, pendingRef(branch.name), null, pending);
      await this.ws.git.updateRef(ctx.deploymentId, branchRef(branch.name), null, null);
      if (branch.id !== 0)
        await this.repository.deleteBranch(ctx.deploymentId, branch, ctx.settings.deployBranchName);
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
    });
    const row = (await this.repository.branch(deploymentId, branch.name))!;
    return { data: this.toDto(row, branch.name, branch.head) };
  }

  // --- Merges -------------------------------------------------------------------------------------

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
      await this.remove(ctx, source, false);
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
      await this.remove(ctx, source, false);
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
      const next = await this.ws.moveRef(ctx, target.name, branchRef(target.name), async (head) => {
        const theirs = await git.resolve(ctx.deploymentId, branchRef(source.name));
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

  // --- The connected repository ---------------------------------------------------------------------

  /**
   * Fetches a branch from the connected repository; when it changed, moves the local branch to
   * it (fast-forward, or a merge commit that is pushed back) and queues a build.
   */
  async pull(actor: Principal, deploymentId: number, dto: PullDto): Promise<{ buildTriggered: boolean }> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    if (dto.branchName === ctx.settings.deployBranchName) await this.ws.require(ctx, Action.SchemaUpdate);
    const remote = await this.remotes.remote(ctx);
    if (!remote) throw dataModelError('remote_not_connected', 'This deployment has no connected repository');
    this.jobs.assertAvailable();
    const git = this.ws.git;
    return this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, dto.branchName);
      const fetched = await this.remotes.fetch(ctx, remote, dto.branchName);
      if (!fetched)
        throw dataModelError('nothing_to_merge', `${remote.repository} has no branch ${dto.branchName}`);
      const next = await this.ws.moveRef(ctx, dto.branchName, branchRef(dto.branchName), async (head) => {
        if (head === fetched) return null;
        if (!head || (await git.isAncestor(deploymentId, head, fetched)))
          return { next: fetched, result: fetched };
        if (await git.isAncestor(deploymentId, fetched, head)) return null;
        const merged = await git.merge(deploymentId, head, fetched);
        if (!merged.clean) {
          throw dataModelError(
            'merge_conflict',
            `${dto.branchName} and ${remote.repository} conflict in: ${merged.files.join(', ')}`,
          );
        }
        const commit = await git.commit(
          deploymentId,
          merged.tree,
          [head, fetched],
          `Merge ${remote.repository} ${dto.branchName}`,
          this.ws.author(ctx),
        );
        await this.remotes.push(ctx, dto.branchName, commit);
        return { next: commit, result: commit };
      });
      if (!next) return { buildTriggered: false };
      await this.repository.insertBranch(ctx.accountId, deploymentId, {
        name: dto.branchName,
        parentName: dto.branchName === ctx.settings.deployBranchName ? null : ctx.settings.deployBranchName,
        kind: 'shared',
        ownerUserId: null,
      });
      await this.builds.queue(ctx.accountId, deploymentId, dto.branchName, next, 'pull');
      return { buildTriggered: true };
    });
  }

  /**
   * Connects the deployment to a GitHub repository: the repository's deploy branch becomes the
   * deploy branch (or, for a repository without it, the deployment's model is pushed there),
   * and a build is queued.
   */
  async connect(actor: Principal, deploymentId: number, dto: ConnectGitHubDto): Promise<DeploymentDto> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    // Only an installation this account linked (GitHub's Setup URL) may be connected.
    await this.installations.requireLinked(ctx.accountId, dto.installationId);
    const repo = dto.isNewRepo
      ? await this.host.createRepository(dto.installationId, dto.name, { private: dto.private ?? true })
      : await this.host.repository(dto.installationId, dto.name);
    const deployBranch = dto.deployBranchName ?? repo.defaultBranch ?? ctx.settings.deployBranchName;
    if (!(await GitStore.isValidBranchName(deployBranch))) {
      throw dataModelError(
        'invalid_branch_name',
        `${JSON.stringify(deployBranch)} is not a valid git branch name`,
      );
    }
    const projectRoot = `/${rootPrefix(dto.deployProjectRoot ?? '/')}`.replace(/\/$/, '') || '/';
    const remote = {
      deploymentId,
      provider: 'github',
      installationId: String(dto.installationId),
      repository: repo.fullName,
      url: repo.cloneUrl,
    };
    this.jobs.assertAvailable();
    const git = this.ws.git;
    const previous = await git.resolve(deploymentId, branchRef(ctx.settings.deployBranchName));
    await this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, deployBranch);
      const fetched = await this.remotes.fetch(ctx, remote, deployBranch);
      const local = await git.resolve(deploymentId, branchRef(deployBranch));
      let head = fetched;
      if (fetched) {
        if (
          fetched !== local &&
          !(await git.updateRef(deploymentId, branchRef(deployBranch), fetched, local))
        ) {
          throw dataModelError('conflict', `Branch ${deployBranch} changed during the connection; retry`);
        }
      } else {
        // An empty repository (or one without the branch) receives the deployment's model.
        head = local ?? previous;
        if (head) {
          await this.remotesPush(ctx, remote, deployBranch, head);
          if (!local) await git.updateRef(deploymentId, branchRef(deployBranch), head, null);
        }
      }
      await this.repository.saveRemote(ctx.accountId, remote);
      await this.deployments.setGitSettings(ctx.accountId, deploymentId, {
        deployBranchName: deployBranch,
        deployProjectRoot: projectRoot,
        creationMethod: 'github',
      });
      await this.repository.insertBranch(ctx.accountId, deploymentId, {
        name: deployBranch,
        parentName: null,
        kind: 'shared',
        ownerUserId: null,
      });
      if (head) await this.builds.queue(ctx.accountId, deploymentId, deployBranch, head, 'connect');
    });
    return this.deployments.describe(ctx.accountId, deploymentId);
  }

  /** A push to a remote not saved yet (during connect). */
  private async remotesPush(
    ctx: ModelContext,
    remote: { url: string; installationId: string; repository: string },
    branch: string,
    commit: string,
  ): Promise<void> {
    try {
      await this.ws.git.push(ctx.deploymentId, remote.url, branch, commit, await this.remotes.auth(remote));
    } catch (err) {
      throw this.remotes.failure(err, `push to ${remote.repository}`);
    }
  }
}
