import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { coreError } from '../../core/errors/api-error.js';
import { copyName, randomPublicId, repointReportIds } from './dashboards.js';
import { DashboardsRepository } from './dashboards.repository.js';
import type { DuplicateWorkbookDto, WorkbookDto } from './dto/workbook.dto.js';
import { workbooksError } from './workbooks.errors.js';
import { WorkbooksRepository } from './workbooks.repository.js';
import { notFound, WorkbookLookup } from './workbooks.shared.js';
import { WorkspaceContent } from './workspace-content.js';
import { dashboardEvent, workbookEvent } from './workspace-events.js';

/** Duplication of a workbook with its reports and dashboards. */
@Injectable()
export class WorkbookCopyService {
  constructor(
    private readonly db: Database,
    private readonly workbooks: WorkbooksRepository,
    private readonly dashboards: DashboardsRepository,
    private readonly access: AccessService,
    private readonly lookup: WorkbookLookup,
    private readonly content: WorkspaceContent,
    private readonly events: DomainEvents,
  ) {}

  /**
   * Copies a workbook with its reports, draft and published dashboard (report references in
   * widgets re-pointed at the copies). Grants, view history, placements and signed embedding are
   * not copied. The copy lands next to the source when the caller may edit that folder, else at
   * the root (which needs WorkbookEdit account-wide). Publishes `workbook.created` for the copy,
   * `dashboard.created` for its dashboard and (through each content kind) `report.created` for
   * each report copied.
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
    return this.db.transaction(async () => {
      const copyId = await this.copyWorkbook(actor, deploymentId, workbookId, folderId);
      const copy = await this.lookup.fetch(actor.accountId, copyId);
      await this.events.publish(workbookEvent(actor.accountId, 'created', copy));
      return copy;
    });
  }

  /**
   * The copy itself, inside the caller's unit of work: the workbook, then what it holds (each
   * content kind copies its own), then the draft and published dashboard re-pointed at the
   * copies. Returns the new workbook's id.
   */
  private async copyWorkbook(
    actor: Principal,
    deploymentId: number,
    sourceId: number,
    folderId: number | null,
  ): Promise<number> {
    const source = await this.workbooks.lockForCopy(sourceId);
    if (!source) throw notFound('Workbook', sourceId);
    const copyId = (await this.workbooks.insert({
      accountId: actor.accountId,
      deploymentId,
      folderId,
      name: copyName(source.name),
      meta: source.meta,
      calculatedFields: source.calculatedFields,
      draft: null,
      userId: actor.userId,
    }))!;
    const ids = new Map<number, number>();
    for (const kind of this.content.all()) {
      for (const [from, to] of await kind.copyWorkbook(actor, sourceId, { id: copyId, folderId }))
        ids.set(from, to);
    }
    if (source.draft) await this.workbooks.setDraft(copyId, repointReportIds(source.draft, ids));
    const dashboard = await this.dashboards.publishedOf(sourceId);
    if (dashboard) {
      const copy = await this.dashboards.insert({
        accountId: actor.accountId,
        deploymentId,
        workbookId: copyId,
        publicId: randomPublicId(),
        title: dashboard.title,
        config: repointReportIds(dashboard.config, ids),
        allowEmbed: false,
        userId: actor.userId,
      });
      // The copy shows what the source's dashboard showed, re-pointed at the copied reports.
      await this.content.snapshots().copy(dashboard.id, copy, ids);
      await this.events.publish(dashboardEvent(actor.accountId, 'created', await this.dashboards.get(copy)));
    }
    return copyId;
  }
}
