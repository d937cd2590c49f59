import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import type { JobContext } from '../../core/queue/job-context.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobRuns } from '../../core/queue/job-runs.service.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { DeploymentLifecycle } from '../deployments/deployment-lifecycle.js';
import { deploymentOwner, DeploymentsService } from '../deployments/deployments.service.js';
import { DataModelRepository } from './data-model.repository.js';
import { DeployStates } from './deploy-states.service.js';
import type { BuildStatusDto } from './dto/data-model.dto.js';
import { branchRef, GitStore } from './git/git-store.js';
import { rootPrefix } from './model-paths.js';
import { ModelEnvironments } from './model-environments.service.js';
import { ModelVerdicts } from './model-verdicts.js';
import { ModelWorkspace } from './model-workspace.js';

export interface BuildPayload {
  buildId: number;
}

/**
 * One build of a deployment's branch at one commit: a job with a run record (its phases and log
 * are what users watch), on the `builds` queue.
 */
export const BUILD_JOB = defineJob<BuildPayload>('deployment.build', {
  queue: 'builds',
  attempts: 5,
  backoffMs: 5_000,
  timeoutMs: 30 * 60_000,
  concurrency: 4,
  run: { maxClaims: 3 },
  dedupeKey: (p) => `deployment.build:${p.buildId}`,
});

/** What a queued build's status says, as a queued dbt sync's does. */
const WAITING_FOR_A_WORKER = 'Waiting for a worker';

/**
 * Builds: recorded on every change of a branch (commit, merge, upload, pull, connect), run by the
 * `deployment.build` job, which compiles the branch at the recorded commit with the model
 * compiler and records `built` or `failed`.
 */
@Injectable()
export class ModelBuilds {
  constructor(
    private readonly repository: DataModelRepository,
    private readonly jobs: JobQueue,
    private readonly runs: JobRuns,
    private readonly git: GitStore,
    private readonly verdicts: ModelVerdicts,
    private readonly deployments: DeploymentsService,
    private readonly workspace: ModelWorkspace,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly db: Database,
    private readonly deployStates: DeployStates,
    private readonly environments: ModelEnvironments,
    private readonly events: DomainEvents,
  ) {}

  /**
   * Records a build of `branch` at `commit` and its run, in the current unit of work; the job is
   * handed to the queue after commit. Call `JobQueue.assertAvailable()` before the change.
   */
  async queue(
    accountId: number,
    deploymentId: number,
    branch: string,
    commit: string | null,
    trigger: string,
  ) {
    const buildId = await this.repository.nextBuildId();
    const { runId } = await this.jobs.enqueue(
      BUILD_JOB,
      { buildId },
      { accountId, owner: deploymentOwner(deploymentId) },
    );
    await this.repository.insertBuild({
      id: buildId,
      accountId,
      deploymentId,
      branch,
      trigger,
      commitSha: commit,
      runId: runId!,
    });
    return buildId;
  }

  /** `GET /deployments/{id}/build-status`: the latest build of a branch. */
  async status(
    actor: Principal,
    deploymentId: number,
    branchName: string | undefined,
  ): Promise<BuildStatusDto> {
    const ctx = await this.workspace.open(actor, deploymentId, Action.DeploymentRead);
    const name =
      branchName ??
      (await this.repository.activeBranch(deploymentId, actor.userId)) ??
      ctx.settings.deployBranchName;
    const mode = name === ctx.settings.deployBranchName ? 'production' : 'dev_mode';
    const base = { deploymentId, branchName: name, mode };
    const head = await this.git.resolve(deploymentId, branchRef(name));
    if (!head) {
      return { ...base, status: 'failed', errorText: 'Bad branch', buildJobId: null, lastHash: null };
    }
    const build = await this.repository.latestBuild(deploymentId, name);
    if (!build) return { ...base, status: 'none', buildJobId: null, lastHash: head };
    const run = await this.runs.get(build.runId);
    // `queued` until a worker claims the build (and again while a retry waits for one).
    const status =
      run?.status === 'queued'
        ? 'queued'
        : !run || run.status === 'running'
          ? 'building'
          : run.status === 'succeeded'
            ? (build.outcome ?? 'built')
            : run.status;
    const waiting =
      run?.status === 'queued'
        ? { queuedSeconds: (await this.runs.waitingSeconds(run.id)) ?? 0, message: WAITING_FOR_A_WORKER }
        : {};
    return {
      ...base,
      status,
      buildJobId: build.id,
      ...(await this.deployState(deploymentId, ctx.settings.deployBranchName, name, run?.status ?? null)),
      errorText: status === 'failed' ? (build.errorText ?? run?.error ?? null) : null,
      filesHash: build.filesHash,
      lastHash: build.commitSha,
      updatedAt: run?.finishedAt ?? run?.startedAt ?? build.createdAt.toISOString(),
      ...waiting,
    };
  }

