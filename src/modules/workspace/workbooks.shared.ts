import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { notFound as missing } from '../../core/errors/not-found.js';
import { validateDashboardConfig } from './dashboards.js';
import { DashboardConfigDraftInputDto } from './dto/dashboard.dto.js';
import type { WorkbookDto } from './dto/workbook.dto.js';
import { WorkbooksRepository, type Json } from './workbooks.repository.js';

/*
 * What the workbook services (WorkbooksService, DashboardsService, WorkbookCopyService) share:
 * metadata parsing and the lookups with their access checks (the SQL is in the repositories).
 */

export { jsonParam, type Json } from './workbooks.repository.js';

export const notFound = (type: 'Folder' | 'Workbook', id: number) => missing(type, id);

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
    private readonly workbooks: WorkbooksRepository,
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
  ) {}

  /** The Workbook shape of one row, in one query. */
  async fetch(accountId: number, workbookId: number): Promise<WorkbookDto> {
    const row = await this.workbooks.fetch(accountId, workbookId);
    if (!row) throw notFound('Workbook', workbookId);
    return row;
  }

  /** 404 unless the deployment is in the caller's account. */
  assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    return this.deployments.requireInAccount(actor.accountId, deploymentId);
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
    const row = await this.workbooks.locate(actor.accountId, deploymentId, workbookId);
    if (!row.deploymentExists) throw missing('Deployment', deploymentId);
    if (row.id === null) throw notFound('Workbook', workbookId);
    await this.access.requireAccess(actor, 'Workbook', workbookId, action);
    return { id: row.id, folderId: row.folderId };
  }

  /**
   * 404 unless the workbook is in this deployment and the caller can read it; 403 when they can
   * read it but lack `action` (a report being put into it, say).
   */
  async assertWorkbook(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    action: Action,
  ): Promise<void> {
    if (!(await this.workbooks.exists(actor.accountId, deploymentId, workbookId))) {
      throw notFound('Workbook', workbookId);
    }
    await this.access.requireAccess(actor, 'Workbook', workbookId, action);
  }
}
