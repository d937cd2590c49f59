import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
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
import { folderChainSql } from './content.sql.js';
import {
  canonicalJson,
  DEFAULT_WORKBOOK_NAME,
  mergeMeta,
  normalizeName,
  normalizeSlug,
} from './dashboards.js';
import type {
  CreateWorkbookDto,
  UpdateWorkbookDto,
  UpsertWorkbookDto,
  WorkbookDto,
  WorkbooksQueryDto,
} from './dto/workbook.dto.js';
import { workbooksError } from './workbooks.errors.js';
import {
  jsonParam,
  notFound,
  splitMeta,
  WORKBOOK_COLUMNS,
  WORKBOOK_FROM,
  WorkbookLookup,
  type Json,
  type MetaParts,
} from './workbooks.shared.js';

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
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly lookup: WorkbookLookup,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    query: WorkbooksQueryDto,
  ): Promise<LegacyPage<WorkbookDto>> {
    await this.lookup.assertDeployment(actor, deploymentId);
    const paging = resolvePaging(query, ['number']);
    const params: unknown[] = [actor.accountId, deploymentId];
    let filter = 'w.account_id = $1 AND w.deployment_id = $2';
    if (query.folderId === 0) filter += ' AND w.folder_id IS NULL';
    else if (query.folderId !== undefined) {
      params.push(query.folderId);
      filter += ` AND w.folder_id = $${params.length}`;
    }
    const scope = this.access.contentScope(
      actor,
      'Workbook',
      Action.WorkbookRead,
      { id: 'w.id', owner: 'w.user_id', folderChain: folderChainSql('f') },
      params.length + 1,
    );
    params.push(...scope.params);
    filter += ` AND ${scope.sql}`;
    const keyset = keysetPredicate(
      ['w.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const [rows, count] = await Promise.all([
      queryRows<WorkbookDto>(
        this.dataSource,
        `SELECT ${WORKBOOK_COLUMNS} FROM ${WORKBOOK_FROM} WHERE ${filter} AND ${keyset.sql}
         ORDER BY w.id LIMIT ${fetchLimit(paging)}`,
        [...params, ...keyset.params],
      ),
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM workbooks w LEFT JOIN folders f ON f.id = w.folder_id WHERE ${filter}`,
        params,
      ),
    ]);
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id]),
      paging,
      count[0].n,
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
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, meta, dashboard_draft, user_id, created_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $7) RETURNING id`,
      [
        actor.accountId,
        deploymentId,
        folderId,
        name,
        JSON.stringify(parts.meta),
        jsonParam(parts.draft),
        actor.userId,
      ],
    ).catch(mapDbError);
    return this.lookup.fetch(actor.accountId, rows[0].id);
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
    await this.dataSource
      .transaction(async (m) => {
        const [row] = await m.query<Array<{ slug: string | null }>>(
          `SELECT slug FROM workbooks WHERE id = $1 FOR UPDATE`,
          [workbookId],
        );
        if (!row) throw notFound('Workbook', workbookId);
        if (slug && slug !== row.slug) {
          await this.releaseSlug(m, actor, deploymentId, workbookId, slug, dto.slugTakeover === true);
        }
        const sets: string[] = [];
        const params: unknown[] = [workbookId];
        const set = (column: string, value: unknown, cast = '') => {
          params.push(value);
          sets.push(`${column} = $${params.length}${cast}`);
        };
        if (name !== undefined) set('name', name);
        if (parts) set('meta', JSON.stringify(parts.meta), '::jsonb');
        if (parts && parts.draft !== undefined) set('dashboard_draft', jsonParam(parts.draft), '::jsonb');
        if (dto.folderId !== undefined) set('folder_id', dto.folderId);
        if (slug !== undefined) set('slug', slug);
        if (sets.length > 0) {
          await m.query(`UPDATE workbooks SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
        }
      })
      .catch(mapDbError);
    return this.lookup.fetch(actor.accountId, workbookId);
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
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `UPDATE workbooks SET folder_id = $2,
         updated_at = CASE WHEN folder_id IS DISTINCT FROM $2 THEN now() ELSE updated_at END
       WHERE id = $1 AND account_id = $3 AND deployment_id = $4 RETURNING id`,
      [workbookId, folderId, actor.accountId, deploymentId],
    ).catch(mapDbError);
    if (rows.length === 0) throw notFound('Workbook', workbookId);
    return this.lookup.fetch(actor.accountId, workbookId);
  }

  /**
   * Deletes a workbook (WorkbookManage on it) with its reports and dashboard, and the grants on
   * all of them. Throws ApiError 404/403.
   */
  async remove(actor: Principal, deploymentId: number, workbookId: number): Promise<void> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
    await this.dataSource.transaction(async (m) => {
      const locked = await m.query<unknown[]>(
        `SELECT 1 FROM workbooks WHERE id = $1 AND account_id = $2 AND deployment_id = $3 FOR UPDATE`,
        [workbookId, actor.accountId, deploymentId],
      );
      if (locked.length === 0) throw notFound('Workbook', workbookId);
      // Grants have no foreign key: those on the workbook, its reports and its dashboard go now.
      await m.query(
        `DELETE FROM policies WHERE account_id = $1 AND (
           (resource_type = 'Workbook' AND resource_id = $2)
           OR (resource_type = 'Report' AND resource_id IN (SELECT id::text FROM reports WHERE workbook_id = $3))
           OR (resource_type = 'Dashboard' AND resource_id IN (SELECT id::text FROM dashboards WHERE workbook_id = $3)))`,
        [actor.accountId, String(workbookId), workbookId],
      );
      // Reports (with their placements and views) and the dashboard follow by foreign key.
      await m.query(`DELETE FROM workbooks WHERE id = $1`, [workbookId]);
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
    const [holder] = await this.dataSource.query<Array<{ id: number }>>(
      `SELECT id FROM workbooks WHERE account_id = $1 AND deployment_id = $2 AND slug = $3`,
      [actor.accountId, deploymentId, slug],
    );
    const id = holder
      ? await this.updateBySlug(actor, deploymentId, holder.id, slug, name, parts, dto.folderId)
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
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM folders WHERE id = $1 AND account_id = $2 AND deployment_id = $3`,
      [folderId, actor.accountId, deploymentId],
    );
    if (rows.length === 0) throw notFound('Folder', folderId);
    await this.access.requireAccess(actor, 'Folder', folderId, Action.FolderEdit);
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
    m: EntityManager,
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    slug: string,
    takeover: boolean,
  ): Promise<void> {
    const [holder] = await m.query<Array<{ id: number }>>(
      `SELECT id FROM workbooks WHERE deployment_id = $1 AND slug = $2 AND id <> $3 FOR UPDATE`,
      [deploymentId, slug, workbookId],
    );
    if (!holder) return;
    if (!takeover) {
      throw workbooksError(
        'slug_taken',
        `The slug "${slug}" is taken by another workbook of this deployment`,
      );
    }
    const access = await this.access.map(actor, 'Workbook', [holder.id]);
    if (!access.can(holder.id, Action.WorkbookEdit)) {
      throw coreError('forbidden', 'Taking over a slug requires WorkbookEdit on the workbook holding it');
    }
    await m.query(`UPDATE workbooks SET slug = NULL, updated_at = now() WHERE id = $1`, [holder.id]);
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
    await this.dataSource
      .transaction(async (m) => {
        const [row] = await m.query<
          Array<{ name: string; meta: Json; folderId: number | null; draft: Json | null }>
        >(
          `SELECT name, meta, folder_id AS "folderId", dashboard_draft AS draft
           FROM workbooks WHERE id = $1 AND slug = $2 FOR UPDATE`,
          [workbookId, slug],
        );
        if (!row) throw branchChanged();
        const next = {
          name: name ?? row.name,
          meta: parts ? mergeMeta(row.meta, parts.meta) : row.meta,
          folderId: folderId === undefined ? row.folderId : folderId,
          draft: parts?.draft === undefined ? row.draft : parts.draft,
        };
        // Re-applying the same definition changes nothing, not even updatedAt.
        if (canonicalJson(next) === canonicalJson(row)) return;
        await m.query(
          `UPDATE workbooks SET name = $2, meta = $3::jsonb, folder_id = $4, dashboard_draft = $5::jsonb,
             updated_at = now() WHERE id = $1`,
          [workbookId, next.name, JSON.stringify(next.meta), next.folderId, jsonParam(next.draft)],
        );
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
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, slug, meta, dashboard_draft, user_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $8)
       ON CONFLICT (deployment_id, slug) WHERE slug IS NOT NULL DO NOTHING RETURNING id`,
      [
        actor.accountId,
        deploymentId,
        folderId,
        name ?? DEFAULT_WORKBOOK_NAME,
        slug,
        JSON.stringify(mergeMeta({}, parts?.meta ?? {})),
        jsonParam(parts?.draft),
        actor.userId,
      ],
    ).catch(mapDbError);
    if (rows.length === 0) throw branchChanged();
    return rows[0].id;
  }
}
