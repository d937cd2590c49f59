import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { isNotFound } from '../../core/errors/not-found.js';
import { OutboundRefused, pinUrl, type PinnedAddress } from '../../core/net/outbound-address.js';
import { JobCancelled, JobFailure, RunLost, type JobContext } from '../../core/queue/job-context.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { ImportRefused, ModelImports } from '../data-model/model-imports.js';
import { generateFromManifest, type GeneratedModel } from './converter/generate.js';
import { ManifestError, manifestFromJson, readManifest, type DbtManifest } from './converter/manifest.js';
import { DbtSourceError, fetchManifest, manifestPath } from './dbt-git.js';
import { DbtIntegrations } from './dbt-integrations.service.js';
import { DbtSyncEvents } from './dbt-sync.events.js';
import { PHASES, type SyncPhase } from './dbt-sync.rules.js';
import { DbtSyncRepository, type SyncWorkRow } from './dbt-sync.repository.js';
import type { SyncPhaseRecord, SyncStatsRecord } from './entities/dbt-sync.entity.js';

export interface DbtSyncPayload {
  syncId: string;
}

/**
 * One dbt sync: a job with a run record (its phases, progress and log are what users watch), on
 * the `default` queue: a sync takes about a second, so it never waits behind the long compiles of
 * the `builds` queue (where the build it records runs). Retried on failures that may pass (a network
 * failure, a lost compare-and-swap); failed for good on those that will not (`ctx.fail`).
 */
export const DBT_SYNC_JOB = defineJob<DbtSyncPayload>('dbt-sync.run', {
  queue: 'default',
  attempts: 3,
  backoffMs: 5_000,
  timeoutMs: 30 * 60_000,
  concurrency: 2,
  run: { maxClaims: 3 },
  dedupeKey: (p) => `dbt-sync.run:${p.syncId}`,
});

const gunzipAsync = promisify(gunzip);

/** Converter warnings logged one per line, at most; the rest are counted. */
const WARNING_LINES = 50;

/**
 * Times the phases of one attempt on one monotonic clock (`performance.now()` of the worker):
 * offsets from the attempt's start, durations, outcome.
 */
class PhaseClock {
  private readonly origin = performance.now();
  private readonly records: SyncPhaseRecord[] = [];
  private open: { phase: SyncPhase; started: number } | null = null;

  begin(phase: SyncPhase): void {
    this.open = { phase, started: performance.now() };
  }

  /** The open phase as it stands now, outcome `ok` (what `finalize` records of itself). */
  closingRecord(): SyncPhaseRecord[] {
    return this.open ? [...this.records, this.record(this.open, 'ok')] : [...this.records];
  }

  /** Closes the open phase; its duration, ms. */
  end(outcome: 'ok' | 'failed'): number {
    if (!this.open) return 0;
    const record = this.record(this.open, outcome);
    this.records.push(record);
    this.open = null;
    return record.durationMs;
  }

  get current(): SyncPhase | null {
    return this.open?.phase ?? null;
  }

  all(): SyncPhaseRecord[] {
    return [...this.records];
  }

  private record(open: { phase: SyncPhase; started: number }, outcome: 'ok' | 'failed'): SyncPhaseRecord {
    return {
      phase: open.phase,
      outcome,
      startedOffsetMs: Math.max(0, Math.round(open.started - this.origin)),
      durationMs: Math.max(0, Math.round(performance.now() - open.started)),
    };
  }
}

/** A manifest's bytes as read from their source; `read`: stored as read already (`manifestToJson`). */
interface ManifestSource {
  bytes: Buffer;
  what: string;
  read?: boolean;
}

