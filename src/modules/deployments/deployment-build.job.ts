import { Injectable } from '@nestjs/common';
import type { JobContext } from '../../core/queue/job-context.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { DeploymentsRepository } from './deployments.repository.js';

export interface BuildPayload {
  buildId: number;
}

/**
 * One build of a deployment's branch: a job with a run record (its status, phases and log are
 * what users watch), on the `builds` queue.
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

/** The owner key of a deployment's runs (to list and forget them). */
export const deploymentOwner = (deploymentId: number): string => `deployment:${deploymentId}`;

@Injectable()
export class DeploymentBuildJob {
  constructor(private readonly repository: DeploymentsRepository) {}

  /**
   * Runs one build from the beginning; safe to run again (the framework claims the run, so a
   * finished build, or one a live worker holds, never gets here; one whose worker died does, and
   * starts over).
   */
  @JobHandler(BUILD_JOB)
  async build(payload: BuildPayload, ctx: JobContext): Promise<void> {
    const build = await this.repository.findBuild(payload.buildId);
    // Deleted with its deployment: the run went with it, so nothing is recorded.
    if (!build) return;
    await ctx.phase('checkout');
    await ctx.log(`Checking out ${build.branch}`);
    await ctx.throwIfCancelled();
    await ctx.phase('compile');
    // The starter project has nothing to compile yet.
    await ctx.log('Nothing to compile in the starter project');
    await ctx.throwIfCancelled();
    await ctx.phase('publish');
    await ctx.log('Build finished');
  }
}
