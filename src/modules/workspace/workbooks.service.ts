import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { coreError } from '../../core/errors/api-error.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import {
  canonicalJson,
  DEFAULT_WORKBOOK_NAME,
  mergeMeta,
  normalizeName,
  normalizeSlug,
} from './dashboards.js';
import { DashboardsRepository } from './dashboards.repository.js';
import type {
  CreateWorkbookDto,
  UpdateWorkbookDto,
  UpsertWorkbookDto,
  WorkbookDto,
  WorkbooksQueryDto,
} from './dto/workbook.dto.js';
import { FoldersService } from './folders.service.js';
import { workbooksError } from './workbooks.errors.js';
import { WorkbooksRepository, type WorkbookChange } from './workbooks.repository.js';
import { notFound, splitMeta, WorkbookLookup, type MetaParts } from './workbooks.shared.js';
import { WorkspaceContent } from './workspace-content.js';
import { dashboardDeleted, workbookDeleted, workbookEvent } from './workspace-events.js';
import { folderChainSql } from './workspace.fragments.js';

const branchChanged = () =>
  workbooksError(
    'upsert_branch_changed',
    'Another request created or removed the workbook holding this slug meanwhile; retry the request',
  );

/** Constraint failures a concurrent request can cause, as the errors they mean. */
function mapDbError(err: unknown): never {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505' && e.constraint === 'uq_workbooks_slug') {
    throw workbooksError('slug_taken', 'The slug is taken by another workbook of this deployment');
  }
  if (e.code === '23503' && e.constraint === 'fk_workbooks_folder') {
    throw workbooksError('folder_not_found', 'The destination folder was not found');
  }
  throw err;
}

/**
 * Workbooks of a deployment: list, reads, writes, the by-slug upsert used by dashboards-as-code,
 * move and delete. Dashboards are in `DashboardsService`, duplication in `WorkbookCopyService`.
 * Every object check goes through `AccessService`; an unreadable object answers 404 like a missing one.
 */