  /**
   * `deploymentStatus`: the build run's state, or with a runtime that runs deployments the
   * rollout's state of the environment serving the branch (null for a branch not served, or one
   * whose first successful build is not deployed yet).
   */
  private async deployState(
    deploymentId: number,
    deployBranch: string,
    branch: string,
    runStatus: string | null,
  ): Promise<Pick<BuildStatusDto, 'deploymentStatus' | 'deploymentStatusReason'>> {
    if (!this.deployStates.reported) return { deploymentStatus: runStatus };
    const environmentId = await this.environments.servingBranch(deploymentId, deployBranch, branch);
    if (environmentId === null) return { deploymentStatus: null, deploymentStatusReason: null };
    const state = (await this.deployStates.read(deploymentId, [environmentId])).get(environmentId);
    return { deploymentStatus: state?.status ?? null, deploymentStatusReason: state?.reason ?? null };
  }

  /**
   * Runs one build from the beginning; safe to run again (a rerun compiles the same commit and
   * reaches the same verdict, which is then neither written nor published again). A build whose
   * deployment is gone does nothing. The verdict publishes `build.finished` or `build.failed` in
   * its unit of work, on the transition only (`recordBuildOutcome` compares and sets).
   */
  @JobHandler(BUILD_JOB)
  async build(payload: BuildPayload, ctx: JobContext): Promise<void> {
    const build = await this.repository.findBuild(payload.buildId);
    if (!build) return;
    let settings;
    try {
      settings = await this.deployments.gitSettings(build.accountId, build.deploymentId);
    } catch {
      return; // The deployment went away meanwhile.
    }
    await ctx.phase('checkout');
    await this.workspace.prepare(build.accountId, settings);
    const commit = build.commitSha ?? (await this.git.resolve(build.deploymentId, branchRef(build.branch)));
    if (!commit) {
      await this.recordVerdict(build, settings.deployBranchName, {
        commitSha: null,
        filesHash: null,
        outcome: 'failed',
        errorText: 'Bad branch',
      });
      ctx.fail(`Branch ${build.branch} does not exist`);
    }
    await ctx.log(`Checking out ${build.branch} at ${commit.slice(0, 12)}`);
    const prefix = rootPrefix(settings.deployProjectRoot);
    const files = (await this.git.listFiles(build.deploymentId, commit)).filter((f) =>
      f.path.startsWith(prefix),
    );
    await ctx.throwIfCancelled();
    await ctx.phase('compile');
    await ctx.log(`Compiling ${files.length} files`);
    // A model compiled before (a validate of the same tree) is not compiled again.
    // A build waits for its compile slot as long as it takes: its job is already its turn.
    const result = await this.verdicts.of(build.accountId, build.deploymentId, commit, prefix, {
      waitForSlot: Infinity,
    });
    await ctx.throwIfCancelled();
    await ctx.phase('publish');
    const errorText = result.valid
      ? null
      : result.errors.map((e) => (e.fileName ? `${e.fileName}: ${e.message}` : e.message)).join('\n');
    await this.db.transaction(async () => {
      await this.recordVerdict(
        build,
        settings.deployBranchName,
        {
          commitSha: commit,
          filesHash: GitStore.filesHash(files),
          outcome: result.valid ? 'built' : 'failed',
          errorText,
        },
        result.valid ? result.cubesCount : null,
      );
      // A branch the deployment serves may run this commit now.
      if (result.valid) await this.lifecycle.changed(build.accountId, build.deploymentId);
    });
    if (!result.valid) {
      await ctx.log(errorText ?? 'Compilation failed', 'error');
      ctx.fail(`The model does not compile:\n${errorText}`.slice(0, 2000));
    }
    await ctx.log(`Built: ${result.cubesCount} cubes`);
  }

  /**
   * Writes the verdict and, when the build reaches it now (not on a rerun that reached it
   * before), publishes `build.finished` or `build.failed` in the same unit of work: the build as
   * `GET .../build-status` shows it.
   */
  private async recordVerdict(
    build: { id: number; accountId: number; deploymentId: number; branch: string; trigger: string },
    deployBranch: string,
    verdict: {
      commitSha: string | null;
      filesHash: string | null;
      outcome: 'built' | 'failed';
      errorText: string | null;
    },
    cubesCount: number | null = null,
  ): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.repository.recordBuildOutcome(build.id, verdict))) return;
      await this.events.publish({
        accountId: build.accountId,
        type: verdict.outcome === 'built' ? 'build.finished' : 'build.failed',
        resource: { type: 'build', id: build.id },
        data: {
          buildJobId: build.id,
          deploymentId: build.deploymentId,
          branchName: build.branch,
          mode: build.branch === deployBranch ? 'production' : 'dev_mode',
          status: verdict.outcome,
          trigger: build.trigger,
          lastHash: verdict.commitSha,
          filesHash: verdict.filesHash,
          errorText: verdict.errorText,
          ...(cubesCount === null ? {} : { cubesCount }),
          updatedAt: new Date().toISOString(),
        },
      });
    });
  }
}
