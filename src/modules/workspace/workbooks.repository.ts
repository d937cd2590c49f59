import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { deploymentInAccountSql } from '../deployments/deployments.fragments.js';
import type { WorkbookDto } from './dto/workbook.dto.js';
import { WorkspaceContent } from './workspace-content.js';
import {
  dashboardJsonSql,
  folderJoin,
  WORKBOOK_SHAPE_FROM as WORKBOOK_FROM,
  workbookShapeSql as workbookColumns,
} from './workspace.fragments.js';

export type Json = Record<string, unknown>;

/** A jsonb parameter: the JSON text, or SQL NULL for null and undefined. */
export const jsonParam = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));

/** The definition a by-slug upsert compares and replaces. */
export interface WorkbookDefinition {
  name: string;
  meta: Json;
  folderId: number | null;
  draft: Json | null;
}

/** The columns an update may set (undefined: left alone). */
export interface WorkbookChange {
  name?: string;
  meta?: Json;
  draft?: Json | null;
  folderId?: number | null;
  slug?: string | null;
}

/** A workbook with its owner and the folder chain it inherits grants from. */
export interface WorkbookChainRow {
  id: number;
  ownerId: number;
  chain: Array<number | null> | null;
}

/** All SQL on `workbooks`. The shaping query joins the published dashboard. */
@Injectable()
export class WorkbooksRepository {
  private columns: string | null = null;

  constructor(
    private readonly db: Database,
    private readonly content: WorkspaceContent,
  ) {}

  /** The Workbook shape's columns, made once the reports module registered the snapshots. */
  private get columnsSql(): string {
    const snapshots = this.content.snapshots();
    return (this.columns ??= workbookColumns(dashboardJsonSql('d', (d) => snapshots.jsonSql(d))));
  }

  /** Passes the workbooks of `fromUserId` to `toUserId` (the user is being deleted). */
  async handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void> {
    await this.db.query(
      `UPDATE workbooks SET user_id = :toUserId WHERE account_id = :accountId AND user_id = :fromUserId`,
      { accountId, fromUserId, toUserId },
    );
  }

  /** The Workbook shape of one row, in one query. */
  fetch(accountId: number, workbookId: number): Promise<WorkbookDto | undefined> {
    return this.db.one<WorkbookDto>(
      `SELECT ${this.columnsSql} FROM ${WORKBOOK_FROM} WHERE w.id = :workbookId AND w.account_id = :accountId`,
      { workbookId, accountId },
    );
  }

  /** Whether the deployment is in the account and, if so, the workbook's id and folder in it. */
  async locate(
    accountId: number,
    deploymentId: number,
    workbookId: number,
  ): Promise<{ deploymentExists: boolean; id: number | null; folderId: number | null }> {
    const row = await this.db.one<{ deploymentExists: boolean; id: number | null; folderId: number | null }>(
      `SELECT ${deploymentInAccountSql(':deploymentId', ':accountId')} AS "deploymentExists",
         w.id, w.folder_id AS "folderId"
       FROM (SELECT 1) one
       LEFT JOIN workbooks w ON w.id = :workbookId AND w.deployment_id = :deploymentId`,
      { accountId, deploymentId, workbookId },
    );
    return row!;
  }

