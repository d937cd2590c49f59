import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { isoSql } from '../../core/database/sql.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { resourceOwnerSql } from '../users/users.fragments.js';
import type { WorkspaceItemDto } from '../workspace/dto/workspace.dto.js';
import {
  WorkspaceContent,
  type FeedBranchContext,
  type FeedSource,
  type WorkspaceContentKind,
} from '../workspace/workspace-content.js';
import { folderChainSql, folderJoin, folderPathSql } from '../workspace/workspace.fragments.js';
import { reportDeleted, reportEvent } from './report-events.js';
import { randomReportPublicId } from './report.mapper.js';
import { ReportSnapshotsRepository } from './report-snapshots.repository.js';
import { reportSnapshotsJsonSql } from './reports.fragments.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

/**
 * Reports as workspace content: their branch of the workspace feed (reports outside workbooks,
 * sortable by the caller's last view), moves and deletes with the reports' own rules, and what
 * deleting or copying a workbook does to the reports in it. Registered with the workspace at
 * start-up, so the workspace module never imports this one.
 */
@Injectable()
export class ReportsInWorkspace implements WorkspaceContentKind, OnModuleInit {
  constructor(
    private readonly workspace: WorkspaceContent,
    private readonly reports: ReportsService,
    private readonly repository: ReportsRepository,
    private readonly access: AccessService,
    private readonly snapshots: ReportSnapshotsRepository,
    private readonly events: DomainEvents,
  ) {}

  onModuleInit(): void {
    this.workspace.register('REPORT', this);
    // A published dashboard's `reportSnapshots`: the reports of its workbook as its publish took them.
    this.workspace.registerSnapshots({
      jsonSql: reportSnapshotsJsonSql,
      replace: (at) => this.snapshots.replace(at),
      copy: (fromId, toId, ids) => this.snapshots.copy(fromId, toId, ids),
    });
  }

  readonly feed: FeedSource = {
    branch: (ctx: FeedBranchContext, tord: number): string => {
      const scope = this.access.contentScopeSql(
        ctx.actor,
        'Report',
        Action.ReportRead,
        { id: 'r.id', owner: 'r.user_id', folderChain: folderChainSql('rf') },
        'reportScope',
      );
      Object.assign(ctx.params, scope.params);
      let skey = ctx.sortKey('r');
      let views = '';
      if (ctx.field === 'viewer_last_viewed_at') {
        ctx.params.viewerId = ctx.actor.userId;
        views = 'LEFT JOIN report_views rv ON rv.report_id = r.id AND rv.user_id = :viewerId';
        skey = ctx.micros('rv.last_viewed_at');
      }
      return `SELECT 1 AS rank, 0 AS pos, ${skey} AS skey, ${tord} AS tord, r.id
        FROM reports r ${folderJoin('r.folder_id', 'rf')} ${views}
        WHERE r.account_id = :accountId AND r.deployment_id = :deploymentId AND r.workbook_id IS NULL
          AND ${ctx.location('r.folder_id', 'rf')} AND ${ctx.named('r')} AND ${scope.sql}`;
    },
    join: (page: string, tord: number): string =>
      `LEFT JOIN reports r ON ${page}.tord = ${tord} AND r.id = ${page}.id ${folderJoin('r.folder_id', 'rf')}`,
    ownerId: 'r.user_id',
    item: (owner: string): string => `json_build_object('type', 'REPORT', 'id', r.id, 'name', r.name,
             'deploymentId', r.deployment_id, 'folderId', r.folder_id, 'folderPath', ${folderPathSql('rf')},
             'publicId', r.public_id, 'createdAt', ${isoSql('r.created_at')}, 'updatedAt', ${isoSql('r.updated_at')},
             'createdBy', r.created_by, 'userId', r.user_id, 'user', ${resourceOwnerSql(owner)})`,
  };

  async move(
    actor: Principal,
    deploymentId: number,
    id: number,
    folderId: number | null,
  ): Promise<WorkspaceItemDto> {
    return (await this.reports.move(actor, deploymentId, id, folderId)) as unknown as WorkspaceItemDto;
  }

  remove(actor: Principal, deploymentId: number, id: number): Promise<void> {
    return this.reports.remove(actor, deploymentId, id);
  }

  /**
   * The reports go with the workbook by foreign key; the grants on them go here, and each
   * publishes `report.deleted`.
   */
  async workbookDeleting(accountId: number, workbookId: number): Promise<void> {
    const reports = await this.repository.inWorkbook(workbookId);
    await this.access.forget(
      accountId,
      'Report',
      reports.map((r) => r.id),
    );
    for (const report of reports) await this.events.publish(reportDeleted(accountId, report));
  }

  /** Copies the workbook's reports; each copy publishes `report.created`. */
  async copyWorkbook(
    actor: Principal,
    sourceId: number,
    copy: { id: number; folderId: number | null },
  ): Promise<Map<number, number>> {
    const ids = await this.repository.copyWorkbookReports(
      sourceId,
      { workbookId: copy.id, folderId: copy.folderId },
      actor.userId,
      randomReportPublicId,
    );
    if (ids.size > 0) {
      for (const row of await this.repository.readMany(actor.accountId, [...ids.values()])) {
        await this.events.publish(reportEvent(actor.accountId, 'created', row));
      }
    }
    return ids;
  }
}
