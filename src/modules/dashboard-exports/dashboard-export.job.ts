import { Injectable, Logger } from '@nestjs/common';
import type { JobContext } from '../../core/queue/job-context.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { JobRuns } from '../../core/queue/job-runs.service.js';
import {
  DashboardRendering,
  describeFilters,
  isTransientFailure,
  RenderError,
  type DashboardDocument,
  type DashboardFile,
  type QueryOverrides,
} from '../notifications/dashboard-rendering.service.js';
import { DashboardExportClock } from './dashboard-export-clock.js';
import { DashboardExportsRepository } from './dashboard-exports.repository.js';

export interface DashboardExportPayload {
  exportId: string;
}

/**
 * One export: reads the dashboard's reports under the export's security context and renders the
 * file. A run record (owner `dashboard-export:<id>`) carries its status, progress and error.
 * Two at once per process (the job framework gives each account its share of them); the render
 * itself is bounded by RENDER_TIMEOUT_MS in the one browser of the process.
 */
export const DASHBOARD_EXPORT_JOB = defineJob<DashboardExportPayload>('dashboard-export.render', {
  queue: 'default',
  attempts: 3,
  backoffMs: 2_000,
  timeoutMs: 10 * 60_000,
  concurrency: 2,
  run: { maxClaims: 3 },
  dedupeKey: (p) => `dashboard-export:${p.exportId}`,
});

/** Deletes expired exports with their runs; fired by a schedule (every 5 minutes). */
export const DASHBOARD_EXPORT_PRUNE_JOB = defineJob<{ scheduledFor?: string }>('dashboard-export.prune', {
  queue: 'default',
  attempts: 3,
  backoffMs: 10_000,
  timeoutMs: 5 * 60_000,
  concurrency: 1,
  dedupeKey: () => 'dashboard-export.prune',
});

export const PRUNE_SCHEDULE_OWNER = 'dashboard-exports:prune';
export const PRUNE_CRON = '*/5 * * * *';
/** Exports deleted per statement by the prune. */
const PRUNE_BATCH = 500;

/** The owner of an export's run. */
export const exportOwner = (id: string) => `dashboard-export:${id}`;

/** Longest error kept from a failed render. */
const REASON_MAX = 2_000;

@Injectable()
export class DashboardExportJobs {
  private readonly logger = new Logger(DashboardExportJobs.name);

  constructor(
    private readonly exports: DashboardExportsRepository,
    private readonly rendering: DashboardRendering,
    private readonly runs: JobRuns,
    private readonly clock: DashboardExportClock,
  ) {}

  /**
   * Renders the export and stores its file once. Safe to run again: an export whose file is
   * stored (or which is gone) is left as it is. A report that fails shows its error in the file;
   * when every report fails, the export fails (a file of errors only helps nobody), after the
   * job's attempts when the data API was out of reach.
   */
  @JobHandler(DASHBOARD_EXPORT_JOB)
  async render(payload: DashboardExportPayload, ctx: JobContext): Promise<void> {
    const work = await this.exports.work(payload.exportId);
    if (!work || work.hasFile) return;
    if (Date.parse(work.expiresAt) <= this.clock.now().getTime()) {
      ctx.fail('The export expired before it was rendered');
    }
    await ctx.phase('query');
    const target = { accountId: work.accountId, deploymentId: work.deploymentId };
    const dashboard = await this.rendering.published(work.accountId, work.deploymentId, {
      id: work.dashboardId,
    });
    if (!dashboard) ctx.fail('The dashboard is no longer published');
    const overrides = work.overrides as QueryOverrides;
    const sources = await this.rendering.sources(target, dashboard);
    // Each report read is a step, and the rendering the last one.
    const steps = sources.length + 1;
    await ctx.progress(0, steps);
    const tables = await this.rendering.tables(target, sources, overrides, work.securityContext, (done) =>
      ctx.progress(done, steps),
    );
    const failures = tables.filter((t) => t.error !== undefined);
    if (tables.length > 0 && failures.length === tables.length) {
      const first = failures[0];
      const reason = clip(
        `Every report of the dashboard failed (${failures.length}), so the file would hold only errors: ` +
          (first.code ? `${first.code}: ${first.error}` : `${first.title}: ${first.error}`),
      );
      if (failures.some((f) => isTransientFailure(f.code)) && ctx.attempt < DASHBOARD_EXPORT_JOB.attempts) {
        throw new Error(`${reason}; tried again`);
      }
      ctx.fail(reason);
    }
    await ctx.throwIfCancelled();
    await ctx.phase('render');
    await ctx.progress(sources.length, steps);
    const doc: DashboardDocument = {
      title: this.rendering.title(dashboard),
      link: this.rendering.link(work.deploymentId, dashboard),
      generatedAt: this.clock.now(),
      timezone: 'UTC',
      tables,
      filters: describeFilters(overrides),
    };
    let file: DashboardFile;
    try {
      file = await this.rendering.file(doc, work.format);
    } catch (err) {
      if (err instanceof RenderError && ctx.attempt >= DASHBOARD_EXPORT_JOB.attempts) {
        ctx.fail(clip(`Rendering the dashboard failed (${err.reason}): ${err.message}`));
      }
      throw err;
    }
    // A run taken over by another worker stores nothing; the file is stored once either way.
    await ctx.throwIfCancelled();
    await this.exports.storeFile(work.id, file.content, file.contentType, this.clock.now());
    await ctx.progress(steps, steps);
    await ctx.log(`Rendered ${file.contentType}, ${file.content.length} bytes`);
  }

  @JobHandler(DASHBOARD_EXPORT_PRUNE_JOB)
  async runPrune(): Promise<void> {
    const pruned = await this.prune();
    if (pruned > 0) this.logger.log(`Deleted ${pruned} expired dashboard exports`);
  }

  /**
   * Deletes the exports expired at `now` with their runs (logs and jobs included), in batches.
   * Safe to run twice and alongside starts; answers how many it deleted.
   */
  async prune(now: Date = this.clock.now()): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await this.exports.expired(now, PRUNE_BATCH);
      // Forgetting a run deletes its export too (the row cascades from its run).
      for (const id of ids) await this.runs.forgetOwner(exportOwner(id));
      await this.exports.remove(ids);
      total += ids.length;
      if (ids.length < PRUNE_BATCH) return total;
    }
  }
}

function clip(text: string): string {
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX - 1)}…` : text;
}
