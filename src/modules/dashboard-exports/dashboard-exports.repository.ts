import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { runJoinSql } from '../../core/queue/job-runs.service.js';
import type { RunStatus } from '../../core/queue/entities/job-run.entity.js';
import type { ExportOverridesRecord } from './entities/dashboard-export.entity.js';

export interface NewExportRow {
  id: string;
  accountId: number;
  deploymentId: number;
  dashboardId: number;
  userId: number;
  runId: string;
  format: 'png' | 'pdf';
  overrides: ExportOverridesRecord;
  subjectType: 'USER' | 'EMBED_USER';
  subjectId: number;
  securityContext: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date;
}

/** An export as its owner polls it: its run's state, and whether the file is stored. */
export interface ExportStateRow {
  id: string;
  runStatus: RunStatus;
  runError: string | null;
  progressCurrent: number | null;
  progressTotal: number | null;
  hasFile: boolean;
  contentType: string | null;
  format: 'png' | 'pdf';
}

/** What the render job reads of its export. */
export interface ExportWorkRow {
  id: string;
  accountId: number;
  deploymentId: number;
  dashboardId: number;
  format: 'png' | 'pdf';
  overrides: ExportOverridesRecord;
  securityContext: Record<string, unknown>;
  expiresAt: string;
  hasFile: boolean;
}

/** Every statement on `dashboard_exports`. Times are the caller's clock (`:now`), never `now()`. */
@Injectable()
export class DashboardExportsRepository {
  constructor(private readonly db: Database) {}

  /** Serialises the starts of one account until the unit of work ends (the in-flight count, then the insert). */
  async lockAccount(accountId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `dashboard-exports:${accountId}`,
    });
  }

  /** The account's exports not expired whose run is queued or running. */
  async inFlight(accountId: number, now: Date): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM dashboard_exports e ${runJoinSql('e.run_id', 'r')}
       WHERE e.account_id = :accountId AND e.expires_at > :now AND r.status IN ('queued', 'running')`,
      { accountId, now },
    );
    return row!.n;
  }

  async insert(row: NewExportRow): Promise<void> {
    await this.db.query(
      `INSERT INTO dashboard_exports (id, account_id, deployment_id, dashboard_id, user_id, run_id, format, overrides,
         subject_type, subject_id, security_context, created_at, expires_at)
       VALUES (:id, :accountId, :deploymentId, :dashboardId, :userId, :runId, :format, :overrides::jsonb,
         :subjectType, :subjectId, :securityContext::jsonb, :createdAt, :expiresAt)`,
      {
        ...row,
        overrides: JSON.stringify(row.overrides),
        securityContext: JSON.stringify(row.securityContext),
      },
    );
  }

  /** The user's export in this deployment and account, unless it expired. */
  state(
    at: { accountId: number; deploymentId: number; userId: number },
    id: string,
    now: Date,
  ): Promise<ExportStateRow | undefined> {
    return this.db.one<ExportStateRow>(
      `SELECT e.id, r.status AS "runStatus", r.error AS "runError", r.progress_current AS "progressCurrent",
         r.progress_total AS "progressTotal", e.content IS NOT NULL AS "hasFile", e.content_type AS "contentType",
         e.format
       FROM dashboard_exports e ${runJoinSql('e.run_id', 'r')}
       WHERE e.id = :id AND e.account_id = :accountId AND e.deployment_id = :deploymentId
         AND e.user_id = :userId AND e.expires_at > :now`,
      { id, ...at, now },
    );
  }

  /** The stored file of an export (null until rendered). */
  async content(id: string): Promise<Buffer | null> {
    const row = await this.db.one<{ content: Buffer | null }>(
      `SELECT content FROM dashboard_exports WHERE id = :id`,
      { id },
    );
    return row?.content ?? null;
  }

  work(id: string): Promise<ExportWorkRow | undefined> {
    return this.db.one<ExportWorkRow>(
      `SELECT id, account_id AS "accountId", deployment_id AS "deploymentId", dashboard_id AS "dashboardId",
         format, overrides, security_context AS "securityContext", ${isoSql('expires_at')} AS "expiresAt",
         content IS NOT NULL AS "hasFile"
       FROM dashboard_exports WHERE id = :id`,
      { id },
    );
  }

  /** Stores the file once: an export whose file is stored already keeps it. True when this call stored it. */
  async storeFile(id: string, content: Buffer, contentType: string, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE dashboard_exports SET content = :content, content_type = :contentType, completed_at = :now
       WHERE id = :id AND content IS NULL RETURNING id`,
      { id, content, contentType, now },
    );
    return rows.length > 0;
  }

  /** Ids of exports expired at `now`, oldest first. */
  async expired(now: Date, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM dashboard_exports WHERE expires_at <= :now ORDER BY expires_at LIMIT :limit`,
      { now, limit },
    );
    return rows.map((r) => r.id);
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`DELETE FROM dashboard_exports WHERE id = ANY(:ids::uuid[])`, { ids });
  }
}
