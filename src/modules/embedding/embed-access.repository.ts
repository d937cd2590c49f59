import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { DashboardDto } from '../workspace/dto/dashboard.dto.js';
import { reportSnapshotsJsonSql } from '../reports/reports.fragments.js';
import { dashboardAllowEmbedSql, publishedDashboardSql } from '../workspace/workspace.fragments.js';

/** A published dashboard as an embed user reaches it, with who it is shared with. */
export interface EmbeddableRow {
  dashboard: DashboardDto;
  allowEmbed: boolean;
  sharedWithAll: boolean;
  sharedWithTenant: boolean;
}

/** Who may open a workbook's dashboard, as stored. */
export interface EmbedAccessRow {
  allowEmbed: boolean | null;
  /** The share with every embed user, if any. */
  allId: number | null;
  tenants: Array<{ embedTenantName: string; groupId: number }>;
}

/**
 * SQL over `workbook_embed_access` (shares of a workbook's dashboard with embed tenants, or with
 * every embed user: `tenant_id` NULL), reading the dashboard's "allow signed embedding" flag (kept
 * on the workspace module's row) through its fragments.
 */
@Injectable()
export class EmbedAccessRepository {
  constructor(private readonly db: Database) {}

  /** Shares the workbook's dashboard with the tenant, or with every embed user when `tenantId` is null. */
  async grant(accountId: number, workbookId: number, tenantId: number | null): Promise<void> {
    if (tenantId === null) {
      await this.db.query(
        `INSERT INTO workbook_embed_access (account_id, workbook_id, tenant_id) VALUES (:accountId, :workbookId, NULL)
         ON CONFLICT (workbook_id) WHERE tenant_id IS NULL DO NOTHING`,
        { accountId, workbookId },
      );
    } else {
      await this.db.query(
        `INSERT INTO workbook_embed_access (account_id, workbook_id, tenant_id) VALUES (:accountId, :workbookId, :tenantId)
         ON CONFLICT (workbook_id, tenant_id) WHERE tenant_id IS NOT NULL DO NOTHING`,
        { accountId, workbookId, tenantId },
      );
    }
  }

  /** Ends the share with the tenant, or with every embed user when `tenantId` is null. */
  async revoke(workbookId: number, tenantId: number | null): Promise<void> {
    await this.db.query(
      `DELETE FROM workbook_embed_access WHERE workbook_id = :workbookId AND tenant_id IS NOT DISTINCT FROM :tenantId`,
      { workbookId, tenantId },
    );
  }

  /** Whether the workbook's dashboard is shared with every embed user, or with the tenant named `tenantName`. */
  async sharedWith(accountId: number, workbookId: number, tenantName: string): Promise<boolean> {
    const row = await this.db.one<{ shared: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM workbook_embed_access a LEFT JOIN embed_tenants t ON t.id = a.tenant_id
         WHERE a.workbook_id = :workbookId AND a.account_id = :accountId
           AND (a.tenant_id IS NULL OR t.name = :tenantName)) AS shared`,
      { accountId, workbookId, tenantName },
    );
    return row!.shared;
  }

  /**
   * The tenants of the account each of `workbookIds` is shared with (every tenant of the account
   * when it is shared with every embed user), by workbook; workbooks shared with nobody are left out.
   */
  tenantsByWorkbook(
    accountId: number,
    workbookIds: readonly number[],
  ): Promise<Array<{ workbookId: number; tenants: string[] }>> {
    return this.db.query(
      `SELECT a.workbook_id AS "workbookId", array_agg(DISTINCT t.name ORDER BY t.name) AS tenants
       FROM workbook_embed_access a
       JOIN embed_tenants t ON t.account_id = :accountId AND (a.tenant_id IS NULL OR t.id = a.tenant_id)
       WHERE a.account_id = :accountId AND a.workbook_id = ANY(:workbookIds::int[])
       GROUP BY a.workbook_id`,
      { accountId, workbookIds },
    );
  }

  async view(workbookId: number): Promise<EmbedAccessRow> {
    const row = await this.db.one<EmbedAccessRow>(
      `SELECT ${dashboardAllowEmbedSql(':workbookId')} AS "allowEmbed",
         (SELECT id FROM workbook_embed_access WHERE workbook_id = :workbookId AND tenant_id IS NULL) AS "allId",
         COALESCE((SELECT json_agg(json_build_object('embedTenantName', t.name, 'groupId', a.id) ORDER BY t.name)
                   FROM workbook_embed_access a JOIN embed_tenants t ON t.id = a.tenant_id
                   WHERE a.workbook_id = :workbookId), '[]'::json) AS tenants`,
      { workbookId },
    );
    return row!;
  }

  /**
   * The dashboard published as `publicId` in the account and deployment, with whether it is
   * shared with every embed user and with the tenant `tenantId`. One query: embed users open
   * dashboards often.
   */
  embeddable(at: {
    publicId: string;
    accountId: number;
    deploymentId: number;
    tenantId: number;
  }): Promise<EmbeddableRow | undefined> {
    return this.db.one<EmbeddableRow>(
      `SELECT d.dashboard, d.allow_embed AS "allowEmbed",
         EXISTS (SELECT 1 FROM workbook_embed_access a WHERE a.workbook_id = d.workbook_id AND a.tenant_id IS NULL)
           AS "sharedWithAll",
         EXISTS (SELECT 1 FROM workbook_embed_access a WHERE a.workbook_id = d.workbook_id AND a.tenant_id = :tenantId)
           AS "sharedWithTenant"
       FROM ${publishedDashboardSql(
         'd',
         {
           publicId: ':publicId',
           accountId: ':accountId',
           deploymentId: ':deploymentId',
         },
         reportSnapshotsJsonSql,
       )}`,
      { ...at },
    );
  }
}
