import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import { copyName, randomPublicId, repointReportIds } from './dashboards.js';
import type { DuplicateWorkbookDto, WorkbookDto } from './dto/workbook.dto.js';
import { workbooksError } from './workbooks.errors.js';
import { jsonParam, notFound, WorkbookLookup, type Json } from './workbooks.shared.js';

/** Duplication of a workbook with its reports and dashboards. */
@Injectable()
export class WorkbookCopyService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly lookup: WorkbookLookup,
  ) {}

  /**
   * Copies a workbook with its reports, draft and published dashboard (report references in
   * widgets re-pointed at the copies). Grants, view history, placements and signed embedding are
   * not copied. The copy lands next to the source when the caller may edit that folder, else at
   * the root (which needs WorkbookEdit account-wide).
   */
  async duplicate(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: DuplicateWorkbookDto,
  ): Promise<WorkbookDto> {
    await this.lookup.assertDeployment(actor, deploymentId);
    if (dto.shared === true) {
      throw workbooksError(
        'shared_workspace_unavailable',
        'Cloning from the shared workspace is only available to creator-mode embed sessions',
      );
    }
    const source = await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
    let folderId: number | null = null;
    if (source.folderId !== null) {
      const folders = await this.access.map(actor, 'Folder', [source.folderId]);
      if (folders.can(source.folderId, Action.FolderEdit)) folderId = source.folderId;
    }
    if (folderId === null && !actor.actions.has(Action.WorkbookEdit)) {
      throw coreError(
        'forbidden',
        'Duplicating this workbook requires FolderEdit on its folder or the WorkbookEdit action',
      );
    }
    const copyId = await this.dataSource.transaction((m) =>
      this.copyWorkbook(m, actor, deploymentId, workbookId, folderId),
    );
    return this.lookup.fetch(actor.accountId, copyId);
  }

  /** The copy itself, inside the caller's transaction. Returns the new workbook's id. */
  private async copyWorkbook(
    m: EntityManager,
    actor: Principal,
    deploymentId: number,
    sourceId: number,
    folderId: number | null,
  ): Promise<number> {
    const [source] = await m.query<
      Array<{ name: string; meta: Json; calculatedFields: Json; draft: Json | null }>
    >(
      `SELECT name, meta, calculated_fields AS "calculatedFields", dashboard_draft AS draft
       FROM workbooks WHERE id = $1 FOR SHARE`,
      [sourceId],
    );
    if (!source) throw notFound('Workbook', sourceId);
    // New report ids are drawn first, so the copied configs can point at them.
    const reports = await m.query<Array<{ oldId: number; newId: number; hasPublicId: boolean }>>(
      `SELECT id AS "oldId", nextval(pg_get_serial_sequence('reports', 'id'))::int AS "newId",
              public_id IS NOT NULL AS "hasPublicId"
       FROM reports WHERE workbook_id = $1 ORDER BY id`,
      [sourceId],
    );
    const ids = new Map(reports.map((r) => [r.oldId, r.newId]));
    const [copy] = await queryRows<{ id: number }>(
      m,
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, meta, calculated_fields, dashboard_draft,
         user_id, created_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8, $8) RETURNING id`,
      [
        actor.accountId,
        deploymentId,
        folderId,
        copyName(source.name),
        JSON.stringify(source.meta),
        JSON.stringify(source.calculatedFields),
        jsonParam(source.draft && repointReportIds(source.draft, ids)),
        actor.userId,
      ],
    );
    if (reports.length > 0) {
      await m.query(
        `INSERT INTO reports (id, account_id, deployment_id, public_id, folder_id, workbook_id, name, title,
           description, json_query, sql_query, meta, pivot_items, source, version, user_id, created_by)
         SELECT c.new_id, r.account_id, r.deployment_id, c.public_id,
                CASE WHEN r.folder_id IS NULL THEN NULL ELSE $4::int END, $5, r.name, r.title, r.description,
                r.json_query, r.sql_query, r.meta, r.pivot_items, r.source, 1, $6, $6
         FROM unnest($1::int[], $2::int[], $3::text[]) AS c(old_id, new_id, public_id)
         JOIN reports r ON r.id = c.old_id`,
        [
          reports.map((r) => r.oldId),
          reports.map((r) => r.newId),
          reports.map((r) => (r.hasPublicId ? randomPublicId() : null)),
          folderId,
          copy.id,
          actor.userId,
        ],
      );
    }
    const [dashboard] = await m.query<Array<{ title: string | null; config: Json }>>(
      `SELECT title, config FROM dashboards WHERE workbook_id = $1`,
      [sourceId],
    );
    if (dashboard) {
      await m.query(
        `INSERT INTO dashboards (account_id, deployment_id, workbook_id, public_id, title, config, status,
           allow_embed, version_number, created_by)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'published', false, 1, $7)`,
        [
          actor.accountId,
          deploymentId,
          copy.id,
          randomPublicId(),
          dashboard.title,
          JSON.stringify(repointReportIds(dashboard.config, ids)),
          actor.userId,
        ],
      );
    }
    return copy.id;
  }
}
