import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import { AccessService, type ResourceRef } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows, uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { folderRefs } from '../workspace/content.sql.js';
import type { CreateReportDto, ReportDto, UpdateReportDto } from './dto/report.dto.js';
import { READ_REPORT_SQL } from './report.sql.js';
import { ReportViews } from './report-views.js';
import {
  isReservedPublicId,
  legacyReportId,
  toReport,
  type ReportAccess,
  type ReportRow,
} from './report.mapper.js';
import { reportsError } from './reports.errors.js';

const DEFINITION_COLUMNS = {
  name: 'name',
  title: 'title',
  description: 'description',
  jsonQuery: 'json_query',
  sqlQuery: 'sql_query',
  meta: 'meta',
  pivotItems: 'pivot_items',
  workbookId: 'workbook_id',
} as const;

/**
 * Reports of a deployment: read, create, update, upsert by public id, move and delete (the list
 * is {@link ReportListService}). Every read is one shaping query (`reportSelectSql`); access is decided by
 * `AccessService`, with folder and workbook grants inherited.
 */
@Injectable()
export class ReportsService implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly views: ReportViews,
    private readonly deployments: DeploymentsService,
  ) {}

  /** A report inherits grants from its workbook and from every folder above it; owners manage it. */
  onModuleInit(): void {
    this.access.register('Report', {
      resolve: async (accountId, ids) => {
        const rows = await queryRows<{
          id: number;
          ownerId: number;
          workbookId: number | null;
          chain: Array<number | null> | null;
        }>(
          this.dataSource,
          `SELECT r.id, r.user_id AS "ownerId", r.workbook_id AS "workbookId", f.ancestor_ids || f.id AS chain
           FROM reports r LEFT JOIN folders f ON f.id = r.folder_id
           WHERE r.account_id = $1 AND r.id = ANY($2)`,
          [accountId, ids],
        );
        return new Map(
          rows.map((r): [number, ResourceRef[]] => [
            r.id,
            [
              { type: 'Report', id: r.id, ownerId: r.ownerId },
              ...(r.workbookId ? [{ type: 'Workbook' as const, id: r.workbookId }] : []),
              ...folderRefs(r.chain),
            ],
          ]),
        );
      },
    });
  }

  /** Reads a report and records that the caller viewed it. */
  async get(actor: Principal, deploymentId: number, reportId: number): Promise<ReportDto> {
    const access = await this.checkRead(actor, reportId);
    const report = await this.read(actor, deploymentId, reportId, access);
    this.views.record(reportId, actor.userId);
    return report;
  }

  /** Reads a report as it is now, without recording a view. */
  async read(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    access?: ReportAccess,
    db: DataSource | EntityManager = this.dataSource,
  ): Promise<ReportDto> {
    const rows = await queryRows<ReportRow>(db, READ_REPORT_SQL, [reportId, deploymentId, actor.accountId]);
    if (!rows[0]) throw notFound(reportId);
    return toReport(rows[0], access ?? (await this.accessFor(actor, [reportId]))(reportId));
  }

  /**
   * 404 unless the caller may read the report; answers what else they may do with it. Callers
   * who read every report account-wide need no query.
   */
  async checkRead(actor: Principal, reportId: number): Promise<ReportAccess> {
    if (actor.actions.has(Action.ReportRead) && actor.actions.has(Action.ReportManage)) {
      return { canEdit: true, canManage: true };
    }
    const map = await this.access.map(actor, 'Report', [reportId]);
    if (!map.can(reportId, Action.ReportRead)) throw notFound(reportId);
    return {
      canEdit: map.can(reportId, Action.ReportEdit),
      canManage: map.can(reportId, Action.ReportManage),
    };
  }

  async create(actor: Principal, deploymentId: number, dto: CreateReportDto): Promise<ReportDto> {
    await this.assertDeployment(actor, deploymentId);
    if (dto.publicId && isReservedPublicId(dto.publicId)) throw reservedPublicId(dto.publicId);
    await this.assertPlacementTargets(actor, deploymentId, dto.folderId ?? null, dto.workbookId ?? null);
    if (!dto.folderId && !dto.workbookId && !actor.actions.has(Action.ReportEdit)) {
      throw coreError('forbidden', 'Creating a report at the workspace root requires the ReportEdit action');
    }
    const name = this.name(dto.name) ?? 'Untitled report';
    try {
      const [row] = await queryRows<{ id: number }>(
        this.dataSource,
        `INSERT INTO reports (account_id, deployment_id, public_id, folder_id, workbook_id, name, title, description,
           json_query, sql_query, meta, pivot_items, source, user_id, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14) RETURNING id`,
        [
          actor.accountId,
          deploymentId,
          dto.publicId ?? null,
          dto.folderId ?? null,
          dto.workbookId ?? null,
          name,
          dto.title ?? null,
          dto.description ?? null,
          dto.jsonQuery ?? null,
          dto.sqlQuery ?? null,
          dto.meta ?? null,
          dto.pivotItems ?? null,
          dto.source ?? null,
          actor.userId,
        ],
      );
      return this.read(actor, deploymentId, row.id, { canEdit: true, canManage: true });
    } catch (e) {
      if (uniqueViolation(e) !== null) {
        throw reportsError('public_id_taken', `publicId ${dto.publicId} is already used by another report`);
      }
      throw e;
    }
  }

  /** Applies the fields sent; `version` and `updatedAt` move when anything is written. */
  async update(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: UpdateReportDto,
    options: { adoptLegacyPublicId?: boolean } = {},
  ): Promise<ReportDto> {
    const access = await this.assertAccess(actor, reportId, Action.ReportEdit);
    if (dto.publicId && !options.adoptLegacyPublicId && isReservedPublicId(dto.publicId)) {
      throw reservedPublicId(dto.publicId);
    }
    if (dto.folderId !== undefined || dto.workbookId !== undefined) {
      await this.assertPlacementTargets(actor, deploymentId, dto.folderId ?? null, dto.workbookId ?? null);
    }
    try {
      await this.dataSource.transaction(async (m) => {
        const [current] = await queryRows<{
          version: number;
          publicId: string | null;
          folderId: number | null;
        }>(
          m,
          `SELECT version, public_id AS "publicId", folder_id AS "folderId" FROM reports
           WHERE id = $1 AND deployment_id = $2 AND account_id = $3 FOR UPDATE`,
          [reportId, deploymentId, actor.accountId],
        );
        if (!current) throw notFound(reportId);
        if (dto.expectedVersion !== undefined && dto.expectedVersion !== current.version) {
          throw reportsError(
            'version_conflict',
            `The report is at version ${current.version}, not ${dto.expectedVersion}; reload it and retry`,
          );
        }
        const sets: string[] = [];
        const params: unknown[] = [reportId];
        const set = (column: string, value: unknown) => sets.push(`${column} = $${params.push(value)}`);
        if (dto.publicId !== undefined && dto.publicId !== current.publicId) {
          if (current.publicId !== null || dto.publicId === null) {
            throw reportsError('public_id_immutable', 'A report keeps the publicId it was given');
          }
          set('public_id', dto.publicId);
        }
        if (dto.folderId !== undefined && dto.folderId !== current.folderId) {
          if (!access.canManage) {
            throw coreError('forbidden', 'Moving a report requires the ReportManage action on it');
          }
          set('folder_id', dto.folderId);
        }
        for (const [field, column] of Object.entries(DEFINITION_COLUMNS)) {
          const value = dto[field as keyof typeof DEFINITION_COLUMNS];
          if (value === undefined) continue;
          if (field === 'name') {
            const name = this.name(value as string | null);
            if (name !== null) set(column, name);
          } else set(column, value);
        }
        if (sets.length === 0) return;
        await m.query(
          `UPDATE reports SET ${sets.join(', ')}, version = version + 1, updated_at = now() WHERE id = $1`,
          params,
        );
      });
    } catch (e) {
      if (uniqueViolation(e) !== null) {
        throw reportsError('public_id_taken', `publicId ${dto.publicId} is already used by another report`);
      }
      throw e;
    }
    return this.read(actor, deploymentId, reportId, access);
  }

  /**
   * Creates or updates the report keyed by `publicId`. A synthesized id of a report made before
   * stable ids is adopted as its real one. Two writers racing to create the same id: one wins,
   * the other gets 409 `upsert_branch_changed` and may retry.
   */
  async upsertByPublicId(
    actor: Principal,
    deploymentId: number,
    publicId: string,
    dto: CreateReportDto,
  ): Promise<ReportDto> {
    if (!/^[0-9A-Za-z]{12}$/.test(publicId)) {
      throw coreError('validation_failed', ['publicId must be exactly 12 letters or digits']);
    }
    if (dto.publicId != null && dto.publicId !== publicId) {
      throw reportsError('public_id_mismatch', 'The body publicId differs from the one in the path');
    }
    await this.assertDeployment(actor, deploymentId);
    const legacyId = legacyReportId(publicId);
    const [existing] = await queryRows<{ id: number; deploymentId: number }>(
      this.dataSource,
      `SELECT id, deployment_id AS "deploymentId" FROM reports
       WHERE account_id = $1 AND (public_id = $2 OR (public_id IS NULL AND id = $3))
       ORDER BY public_id NULLS LAST LIMIT 1`,
      [actor.accountId, publicId, legacyId ?? 0],
    );
    const { source: _createOnly, ...update } = dto;
    if (existing && existing.deploymentId !== deploymentId) {
      throw reportsError(
        'public_id_in_other_deployment',
        `publicId ${publicId} belongs to a report of another deployment; choose another id`,
      );
    }
    if (existing) {
      return this.update(
        actor,
        deploymentId,
        existing.id,
        { ...update, publicId },
        { adoptLegacyPublicId: true },
      );
    }
    try {
      return await this.create(actor, deploymentId, { ...dto, publicId });
    } catch (e) {
      if ((e as { code?: string }).code === 'public_id_taken') {
        throw reportsError(
          'upsert_branch_changed',
          'Another request created this report meanwhile; retry to update it',
        );
      }
      throw e;
    }
  }

  /** Moves a report to a folder or the root: ReportEdit and ReportManage, FolderEdit on the folder. */
  async move(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    folderId: number | null,
  ): Promise<ReportDto> {
    const access = await this.assertAccess(actor, reportId, Action.ReportManage);
    if (folderId !== null) await this.assertPlacementTargets(actor, deploymentId, folderId, null);
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `UPDATE reports SET folder_id = $4, updated_at = now()
       WHERE id = $1 AND deployment_id = $2 AND account_id = $3 RETURNING id`,
      [reportId, deploymentId, actor.accountId, folderId],
    );
    if (!rows[0]) throw notFound(reportId);
    return this.read(actor, deploymentId, reportId, access);
  }

  /** Deletes a report, its placements, views and grants (ReportManage). */
  async remove(actor: Principal, deploymentId: number, reportId: number): Promise<void> {
    await this.assertAccess(actor, reportId, Action.ReportManage);
    await this.dataSource.transaction(async (m) => {
      const rows = await queryRows<{ id: number }>(
        m,
        `DELETE FROM reports WHERE id = $1 AND deployment_id = $2 AND account_id = $3 RETURNING id`,
        [reportId, deploymentId, actor.accountId],
      );
      if (!rows[0]) throw notFound(reportId);
      await m.query(
        `DELETE FROM policies WHERE account_id = $1 AND resource_type = 'Report' AND resource_id = $2`,
        [actor.accountId, String(reportId)],
      );
    });
  }

  /** 404 when unreadable, 403 when readable without `action`; else what the caller may do. */
  private async assertAccess(actor: Principal, reportId: number, action: Action): Promise<ReportAccess> {
    const access = await this.checkRead(actor, reportId);
    const held = action === Action.ReportManage ? access.canManage : access.canEdit || access.canManage;
    if (action !== Action.ReportRead && !held) {
      throw coreError('forbidden', `This operation requires the ${action} action on this report`);
    }
    return access;
  }

  /** canEdit and canManage of each report, in at most one query. */
  async accessFor(actor: Principal, ids: number[]): Promise<(id: number) => ReportAccess> {
    if (actor.actions.has(Action.ReportManage)) return () => ({ canEdit: true, canManage: true });
    const map = await this.access.map(actor, 'Report', ids);
    return (id) => ({ canEdit: map.can(id, Action.ReportEdit), canManage: map.can(id, Action.ReportManage) });
  }

  /** A report goes into a folder the caller may edit and a workbook the caller may edit. */
  private async assertPlacementTargets(
    actor: Principal,
    deploymentId: number,
    folderId: number | null,
    workbookId: number | null,
  ): Promise<void> {
    const [row] = await queryRows<{ folder: boolean; workbook: boolean }>(
      this.dataSource,
      `SELECT EXISTS (SELECT 1 FROM folders WHERE id = $3 AND deployment_id = $2 AND account_id = $1) AS folder,
              EXISTS (SELECT 1 FROM workbooks WHERE id = $4 AND deployment_id = $2 AND account_id = $1) AS workbook`,
      [actor.accountId, deploymentId, folderId ?? 0, workbookId ?? 0],
    );
    if (folderId !== null) {
      if (!row.folder) throw reportsError('folder_not_found', `Folder ${folderId} was not found`);
      await this.access.requireAccess(actor, 'Folder', folderId, Action.FolderEdit);
    }
    if (workbookId !== null) {
      if (!row.workbook) throw reportsError('workbook_not_found', `Workbook ${workbookId} was not found`);
      await this.access.requireAccess(actor, 'Workbook', workbookId, Action.WorkbookEdit);
    }
  }

  private async assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    if (!(await this.deployments.existsInAccount(actor.accountId, deploymentId)))
      throw reportsError('deployment_not_found', `Deployment ${deploymentId} was not found`);
  }

  /** Trimmed; blank is a 400; null means "not sent". */
  private name(value: string | null | undefined): string | null {
    if (value === undefined || value === null) return null;
    const name = value.trim();
    if (name === '') throw reportsError('blank_name', 'name must not be blank');
    return name;
  }
}

const notFound = (reportId: number) => reportsError('report_not_found', `Report ${reportId} was not found`);

const reservedPublicId = (publicId: string) =>
  reportsError(
    'public_id_reserved',
    `publicId ${publicId} has the reserved shape of ids shown for reports made before stable ids; choose another`,
  );