  async exists(accountId: number, deploymentId: number, workbookId: number): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM workbooks WHERE id = :workbookId AND account_id = :accountId AND deployment_id = :deploymentId`,
      { workbookId, accountId, deploymentId },
    );
    return rows.length > 0;
  }

  /** A page by id and the count of all rows of the filter (`scope` over `w` and its folder `f`). */
  async list(q: {
    accountId: number;
    deploymentId: number;
    folderId: number | undefined;
    scope: { sql: string; params: SqlParams };
    afterId: number | null;
    limit: number;
  }): Promise<{ rows: WorkbookDto[]; total: number }> {
    const params: Record<string, unknown> = {
      accountId: q.accountId,
      deploymentId: q.deploymentId,
      ...q.scope.params,
    };
    let filter = 'w.account_id = :accountId AND w.deployment_id = :deploymentId';
    if (q.folderId === 0) filter += ' AND w.folder_id IS NULL';
    else if (q.folderId !== undefined) {
      filter += ' AND w.folder_id = :folderId';
      params.folderId = q.folderId;
    }
    filter += ` AND ${q.scope.sql}`;
    const keyset = q.afterId !== null ? 'w.id > :afterId' : 'TRUE';
    const pageParams = q.afterId !== null ? { ...params, afterId: q.afterId } : params;
    const [rows, [count]] = await Promise.all([
      this.db.query<WorkbookDto>(
        `SELECT ${this.columnsSql} FROM ${WORKBOOK_FROM} WHERE ${filter} AND ${keyset}
         ORDER BY w.id LIMIT ${q.limit}`,
        pageParams,
      ),
      this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM workbooks w ${folderJoin('w.folder_id', 'f')} WHERE ${filter}`,
        params,
      ),
    ]);
    return { rows, total: count.n };
  }

  /**
   * Inserts a workbook; with a slug another workbook of the deployment holds, nothing is
   * inserted and this answers undefined. Returns the new id.
   */
  async insert(w: {
    accountId: number;
    deploymentId: number;
    folderId: number | null;
    name: string;
    slug?: string;
    meta: Json;
    calculatedFields?: Json;
    draft: Json | null | undefined;
    userId: number;
  }): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, slug, meta, calculated_fields,
         dashboard_draft, user_id, created_by)
       VALUES (:accountId, :deploymentId, :folderId, :name, :slug, :meta::jsonb,
         COALESCE(:calculatedFields::jsonb, '{}'::jsonb), :draft::jsonb, :userId, :userId)
       ON CONFLICT (deployment_id, slug) WHERE slug IS NOT NULL DO NOTHING RETURNING id`,
      {
        accountId: w.accountId,
        deploymentId: w.deploymentId,
        folderId: w.folderId,
        name: w.name,
        slug: w.slug ?? null,
        meta: JSON.stringify(w.meta),
        calculatedFields: jsonParam(w.calculatedFields),
        draft: jsonParam(w.draft),
        userId: w.userId,
      },
    );
    return row?.id;
  }

  /** Locks a workbook for an update; undefined when it is gone. */
  lockSlug(workbookId: number): Promise<{ slug: string | null } | undefined> {
    return this.db.one(`SELECT slug FROM workbooks WHERE id = :workbookId FOR UPDATE`, { workbookId });
  }

  /** Locks the other workbook of the deployment holding `slug`; its id, or undefined. */
  async lockSlugHolder(deploymentId: number, slug: string, exceptId: number): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(
      `SELECT id FROM workbooks WHERE deployment_id = :deploymentId AND slug = :slug AND id <> :exceptId
       FOR UPDATE`,
      { deploymentId, slug, exceptId },
    );
    return row?.id;
  }

  async clearSlug(workbookId: number): Promise<void> {
    await this.db.query(`UPDATE workbooks SET slug = NULL, updated_at = now() WHERE id = :workbookId`, {
      workbookId,
    });
  }

  /** Sets the columns of `change` that are defined, and `updated_at`; nothing when none is. */
  async update(workbookId: number, change: WorkbookChange): Promise<void> {
    const sets: string[] = [];
    const params: Record<string, unknown> = { workbookId };
    const set = (column: string, name: string, value: unknown, cast = '') => {
      sets.push(`${column} = :${name}${cast}`);
      params[name] = value;
    };
    if (change.name !== undefined) set('name', 'name', change.name);
    if (change.meta !== undefined) set('meta', 'meta', JSON.stringify(change.meta), '::jsonb');
    if (change.draft !== undefined) set('dashboard_draft', 'draft', jsonParam(change.draft), '::jsonb');
    if (change.folderId !== undefined) set('folder_id', 'folderId', change.folderId);
    if (change.slug !== undefined) set('slug', 'slug', change.slug);
    if (sets.length === 0) return;
    await this.db.query(
      `UPDATE workbooks SET ${sets.join(', ')}, updated_at = now() WHERE id = :workbookId`,
      params,
    );
  }

  /** Sets the draft alone: `updated_at` stays (a copy's draft written after its reports). */
  async setDraft(workbookId: number, draft: Json | null): Promise<void> {
    await this.db.query(`UPDATE workbooks SET dashboard_draft = :draft::jsonb WHERE id = :workbookId`, {
      workbookId,
      draft: jsonParam(draft),
    });
  }

  /**
   * Moves a workbook; `updated_at` moves only when the folder changes (`changed`). Undefined when
   * not found.
   */
  move(
    accountId: number,
    deploymentId: number,
    workbookId: number,
    folderId: number | null,
  ): Promise<{ changed: boolean } | undefined> {
    return this.db.one<{ changed: boolean }>(
      `WITH old AS (
         SELECT id, folder_id FROM workbooks
         WHERE id = :workbookId AND account_id = :accountId AND deployment_id = :deploymentId FOR UPDATE)
       UPDATE workbooks w SET folder_id = :folderId,
         updated_at = CASE WHEN old.folder_id IS DISTINCT FROM :folderId THEN now() ELSE w.updated_at END
       FROM old WHERE w.id = old.id
       RETURNING old.folder_id IS DISTINCT FROM :folderId AS changed`,
      { workbookId, folderId, accountId, deploymentId },
    );
  }

  /** Locks a workbook being deleted; what identifies it, or undefined when it is not there. */
  lockForDelete(
    accountId: number,
    deploymentId: number,
    workbookId: number,
  ): Promise<{ name: string; slug: string | null; folderId: number | null } | undefined> {
    return this.db.one(
      `SELECT name, slug, folder_id AS "folderId" FROM workbooks
       WHERE id = :workbookId AND account_id = :accountId AND deployment_id = :deploymentId FOR UPDATE`,
      { workbookId, accountId, deploymentId },
    );
  }

  /** Deletes a workbook; its reports and dashboard follow by foreign key. */
  async delete(workbookId: number): Promise<void> {
    await this.db.query(`DELETE FROM workbooks WHERE id = :workbookId`, { workbookId });
  }

  async idBySlug(accountId: number, deploymentId: number, slug: string): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(
      `SELECT id FROM workbooks WHERE account_id = :accountId AND deployment_id = :deploymentId AND slug = :slug`,
      { accountId, deploymentId, slug },
    );
    return row?.id;
  }

  /** Locks the workbook still holding `slug` and reads its definition; undefined when it does not. */
  lockDefinition(workbookId: number, slug: string): Promise<WorkbookDefinition | undefined> {
    return this.db.one<WorkbookDefinition>(
      `SELECT name, meta, folder_id AS "folderId", dashboard_draft AS draft
       FROM workbooks WHERE id = :workbookId AND slug = :slug FOR UPDATE`,
      { workbookId, slug },
    );
  }

  async replaceDefinition(workbookId: number, next: WorkbookDefinition): Promise<void> {
    await this.db.query(
      `UPDATE workbooks SET name = :name, meta = :meta::jsonb, folder_id = :folderId,
         dashboard_draft = :draft::jsonb, updated_at = now() WHERE id = :workbookId`,
      {
        workbookId,
        name: next.name,
        meta: JSON.stringify(next.meta),
        folderId: next.folderId,
        draft: jsonParam(next.draft),
      },
    );
  }

  /** Locks a workbook being copied against changes and reads what a copy takes. */
  lockForCopy(
    workbookId: number,
  ): Promise<{ name: string; meta: Json; calculatedFields: Json; draft: Json | null } | undefined> {
    return this.db.one(
      `SELECT name, meta, calculated_fields AS "calculatedFields", dashboard_draft AS draft
       FROM workbooks WHERE id = :workbookId FOR SHARE`,
      { workbookId },
    );
  }

  /** Owner and folder chain of each workbook of `ids` in the account. */
  chains(accountId: number, ids: readonly number[]): Promise<WorkbookChainRow[]> {
    return this.db.query<WorkbookChainRow>(
      `SELECT w.id, w.user_id AS "ownerId", f.ancestor_ids || f.id AS chain
       FROM workbooks w ${folderJoin('w.folder_id', 'f')}
       WHERE w.account_id = :accountId AND w.id = ANY(:ids)`,
      { accountId, ids },
    );
  }
}
