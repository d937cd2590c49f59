import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/errors/api-error.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  type Page,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobRuns } from '../../core/queue/job-runs.service.js';
import { ModelImports } from '../data-model/model-imports.js';
import { deploymentOwner } from '../deployments/deployments.service.js';
import { ManifestError, manifestToJson, readManifest, type DbtManifest } from './converter/manifest.js';
import { isValidRefName } from './dbt-git.js';
import { DbtIntegrations } from './dbt-integrations.service.js';
import { DbtSyncEvents } from './dbt-sync.events.js';
import { DBT_SYNC_JOB } from './dbt-sync.job.js';
import { dbtSyncError, syncNotFound } from './dbt-sync.errors.js';
import { DbtSyncRepository, type SyncViewRow } from './dbt-sync.repository.js';
import {
  HISTORY_STATUS,
  looksLikeCommitSha,
  PHASES,
  runStatusesOf,
  STAGES,
  stageOfPhase,
  syncBranchName,
  type SyncPhase,
  type SyncStage,
} from './dbt-sync.rules.js';
import type {
  DbtGeneratedFileContentDto,
  DbtSyncLogEntryDto,
  DbtSyncResponseDto,
  DbtSyncResultDto,
  DbtSyncRunDto,
  DbtSyncStatusDto,
  ListDbtSyncsQueryDto,
  StartDbtSyncDto,
} from './dto/dbt-sync.dto.js';

const gzipAsync = promisify(gzip);

/** Sync ids are UUIDs; any other text names no sync (404, never a 400 or a failed cast). */
const SYNC_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_ID = /^[1-9]\d{0,18}$/;

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * dbt syncs of a deployment: start (the sync row and its run in one unit of work), history,
 * status, result, logs, generated files, cancel. The work itself is the `dbt-sync.run` job
 * (dbt-sync.job.ts).
 *
 * Actions, as the data model's routes: starting or cancelling a sync creates (or stops creating)
 * a branch, `SchemaUpdateDevBranches` (as `POST .../branches`); the reads show generated model
 * files and their log, `SchemaRead`.
 */
@Injectable()
export class DbtSyncs {
  constructor(
    private readonly db: Database,
    private readonly repository: DbtSyncRepository,
    private readonly access: AccessService,
    private readonly jobs: JobQueue,
    private readonly runs: JobRuns,
    private readonly imports: ModelImports,
    private readonly integrations: DbtIntegrations,
    private readonly events: DbtSyncEvents,
  ) {}

  /**
   * Starts a sync. `manifest` is the body's `manifest` as parsed (the DTO does not copy it): an
   * object, null or undefined, else 400.
   */
  async start(
    actor: Principal,
    deploymentId: number,
    dto: StartDbtSyncDto,
    manifest: unknown,
  ): Promise<DbtSyncResponseDto> {
    if (
      manifest !== undefined &&
      manifest !== null &&
      (typeof manifest !== 'object' || Array.isArray(manifest))
    ) {
      throw coreError('validation_failed', ['manifest must be an object']);
    }
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaUpdateDevBranches);
    const source = dto.source ?? 'git';
    const output = dto.output ?? 'branch';
    let ref = dto.ref ?? null;
    if (ref !== null) await checkRef(ref);

    let repositoryUrl: string | null = null;
    let projectRoot: string | null = null;
    let manifestGz: Buffer | null = null;
    if (source === 'git') {
      const integration = await this.integrations.integration(deploymentId);
      if (!integration) {
        throw dbtSyncError(
          'dbt_integration_not_configured',
          `Deployment ${deploymentId} has no dbt integration to read from: configure it with ` +
            `PUT /api/v1/deployments/${deploymentId}/dbt-integration, or post the manifest (source: manifest)`,
        );
      }
      ref ??= integration.branch;
      // Checked again: the rules (and what the host resolves to) may have changed since it was saved.
      repositoryUrl = await this.integrations.checkUrl(integration.repositoryUrl);
      projectRoot = integration.projectRoot;
    } else {
      if (manifest === undefined || manifest === null) {
        throw dbtSyncError('invalid_manifest', 'manifest is required when source is manifest');
      }
      let read: DbtManifest;
      try {
        read = readManifest(manifest);
      } catch (err) {
        if (err instanceof ManifestError) throw dbtSyncError('invalid_manifest', `manifest: ${err.message}`);
        throw err;
      }
      // Stored as read: the job takes it from here instead of reading the posted JSON again.
      manifestGz = await gzipAsync(manifestToJson(read));
    }

