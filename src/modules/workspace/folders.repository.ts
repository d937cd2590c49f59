import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { isoSql } from '../../core/database/sql.js';
import { resourceOwnerSql, userJoin } from '../users/users.fragments.js';
import type { FolderDto } from './dto/folder.dto.js';
import { folderPathSql } from './workspace.fragments.js';

const INT_MAX = 2_147_483_647;

/** The Folder shape of `f`, with its parent joined as `p` and its owner as `u`: one query. */
const FOLDER_COLUMNS = `f.id, f.name, f.position, f.parent_id AS "parentId", f.deployment_id AS "deploymentId",
  ${isoSql('f.created_at')} AS "createdAt", ${isoSql('f.updated_at')} AS "updatedAt",
  f.created_by AS "createdBy", f.updated_by AS "updatedBy", 'FOLDER' AS type,
  ${resourceOwnerSql('u')} AS "user", ${folderPathSql('p')} AS "folderPath"`;
const FOLDER_FROM = `folders f LEFT JOIN folders p ON p.id = f.parent_id ${userJoin('f.user_id', 'u')}`;

/** The position after the last child of `parent` (`NULL`: the root), clamped to the column's range. */
const nextPositionSql = (deployment: string, parent: string, except = 'NULL') =>
  `(SELECT LEAST(COALESCE(MAX(s.position)::bigint + 1, 0), ${INT_MAX})::int FROM folders s
    WHERE s.deployment_id = ${deployment} AND s.parent_id IS NOT DISTINCT FROM ${parent}::int
      AND s.id IS DISTINCT FROM ${except}::int)`;

/** A folder's place in the tree, as locked before a write. */
export interface LockedFolder {
  id: number;
  parentId: number | null;
  ancestorIds: number[];
}

/** A folder with its owner and chain, as the access check resolves it. */
export interface FolderChainRow {
  id: number;
  ownerId: number;
  chain: number[] | null;
}

/** One level of the folder list: a visibility predicate over `f` and where the page starts. */
export interface FolderListQuery {
  accountId: number;
  deploymentId: number;
  parentId: number | null;
  scope: { sql: string; params: SqlParams };
  after: readonly [number, number] | null;
  limit: number;
}

/** All SQL on `folders`. Each folder keeps its chain of ancestors in `ancestor_ids`. */
@Injectable()
export class FoldersRepository {
  constructor(private readonly db: Database) {}

  /** Passes the folders of `fromUserId` to `toUserId` (the user is being deleted). */
  async handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void> {
    await this.db.query(
      `UPDATE folders SET user_id = :toUserId WHERE account_id = :accountId AND user_id = :fromUserId`,
      { accountId, fromUserId, toUserId },
    );
  }