/** Parses a manifest's JSON text; a syntax error fails the run (it will not parse better later). */
function parseJson(bytes: Buffer, what: string, ctx: JobContext): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    ctx.fail(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Runs a sync: reads the manifest (from the dbt repository at the sync's ref, or the one posted),
 * converts it, writes the cube files (one commit on the sync's branch with a build recorded, or
 * kept with the sync), then records the result. Safe to run again: the branch was named at start
 * and the commit is idempotent (`ModelImports.commitBranch`), the stored files are replaced, and
 * once the sync has ended (`done_at`: its result recorded, or its failure or cancellation told)
 * a rerun does nothing more. Checks for cancellation before each phase. The end of the run
 * publishes `dbt_sync.finished` once (`DbtSyncEvents`): with the result, or when it fails for good
 * (`ctx.fail`, or the last attempt's error) or is cancelled; an attempt that will be retried
 * publishes nothing.
 */
@Injectable()
export class DbtSyncJob {
  private readonly logger = new Logger('DbtSync');

  constructor(
    private readonly db: Database,
    private readonly repository: DbtSyncRepository,
    private readonly imports: ModelImports,
    private readonly integrations: DbtIntegrations,
    private readonly config: AppConfig,
    private readonly events: DbtSyncEvents,
  ) {}

  @JobHandler(DBT_SYNC_JOB)
  async run(payload: DbtSyncPayload, ctx: JobContext): Promise<void> {
    const sync = await this.repository.work(payload.syncId);
    // Gone with its deployment.
    if (!sync) return;
    // Ended by an attempt that died before the run was closed: the run ends as the sync did.
    if (sync.done) {
      if (sync.succeeded) return;
      await ctx.throwIfCancelled();
      ctx.fail('The sync failed in an earlier attempt');
    }
    const clock = new PhaseClock();
    try {
      const source =
        sync.source === 'git' ? await this.clone(sync, ctx, clock) : await this.load(sync, ctx, clock);
      const manifest = await this.step(sync, ctx, clock, 'manifest-parse', () => this.parse(source, ctx));
      const generated = await this.step(sync, ctx, clock, 'cube-generate', () =>
        this.generate(manifest, ctx),
      );
      const written =
        sync.output === 'branch'
          ? await this.step(sync, ctx, clock, 'branch-commit', () => this.commit(sync, generated, ctx))
          : await this.step(sync, ctx, clock, 'files-store', () => this.store(sync, generated, ctx));
      await this.step(sync, ctx, clock, 'finalize', () => this.finalize(sync, generated, written, clock));
      await ctx.log(
        sync.output === 'branch'
          ? `Sync complete: ${generated.stats.cubeCount} cubes on branch ${sync.branchName}`
          : `Sync complete: ${generated.stats.cubeCount} cube files kept with the sync`,
      );
    } catch (err) {
      if (err instanceof RunLost) throw err;
      const cancelled = err instanceof JobCancelled;
      const phase = clock.current;
      clock.end('failed');
      if (!cancelled) {
        await ctx
          .log(
            `${phase ? `${phase} failed: ` : ''}${err instanceof Error ? err.message : String(err)}`,
            'error',
          )
          .catch(() => undefined);
      } else {
        await ctx.log('Cancelled at the user’s request').catch(() => undefined);
      }
      await this.repository.recordPhases(sync.id, clock.all()).catch(() => undefined);
      // The run ends here (failed for good, or cancelled): a posted manifest is no longer needed.
      if (cancelled || err instanceof JobFailure) {
        await this.repository.dropManifest(sync.id).catch(() => undefined);
      }
      // The run's last word (it will not be retried): told once, whatever the telling meets.
      if (cancelled || err instanceof JobFailure || ctx.attempt >= DBT_SYNC_JOB.attempts) {
        const error = err instanceof JobFailure ? err.message : String(err);
        await this.db
          .transaction(() =>
            this.events.ended(
              sync.id,
              cancelled ? { status: 'cancelled' } : { status: 'failed', error, phase },
            ),
          )
          .catch((e: unknown) =>
            this.logger.warn({ syncId: sync.id, err: String(e) }, 'dbt sync ending not published'),
          );
      }
      throw err;
    }
  }

  /**
   * One phase: checks for cancellation, records the phase (run, status time), times it, and logs
   * its start and, with its duration, its end.
   */
  private async step<T>(
    sync: SyncWorkRow,
    ctx: JobContext,
    clock: PhaseClock,
    phase: SyncPhase,
    work: () => Promise<T>,
  ): Promise<T> {
    await ctx.throwIfCancelled();
    clock.begin(phase);
    await ctx.phase(phase);
    await this.repository.touch(sync.id);
    await ctx.log(PHASES[phase].doing);
    const result = await work();
    const ms = clock.end('ok');
    await ctx.log(`${phase} done`, 'info', { durationMs: ms });
    return result;
  }

  private async clone(sync: SyncWorkRow, ctx: JobContext, clock: PhaseClock): Promise<ManifestSource> {
    return this.step(sync, ctx, clock, 'repo-clone', async () => {
      const url = sync.repositoryUrl!;
      const ref = sync.gitRef!;
      const projectRoot = sync.projectRoot ?? '/';
      await ctx.log(`Reading ${manifestPath(projectRoot)} at ${ref} of ${url}`);
      const { dbtSync } = this.config;
      try {
        const fetched = await fetchManifest(
          {
            url,
            ref,
            projectRoot,
            auth: await this.integrations.credentials(sync.accountId, sync.deploymentId, url),
            pin: await this.pin(url, sync, ctx),
          },
          {
            protocols: dbtSync.gitProtocols,
            timeoutMs: dbtSync.gitTimeoutMs,
            maxBytes: dbtSync.manifestMaxBytes,
          },
        );
        await ctx.log(
          `Fetched ${fetched.ref} at commit ${fetched.commit}: ${fetched.path}, ${fetched.bytes.length} bytes`,
        );
        return { bytes: fetched.bytes, what: fetched.path };
      } catch (err) {
        if (err instanceof DbtSourceError) {
          // git's own words stay with the operators: they tell what listens at the address.
          if (err.detail)
            this.logger.debug({ syncId: sync.id, detail: err.detail }, 'dbt repository read failed');
          if (err.permanent) ctx.fail(err.message);
        }
        throw err;
      }
    });
  }

  /**
   * The address git connects to, checked by the outbound rule now, when the connection is made
   * (the URL was checked when saved and when the sync started; what its name resolves to may
   * have changed since). Null for `file://`.
   */
  private async pin(url: string, sync: SyncWorkRow, ctx: JobContext): Promise<PinnedAddress | null> {
    if (/^file:/i.test(url)) return null;
    try {
      return await pinUrl(url, { allow: this.config.outboundAllowList });
    } catch (err) {
      if (!(err instanceof OutboundRefused)) throw err;
      this.logger.debug(
        { syncId: sync.id, reason: err.reason, detail: err.detail },
        'dbt repository refused',
      );
      ctx.fail(`The dbt repository's URL ${err.message}`);
    }
  }

  private load(sync: SyncWorkRow, ctx: JobContext, clock: PhaseClock): Promise<ManifestSource> {
    return this.step(sync, ctx, clock, 'manifest-load', async () => {
      const stored = await this.repository.manifest(sync.id);
      if (!stored) ctx.fail('The posted manifest is no longer stored; post it again in a new sync');
      const bytes = await gunzipAsync(stored.gz);
      await ctx.log(`Loaded the posted manifest: ${bytes.length} bytes`);
      return { bytes, what: 'The posted manifest', read: stored.read };
    });
  }

  /**
   * The manifest, read: from the repository's JSON; a posted one was read when the sync started
   * and is taken as stored (one stored before that form existed is read here).
   */
  private parse(source: ManifestSource, ctx: JobContext): Promise<DbtManifest> {
    const { bytes, what } = source;
    let manifest: DbtManifest;
    if (source.read) {
      manifest = manifestFromJson(bytes.toString('utf8'));
    } else {
      const json = parseJson(bytes, what, ctx);
      try {
        manifest = readManifest(json);
      } catch (err) {
        if (err instanceof ManifestError)
          ctx.fail(`${what} is not a dbt manifest this service reads: ${err.message}`);
        throw err;
      }
    }
    return ctx
      .log(
        `dbt ${manifest.dbtVersion ?? '(version not recorded)'}, manifest v${manifest.schemaVersion}: ` +
          `${manifest.stats.models} models (${manifest.models.length} become cubes; ` +
          `${manifest.skipped.ephemeral.length} ephemeral, ${manifest.skipped.disabled.length} disabled), ` +
          `${manifest.stats.sources} sources, ${manifest.stats.macros} macros`,
      )
      .then(() => manifest);
  }

  private async generate(manifest: DbtManifest, ctx: JobContext): Promise<GeneratedModel> {
    const generated = generateFromManifest(manifest);
    await ctx.log(`Generated ${generated.files.length} cube files`);
    for (const w of generated.warnings.slice(0, WARNING_LINES)) {
      await ctx.log(`Warning: ${w.model}${w.column ? ` column ${w.column}` : ''}: ${w.message}`);
    }
    if (generated.warnings.length > WARNING_LINES) {
      await ctx.log(`Warning: ${generated.warnings.length - WARNING_LINES} more warnings not listed`);
    }
    return generated;
  }

  private async commit(
    sync: SyncWorkRow,
    generated: GeneratedModel,
    ctx: JobContext,
  ): Promise<{ commitSha: string | null; buildId: number | null }> {
    // On its first claim the run cannot have made the branch: one that exists is someone else's.
    if (ctx.run?.claim === 1 && (await this.imports.branchExists(sync.deploymentId, sync.branchName))) {
      ctx.fail(
        `Branch ${sync.branchName} was created by someone else after this sync started; ` +
          'start the sync again with another branchName',
      );
    }
    try {
      const outcome = await this.imports.commitBranch({
        accountId: sync.accountId,
        deploymentId: sync.deploymentId,
        branch: sync.branchName,
        base: sync.baseBranch,
        files: generated.files,
        message:
          `dbt sync ${sync.id}: ${generated.stats.cubeCount} cubes from ` +
          (sync.source === 'git' ? `${sync.gitRef} of the dbt repository` : 'a posted manifest'),
        author: { name: sync.authorEmail, email: sync.authorEmail },
        trigger: 'dbt-sync',
      });
      await ctx.log(
        `Committed ${generated.files.length} files to ${outcome.branch} over ${outcome.base} ` +
          `(commit ${outcome.commit.slice(0, 12)}); build ${outcome.buildId} queued`,
      );
      return { commitSha: outcome.commit, buildId: outcome.buildId };
    } catch (err) {
      if (isNotFound(err, 'Branch')) ctx.fail(`The base branch ${sync.baseBranch} no longer exists`);
      // The model's refusals of the input (too many files, a file too large) do not change on retry.
      if (err instanceof ImportRefused) ctx.fail(err.message);
      throw err;
    }
  }

  private async store(
    sync: SyncWorkRow,
    generated: GeneratedModel,
    ctx: JobContext,
  ): Promise<{ commitSha: string | null; buildId: number | null }> {
    await this.db.transaction(() => this.repository.replaceFiles(sync.id, generated.files));
    await ctx.log(`Kept ${generated.files.length} files with the sync (GET .../generated-files)`);
    return { commitSha: null, buildId: null };
  }

  private async finalize(
    sync: SyncWorkRow,
    generated: GeneratedModel,
    written: { commitSha: string | null; buildId: number | null },
    clock: PhaseClock,
  ): Promise<void> {
    const s = generated.stats;
    const stats: SyncStatsRecord = {
      models: s.models,
      sources: s.sources,
      macros: s.macros,
      cubeCount: s.cubeCount,
      generatedFileCount: s.generatedFileCount,
      dbtVersion: s.dbtVersion,
      manifestGeneratedAt: s.manifestGeneratedAt,
    };
    await this.db.transaction(async () => {
      if (sync.output === 'branch') {
        await this.repository.replaceFiles(
          sync.id,
          generated.files.map((f) => ({ path: f.path, content: null })),
        );
      }
      const ended = await this.repository.finish(sync.id, {
        stats,
        phases: clock.closingRecord(),
        ...written,
      });
      if (ended) await this.events.publish(ended, { status: 'succeeded' });
    });
  }
}
