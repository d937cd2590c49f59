import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { folderPathSql, isoSql, MAX_FOLDER_DEPTH, ownerSql } from './content.sql.js';
import type { CreateFolderDto, FolderDto, FoldersQueryDto, UpdateFolderDto } from './dto/folder.dto.js';
import { workspaceError } from './workspace.errors.js';

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** The Folder shape of `f`, with its parent joined as `p` and its owner as `u`: one query. */
const FOLDER_COLUMNS = `f.id, f.name, f.position, f.parent_id AS "parentId", f.deployment_id AS "deploymentId",
  ${isoSql('f.created_at')} AS "createdAt", ${isoSql('f.updated_at')} AS "updatedAt",
  f.created_by AS "createdBy", f.updated_by AS "updatedBy", 'FOLDER' AS type,
  ${ownerSql('u')} AS "user", ${folderPathSql('p')} AS "folderPath"`;
const FOLDER_FROM = `folders f LEFT JOIN folders p ON p.id = f.parent_id LEFT JOIN users u ON u.id = f.user_id`;

/** The position after the last child of `parent` (`NULL`: the root), clamped to the column's range. */
const nextPositionSql = (deployment: string, parent: string, except = 'NULL') =>
  `(SELECT LEAST(COALESCE(MAX(s.position)::bigint + 1, 0), ${INT_MAX})::int FROM folders s
    WHERE s.deployment_id = ${deployment} AND s.parent_id IS NOT DISTINCT FROM ${parent}::int
      AND s.id IS DISTINCT FROM ${except}::int)`;

interface LockedFolder {
  id: number;
  parentId: number | null;
  ancestorIds: number[];
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw coreError('validation_failed', ['name must not be blank']);
  return trimmed;
}

