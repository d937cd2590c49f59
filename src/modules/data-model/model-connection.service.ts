import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type { DeploymentDto } from '../deployments/dto/deployment.dto.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type { ConnectGitHubDto, PullDto } from './dto/data-model.dto.js';
import { agreeingBranchName } from './dto/branch-name.js';
import { branchNameProblem, isDevBranchName } from './git/branch-names.js';
import { GitHost } from './github/github.client.js';
import { GitHubInstallations } from './github/github-installations.service.js';
import { ModelBuilds } from './model-builds.js';
import { rootPrefix } from './model-paths.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type ModelContext } from './model-workspace.js';

/** The connected git-host repository of a deployment: connecting it, and pulling from it. */
@Injectable()
export class ModelConnection {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
    private readonly host: GitHost,
    private readonly deployments: DeploymentsService,
    private readonly installations: GitHubInstallations,
  ) {}

  /**
   * Fetches a shared branch from the connected repository; when it changed, moves the local
   * branch to it (fast-forward, or a merge commit that is pushed back) and queues a build.
   * Personal dev branches are refused: they change through their owner's dev mode only, never to
   * whatever the remote holds under their name.
   */
  async pull(actor: Principal, deploymentId: number, dto: PullDto): Promise<{ buildTriggered: boolean }> {
    const name = dto.branchName;
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    if (name === ctx.settings.deployBranchName) await this.ws.require(ctx, Action.SchemaUpdate);
    const row = await this.repository.branch(deploymentId, name);
    if (isDevBranchName(name) || row?.kind === 'dev') {
      throw dataModelError(
        'branch_not_writable',
        `${name} is a personal dev branch; pull moves shared branches only`,
      );
    }
    const remote = await this.remotes.remote(ctx);
    if (!remote) throw dataModelError('remote_not_connected', 'This deployment has no connected repository');
    this.jobs.assertAvailable();
    const git = this.ws.git;
    return this.db.transaction(async () => {
      let fetched: string | null | undefined;
      const next = await this.refs.move(deploymentId, name, 'head', async (head) => {
        // Under the branch's lock, once: a lost compare-and-swap merges with the same fetch.
        if (fetched === undefined) fetched = await this.remotes.fetch(ctx, remote, name);
        if (!fetched) throw dataModelError('nothing_to_merge', `${remote.repository} has no branch ${name}`);
        if (head === fetched) return null;
        if (!head || (await git.isAncestor(deploymentId, head, fetched)))
          return { next: fetched, result: fetched };
        if (await git.isAncestor(deploymentId, fetched, head)) return null;
        const merged = await git.merge(deploymentId, head, fetched);
        if (!merged.clean) {
          throw dataModelError(
            'merge_conflict',
            `${name} and ${remote.repository} conflict in: ${merged.files.join(', ')}`,
          );
        }
        const commit = await git.commit(
          deploymentId,
          merged.tree,
          [head, fetched],
          `Merge ${remote.repository} ${name}`,
          this.ws.author(ctx),
        );
        await this.remotes.push(ctx, name, commit);
        return { next: commit, result: commit };
      });
      if (!next) return { buildTriggered: false };
      await this.repository.insertBranch(ctx.accountId, deploymentId, {
        name,
        parentName: name === ctx.settings.deployBranchName ? null : ctx.settings.deployBranchName,
        kind: 'shared',
        ownerUserId: null,
      });
      await this.builds.queue(ctx.accountId, deploymentId, name, next, 'pull');
      return { buildTriggered: true };
    });
  }

  /**
   * Connects the deployment to a GitHub repository: the repository's deploy branch becomes the
   * deploy branch (or, for a repository without it, the deployment's model is pushed there),
   * and a build is queued.
   */
  async connect(actor: Principal, deploymentId: number, dto: ConnectGitHubDto): Promise<DeploymentDto> {
    // `branch` is the reference command-line tool's name for `deployBranchName`.
    const named = agreeingBranchName(['deployBranchName', dto.deployBranchName], ['branch', dto.branch]);
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdate);
    // Without a GitHub App no installation can be linked: say what the operator must set up.
    this.host.requireConfigured();
    // Only an installation this account linked (GitHub's Setup URL) may be connected.
    await this.installations.requireLinked(ctx.accountId, dto.installationId);
    const repo = dto.isNewRepo
      ? await this.host.createRepository(dto.installationId, dto.name, { private: dto.private ?? true })
      : await this.host.repository(dto.installationId, dto.name);
    // The repository's default branch comes from GitHub: the same rule as a name from a request.
    const deployBranch = named ?? repo.defaultBranch ?? ctx.settings.deployBranchName;
    const problem = await branchNameProblem(deployBranch, { isNew: true });
    if (problem) {
      throw dataModelError(
        'invalid_branch_name',
        `The deploy branch ${JSON.stringify(deployBranch)} ${problem}`,
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
    const previous = await this.refs.head(deploymentId, ctx.settings.deployBranchName);
    await this.db.transaction(async () => {
      const head = await this.refs.move(deploymentId, deployBranch, 'head', async (local) => {
        const fetched = await this.remotes.fetch(ctx, remote, deployBranch);
        if (fetched) return { next: fetched, result: fetched };
        // An empty repository (or one without the branch) receives the deployment's model.
        const model = local ?? previous;
        if (!model) return null;
        await this.pushTo(ctx, remote, deployBranch, model);
        return { next: model, result: model };
      });
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
  private async pushTo(
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
