import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound as missing } from '../../core/errors/not-found.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { MAX_FOLDER_DEPTH } from './content.sql.js';
import type { CreateFolderDto, FolderDto, FoldersQueryDto, UpdateFolderDto } from './dto/folder.dto.js';
import { FoldersRepository } from './folders.repository.js';
import { folderDeleted, folderEvent } from './workspace-events.js';
import { folderChainSql } from './workspace.fragments.js';
import { workspaceError } from './workspace.errors.js';

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw coreError('validation_failed', ['name must not be blank']);
  return trimmed;
}

const notFound = (id: number) => missing('Folder', id);

const tooDeep = () =>
  workspaceError('folder_too_deep', `Folders nest at most ${MAX_FOLDER_DEPTH} levels deep`);

/**
 * Folders of a deployment's workspace. Each row keeps its chain of ancestors (`ancestor_ids`),
 * so paths, depth limits and inherited grants need no recursive query; a move rewrites the
 * chain of the folder and of everything below it in one transaction.
 */
@Injectable()
export class FoldersService {
  constructor(
    private readonly db: Database,
    private readonly folders: FoldersRepository,
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
    private readonly events: DomainEvents,
  ) {}

  /** 404 unless the deployment belongs to the caller's account. */
  assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    return this.deployments.requireInAccount(actor.accountId, deploymentId);
  }

  /**
   * 404 unless the folder is in this deployment and the caller can read it; 403 when they can
   * read it but lack `action`.
   */
  async assertFolder(
    actor: Principal,
    deploymentId: number,
    folderId: number,
    action: Action,
  ): Promise<void> {
    if (!(await this.folders.exists(actor.accountId, deploymentId, folderId))) throw notFound(folderId);
    await this.access.requireAccess(actor, 'Folder', folderId, action);
  }

  /** One level of the tree, ordered by (position, id); only folders the caller can read. */
  async list(actor: Principal, deploymentId: number, query: FoldersQueryDto): Promise<LegacyPage<FolderDto>> {
    await this.assertDeployment(actor, deploymentId);
    const parentId = query.parentId || null;
    if (parentId !== null) await this.assertFolder(actor, deploymentId, parentId, Action.FolderRead);
    const paging = resolvePaging(query, ['number', 'number']);
    if (
      paging.mode === 'cursor' &&
      paging.after?.some((v) => (v as number) < INT_MIN || (v as number) > INT_MAX)
    ) {
      throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
    }
    const { rows, total } = await this.folders.list({
      accountId: actor.accountId,
      deploymentId,
      parentId,
      scope: this.access.contentScopeSql(actor, 'Folder', Action.FolderRead, {
        id: 'f.id',
        owner: 'f.user_id',
        folderChain: folderChainSql('f'),
      }),
      after:
        paging.mode === 'cursor' && paging.after
          ? [paging.after[0] as number, paging.after[1] as number]
          : null,
      limit: fetchLimit(paging),
    });
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.position, r.id]),
      paging,
      total,
    );
  }

  async get(actor: Principal, deploymentId: number, folderId: number): Promise<FolderDto> {
    const folder = await this.folders.get(actor.accountId, deploymentId, folderId);
    if (!folder) throw notFound(folderId);
    return folder;
  }

  /**
   * Creates a folder at the root (FolderEdit account-wide) or in a parent (FolderEdit on it),
   * within the depth limit. The parent is locked so it cannot be deleted or moved meanwhile.
   */
  async create(actor: Principal, deploymentId: number, dto: CreateFolderDto): Promise<FolderDto> {
    await this.assertDeployment(actor, deploymentId);
    const name = cleanName(dto.name);
    const parentId = dto.parentId ?? null;
    if (parentId === null) this.assertRootEdit(actor, 'create a folder at');
    else await this.assertFolder(actor, deploymentId, parentId, Action.FolderEdit);
    return this.db.transaction(async () => {
      let ancestorIds: number[] = [];
      if (parentId !== null) {
        const parent = await this.folders.lockShared(actor.accountId, deploymentId, parentId);
        if (!parent) throw notFound(parentId);
        ancestorIds = [...parent.ancestorIds, parent.id];
        if (ancestorIds.length + 1 > MAX_FOLDER_DEPTH) throw tooDeep();
      }
      const id = await this.folders.insert({
        accountId: actor.accountId,
        deploymentId,
        parentId,
        ancestorIds,
        name,
        position: dto.position ?? null,
        userId: actor.userId,
      });
      const folder = await this.get(actor, deploymentId, id);
      await this.events.publish(folderEvent(actor.accountId, 'created', folder));
      return folder;
    });
  }

  /** Renames and/or reorders (FolderEdit on the folder); never moves it. */
  async update(
    actor: Principal,
    deploymentId: number,
    folderId: number,
    dto: UpdateFolderDto,
  ): Promise<FolderDto> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderEdit);
    const name = dto.name === undefined || dto.name === null ? null : cleanName(dto.name);
    return this.db.transaction(async () => {
      const found = await this.folders.update(actor.accountId, deploymentId, folderId, {
        name,
        position: dto.position ?? null,
        userId: actor.userId,
      });
      if (!found) throw notFound(folderId);
      const folder = await this.get(actor, deploymentId, folderId);
      await this.events.publish(folderEvent(actor.accountId, 'changed', folder));
      return folder;
    });
  }

  /**
   * Deletes an empty folder (FolderManage) and the grants on it; its workbooks and reports go
   * back to the root (the foreign keys set their folder to NULL). Sub-folders: 400. One
   * `folder.deleted` event: what moved to the root publishes nothing of its own.
   */
  async remove(actor: Principal, deploymentId: number, folderId: number): Promise<void> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderManage);
    await this.db.transaction(async () => {
      const folder = await this.folders.lockForDelete(actor.accountId, deploymentId, folderId);
      if (!folder) throw notFound(folderId);
      if (await this.folders.hasChildren(folderId)) {
        throw workspaceError(
          'folder_not_empty',
          `Folder ${folderId} has sub-folders; delete or move them first`,
        );
      }
      await this.access.forget(actor.accountId, 'Folder', [folderId]);
      await this.folders.delete(folderId);
      await this.events.publish(folderDeleted(actor.accountId, { id: folderId, ...folder, deploymentId }));
    });
  }

  /** The folders from the root down to this one, itself included (FolderRead on it). */
  async ancestors(actor: Principal, deploymentId: number, folderId: number): Promise<FolderDto[]> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderRead);
    return this.folders.ancestors(actor.accountId, folderId);
  }

  /**
   * Moves a folder under `destinationId` (`null`: the root): FolderManage on the folder and
   * FolderEdit on the destination. The folder, its descendants and the destination are locked
   * in id order (so concurrent moves cannot deadlock or build a cycle) before the chains of the
   * whole subtree are rewritten. A move to another parent places it after the last sibling.
   */
  async move(
    actor: Principal,
    deploymentId: number,
    folderId: number,
    destinationId: number | null,
  ): Promise<FolderDto> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderManage);
    if (destinationId === null) this.assertRootEdit(actor, 'move a folder to');
    else await this.assertFolder(actor, deploymentId, destinationId, Action.FolderEdit);
    return this.db.transaction(async () => {
      const moved = await this.moveLocked(actor, deploymentId, folderId, destinationId);
      const folder = await this.get(actor, deploymentId, folderId);
      // The folders below it keep their parent: the moved folder's event stands for the subtree.
      if (moved) await this.events.publish(folderEvent(actor.accountId, 'changed', folder));
      return folder;
    });
  }

  /** Moves the folder with its subtree; false when it already was under `destinationId`. */

  private async moveLocked(
    actor: Principal,
    deploymentId: number,
    folderId: number,
    destinationId: number | null,
  ): Promise<boolean> {
    const locked = await this.folders.lockSubtree(actor.accountId, deploymentId, folderId, destinationId);
    const folder = locked.find((r) => r.id === folderId);
    if (!folder) throw notFound(folderId);
    let chain: number[] = [];
    if (destinationId !== null) {
      const destination = locked.find((r) => r.id === destinationId);
      if (!destination) throw notFound(destinationId);
      if (destination.id === folderId || destination.ancestorIds.includes(folderId)) {
        throw workspaceError(
          'folder_into_descendant',
          'A folder cannot be moved into itself or one of its sub-folders',
        );
      }
      chain = [...destination.ancestorIds, destination.id];
    }
    if (folder.parentId === destinationId) return false;
    const subtreeHeight = Math.max(
      ...locked
        .filter((r) => r.id === folderId || r.ancestorIds.includes(folderId))
        .map((r) => r.ancestorIds.length - folder.ancestorIds.length + 1),
    );
    if (chain.length + subtreeHeight > MAX_FOLDER_DEPTH) throw tooDeep();
    await this.folders.reparent(actor.accountId, deploymentId, folderId, destinationId, chain, actor.userId);
    // A folder moved into the subtree by a concurrent request after the lock was taken is
    // rewritten too (the UPDATE reads the latest rows); check the depth on what was written.
    const depth = await this.folders.subtreeDepth(actor.accountId, folderId);
    if (depth > MAX_FOLDER_DEPTH) throw tooDeep();
    return true;
  }

  /** Content at the root belongs to no folder, so only the account-wide action allows it. */
  private assertRootEdit(actor: Principal, what: string): void {
    if (!actor.actions.has(Action.FolderEdit)) {
      throw coreError('forbidden', `To ${what} the workspace root requires the FolderEdit action`);
    }
  }
}
