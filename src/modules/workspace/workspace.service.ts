import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { clientFailure } from '../../core/http/bulk.js';
import {
  buildPage,
  invalidCursor,
  DEFAULT_PAGE_SIZE,
  type Page,
  type Paging,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { WORKSPACE_ITEM_TYPES, type WorkspaceItemType } from './content.sql.js';
import type {
  BulkDeleteWorkspaceObjectsDto,
  BulkDeleteWorkspaceObjectsResponseDto,
  BulkMoveWorkspaceObjectsDto,
  BulkMoveWorkspaceObjectsResponseDto,
  MoveWorkspaceObjectDto,
  WorkspaceBulkFailureDto,
  WorkspaceItemDto,
  WorkspaceItemRefDto,
  WorkspaceQueryDto,
} from './dto/workspace.dto.js';
import { FoldersService } from './folders.service.js';
import { WorkbooksService } from './workbooks.service.js';
import { WorkspaceContent } from './workspace-content.js';
import { TYPE_ORDER, WorkspaceFeedRepository } from './workspace-feed.repository.js';
import { feedCursor, parseFeedCursor, folderChainSql } from './workspace.fragments.js';

/** Each distinct `(type, id)` once, in the order first given. */
function distinct(items: readonly WorkspaceItemRefDto[]): WorkspaceItemRefDto[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    const key = `${i.type}:${i.id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The unified workspace: one feed of folders, workbooks and reports, and moving or deleting
 * any of them one at a time or in bulk. Folders are handled here; workbooks and reports by
 * their own services, which apply the same access rules as their own endpoints.
 */
@Injectable()
export class WorkspaceService {
  constructor(
    private readonly feedRows: WorkspaceFeedRepository,
    private readonly access: AccessService,
    private readonly folders: FoldersService,
    private readonly workbooks: WorkbooksService,
    private readonly content: WorkspaceContent,
  ) {}

  /**
   * Folders first (by position), then workbooks and reports mixed in the requested order. A
   * report that belongs to a workbook is part of it, not an item of its own. One query: the
   * keyset runs over the union of the three tables' sort keys, and only the page's rows are
   * shaped.
   */
  async feed(
    actor: Principal,
    deploymentId: number,
    query: WorkspaceQueryDto,
  ): Promise<Page<WorkspaceItemDto>> {
    await this.folders.assertDeployment(actor, deploymentId);
    const folderId = query.folderId || null;
    if (folderId !== null) await this.folders.assertFolder(actor, deploymentId, folderId, Action.FolderRead);
    const field = query.orderByField ?? 'updated_at';
    const dir = query.orderByDirection ?? (field === 'name' ? 'ASC' : 'DESC');
    const types = new Set<WorkspaceItemType>(query.types?.length ? query.types : WORKSPACE_ITEM_TYPES);
    const search = query.search?.trim() ? query.search : null;
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after =
      query.after !== undefined
        ? (parseFeedCursor(query.after, field, dir, TYPE_ORDER.REPORT) ?? invalidCursor())
        : null;
    const rows = await this.feedRows.page({
      actor,
      deploymentId,
      folderId,
      search: search !== null ? likePattern(search) : null,
      field,
      dir,
      after,
      first,
      folders: types.has('FOLDER')
        ? this.access.contentScopeSql(
            actor,
            'Folder',
            Action.FolderRead,
            { id: 'f.id', owner: 'f.user_id', folderChain: folderChainSql('f') },
            'folderScope',
          )
        : null,
      workbooks: types.has('WORKBOOK')
        ? this.access.contentScopeSql(
            actor,
            'Workbook',
            Action.WorkbookRead,
            { id: 'w.id', owner: 'w.user_id', folderChain: folderChainSql('wf') },
            'workbookScope',
          )
        : null,
      kinds: types.has('REPORT')
        ? [{ tord: TYPE_ORDER.REPORT, source: this.content.kind('REPORT').feed }]
        : [],
    });
    const paging: Paging = { mode: 'cursor', first, after: after ? [after.id] : null };
    return buildPage(
      rows,
      paging,
      (r) => feedCursor(field, dir, r),
      (r) => r.item,
    );
  }

  async move(actor: Principal, deploymentId: number, dto: MoveWorkspaceObjectDto): Promise<WorkspaceItemDto> {
    await this.folders.assertDeployment(actor, deploymentId);
    return this.moveOne(actor, deploymentId, dto, dto.folderId ?? null);
  }

  /**
   * Moves each distinct item in order, each in its own transaction; an item refused with a
   * client error (403, 404, 400) is reported and the rest go on. Anything else is a bug and fails
   * the request.
   */
  async bulkMove(
    actor: Principal,
    deploymentId: number,
    dto: BulkMoveWorkspaceObjectsDto,
  ): Promise<BulkMoveWorkspaceObjectsResponseDto> {
    await this.folders.assertDeployment(actor, deploymentId);
    const moved: WorkspaceItemDto[] = [];
    const failed: WorkspaceBulkFailureDto[] = [];
    for (const item of distinct(dto.items)) {
      try {
        moved.push(await this.moveOne(actor, deploymentId, item, dto.folderId ?? null));
      } catch (e) {
        failed.push(this.failure(item, e));
      }
    }
    return { moved, failed };
  }

  /** Deletes each distinct item in order, each in its own transaction; as {@link bulkMove}. */
  async bulkDelete(
    actor: Principal,
    deploymentId: number,
    dto: BulkDeleteWorkspaceObjectsDto,
  ): Promise<BulkDeleteWorkspaceObjectsResponseDto> {
    await this.folders.assertDeployment(actor, deploymentId);
    const deleted: WorkspaceItemRefDto[] = [];
    const failed: WorkspaceBulkFailureDto[] = [];
    for (const item of distinct(dto.items)) {
      try {
        if (item.type === 'FOLDER') await this.folders.remove(actor, deploymentId, item.id);
        else if (item.type === 'WORKBOOK') await this.workbooks.remove(actor, deploymentId, item.id);
        else await this.content.kind(item.type).remove(actor, deploymentId, item.id);
        deleted.push({ type: item.type, id: item.id });
      } catch (e) {
        failed.push(this.failure(item, e));
      }
    }
    return { deleted, failed };
  }

  private async moveOne(
    actor: Principal,
    deploymentId: number,
    item: WorkspaceItemRefDto,
    folderId: number | null,
  ): Promise<WorkspaceItemDto> {
    if (item.type === 'FOLDER') {
      const folder = await this.folders.move(actor, deploymentId, item.id, folderId);
      return { ...folder, folderId: folder.parentId, type: 'FOLDER' };
    }
    if (item.type === 'WORKBOOK') {
      return this.workbooks.move(actor, deploymentId, item.id, folderId);
    }
    return this.content.kind(item.type).move(actor, deploymentId, item.id, folderId);
  }

  private failure(item: WorkspaceItemRefDto, e: unknown): WorkspaceBulkFailureDto {
    const error = clientFailure(e);
    if (!error) throw e;
    return { type: item.type, id: item.id, error };
  }
}