const notFound = (id: number) => workspaceError('folder_not_found', `Folder ${id} was not found`);

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
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
  ) {}

  /** 404 unless the deployment belongs to the caller's account. */
  async assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    if (!(await this.deployments.existsInAccount(actor.accountId, deploymentId)))
      throw workspaceError('deployment_not_found', `Deployment ${deploymentId} was not found`);
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
    const rows = await queryRows(
      this.dataSource,
      `SELECT 1 FROM folders WHERE id = $1 AND account_id = $2 AND deployment_id = $3`,
      [folderId, actor.accountId, deploymentId],
    );
    if (!rows.length) throw notFound(folderId);
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
    const params: unknown[] = [actor.accountId, deploymentId];
    let filter = `f.account_id = $1 AND f.deployment_id = $2 AND `;
    if (parentId === null) filter += 'f.parent_id IS NULL';
    else filter += `f.parent_id = $${params.push(parentId)}`;
    const scope = this.access.contentScope(
      actor,
      'Folder',
      Action.FolderRead,
      { id: 'f.id', owner: 'f.user_id', folderChain: '(f.ancestor_ids || f.id)' },
      params.length + 1,
    );
    params.push(...scope.params);
    filter += ` AND ${scope.sql}`;
    const keyset = keysetPredicate(
      ['f.position', 'f.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const [rows, count] = await Promise.all([
      queryRows<FolderDto>(
        this.dataSource,
        `SELECT ${FOLDER_COLUMNS} FROM ${FOLDER_FROM} WHERE ${filter} AND ${keyset.sql}
         ORDER BY f.position, f.id LIMIT ${fetchLimit(paging)}`,
        [...params, ...keyset.params],
      ),
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM folders f WHERE ${filter}`,
        params,
      ),
    ]);
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.position, r.id]),
      paging,
      count[0].n,
    );
  }

  async get(actor: Principal, deploymentId: number, folderId: number): Promise<FolderDto> {
    const rows = await queryRows<FolderDto>(
      this.dataSource,
      `SELECT ${FOLDER_COLUMNS} FROM ${FOLDER_FROM} WHERE f.id = $1 AND f.account_id = $2 AND f.deployment_id = $3`,
      [folderId, actor.accountId, deploymentId],
    );
    if (!rows[0]) throw notFound(folderId);
    return rows[0];
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
    const id = await this.dataSource.transaction(async (m) => {
      let ancestors: number[] = [];
      if (parentId !== null) {
        const [parent] = await queryRows<LockedFolder>(
          m,
          `SELECT id, ancestor_ids AS "ancestorIds" FROM folders
           WHERE id = $1 AND account_id = $2 AND deployment_id = $3 FOR SHARE`,
          [parentId, actor.accountId, deploymentId],
        );
        if (!parent) throw notFound(parentId);
        ancestors = [...parent.ancestorIds, parent.id];
        if (ancestors.length + 1 > MAX_FOLDER_DEPTH) throw tooDeep();
      }
      const [row] = await queryRows<{ id: number }>(
        m,
        `INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, position, user_id, created_by)
         VALUES ($1, $2, $3, $4::int[], $5, COALESCE($6::int, ${nextPositionSql('$2', '$3')}), $7, $7)
         RETURNING id`,
        [actor.accountId, deploymentId, parentId, ancestors, name, dto.position ?? null, actor.userId],
      );
      return row.id;
    });
    return this.get(actor, deploymentId, id);
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
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `UPDATE folders SET name = COALESCE($1, name), position = COALESCE($2::int, position),
         updated_by = $3, updated_at = now()
       WHERE id = $4 AND account_id = $5 AND deployment_id = $6 RETURNING id`,
      [name, dto.position ?? null, actor.userId, folderId, actor.accountId, deploymentId],
    );
    if (!rows[0]) throw notFound(folderId);
    return this.get(actor, deploymentId, folderId);
  }

  /**
   * Deletes an empty folder (FolderManage) and the grants on it; its workbooks and reports go
   * back to the root (the foreign keys set their folder to NULL). Sub-folders: 400.
   */
  async remove(actor: Principal, deploymentId: number, folderId: number): Promise<void> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderManage);
    await this.dataSource.transaction(async (m) => {
      const locked = await queryRows(
        m,
        `SELECT id FROM folders WHERE id = $1 AND account_id = $2 AND deployment_id = $3 FOR UPDATE`,
        [folderId, actor.accountId, deploymentId],
      );
      if (!locked.length) throw notFound(folderId);
      const children = await queryRows(m, `SELECT 1 FROM folders WHERE parent_id = $1 LIMIT 1`, [folderId]);
      if (children.length) {
        throw workspaceError(
          'folder_not_empty',
          `Folder ${folderId} has sub-folders; delete or move them first`,
        );
      }
      await m.query(
        `DELETE FROM policies WHERE account_id = $1 AND resource_type = 'Folder' AND resource_id = $2`,
        [actor.accountId, String(folderId)],
      );
      await m.query(`DELETE FROM folders WHERE id = $1`, [folderId]);
    });
  }

  /** The folders from the root down to this one, itself included (FolderRead on it). */
  async ancestors(actor: Principal, deploymentId: number, folderId: number): Promise<FolderDto[]> {
    await this.assertDeployment(actor, deploymentId);
    await this.assertFolder(actor, deploymentId, folderId, Action.FolderRead);
    return queryRows<FolderDto>(
      this.dataSource,
      `WITH t AS (SELECT ancestor_ids || id AS chain FROM folders WHERE id = $1 AND account_id = $2)
       SELECT ${FOLDER_COLUMNS} FROM t CROSS JOIN ${FOLDER_FROM}
       WHERE f.id = ANY(t.chain) ORDER BY array_position(t.chain, f.id)`,
      [folderId, actor.accountId],
    );
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
    await this.dataSource.transaction((m) =>
      this.moveLocked(m, actor, deploymentId, folderId, destinationId),
    );
    return this.get(actor, deploymentId, folderId);
  }

  private async moveLocked(
    m: EntityManager,
    actor: Principal,
    deploymentId: number,
    folderId: number,
    destinationId: number | null,
  ): Promise<void> {
    const locked = await queryRows<LockedFolder>(
      m,
      `SELECT id, parent_id AS "parentId", ancestor_ids AS "ancestorIds" FROM folders
       WHERE account_id = $1 AND deployment_id = $2 AND (id = $3 OR $3 = ANY(ancestor_ids) OR id = $4)
       ORDER BY id FOR UPDATE`,
      [actor.accountId, deploymentId, folderId, destinationId],
    );
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
    if (folder.parentId === destinationId) return;
    const subtreeHeight = Math.max(
      ...locked
        .filter((r) => r.id === folderId || r.ancestorIds.includes(folderId))
        .map((r) => r.ancestorIds.length - folder.ancestorIds.length + 1),
    );
    if (chain.length + subtreeHeight > MAX_FOLDER_DEPTH) throw tooDeep();
    await m.query(
      `UPDATE folders SET parent_id = $2, ancestor_ids = $3::int[], updated_by = $4, updated_at = now(),
         position = ${nextPositionSql('$5', '$2', '$1')}
       WHERE id = $1`,
      [folderId, destinationId, chain, actor.userId, deploymentId],
    );
    await m.query(
      `UPDATE folders SET ancestor_ids = $2::int[] || $1::int || ancestor_ids[array_position(ancestor_ids, $1::int) + 1:]
       WHERE account_id = $3 AND $1::int = ANY(ancestor_ids)`,
      [folderId, chain, actor.accountId],
    );
    // A folder moved into the subtree by a concurrent request after the lock was taken is
    // rewritten too (the UPDATE reads the latest rows); check the depth on what was written.
    const [{ depth }] = await queryRows<{ depth: number }>(
      m,
      `SELECT max(cardinality(ancestor_ids)) + 1 AS depth FROM folders
       WHERE account_id = $2 AND (id = $1 OR $1 = ANY(ancestor_ids))`,
      [folderId, actor.accountId],
    );
    if (depth > MAX_FOLDER_DEPTH) throw tooDeep();
  }

  /** Content at the root belongs to no folder, so only the account-wide action allows it. */
  private assertRootEdit(actor: Principal, what: string): void {
    if (!actor.actions.has(Action.FolderEdit)) {
      throw coreError('forbidden', `To ${what} the workspace root requires the FolderEdit action`);
    }
  }
}
