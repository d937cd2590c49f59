import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { runJoinSql } from '../../core/queue/job-runs.service.js';
import type { RunStatus } from '../../core/queue/entities/job-run.entity.js';
import type { SyncPhaseRecord, SyncStatsRecord } from './entities/dbt-sync.entity.js';

export interface IntegrationRow {
  deploymentId: number;
  accountId: number;
  repositoryUrl: string;
  branch: string;
  projectRoot: string;
  credentialsSealed: string | null;
  updatedAt: string;
}

export interface NewSyncRow {
  id: string;
  accountId: number;
  deploymentId: number;
  runId: string;
  userId: number;
  authorEmail: string;
  trigger: string;
  source: string;
  output: string;
  gitRef: string | null;
  repositoryUrl: string | null;
  projectRoot: string | null;
  baseBranch: string;
  branchName: string;
  /** A posted manifest as read at start (`manifestToJson`), gzipped. */
  manifestGz: Buffer | null;
}

/** What the job reads of its sync. */
export interface SyncWorkRow {
  id: string;
  accountId: number;
  deploymentId: number;
  runId: string;
  authorEmail: string;
  source: 'git' | 'manifest';
  output: 'branch' | 'files';
  gitRef: string | null;
  repositoryUrl: string | null;
  projectRoot: string | null;
  baseBranch: string;
  branchName: string;
  /** The run ended (`done_at`): succeeded, or failed or cancelled and told so. */
  done: boolean;
  /** Ended with its result recorded. */
  succeeded: boolean;
}

/** An ended sync as `dbt_sync.finished` tells it (besides how it ended). */
export interface EndedSyncRow {
  accountId: number;
  syncJobId: string;
  deploymentId: number;
  branchName: string;
  source: string;
  output: string;
  trigger: string;
  gitRef: string | null;
  userId: number | null;
  startedAt: string;
  completedAt: string;
  durationMs: number;
  stats: SyncStatsRecord | null;
  phases: SyncPhaseRecord[] | null;
  commitSha: string | null;
  buildId: number | null;
}

const ENDED_COLUMNS = `account_id AS "accountId", id AS "syncJobId", deployment_id AS "deploymentId",
  branch_name AS "branchName", source, output, trigger, git_ref AS "gitRef", user_id AS "userId",
  ${isoSql('created_at')} AS "startedAt", ${isoSql('done_at')} AS "completedAt",
  GREATEST(0, round(extract(epoch FROM (done_at - created_at)) * 1000))::int AS "durationMs",
  stats, phases, commit_sha AS "commitSha", build_id AS "buildId"`;

/** A sync with its run, as the reads show it. */
export interface SyncViewRow {
  id: string;
  deploymentId: number;
  runId: string;
  userId: number | null;
  trigger: string;
  source: string;
  output: string;
  gitRef: string | null;
  branchName: string;
  stats: SyncStatsRecord | null;
  phases: SyncPhaseRecord[] | null;
  runStatus: RunStatus;
  runPhase: string | null;
  runError: string | null;
  cancelRequested: boolean;
  startedAt: string;
  finishedAt: string | null;
  /** From the database's clock, never negative; null until the run has finished. */
  durationMs: number | null;
  updatedAt: string;
}

const INTEGRATION_COLUMNS = `deployment_id AS "deploymentId", account_id AS "accountId",
  repository_url AS "repositoryUrl", branch, project_root AS "projectRoot",
  credentials_sealed AS "credentialsSealed", ${isoSql('updated_at')} AS "updatedAt"`;

const SYNC_VIEW = `SELECT s.id, s.deployment_id AS "deploymentId", s.run_id::text AS "runId", s.user_id AS "userId",
    s.trigger, s.source, s.output, s.git_ref AS "gitRef", s.branch_name AS "branchName", s.stats, s.phases,
    r.status AS "runStatus", r.phase AS "runPhase", r.error AS "runError",
    r.cancel_requested_at IS NOT NULL AS "cancelRequested",
    ${isoSql('s.created_at')} AS "startedAt", ${isoSql('r.finished_at')} AS "finishedAt",
    CASE WHEN r.finished_at IS NULL THEN NULL
         ELSE GREATEST(0, round(extract(epoch FROM (r.finished_at - s.created_at)) * 1000))::int END AS "durationMs",
    ${isoSql('GREATEST(s.updated_at, r.started_at, r.cancel_requested_at, r.finished_at)')} AS "updatedAt"
  FROM dbt_syncs s ${runJoinSql('s.run_id', 'r')}`;

/** Every statement on the dbt sync tables: `dbt_integrations`, `dbt_syncs`, `dbt_sync_files`. */
@Injectable()
export class DbtSyncRepository {
  constructor(private readonly db: Database) {}