    // The new branch starts from the deploy branch (404 when it has no commit yet).
    const baseBranch = await this.imports.baseBranch(actor.accountId, deploymentId, null);
    const branchName =
      dto.branchName === undefined || dto.branchName === null
        ? syncBranchName(ref, new Date())
        : dto.branchName; // checked by its DTO (`BranchNameField`)
    await this.assertNameFree(deploymentId, branchName);

    this.jobs.assertAvailable();
    const id = randomUUID();
    let runId: string;
    try {
      runId = await this.db.transaction(async () => {
        await this.repository.dropEndedManifests(deploymentId);
        const run = await this.jobs.enqueue(
          DBT_SYNC_JOB,
          { syncId: id },
          { accountId: actor.accountId, owner: deploymentOwner(deploymentId) },
        );
        await this.repository.insert({
          id,
          accountId: actor.accountId,
          deploymentId,
          runId: run.runId!,
          userId: actor.userId,
          authorEmail: actor.email,
          trigger: 'api',
          source,
          output,
          gitRef: ref,
          repositoryUrl,
          projectRoot,
          baseBranch,
          branchName,
          manifestGz,
        });
        return run.runId!;
      });
    } catch (err) {
      if (uniqueViolation(err) === 'ux_dbt_syncs_branch') throw branchExists(branchName);
      throw err;
    }
    return { branchName, syncJobId: id, workflowId: `${DBT_SYNC_JOB.name}:${runId}` };
  }

  async list(
    actor: Principal,
    deploymentId: number,
    query: ListDbtSyncsQueryDto,
  ): Promise<Page<DbtSyncRunDto>> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaRead);
    const paging = resolvePaging(query, ['string']);
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : null;
    if (after !== null && !RUN_ID.test(after)) {
      throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
    }
    const statuses = query.status ? runStatusesOf(query.status) : null;
    const rows =
      statuses?.length === 0
        ? []
        : await this.repository.page({
            deploymentId,
            runStatuses: statuses,
            trigger: query.trigger ?? null,
            afterRunId: after,
            limit: fetchLimit(paging),
          });
    return buildPage(rows, paging, (r) => [r.runId], toRun);
  }

  async status(actor: Principal, deploymentId: number, id: string): Promise<DbtSyncStatusDto> {
    const sync = await this.find(actor, deploymentId, id, Action.SchemaRead);
    const base = { syncJobId: sync.id, updatedAt: sync.updatedAt };
    const progress = (stage: SyncStage, message: string | null) => ({
      stage,
      percentComplete: STAGES[stage],
      message,
    });
    switch (sync.runStatus) {
      case 'queued':
        return {
          ...base,
          status: 'INITIALIZING',
          progress: progress('INITIALIZING', 'Waiting for a worker'),
          error: null,
        };
      case 'running': {
        const stage = stageOfPhase(sync.runPhase);
        const doing =
          sync.runPhase && Object.hasOwn(PHASES, sync.runPhase)
            ? PHASES[sync.runPhase as SyncPhase].doing
            : 'Starting';
        return {
          ...base,
          status: stage,
          progress: progress(stage, sync.cancelRequested ? `${doing} (cancellation requested)` : doing),
          error: null,
        };
      }
      case 'succeeded':
        return {
          ...base,
          status: 'COMPLETED',
          progress: progress('COMPLETED', `Generated ${sync.stats?.cubeCount ?? 0} cubes`),
          error: null,
        };
      case 'failed':
        return { ...base, status: 'FAILED', progress: progress('FAILED', 'Failed'), error: failureOf(sync) };
      case 'cancelled':
        return {
          ...base,
          status: 'FAILED',
          progress: progress('FAILED', 'Cancelled'),
          error: 'Cancelled at a user’s request before it finished',
        };
    }
  }

  async result(actor: Principal, deploymentId: number, id: string): Promise<DbtSyncResultDto> {
    const sync = await this.find(actor, deploymentId, id, Action.SchemaRead);
    assertCompleted(sync);
    const files = await this.repository.filePaths(sync.id);
    return {
      syncJobId: sync.id,
      completedAt: sync.finishedAt!,
      durationMs: sync.durationMs ?? 0,
      cubeCount: sync.stats?.cubeCount ?? 0,
      generatedFiles: files,
      manifestStats: {
        models: sync.stats?.models ?? 0,
        sources: sync.stats?.sources ?? 0,
        macros: sync.stats?.macros ?? 0,
      },
    };
  }

  /** The run's log lines, oldest first, every attempt's. */
  async logs(
    actor: Principal,
    deploymentId: number,
    id: string,
    query: PageQueryDto,
  ): Promise<Page<DbtSyncLogEntryDto>> {
    const sync = await this.find(actor, deploymentId, id, Action.SchemaRead);
    const paging = resolvePaging(query, ['string']);
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : '0';
    if (!/^\d{1,19}$/.test(after))
      throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
    const lines = await this.runs.logs(sync.runId, after, fetchLimit(paging));
    return buildPage(
      lines,
      paging,
      (l) => [l.id],
      (l) => ({
        timestamp: l.at,
        level: l.level === 'error' ? 'error' : 'info',
        message: l.message,
        stream: 'system',
        phase: l.phase,
        durationMs: l.durationMs,
      }),
    );
  }

  /** The files of a sync with output `files`, by path. */
  async generatedFiles(
    actor: Principal,
    deploymentId: number,
    id: string,
    query: PageQueryDto,
  ): Promise<Page<DbtGeneratedFileContentDto>> {
    const sync = await this.find(actor, deploymentId, id, Action.SchemaRead);
    if (sync.output !== 'files') {
      throw dbtSyncError(
        'dbt_sync_files_on_branch',
        `dbt sync ${sync.id} committed its files to branch ${sync.branchName} (output: branch): read them there, ` +
          `with GET /build/api/v1/deployments/${deploymentId}/data-model/files?branchName=...`,
      );
    }
    assertCompleted(sync);
    const paging = resolvePaging(query, ['string']);
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : null;
    const rows = await this.repository.filesPage(sync.id, after, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.path]);
  }

  /**
   * Cancels a sync: a queued one ends CANCELLED at once; a running one stops before its next
   * phase (its run records CANCELLED then). A finished one is 409. A queued one's end publishes
   * `dbt_sync.finished` (`cancelled`) here, a running one's in its job.
   */
  async cancel(actor: Principal, deploymentId: number, id: string): Promise<{ message: string }> {
    const sync = await this.find(actor, deploymentId, id, Action.SchemaUpdateDevBranches);
    if (ENDED.has(sync.runStatus)) throw finished(sync);
    const run = await this.db.transaction(async () => {
      const after = await this.runs.requestCancel(sync.runId);
      if (after?.status === 'cancelled') {
        await this.repository.dropManifest(sync.id);
        await this.events.ended(sync.id, { status: 'cancelled' });
      }
      return after;
    });
    if (run?.status === 'cancelled') {
      return { message: `dbt sync ${sync.id} was cancelled before it started` };
    }
    if (!run || run.status !== 'running') throw finished({ ...sync, runStatus: run?.status ?? 'failed' });
    return { message: `Cancellation requested: dbt sync ${sync.id} stops before its next phase` };
  }

  private async find(
    actor: Principal,
    deploymentId: number,
    id: string,
    action: Action,
  ): Promise<SyncViewRow> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, action);
    const sync = SYNC_ID.test(id) ? await this.repository.view(deploymentId, id.toLowerCase()) : undefined;
    if (!sync) throw syncNotFound(id);
    return sync;
  }

  /**
   * A sync always writes a new branch: the name must not be a branch, nor a directory of one
   * (git cannot hold both `a` and `a/b`), nor another sync's.
   */
  private async assertNameFree(deploymentId: number, name: string): Promise<void> {
    const parts = name.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    for (const candidate of prefixes) {
      if (await this.imports.branchExists(deploymentId, candidate)) throw branchExists(name);
    }
    if (await this.repository.branchTaken(deploymentId, name)) throw branchExists(name);
  }
}