@Injectable()
export class WorkbooksService {
  constructor(
    private readonly db: Database,
    private readonly workbooks: WorkbooksRepository,
    private readonly dashboards: DashboardsRepository,
    private readonly access: AccessService,
    private readonly lookup: WorkbookLookup,
    private readonly content: WorkspaceContent,
    private readonly folders: FoldersService,
    private readonly events: DomainEvents,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    query: WorkbooksQueryDto,
  ): Promise<LegacyPage<WorkbookDto>> {
    await this.lookup.assertDeployment(actor, deploymentId);
    const paging = resolvePaging(query, ['number']);
    const { rows, total } = await this.workbooks.list({
      accountId: actor.accountId,
      deploymentId,
      folderId: query.folderId,
      scope: this.access.contentScopeSql(actor, 'Workbook', Action.WorkbookRead, {
        id: 'w.id',
        owner: 'w.user_id',
        folderChain: folderChainSql('f'),
      }),
      afterId: paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null,
      limit: fetchLimit(paging),
    });
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id]),
      paging,
      total,
    );
  }

  async get(actor: Principal, deploymentId: number, workbookId: number): Promise<WorkbookDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
    return this.lookup.fetch(actor.accountId, workbookId);
  }

  /** At the root this needs WorkbookEdit account-wide; in a folder, FolderEdit on that folder. */
  async create(actor: Principal, deploymentId: number, dto: CreateWorkbookDto): Promise<WorkbookDto> {
    await this.lookup.assertDeployment(actor, deploymentId);
    const name = dto.name == null ? DEFAULT_WORKBOOK_NAME : normalizeName(dto.name);
    const parts = await splitMeta(dto.meta ?? {});
    const folderId = dto.folderId ?? null;
    await this.assertCanCreate(actor, deploymentId, folderId);
    return this.db
      .transaction(async () => {
        const id = await this.workbooks.insert({
          accountId: actor.accountId,
          deploymentId,
          folderId,
          name,
          meta: parts.meta,
          draft: parts.draft,
          userId: actor.userId,
        });
        return this.published(actor.accountId, id!, 'created');
      })
      .catch(mapDbError);
  }

  async update(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: UpdateWorkbookDto,
  ): Promise<WorkbookDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    const name = dto.name == null ? undefined : normalizeName(dto.name);
    const slug = dto.slug == null ? dto.slug : normalizeSlug(dto.slug);
    const parts = dto.meta === undefined ? undefined : await splitMeta(dto.meta ?? {});
    if (dto.folderId !== undefined) await this.assertMovable(actor, deploymentId, workbookId, dto.folderId);
    return this.db
      .transaction(async () => {
        const row = await this.workbooks.lockSlug(workbookId);
        if (!row) throw notFound('Workbook', workbookId);
        if (slug && slug !== row.slug) {
          await this.releaseSlug(actor, deploymentId, workbookId, slug, dto.slugTakeover === true);
        }
        const change: WorkbookChange = { name, folderId: dto.folderId, slug };
        if (parts) change.meta = parts.meta;
        if (parts && parts.draft !== undefined) change.draft = parts.draft;
        // Nothing sent to change: nothing written, nothing published.
        if (Object.values(change).every((v) => v === undefined)) {
          return this.lookup.fetch(actor.accountId, workbookId);
        }
        await this.workbooks.update(workbookId, change);
        return this.published(actor.accountId, workbookId, 'changed');
      })
      .catch(mapDbError);
  }

  /**
   * Moves a workbook into a folder (`null`: the workspace root). Needs WorkbookManage on the
   * workbook and FolderEdit on the destination. Throws ApiError 404/403.
   */
  async move(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    folderId: number | null,
  ): Promise<WorkbookDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
    if (folderId !== null) await this.assertFolderEditable(actor, deploymentId, folderId);
    return this.db
      .transaction(async () => {
        const moved = await this.workbooks.move(actor.accountId, deploymentId, workbookId, folderId);
        if (!moved) throw notFound('Workbook', workbookId);
        // A move to the folder it is in changes nothing and publishes nothing.
        if (!moved.changed) return this.lookup.fetch(actor.accountId, workbookId);
        return this.published(actor.accountId, workbookId, 'changed');
      })
      .catch(mapDbError);
  }

  /**
   * Deletes a workbook (WorkbookManage on it) with its reports and dashboard, and the grants on
   * all of them. Publishes `workbook.deleted`, `dashboard.deleted` for its dashboard and (through
   * each content kind) `report.deleted` for each report it held. Throws ApiError 404/403.
   */
  async remove(actor: Principal, deploymentId: number, workbookId: number): Promise<void> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
    await this.db.transaction(async () => {
      const workbook = await this.workbooks.lockForDelete(actor.accountId, deploymentId, workbookId);
      if (!workbook) throw notFound('Workbook', workbookId);
      const dashboards = await this.dashboards.ofWorkbookForDelete(workbookId);
      // Grants have no foreign key: those on the workbook, its dashboard and its content go now.
      await this.access.forget(actor.accountId, 'Workbook', [workbookId]);
      await this.access.forget(
        actor.accountId,
        'Dashboard',
        dashboards.map((d) => d.id),
      );
      for (const kind of this.content.all()) await kind.workbookDeleting(actor.accountId, workbookId);
      // Reports (with their placements and views) and the dashboard follow by foreign key.
      await this.workbooks.delete(workbookId);
      await this.events.publish(
        workbookDeleted(actor.accountId, { id: workbookId, ...workbook, deploymentId }),
      );
      for (const d of dashboards) {
        await this.events.publish(dashboardDeleted(actor.accountId, { ...d, workbookId, deploymentId }));
      }
    });
  }

  /**
   * Creates or updates the workbook holding `slug`. Which of the two happens is decided and
   * access-checked first; if a concurrent writer changes that before this one applies, the
   * request fails with 409 `upsert_branch_changed` rather than run under the wrong check.
   */
  async upsertBySlug(
    actor: Principal,
    deploymentId: number,
    rawSlug: string,
    dto: UpsertWorkbookDto,
  ): Promise<WorkbookDto> {
    const slug = normalizeSlug(rawSlug);
    await this.lookup.assertDeployment(actor, deploymentId);
    const name = dto.name == null ? undefined : normalizeName(dto.name);
    const parts = dto.meta == null ? undefined : await splitMeta(dto.meta);
    const holder = await this.workbooks.idBySlug(actor.accountId, deploymentId, slug);
    const id = holder
      ? await this.updateBySlug(actor, deploymentId, holder, slug, name, parts, dto.folderId)
      : await this.createWithSlug(actor, deploymentId, slug, name, parts, dto.folderId ?? null);
    return this.lookup.fetch(actor.accountId, id);
  }

  // --- helpers -------------------------------------------------------------------------------

  /** A folder of the deployment the caller may put content into (404 / 403 otherwise). */
  private async assertFolderEditable(
    actor: Principal,
    deploymentId: number,
    folderId: number,
  ): Promise<void> {
    await this.folders.assertFolder(actor, deploymentId, folderId, Action.FolderEdit);
  }

  private async assertCanCreate(
    actor: Principal,
    deploymentId: number,
    folderId: number | null,
  ): Promise<void> {
    if (folderId !== null) return this.assertFolderEditable(actor, deploymentId, folderId);
    if (!actor.actions.has(Action.WorkbookEdit)) {
      throw coreError(
        'forbidden',
        'Creating a workbook at the workspace root requires the WorkbookEdit action',
      );
    }
  }

  /** Moving needs WorkbookManage on the workbook and FolderEdit on a destination folder. */
  private async assertMovable(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    folderId: number | null,
  ): Promise<void> {
    await this.access.requireAccess(actor, 'Workbook', workbookId, Action.WorkbookManage);
    if (folderId !== null) await this.assertFolderEditable(actor, deploymentId, folderId);
  }

  /** Frees `slug` held by another workbook: 409 unless taking it over, which needs edit rights there. */
  private async releaseSlug(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    slug: string,
    takeover: boolean,
  ): Promise<void> {
    const holder = await this.workbooks.lockSlugHolder(deploymentId, slug, workbookId);
    if (holder === undefined) return;
    if (!takeover) {
      throw workbooksError(
        'slug_taken',
        `The slug "${slug}" is taken by another workbook of this deployment`,
      );
    }
    const access = await this.access.map(actor, 'Workbook', [holder]);
    if (!access.can(holder, Action.WorkbookEdit)) {
      throw coreError('forbidden', 'Taking over a slug requires WorkbookEdit on the workbook holding it');
    }
    await this.workbooks.clearSlug(holder);
    await this.published(actor.accountId, holder, 'changed');
  }

  /** The workbook as its GET shows it, published as created or changed (inside the unit of work). */
  private async published(
    accountId: number,
    workbookId: number,
    change: 'created' | 'changed',
  ): Promise<WorkbookDto> {
    const workbook = await this.lookup.fetch(accountId, workbookId);
    await this.events.publish(workbookEvent(accountId, change, workbook));
    return workbook;
  }

  private async updateBySlug(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    slug: string,
    name: string | undefined,
    parts: MetaParts | undefined,
    folderId: number | null | undefined,
  ): Promise<number> {
    const access = await this.access.map(actor, 'Workbook', [workbookId]);
    if (!access.can(workbookId, Action.WorkbookEdit)) {
      throw coreError('forbidden', `Updating the workbook with slug "${slug}" requires WorkbookEdit on it`);
    }
    if (folderId !== undefined) await this.assertMovable(actor, deploymentId, workbookId, folderId);
    await this.db
      .transaction(async () => {
        const row = await this.workbooks.lockDefinition(workbookId, slug);
        if (!row) throw branchChanged();
        const next = {
          name: name ?? row.name,
          meta: parts ? mergeMeta(row.meta, parts.meta) : row.meta,
          folderId: folderId === undefined ? row.folderId : folderId,
          draft: parts?.draft === undefined ? row.draft : parts.draft,
        };
        // Re-applying the same definition changes nothing, not even updatedAt (and publishes nothing).
        if (canonicalJson(next) === canonicalJson(row)) return;
        await this.workbooks.replaceDefinition(workbookId, next);
        await this.published(actor.accountId, workbookId, 'changed');
      })
      .catch(mapDbError);
    return workbookId;
  }

  private async createWithSlug(
    actor: Principal,
    deploymentId: number,
    slug: string,
    name: string | undefined,
    parts: MetaParts | undefined,
    folderId: number | null,
  ): Promise<number> {
    await this.assertCanCreate(actor, deploymentId, folderId);
    return this.db
      .transaction(async () => {
        const id = await this.workbooks.insert({
          accountId: actor.accountId,
          deploymentId,
          folderId,
          name: name ?? DEFAULT_WORKBOOK_NAME,
          slug,
          meta: mergeMeta({}, parts?.meta ?? {}),
          draft: parts?.draft,
          userId: actor.userId,
        });
        if (id === undefined) throw branchChanged();
        await this.published(actor.accountId, id, 'created');
        return id;
      })
      .catch(mapDbError);
  }
}