  async exists(accountId: number, deploymentId: number, folderId: number): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM folders WHERE id = :folderId AND account_id = :accountId AND deployment_id = :deploymentId`,
      { folderId, accountId, deploymentId },
    );
    return rows.length > 0;
  }

  /** A page of one level (ordered by position, id) and the count of the whole level. */
  async list(q: FolderListQuery): Promise<{ rows: FolderDto[]; total: number }> {
    const params: Record<string, unknown> = {
      accountId: q.accountId,
      deploymentId: q.deploymentId,
      ...q.scope.params,
    };
    let filter = 'f.account_id = :accountId AND f.deployment_id = :deploymentId AND ';
    if (q.parentId === null) filter += 'f.parent_id IS NULL';
    else {
      filter += 'f.parent_id = :parentId';
      params.parentId = q.parentId;
    }
    filter += ` AND ${q.scope.sql}`;
    const keyset = q.after ? '(f.position, f.id) > (:afterPosition, :afterId)' : 'TRUE';
    const pageParams = q.after ? { ...params, afterPosition: q.after[0], afterId: q.after[1] } : params;
    const [rows, [count]] = await Promise.all([
      this.db.query<FolderDto>(
        `SELECT ${FOLDER_COLUMNS} FROM ${FOLDER_FROM} WHERE ${filter} AND ${keyset}
         ORDER BY f.position, f.id LIMIT ${q.limit}`,
        pageParams,
      ),
      this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM folders f WHERE ${filter}`, params),
    ]);
    return { rows, total: count.n };
  }

  /** The Folder shape of one folder of the deployment. */
  get(accountId: number, deploymentId: number, folderId: number): Promise<FolderDto | undefined> {
    return this.db.one<FolderDto>(
      `SELECT ${FOLDER_COLUMNS} FROM ${FOLDER_FROM}
       WHERE f.id = :folderId AND f.account_id = :accountId AND f.deployment_id = :deploymentId`,
      { folderId, accountId, deploymentId },
    );
  }

  /** Locks a folder against deletion and moves (a parent receiving a child). */
  lockShared(accountId: number, deploymentId: number, folderId: number): Promise<LockedFolder | undefined> {
    return this.db.one<LockedFolder>(
      `SELECT id, parent_id AS "parentId", ancestor_ids AS "ancestorIds" FROM folders
       WHERE id = :folderId AND account_id = :accountId AND deployment_id = :deploymentId FOR SHARE`,
      { folderId, accountId, deploymentId },
    );
  }

  /** Inserts a folder at `position`, or after the last of its siblings. Returns its id. */
  async insert(f: {
    accountId: number;
    deploymentId: number;
    parentId: number | null;
    ancestorIds: number[];
    name: string;
    position: number | null;
    userId: number;
  }): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, position, user_id, created_by)
       VALUES (:accountId, :deploymentId, :parentId, :ancestorIds::int[], :name,
         COALESCE(:position::int, ${nextPositionSql(':deploymentId', ':parentId')}), :userId, :userId)
       RETURNING id`,
      f,
    );
    return row!.id;
  }

  /** Renames and/or reorders; false when the folder is not in the deployment. */
  async update(
    accountId: number,
    deploymentId: number,
    folderId: number,
    change: { name: string | null; position: number | null; userId: number },
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE folders SET name = COALESCE(:name, name), position = COALESCE(:position::int, position),
         updated_by = :userId, updated_at = now()
       WHERE id = :folderId AND account_id = :accountId AND deployment_id = :deploymentId RETURNING id`,
      { ...change, folderId, accountId, deploymentId },
    );
    return rows.length > 0;
  }

  /** Locks a folder being deleted; its name and parent, or undefined when it is not there. */
  lockForDelete(
    accountId: number,
    deploymentId: number,
    folderId: number,
  ): Promise<{ name: string; parentId: number | null } | undefined> {
    return this.db.one(
      `SELECT name, parent_id AS "parentId" FROM folders
       WHERE id = :folderId AND account_id = :accountId AND deployment_id = :deploymentId FOR UPDATE`,
      { folderId, accountId, deploymentId },
    );
  }

  async hasChildren(folderId: number): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM folders WHERE parent_id = :folderId LIMIT 1`, {
      folderId,
    });
    return rows.length > 0;
  }

  /** Deletes a folder; the foreign keys move what it held to the root. */
  async delete(folderId: number): Promise<void> {
    await this.db.query(`DELETE FROM folders WHERE id = :folderId`, { folderId });
  }

  /** The folders from the root down to this one, itself included. */
  ancestors(accountId: number, folderId: number): Promise<FolderDto[]> {
    return this.db.query<FolderDto>(
      `WITH t AS (SELECT ancestor_ids || id AS chain FROM folders WHERE id = :folderId AND account_id = :accountId)
       SELECT ${FOLDER_COLUMNS} FROM t CROSS JOIN ${FOLDER_FROM}
       WHERE f.id = ANY(t.chain) ORDER BY array_position(t.chain, f.id)`,
      { folderId, accountId },
    );
  }

  /** Locks a folder, everything below it and the destination, in id order (no deadlocks). */
  lockSubtree(
    accountId: number,
    deploymentId: number,
    folderId: number,
    destinationId: number | null,
  ): Promise<LockedFolder[]> {
    return this.db.query<LockedFolder>(
      `SELECT id, parent_id AS "parentId", ancestor_ids AS "ancestorIds" FROM folders
       WHERE account_id = :accountId AND deployment_id = :deploymentId
         AND (id = :folderId OR :folderId = ANY(ancestor_ids) OR id = :destinationId)
       ORDER BY id FOR UPDATE`,
      { accountId, deploymentId, folderId, destinationId },
    );
  }

  /**
   * Puts a folder under the parent ending `chain` (after its last child) and rewrites the
   * chains of everything below it.
   */
  async reparent(
    accountId: number,
    deploymentId: number,
    folderId: number,
    destinationId: number | null,
    chain: number[],
    userId: number,
  ): Promise<void> {
    await this.db.query(
      `UPDATE folders SET parent_id = :destinationId, ancestor_ids = :chain::int[], updated_by = :userId,
         updated_at = now(), position = ${nextPositionSql(':deploymentId', ':destinationId', ':folderId')}
       WHERE id = :folderId`,
      { folderId, destinationId, chain, userId, deploymentId },
    );
    await this.db.query(
      `UPDATE folders
       SET ancestor_ids = :chain::int[] || :folderId::int || ancestor_ids[array_position(ancestor_ids, :folderId::int) + 1:]
       WHERE account_id = :accountId AND :folderId::int = ANY(ancestor_ids)`,
      { folderId, chain, accountId },
    );
  }

  /** The depth of the deepest folder of a subtree, as written. */
  async subtreeDepth(accountId: number, folderId: number): Promise<number> {
    const row = await this.db.one<{ depth: number }>(
      `SELECT max(cardinality(ancestor_ids)) + 1 AS depth FROM folders
       WHERE account_id = :accountId AND (id = :folderId OR :folderId = ANY(ancestor_ids))`,
      { folderId, accountId },
    );
    return row!.depth;
  }

  /** Owner and chain (root first, itself last) of each folder of `ids` in the account. */
  chains(accountId: number, ids: readonly number[]): Promise<FolderChainRow[]> {
    return this.db.query<FolderChainRow>(
      `SELECT id, user_id AS "ownerId", ancestor_ids AS chain FROM folders
       WHERE account_id = :accountId AND id = ANY(:ids)`,
      { accountId, ids },
    );
  }
}
