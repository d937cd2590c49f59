import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService, type ResourceRef } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { uniqueViolation } from '../../core/database/sql.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound as missing } from '../../core/errors/not-found.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { FoldersService } from '../workspace/folders.service.js';
import { WorkbookLookup } from '../workspace/workbooks.shared.js';
import { folderRefs } from '../workspace/workspace.fragments.js';
import type { CreateReportDto, ReportDto, UpdateReportDto } from './dto/report.dto.js';
import { ReportViews } from './report-views.js';
import { reportEvent, reportDeleted } from './report-events.js';
import {
  isReservedPublicId,
  legacyReportId,
  toReport,
  type ReportAccess,
  type ReportRow,
} from './report.mapper.js';
import { reportsError } from './reports.errors.js';
import {
  DEFINITION_COLUMNS,
  ReportsRepository,
  type ReportChange,
  type ReportQueryRow,
} from './reports.repository.js';

export type { ReportQueryRow };

/**
 * Reports of a deployment: read, create, update, upsert by public id, move and delete (the list
 * is {@link ReportListService}). Every read is one shaping query (`reportSelectSql`); access is decided by
 * `AccessService`, with folder and workbook grants inherited.
 */
/** A report as a scheduled rendering reads it ({@link ReportsService.forRendering}). */
export interface ReportForRendering {
  name: string;
  title: string | null;
  jsonQuery: string | null;
  sqlQuery: string | null;
}

@Injectable()
export class ReportsService implements OnModuleInit {
  constructor(
    private readonly db: Database,
    private readonly reports: ReportsRepository,
    private readonly access: AccessService,
    private readonly views: ReportViews,
    private readonly deployments: DeploymentsService,
    private readonly folders: FoldersService,
    private readonly workbooks: WorkbookLookup,
    private readonly events: DomainEvents,
  ) {}

