import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { randomPublicId, validateDashboardConfig } from './dashboards.js';
import {
  DashboardConfigInputDto,
  type DashboardDto,
  type PublishDashboardDto,
  type WorkbookDashboardDto,
  type WorkbookDashboardInputDto,
} from './dto/dashboard.dto.js';
import { workbooksError } from './workbooks.errors.js';
import { DASHBOARD_JSON, jsonParam, notFound, WorkbookLookup, type Json } from './workbooks.shared.js';

/**
 * The dashboards of a workbook: the draft saved on the workbook row and the published dashboard
 * (`dashboards`), which each publish replaces. Needs WorkbookEdit on the workbook.
 */
@Injectable()
export class DashboardsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lookup: WorkbookLookup,
  ) {}

  async updateDashboard(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: WorkbookDashboardInputDto,
  ): Promise<WorkbookDashboardDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    if (dto.dashboardDraft !== undefined) {
      await this.dataSource.query(
        `UPDATE workbooks SET dashboard_draft = $2::jsonb, updated_at = now() WHERE id = $1`,
        [workbookId, jsonParam(dto.dashboardDraft)],
      );
    }
    const [row] = await this.dataSource.query<WorkbookDashboardDto[]>(
      `SELECT w.dashboard_draft AS "dashboardDraft", d.config AS "dashboardPublished"
       FROM workbooks w LEFT JOIN dashboards d ON d.workbook_id = w.id WHERE w.id = $1`,
      [workbookId],
    );
    if (!row) throw notFound('Workbook', workbookId);
    return row;
  }

  /**
   * Publishes `config`, or the current draft when it is omitted: the first publish creates the
   * dashboard with a fresh public id, later ones replace its config and bump `versionNumber`.
   */
  async publish(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: PublishDashboardDto,
  ): Promise<DashboardDto> {
    if (dto.workbookId !== workbookId) {
      throw workbooksError('workbook_id_mismatch', 'workbookId must be the workbook of the path');
    }
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    const dashboardId = await this.dataSource.transaction(async (m) => {
      // Locking the workbook serialises publishes of one dashboard.
      const [workbook] = await m.query<Array<{ draft: Json | null }>>(
        `SELECT dashboard_draft AS draft FROM workbooks WHERE id = $1 FOR UPDATE`,
        [workbookId],
      );
      if (!workbook) throw notFound('Workbook', workbookId);
      let config: Json;
      if (dto.config != null) config = JSON.parse(JSON.stringify(dto.config)) as Json;
      else if (workbook.draft == null) {
        throw workbooksError('nothing_to_publish', 'The workbook has no draft to publish; send a config');
      } else
        config = await validateDashboardConfig(DashboardConfigInputDto, workbook.draft, 'dashboardDraft');
      const [existing] = await m.query<Array<{ id: number }>>(
        `SELECT id FROM dashboards WHERE workbook_id = $1`,
        [workbookId],
      );
      if (dto.dashboardId != null && dto.dashboardId !== existing?.id) {
        throw workbooksError(
          'dashboard_not_found',
          `Dashboard ${dto.dashboardId} is not the published dashboard of this workbook`,
        );
      }
      if (existing) {
        await m.query(
          `UPDATE dashboards SET config = $2::jsonb, version_number = version_number + 1, status = 'published',
             title = CASE WHEN $3::boolean THEN $4::varchar ELSE title END,
             allow_embed = COALESCE($5::boolean, allow_embed), updated_at = now()
           WHERE id = $1`,
          [
            existing.id,
            JSON.stringify(config),
            dto.title !== undefined,
            dto.title ?? null,
            dto.allowEmbed ?? null,
          ],
        );
        return existing.id;
      }
      const rows = await queryRows<{ id: number }>(
        m,
        `INSERT INTO dashboards (account_id, deployment_id, workbook_id, public_id, title, config, status,
           allow_embed, version_number, created_by)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'published', $7, 1, $8) RETURNING id`,
        [
          actor.accountId,
          deploymentId,
          workbookId,
          randomPublicId(),
          dto.title ?? null,
          JSON.stringify(config),
          dto.allowEmbed ?? false,
          actor.userId,
        ],
      );
      return rows[0].id;
    });
    const [dashboard] = await this.dataSource.query<Array<{ dashboard: DashboardDto }>>(
      `SELECT ${DASHBOARD_JSON} AS dashboard FROM dashboards d WHERE d.id = $1`,
      [dashboardId],
    );
    return dashboard.dashboard;
  }
}
