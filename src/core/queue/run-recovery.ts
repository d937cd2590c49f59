import { Injectable, Logger } from '@nestjs/common';
import { Database } from '../database/database.js';
import { JobQueue } from './job-queue.service.js';
import { JobRuns } from './job-runs.service.js';

/**
 * The recovery sweep, on every outbox relay pass: a run is never left running by a dead worker,
 * nor queued with no job left to run it.
 */
@Injectable()
export class RunRecovery {
  private readonly logger = new Logger(RunRecovery.name);

  constructor(
    private readonly db: Database,
    private readonly runs: JobRuns,
    private readonly jobs: JobQueue,
  ) {}

  /**
   * Re-queues (with a new job, unless one is still pending or dispatched) every run stuck
   * `running` past its lease, or fails it once it used up its claims; and fails every run left
   * `queued` whose jobs all failed for good. Returns how many runs it recovered.
   */
  async recoverStuck(limit = 50): Promise<number> {
    const orphaned = await this.runs.failOrphaned();
    if (orphaned > 0) this.logger.warn({ failed: orphaned }, 'failed runs whose jobs failed for good');
    const { requeued, failed } = await this.db.transaction(async () => {
      const stuck = await this.runs.takeStuck(limit);
      for (const run of stuck.requeued) await this.jobs.recordForRun(run);
      return stuck;
    });
    if (requeued.length + failed > 0) {
      this.logger.warn({ requeued: requeued.length, failed }, 'recovered runs stuck past their lease');
    }
    return orphaned + requeued.length + failed;
  }
}