  /** A report inherits grants from its workbook and from every folder above it; owners manage it. */
  onModuleInit(): void {
    this.access.register('Report', {
      resolve: async (accountId, ids) => {
        const rows = await this.reports.chains(accountId, ids);
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
  ): Promise<ReportDto> {
    const row = await this.reports.read(actor.accountId, deploymentId, reportId);
    if (!row) throw notFound(reportId);
    return toReport(row, access ?? (await this.accessFor(actor, [reportId]))(reportId));
  }

  /**
   * What a scheduled rendering needs of a report: its name, title and queries, by account,
   * deployment and id, or null when there is no such report there. No caller: the job that renders
   * acts for the account, whose admin made the notification; nothing is recorded (no view).
   */
  async forRendering(
    accountId: number,
    deploymentId: number,
    reportId: number,
  ): Promise<ReportForRendering | null> {
    const row = await this.reports.read(accountId, deploymentId, reportId);
    if (!row) return null;
    return { name: row.name, title: row.title, jsonQuery: row.jsonQuery, sqlQuery: row.sqlQuery };
  }

  /**
   * The JSON query (unparsed text) of every report of the account's deployment that has one, with
   * the dashboards whose last publish took it; reports with only a SQL query are left out. No
   * caller and no access check: the content impact of a model change (issue 33) reads all of them
   * for a caller the data model has already checked.
   */
  jsonQueries(accountId: number, deploymentId: number): Promise<ReportQueryRow[]> {
    return this.reports.jsonQueries(accountId, deploymentId);
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
      return await this.db.transaction(async () => {
        const id = await this.reports.insert({
          accountId: actor.accountId,
          deploymentId,
          publicId: dto.publicId ?? null,
          folderId: dto.folderId ?? null,
          workbookId: dto.workbookId ?? null,
          name,
          title: dto.title ?? null,
          description: dto.description ?? null,
          jsonQuery: dto.jsonQuery ?? null,
          sqlQuery: dto.sqlQuery ?? null,
          pythonCode: dto.pythonCode ?? null,
          meta: dto.meta ?? null,
          pivotItems: dto.pivotItems ?? null,
          source: dto.source ?? null,
          userId: actor.userId,
        });
        const row = await this.published(actor.accountId, deploymentId, id, 'created');
        return toReport(row, { canEdit: true, canManage: true });
      });
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
    let row: ReportRow | null;
    try {
      row = await this.db.transaction(async () => {
        const current = await this.reports.lockForUpdate(actor.accountId, deploymentId, reportId);
        if (!current) throw notFound(reportId);
        if (dto.expectedVersion !== undefined && dto.expectedVersion !== current.version) {
          throw reportsError(
            'version_conflict',
            `The report is at version ${current.version}, not ${dto.expectedVersion}; reload it and retry`,
          );
        }
        const change: ReportChange = {};
        if (dto.publicId !== undefined && dto.publicId !== current.publicId) {
          if (current.publicId !== null || dto.publicId === null) {
            throw reportsError('public_id_immutable', 'A report keeps the publicId it was given');
          }
          change.publicId = dto.publicId;
        }
        if (dto.folderId !== undefined && dto.folderId !== current.folderId) {
          if (!access.canManage) {
            throw coreError('forbidden', 'Moving a report requires the ReportManage action on it');
          }
          change.folderId = dto.folderId;
        }
        for (const field of Object.keys(DEFINITION_COLUMNS) as Array<keyof typeof DEFINITION_COLUMNS>) {
          const value = dto[field];
          if (value === undefined) continue;
          if (field === 'name') {
            const name = this.name(value as string | null);
            if (name !== null) change.name = name;
          } else change[field] = value;
        }
        // Nothing to write: nothing changes, nothing is published.
        if (Object.keys(change).length === 0) return null;
        await this.reports.update(reportId, change);
        return this.published(actor.accountId, deploymentId, reportId, 'changed');
      });
    } catch (e) {
      if (uniqueViolation(e) !== null) {
        throw reportsError('public_id_taken', `publicId ${dto.publicId} is already used by another report`);
      }
      throw e;
    }
    return row ? toReport(row, access) : this.read(actor, deploymentId, reportId, access);
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
    const existing = await this.reports.byPublicId(actor.accountId, publicId, legacyId ?? 0);
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
    const row = await this.db.transaction(async () => {
      if (!(await this.reports.move(actor.accountId, deploymentId, reportId, folderId)))
        throw notFound(reportId);
      return this.published(actor.accountId, deploymentId, reportId, 'changed');
    });
    return toReport(row, access);
  }

  /** Deletes a report, its placements, views and grants (ReportManage). */
  async remove(actor: Principal, deploymentId: number, reportId: number): Promise<void> {
    await this.assertAccess(actor, reportId, Action.ReportManage);
    await this.db.transaction(async () => {
      const deleted = await this.reports.delete(actor.accountId, deploymentId, reportId);
      if (!deleted) throw notFound(reportId);
      await this.access.forget(actor.accountId, 'Report', [reportId]);
      await this.events.publish(reportDeleted(actor.accountId, deleted));
    });
  }

  /**
   * Inside the unit of work of a create or an update: the report as it is now, published as
   * `report.created` or `report.changed` (as an account admin reads it).
   */
  private async published(
    accountId: number,
    deploymentId: number,
    reportId: number,
    change: 'created' | 'changed',
  ): Promise<ReportRow> {
    const row = await this.reports.read(accountId, deploymentId, reportId);
    if (!row) throw notFound(reportId);
    await this.events.publish(reportEvent(accountId, change, row));
    return row;
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
    if (folderId !== null) await this.folders.assertFolder(actor, deploymentId, folderId, Action.FolderEdit);
    if (workbookId !== null) {
      await this.workbooks.assertWorkbook(actor, deploymentId, workbookId, Action.WorkbookEdit);
    }
  }

  private async assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    if (!(await this.deployments.existsInAccount(actor.accountId, deploymentId)))
      throw missing('Deployment', deploymentId);
  }

  /** Trimmed; blank is a 400; null means "not sent". */
  private name(value: string | null | undefined): string | null {
    if (value === undefined || value === null) return null;
    const name = value.trim();
    if (name === '') throw reportsError('blank_name', 'name must not be blank');
    return name;
  }
}

const notFound = (reportId: number) => missing('Report', reportId);

const reservedPublicId = (publicId: string) =>
  reportsError(
    'public_id_reserved',
    `publicId ${publicId} has the reserved shape of ids shown for reports made before stable ids; choose another`,
  );