  // --- Integrations -------------------------------------------------------------------------------

  integration(deploymentId: number, lock = false): Promise<IntegrationRow | undefined> {
    return this.db.one<IntegrationRow>(
      `SELECT ${INTEGRATION_COLUMNS} FROM dbt_integrations WHERE deployment_id = :deploymentId${lock ? ' FOR UPDATE' : ''}`,
      { deploymentId },
    );
  }

  async upsertIntegration(row: Omit<IntegrationRow, 'updatedAt'>): Promise<IntegrationRow> {
    const saved = await this.db.one<IntegrationRow>(
      `INSERT INTO dbt_integrations (deployment_id, account_id, repository_url, branch, project_root, credentials_sealed)
       VALUES (:deploymentId, :accountId, :repositoryUrl, :branch, :projectRoot, :credentialsSealed)
       ON CONFLICT (deployment_id) DO UPDATE SET repository_url = EXCLUDED.repository_url,
         branch = EXCLUDED.branch, project_root = EXCLUDED.project_root,
         credentials_sealed = EXCLUDED.credentials_sealed, updated_at = now()
       RETURNING ${INTEGRATION_COLUMNS}`,
      { ...row },
    );
    return saved!;
  }

  // --- Syncs --------------------------------------------------------------------------------------

  async insert(row: NewSyncRow): Promise<void> {
    await this.db.query(
      `INSERT INTO dbt_syncs (id, account_id, deployment_id, run_id, user_id, author_email, trigger, source, output,
         git_ref, repository_url, project_root, base_branch, branch_name, manifest_gz, manifest_read)
       VALUES (:id, :accountId, :deploymentId, :runId, :userId, :authorEmail, :trigger, :source, :output,
         :gitRef, :repositoryUrl, :projectRoot, :baseBranch, :branchName, :manifestGz, :manifestRead)`,
      { ...row, manifestRead: row.manifestGz !== null },
    );
  }

  /** Whether a sync of the deployment took (or takes) this branch name. */
  async branchTaken(deploymentId: number, branchName: string): Promise<boolean> {
    const row = await this.db.one(
      `SELECT 1 FROM dbt_syncs WHERE deployment_id = :deploymentId AND branch_name = :branchName`,
      { deploymentId, branchName },
    );
    return row !== undefined;
  }

  work(id: string): Promise<SyncWorkRow | undefined> {
    return this.db.one<SyncWorkRow>(
      `SELECT id, account_id AS "accountId", deployment_id AS "deploymentId", run_id::text AS "runId",
         author_email AS "authorEmail", source, output, git_ref AS "gitRef", repository_url AS "repositoryUrl",
         project_root AS "projectRoot", base_branch AS "baseBranch", branch_name AS "branchName",
         done_at IS NOT NULL AS done, done_at IS NOT NULL AND stats IS NOT NULL AS succeeded
       FROM dbt_syncs WHERE id = :id`,
      { id },
    );
  }

  /** The posted manifest, gzipped, and whether it is stored as read at start; null once dropped. */
  async manifest(id: string): Promise<{ gz: Buffer; read: boolean } | null> {
    const row = await this.db.one<{ gz: Buffer | null; read: boolean }>(
      `SELECT manifest_gz AS gz, manifest_read AS read FROM dbt_syncs WHERE id = :id`,
      { id },
    );
    return row?.gz ? { gz: row.gz, read: row.read } : null;
  }

  view(deploymentId: number, id: string): Promise<SyncViewRow | undefined> {
    return this.db.one<SyncViewRow>(`${SYNC_VIEW} WHERE s.id = :id AND s.deployment_id = :deploymentId`, {
      id,
      deploymentId,
    });
  }

  /**
   * A page of the deployment's syncs, newest first (by run id, which grows with each start),
   * after the sync of run `afterRunId`; `runStatuses` and `trigger` filter when given.
   */
  page(q: {
    deploymentId: number;
    runStatuses: string[] | null;
    trigger: string | null;
    afterRunId: string | null;
    limit: number;
  }): Promise<SyncViewRow[]> {
    const where = [
      's.deployment_id = :deploymentId',
      ...(q.runStatuses ? ['r.status = ANY(:statuses)'] : []),
      ...(q.trigger ? ['s.trigger = :trigger'] : []),
      ...(q.afterRunId ? ['s.run_id < :afterRunId::bigint'] : []),
    ];
    return this.db.query<SyncViewRow>(
      `${SYNC_VIEW} WHERE ${where.join(' AND ')} ORDER BY s.run_id DESC LIMIT :limit`,
      {
        deploymentId: q.deploymentId,
        limit: q.limit,
        ...(q.runStatuses ? { statuses: q.runStatuses } : {}),
        ...(q.trigger ? { trigger: q.trigger } : {}),
        ...(q.afterRunId ? { afterRunId: q.afterRunId } : {}),
      },
    );
  }

