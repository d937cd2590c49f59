import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccessService } from '../../core/auth/access.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { folderPathSql, isoSql, ownerSql } from './content.sql.js';
import { validateDashboardConfig } from './dashboards.js';
import { DashboardConfigDraftInputDto } from './dto/dashboard.dto.js';
import type { WorkbookDto } from './dto/workbook.dto.js';
import { workbooksError } from './workbooks.errors.js';

/*
 * What the workbook services (WorkbooksService, DashboardsService, WorkbookCopyService) share:
 * the one SQL that shapes a workbook and its published dashboard, metadata parsing, and the
 * lookups with their access checks.
 */

export type Json = Record<string, unknown>;

/** A published dashboard as JSON, from the `dashboards` row joined as `d` (NULL without one). */
export const DASHBOARD_JSON = `CASE WHEN d.id IS NULL THEN NULL ELSE json_build_object('id', d.id, 'publicId', d.public_id,
  'deploymentId', d.deployment_id, 'workbookId', d.workbook_id, 'status', d.status, 'allowEmbed', d.allow_embed,
  'config', d.config, 'versionNumber', d.version_number, 'versionId', d.id, 'reportSnapshots', '[]'::json,
  'title', d.title, 'createdBy', d.created_by) END`;

/** Every field of the Workbook shape, from one row of {@link WORKBOOK_FROM}. */
export const WORKBOOK_COLUMNS = `w.id, w.name, w.slug, w.meta, w.calculated_fields AS "calculatedFields",
  w.deployment_id AS "deploymentId", w.folder_id AS "folderId", ${folderPathSql('f')} AS "folderPath",
  ${isoSql('w.created_at')} AS "createdAt", ${isoSql('w.updated_at')} AS "updatedAt", w.created_by AS "createdBy",
  w.user_id AS "userId", ${ownerSql('u')} AS "user", 'WORKBOOK' AS type, w.dashboard_draft AS "dashboardDraft",
  d.config AS "dashboardPublished", ${DASHBOARD_JSON} AS "publishedDashboard", NULL::boolean AS "isFavorite"`;

export const WORKBOOK_FROM = `workbooks w LEFT JOIN folders f ON f.id = w.folder_id LEFT JOIN users u ON u.id = w.user_id
  LEFT JOIN dashboards d ON d.workbook_id = w.id`;

export const notFound = (type: 'Folder' | 'Workbook', id: number) =>
  workbooksError(
    type === 'Folder' ? 'folder_not_found' : 'workbook_not_found',
    `${type} ${id} was not found`,
  );

/** A jsonb parameter: the JSON text, or SQL NULL for null and undefined. */
export const jsonParam = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));

/** Metadata with a `dashboardDraft` key taken out: undefined when absent, null to clear it. */
export interface MetaParts {
  meta: Json;
  draft: Json | null | undefined;
}

/** Takes a `dashboardDraft` key out of metadata, validated as a draft. */
export async function splitMeta(meta: Json): Promise<MetaParts> {
  if (!Object.prototype.hasOwnProperty.call(meta, 'dashboardDraft')) return { meta, draft: undefined };
  const { dashboardDraft, ...rest } = meta;
  const draft =
    dashboardDraft === null
      ? null
      : await validateDashboardConfig(DashboardConfigDraftInputDto, dashboardDraft, 'meta.dashboardDraft');
  return { meta: rest, draft };
}

/** A located workbook: its id and folder (`null` at the root). */
export interface WorkbookRef {
  id: number;
  folderId: number | null;
}

/** The lookups every workbook service starts with, each with its 404/403 checks. */
@Injectable()
export class WorkbookLookup {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
  ) {}

  /** The Workbook shape of one row, in one query. */
  async fetch(accountId: number, workbookId: number): Promise<WorkbookDto> {
    const [row] = await this.dataSource.query<WorkbookDto[]>(
      `SELECT ${WORKBOOK_COLUMNS} FROM ${WORKBOOK_FROM} WHERE w.id = $1 AND w.account_id = $2`,
      [workbookId, accountId],
    );
    if (!row) throw notFound('Workbook', workbookId);
    return row;
  }

  /** 404 unless the deployment is in the caller's account. */
  async assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    if (!(await this.deployments.existsInAccount(actor.accountId, deploymentId)))
      throw workbooksError('deployment_not_found', `Deployment ${deploymentId} was not found`);
  }

  /**
   * Finds a workbook of the deployment and checks `action` on it: 404 when the deployment or
   * workbook is missing or unreadable, 403 when readable without `action`.
   */
  async locate(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    action: Action,
  ): Promise<WorkbookRef> {
    const [row] = await this.dataSource.query<Array<{ id: number | null; folderId: number | null }>>(
      `SELECT w.id, w.folder_id AS "folderId"
       FROM deployments dp LEFT JOIN workbooks w ON w.id = $3 AND w.deployment_id = dp.id
       WHERE dp.id = $1 AND dp.account_id = $2`,
      [deploymentId, actor.accountId, workbookId],
    );
    if (!row) throw workbooksError('deployment_not_found', `Deployment ${deploymentId} was not found`);
    if (row.id === null) throw notFound('Workbook', workbookId);
    await this.access.requireAccess(actor, 'Workbook', workbookId, action);
    return { id: row.id, folderId: row.folderId };
  }
}