async function checkRef(ref: string): Promise<void> {
  if (ref.trim() === '') {
    throw dbtSyncError(
      'invalid_dbt_ref',
      'ref must not be empty: name a branch or tag of the dbt repository, or leave ref out to read the integration’s branch',
    );
  }
  if (looksLikeCommitSha(ref)) {
    throw dbtSyncError(
      'invalid_dbt_ref',
      `ref ${JSON.stringify(ref)} looks like a commit SHA; a sync reads a branch or a tag of the dbt repository`,
    );
  }
  if (!(await isValidRefName(ref, true))) {
    throw dbtSyncError('invalid_dbt_ref', `ref ${JSON.stringify(ref)} is not a valid git branch or tag name`);
  }
}

const branchExists = (name: string) =>
  dbtSyncError(
    'branch_exists',
    `Branch ${name} exists (or clashes with a branch named like its path); a sync writes a new branch: ` +
      'choose another branchName, or leave it out for a generated one',
  );

const HISTORY_NAME: Record<string, string> = {
  queued: 'queued',
  running: 'running',
  succeeded: 'COMPLETED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
};

function finished(sync: Pick<SyncViewRow, 'id' | 'runStatus'>) {
  return dbtSyncError(
    'dbt_sync_finished',
    `dbt sync ${sync.id} has finished (${HISTORY_NAME[sync.runStatus] ?? sync.runStatus}): there is nothing to cancel`,
  );
}

