import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { DashboardDto, WorkbookDashboardDto } from './dto/dashboard.dto.js';
import { jsonParam, type Json } from './workbooks.repository.js';
import { WorkspaceContent } from './workspace-content.js';
import { dashboardJsonSql } from './workspace.fragments.js';

/** What a new published dashboard is made of. */
export interface NewDashboard {
  accountId: number;
  deploymentId: number;
  workbookId: number;
  publicId: string;
  title: string | null;
  config: Json;
  allowEmbed: boolean;
  userId: number;
}

/** A published dashboard as the content impact reads it: its name and config. */
export interface PublishedDashboardRow {
  id: number;
  /** Its title, or its workbook's name when it has none. */
  name: string;
  workbookId: number;
  config: unknown;
}

/**
 * All SQL on `dashboards` (a workbook's published dashboard) and on the draft saved on the
 * workbook row, which the dashboard endpoints edit.
 */
@Injectable()
export class DashboardsRepository {
  constructor(
    private readonly db: Database,
    private readonly content: WorkspaceContent,
  ) {}

  /**
   * Sets the "allow signed embedding" flag of the workbook's dashboard; its id and account, or
   * undefined when it has none.
   */
  setAllowEmbed(
    workbookId: number,
    allowEmbed: boolean,
  ): Promise<{ id: number; accountId: number } | undefined> {
    return this.db.one(
      `UPDATE dashboards SET allow_embed = :allowEmbed, updated_at = now() WHERE workbook_id = :workbookId
       RETURNING id, account_id AS "accountId"`,
      { workbookId, allowEmbed },
    );
  }

  /** Sets the flag of the account's dashboard `publicId`; undefined when there is none. */
  setPublicAllowEmbed(
    accountId: number,
    publicId: string,
    allowEmbed: boolean,
  ): Promise<{ id: number; publicId: string; allowEmbed: boolean } | undefined> {
    return this.db.one(
      `UPDATE dashboards SET allow_embed = :allowEmbed, updated_at = now()
       WHERE public_id = :publicId AND account_id = :accountId
       RETURNING id, public_id AS "publicId", allow_embed AS "allowEmbed"`,
      { publicId, accountId, allowEmbed },
    );
  }

  /** Every published dashboard of the account's deployment, with its name and config (one query). */
  published(accountId: number, deploymentId: number): Promise<PublishedDashboardRow[]> {
    return this.db.query<PublishedDashboardRow>(
      `SELECT d.id, COALESCE(NULLIF(btrim(d.title), ''), w.name) AS name, d.workbook_id AS "workbookId", d.config
       FROM dashboards d JOIN workbooks w ON w.id = d.workbook_id
       WHERE d.account_id = :accountId AND d.deployment_id = :deploymentId AND d.status = 'published'`,
      { accountId, deploymentId },
    );
  }

  async saveDraft(workbookId: number, draft: unknown): Promise<void> {
    await this.db.query(
      `UPDATE workbooks SET dashboard_draft = :draft::jsonb, updated_at = now() WHERE id = :workbookId`,
      { workbookId, draft: jsonParam(draft) },
    );
  }

  /** The draft and published config of a workbook; undefined when it is gone. */
  ofWorkbook(workbookId: number): Promise<WorkbookDashboardDto | undefined> {
    return this.db.one<WorkbookDashboardDto>(
      `SELECT w.dashboard_draft AS "dashboardDraft", d.config AS "dashboardPublished"
       FROM workbooks w LEFT JOIN dashboards d ON d.workbook_id = w.id WHERE w.id = :workbookId`,
      { workbookId },
    );
  }

  /** Locks the workbook (publishes of one dashboard then serialise) and reads its draft. */
  lockDraft(workbookId: number): Promise<{ draft: Json | null } | undefined> {
    return this.db.one(`SELECT dashboard_draft AS draft FROM workbooks WHERE id = :workbookId FOR UPDATE`, {
      workbookId,
    });
  }

  /** The published dashboard of a workbook (id, title, config), if any. */
  publishedOf(workbookId: number): Promise<{ id: number; title: string | null; config: Json } | undefined> {
    return this.db.one(`SELECT id, title, config FROM dashboards WHERE workbook_id = :workbookId`, {
      workbookId,
    });
  }

  /** The dashboards of a workbook being deleted (their grants go with it): what identifies each. */
  ofWorkbookForDelete(
    workbookId: number,
  ): Promise<Array<{ id: number; publicId: string; title: string | null }>> {
    return this.db.query(
      `SELECT id, public_id AS "publicId", title FROM dashboards WHERE workbook_id = :workbookId`,
      { workbookId },
    );
  }

  /** Replaces the published config and bumps the version; a title or allowEmbed sent replaces those. */
  async republish(
    dashboardId: number,
    change: { config: Json; title: string | null | undefined; allowEmbed: boolean | null },
  ): Promise<void> {
    await this.db.query(
      `UPDATE dashboards SET config = :config::jsonb, version_number = version_number + 1, status = 'published',
         title = CASE WHEN :setTitle::boolean THEN :title::varchar ELSE title END,
         allow_embed = COALESCE(:allowEmbed::boolean, allow_embed), updated_at = now()
       WHERE id = :dashboardId`,
      {
        dashboardId,
        config: JSON.stringify(change.config),
        setTitle: change.title !== undefined,
        title: change.title ?? null,
        allowEmbed: change.allowEmbed,
      },
    );
  }

  /** Inserts a published dashboard at version 1; returns its id. */
  async insert(d: NewDashboard): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO dashboards (account_id, deployment_id, workbook_id, public_id, title, config, status,
         allow_embed, version_number, created_by)
       VALUES (:accountId, :deploymentId, :workbookId, :publicId, :title, :config::jsonb, 'published',
         :allowEmbed, 1, :userId) RETURNING id`,
      { ...d, config: JSON.stringify(d.config) },
    );
    return row!.id;
  }

  /** The Dashboard shape of one published dashboard. */
  async get(dashboardId: number): Promise<DashboardDto> {
    const row = await this.db.one<{ dashboard: DashboardDto }>(
      `SELECT ${dashboardJsonSql('d', this.content.snapshots().jsonSql)} AS dashboard FROM dashboards d WHERE d.id = :dashboardId`,
      { dashboardId },
    );
    return row!.dashboard;
  }
}