  /** The status moved (a phase began): `updatedAt` of the status. */
  async touch(id: string): Promise<void> {
    await this.db.query(`UPDATE dbt_syncs SET updated_at = clock_timestamp() WHERE id = :id`, { id });
  }

  /** The timings of an attempt that ended without finishing the work (failed, cancelled, retried). */
  async recordPhases(id: string, phases: SyncPhaseRecord[]): Promise<void> {
    await this.db.query(
      `UPDATE dbt_syncs SET phases = :phases::jsonb, updated_at = clock_timestamp() WHERE id = :id AND done_at IS NULL`,
      { id, phases: JSON.stringify(phases) },
    );
  }

  /**
   * The work is done: its outcome, its timings; the posted manifest is no longer needed. Compare
   * and set: the sync as it ended, or undefined (nothing written) when it had ended before.
   */
  finish(
    id: string,
    outcome: {
      stats: SyncStatsRecord;
      phases: SyncPhaseRecord[];
      commitSha: string | null;
      buildId: number | null;
    },
  ): Promise<EndedSyncRow | undefined> {
    return this.db.one<EndedSyncRow>(
      `UPDATE dbt_syncs SET stats = :stats::jsonb, phases = :phases::jsonb, commit_sha = :commitSha,
         build_id = :buildId, done_at = clock_timestamp(), updated_at = clock_timestamp(), manifest_gz = NULL
       WHERE id = :id AND done_at IS NULL
       RETURNING ${ENDED_COLUMNS}`,
      {
        id,
        stats: JSON.stringify(outcome.stats),
        phases: JSON.stringify(outcome.phases),
        commitSha: outcome.commitSha,
        buildId: outcome.buildId,
      },
    );
  }

  /**
   * A run that ended without succeeding (failed for good, cancelled): marked ended, by compare and
   * set. The sync as it ended, or undefined when it had ended before.
   */
  markEnded(id: string): Promise<EndedSyncRow | undefined> {
    return this.db.one<EndedSyncRow>(
      `UPDATE dbt_syncs SET done_at = clock_timestamp() WHERE id = :id AND done_at IS NULL
       RETURNING ${ENDED_COLUMNS}`,
      { id },
    );
  }

  async dropManifest(id: string): Promise<void> {
    await this.db.query(
      `UPDATE dbt_syncs SET manifest_gz = NULL WHERE id = :id AND manifest_gz IS NOT NULL`,
      {
        id,
      },
    );
  }

  /**
   * Drops the posted manifests of the deployment's syncs whose runs ended without their job
   * dropping it (a run failed by the recovery sweep after its workers died).
   */
  async dropEndedManifests(deploymentId: number): Promise<void> {
    await this.db.query(
      `UPDATE dbt_syncs s SET manifest_gz = NULL FROM (SELECT s.id FROM dbt_syncs s ${runJoinSql('s.run_id', 'r')}
         WHERE s.deployment_id = :deploymentId AND s.manifest_gz IS NOT NULL
           AND r.status IN ('succeeded', 'failed', 'cancelled')) ended
       WHERE s.id = ended.id`,
      { deploymentId },
    );
  }

  // --- Generated files ----------------------------------------------------------------------------

  /** The generated files of a sync, replacing any an earlier attempt stored. */
  async replaceFiles(
    id: string,
    files: ReadonlyArray<{ path: string; content: string | null }>,
  ): Promise<void> {
    await this.db.query(`DELETE FROM dbt_sync_files WHERE sync_id = :id`, { id });
    if (files.length === 0) return;
    await this.db.query(
      `INSERT INTO dbt_sync_files (sync_id, path, content)
       SELECT :id, f.path, f.content FROM unnest(:paths::varchar[], :contents::text[]) AS f(path, content)`,
      { id, paths: files.map((f) => f.path), contents: files.map((f) => f.content) },
    );
  }

  filePaths(id: string): Promise<Array<{ path: string }>> {
    return this.db.query<{ path: string }>(
      `SELECT path FROM dbt_sync_files WHERE sync_id = :id ORDER BY path COLLATE "C"`,
      { id },
    );
  }

  filesPage(
    id: string,
    afterPath: string | null,
    limit: number,
  ): Promise<Array<{ path: string; content: string }>> {
    return this.db.query<{ path: string; content: string }>(
      `SELECT path, coalesce(content, '') AS content FROM dbt_sync_files
       WHERE sync_id = :id${afterPath === null ? '' : ' AND path COLLATE "C" > :afterPath'}
       ORDER BY path COLLATE "C" LIMIT :limit`,
      { id, limit, ...(afterPath === null ? {} : { afterPath }) },
    );
  }
}