function assertCompleted(sync: SyncViewRow): void {
  if (sync.runStatus === 'succeeded') return;
  const state =
    sync.runStatus === 'queued' || sync.runStatus === 'running'
      ? 'is still running: poll its status until COMPLETED'
      : `ended ${HISTORY_NAME[sync.runStatus]}, so it has no result`;
  throw dbtSyncError('dbt_sync_not_completed', `dbt sync ${sync.id} ${state}`);
}

/** Why a failed sync stopped, with the phase that failed. */
function failureOf(sync: SyncViewRow): string {
  const error = sync.runError ?? 'failed';
  return sync.runPhase ? `${sync.runPhase} failed: ${error}` : error;
}

function toRun(sync: SyncViewRow): DbtSyncRunDto {
  const ended = ENDED.has(sync.runStatus);
  const failed = sync.runStatus === 'failed';
  return {
    syncJobId: sync.id,
    deploymentId: sync.deploymentId,
    branchName: sync.branchName,
    source: sync.source,
    startedAt: sync.startedAt,
    status: HISTORY_STATUS[sync.runStatus],
    trigger: sync.trigger,
    completedAt: ended ? sync.finishedAt : null,
    durationMs: ended ? sync.durationMs : null,
    errorMessage: failed ? (sync.runError ?? 'failed') : null,
    failedPhase: failed ? sync.runPhase : null,
    gitRef: sync.gitRef,
    lastStage:
      sync.runStatus === 'succeeded' ? 'COMPLETED' : sync.runPhase ? stageOfPhase(sync.runPhase) : null,
    phases: ended ? sync.phases : null,
    stats: sync.stats,
    triggerContext: null,
    userId: sync.userId,
  };
}
