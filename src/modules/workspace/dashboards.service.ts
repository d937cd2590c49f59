import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { randomPublicId, validateDashboardConfig } from './dashboards.js';
import { DashboardsRepository, type PublishedDashboardRow } from './dashboards.repository.js';
import {
  DashboardConfigInputDto,
  type DashboardDto,
  type PublishDashboardDto,
  type WorkbookDashboardDto,
  type WorkbookDashboardInputDto,
} from './dto/dashboard.dto.js';
import { workbooksError } from './workbooks.errors.js';
import { notFound, WorkbookLookup, type Json } from './workbooks.shared.js';
import { WorkspaceContent } from './workspace-content.js';
import { dashboardEvent, workbookEvent } from './workspace-events.js';

export type { PublishedDashboardRow };

/**
 * The dashboards of a workbook: the draft saved on the workbook row and the published dashboard
 * (`dashboards`), which each publish replaces. Needs WorkbookEdit on the workbook.
 */
@Injectable()
export class DashboardsService {
  constructor(
    private readonly db: Database,
    private readonly dashboards: DashboardsRepository,
    private readonly lookup: WorkbookLookup,
    private readonly content: WorkspaceContent,
    private readonly events: DomainEvents,
  ) {}

  /**
   * The dashboard's "allow signed embedding" flag, a setting of the embedding module kept on the
   * dashboard's row; the caller has checked access. False when the workbook has no dashboard.
   * Publishes `dashboard.changed`.
   */
  setAllowEmbed(workbookId: number, allowEmbed: boolean): Promise<boolean> {
    return this.db.transaction(async () => {
      const row = await this.dashboards.setAllowEmbed(workbookId, allowEmbed);
      if (row) await this.publishDashboard(row.accountId, row.id, 'changed');
      return row !== undefined;
    });
  }

  /**
   * Every published dashboard of the account's deployment: id, name (its title, else its
   * workbook's name), workbook and config. No caller and no access check: the content impact of
   * a model change (issue 33) reads them for a caller the data model has already checked.
   */
  publishedOfDeployment(accountId: number, deploymentId: number): Promise<PublishedDashboardRow[]> {
    return this.dashboards.published(accountId, deploymentId);
  }

  /** The same flag by the dashboard's public id in the account; undefined when there is none. */
  setPublicAllowEmbed(
    accountId: number,
    publicId: string,
    allowEmbed: boolean,
  ): Promise<{ publicId: string; allowEmbed: boolean } | undefined> {
    return this.db.transaction(async () => {
      const row = await this.dashboards.setPublicAllowEmbed(accountId, publicId, allowEmbed);
      if (!row) return undefined;
      await this.publishDashboard(accountId, row.id, 'changed');
      return { publicId: row.publicId, allowEmbed: row.allowEmbed };
    });
  }

  async updateDashboard(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: WorkbookDashboardInputDto,
  ): Promise<WorkbookDashboardDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    return this.db.transaction(async () => {
      if (dto.dashboardDraft !== undefined) {
        await this.dashboards.saveDraft(workbookId, dto.dashboardDraft);
        // The draft is the workbook's (its `dashboardDraft`): the workbook changed.
        const workbook = await this.lookup.fetch(actor.accountId, workbookId);
        await this.events.publish(workbookEvent(actor.accountId, 'changed', workbook));
      }
      const row = await this.dashboards.ofWorkbook(workbookId);
      if (!row) throw notFound('Workbook', workbookId);
      return row;
    });
  }

  /**
   * Publishes `config`, or the current draft when it is omitted: the first publish creates the
   * dashboard with a fresh public id, later ones replace its config and bump `versionNumber`.
   * Either way the reports of the workbook are snapshotted anew, in the same unit of work, and
   * `dashboard.created` (first publish) or `dashboard.changed` is published.
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
    return this.db.transaction(async () => {
      // Locking the workbook serialises publishes of one dashboard.
      const workbook = await this.dashboards.lockDraft(workbookId);
      if (!workbook) throw notFound('Workbook', workbookId);
      let config: Json;
      if (dto.config != null) config = JSON.parse(JSON.stringify(dto.config)) as Json;
      else if (workbook.draft == null) {
        throw workbooksError('nothing_to_publish', 'The workbook has no draft to publish; send a config');
      } else
        config = await validateDashboardConfig(DashboardConfigInputDto, workbook.draft, 'dashboardDraft');
      const existing = await this.dashboards.publishedOf(workbookId);
      if (dto.dashboardId != null && dto.dashboardId !== existing?.id) {
        throw workbooksError(
          'dashboard_not_found',
          `Dashboard ${dto.dashboardId} is not the published dashboard of this workbook`,
        );
      }
      let id: number;
      const change = existing ? 'changed' : 'created';
      if (existing) {
        await this.dashboards.republish(existing.id, {
          config,
          title: dto.title,
          allowEmbed: dto.allowEmbed ?? null,
        });
        id = existing.id;
      } else {
        id = await this.dashboards.insert({
          accountId: actor.accountId,
          deploymentId,
          workbookId,
          publicId: randomPublicId(),
          title: dto.title ?? null,
          config,
          allowEmbed: dto.allowEmbed ?? false,
          userId: actor.userId,
        });
      }
      // The reports of the workbook as they are now: what this version shows and runs.
      await this.content.snapshots().replace({ accountId: actor.accountId, dashboardId: id, workbookId });
      return this.publishDashboard(actor.accountId, id, change);
    });
  }

  /** The dashboard as its Dashboard shape shows it, published (inside the unit of work). */
  private async publishDashboard(
    accountId: number,
    dashboardId: number,
    change: 'created' | 'changed',
  ): Promise<DashboardDto> {
    const dashboard = await this.dashboards.get(dashboardId);
    await this.events.publish(dashboardEvent(accountId, change, dashboard));
    return dashboard;
  }
}
