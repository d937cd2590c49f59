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
import { folderChainSql, folderPathSql, isoSql, ownerSql } from './content.sql.js';
import {
  canonicalJson,
  copyName,
  DEFAULT_WORKBOOK_NAME,
  mergeMeta,
  normalizeName,
  normalizeSlug,
  randomPublicId,
  repointReportIds,
  validateDashboardConfig,
} from './dashboards.js';
import {
  DashboardConfigDraftInputDto,
  DashboardConfigInputDto,
  type DashboardDto,
  type PublishDashboardDto,
  type WorkbookDashboardDto,
  type WorkbookDashboardInputDto,
} from './dto/dashboard.dto.js';
import type {
  CreateWorkbookDto,
  DuplicateWorkbookDto,
  UpdateWorkbookDto,
  UpsertWorkbookDto,
  WorkbookDto,
  WorkbooksQueryDto,
} from './dto/workbook.dto.js';
import { workbooksError } from './workbooks.errors.js';

type Json = Record<string, unknown>;
type Db = Pick<DataSource | EntityManager, 'query'>;

/** A published dashboard as JSON, from the `dashboards` row joined as `d` (NULL without one). */
const DASHBOARD_JSON = `CASE WHEN d.id IS NULL THEN NULL ELSE json_build_object('id', d.id, 'publicId', d.public_id,
  'deploymentId', d.deployment_id, 'workbookId', d.workbook_id, 'status', d.status, 'allowEmbed', d.allow_embed,
  'config', d.config, 'versionNumber', d.version_number, 'versionId', d.id, 'reportSnapshots', '[]'::json,
  'title', d.title, 'createdBy', d.created_by) END`;

/** Every field of the Workbook shape, from one row of {@link WORKBOOK_FROM}. */
const WORKBOOK_COLUMNS = `w.id, w.name, w.slug, w.meta, w.calculated_fields AS "calculatedFields",
  w.deployment_id AS "deploymentId", w.folder_id AS "folderId", ${folderPathSql('f')} AS "folderPath",
  ${isoSql('w.created_at')} AS "createdAt", ${isoSql('w.updated_at')} AS "updatedAt", w.created_by AS "createdBy",
  w.user_id AS "userId", ${ownerSql('u')} AS "user", 'WORKBOOK' AS type, w.dashboard_draft AS "dashboardDraft",
  d.config AS "dashboardPublished", ${DASHBOARD_JSON} AS "publishedDashboard", NULL::boolean AS "isFavorite"`;

const WORKBOOK_FROM = `workbooks w LEFT JOIN folders f ON f.id = w.folder_id LEFT JOIN users u ON u.id = w.user_id
  LEFT JOIN dashboards d ON d.workbook_id = w.id`;

interface WorkbookRef {
  id: number;
  folderId: number | null;
}

/** Metadata with a `dashboardDraft` key taken out: undefined when absent, null to clear it. */
interface MetaParts {
  meta: Json;
  draft: Json | null | undefined;
}

const notFound = (type: string, id: number) => coreError('not_found', `${type} ${id} was not found`);

const branchChanged = () =>
  workbooksError(
    'upsert_branch_changed',
    'Another request created or removed the workbook holding this slug meanwhile; retry the request',
  );

const jsonParam = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));

/** Constraint failures a concurrent request can cause, as the errors they mean. */
function mapDbError(err: unknown): never {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505' && e.constraint === 'uq_workbooks_slug') {
    throw workbooksError('slug_taken', 'The slug is taken by another workbook of this deployment');
  }
  if (e.code === '23503' && e.constraint === 'fk_workbooks_folder') {
    throw coreError('not_found', 'The destination folder was not found');
  }
  throw err;
}

/**
 * Workbooks of a deployment with their draft and published dashboards: reads, writes, the
 * by-slug upsert used by dashboards-as-code, duplication, and publishing. Every object check goes
 * through `AccessService`; an object the caller cannot read answers 404 like a missing one.
 */
@Injectable()
export class WorkbooksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    query: WorkbooksQueryDto,
  ): Promise<LegacyPage<WorkbookDto>> {
    await this.assertDeployment(actor, deploymentId);
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
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
    return this.fetch(actor.accountId, workbookId);
  }

  /** At the root this needs WorkbookEdit account-wide; in a folder, FolderEdit on that folder. */
  async create(actor: Principal, deploymentId: number, dto: CreateWorkbookDto): Promise<WorkbookDto> {
    await this.assertDeployment(actor, deploymentId);
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
    return this.fetch(actor.accountId, rows[0].id);
  }

  async update(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: UpdateWorkbookDto,
  ): Promise<WorkbookDto> {
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
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
    return this.fetch(actor.accountId, workbookId);
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
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
    if (folderId !== null) await this.assertFolderEditable(actor, deploymentId, folderId);
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `UPDATE workbooks SET folder_id = $2,
         updated_at = CASE WHEN folder_id IS DISTINCT FROM $2 THEN now() ELSE updated_at END
       WHERE id = $1 AND account_id = $3 AND deployment_id = $4 RETURNING id`,
      [workbookId, folderId, actor.accountId, deploymentId],
    ).catch(mapDbError);
    if (rows.length === 0) throw notFound('Workbook', workbookId);
    return this.fetch(actor.accountId, workbookId);
  }

  /**
   * Deletes a workbook (WorkbookManage on it) with its reports and dashboard, and the grants on
   * all of them. Throws ApiError 404/403.
   */
  async remove(actor: Principal, deploymentId: number, workbookId: number): Promise<void> {
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
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
    await this.assertDeployment(actor, deploymentId);
    const name = dto.name == null ? undefined : normalizeName(dto.name);
    const parts = dto.meta == null ? undefined : await splitMeta(dto.meta);
    const [holder] = await this.dataSource.query<Array<{ id: number }>>(
      `SELECT id FROM workbooks WHERE account_id = $1 AND deployment_id = $2 AND slug = $3`,
      [actor.accountId, deploymentId, slug],
    );
    const id = holder
      ? await this.updateBySlug(actor, deploymentId, holder.id, slug, name, parts, dto.folderId)
      : await this.createWithSlug(actor, deploymentId, slug, name, parts, dto.folderId ?? null);
    return this.fetch(actor.accountId, id);
  }

  /**
   * Copies a workbook with its reports, draft and published dashboard (report references in
   * widgets re-pointed at the copies). Grants, view history, placements and signed embedding are
   * not copied. The copy lands next to the source when the caller may edit that folder, else at
   * the root (which needs WorkbookEdit account-wide).
   */
  async duplicate(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: DuplicateWorkbookDto,
  ): Promise<WorkbookDto> {
    await this.assertDeployment(actor, deploymentId);
    if (dto.shared === true) {
      throw workbooksError(
        'shared_workspace_unavailable',
        'Cloning from the shared workspace is only available to creator-mode embed sessions',
      );
    }
    const source = await this.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
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
    const copyId = await this.dataSource.transaction((m) =>
      this.copyWorkbook(m, actor, deploymentId, workbookId, folderId),
    );
    return this.fetch(actor.accountId, copyId);
  }

  async updateDashboard(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: WorkbookDashboardInputDto,
  ): Promise<WorkbookDashboardDto> {
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    if (dto.dashboardDraft !== undefined) {
      await this.dataSource.query(
        `UPDATE workbooks SET dashboard_draft = $2::jsonb, updated_at = now() WHERE id = $1`,
        [workbookId, jsonParam(dto.dashboardDraft)],
      );
    }
    const [row] = await this.dataSource.query<WorkbookDashboardDto[]>(
      `SELECT w.dashboard_draft AS "dashboardDraft", d.config AS "dashboardPublished"
       FROM workbooks w LEFT JOIN dashboards d ON d.workbook_id = w.id WHERE w.id = $1`,
      [workbookId],
    );
    if (!row) throw notFound('Workbook', workbookId);
    return row;
  }

  /**
   * Publishes `config`, or the current draft when it is omitted: the first publish creates the
   * dashboard with a fresh public id, later ones replace its config and bump `versionNumber`.
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
    await this.locate(actor, deploymentId, workbookId, Action.WorkbookEdit);
    const dashboardId = await this.dataSource.transaction(async (m) => {
      // Locking the workbook serialises publishes of one dashboard.
      const [workbook] = await m.query<Array<{ draft: Json | null }>>(
        `SELECT dashboard_draft AS draft FROM workbooks WHERE id = $1 FOR UPDATE`,
        [workbookId],
      );
      if (!workbook) throw notFound('Workbook', workbookId);
      let config: Json;
      if (dto.config != null) config = JSON.parse(JSON.stringify(dto.config)) as Json;
      else if (workbook.draft == null) {
        throw workbooksError('nothing_to_publish', 'The workbook has no draft to publish; send a config');
      } else
        config = await validateDashboardConfig(DashboardConfigInputDto, workbook.draft, 'dashboardDraft');
      const [existing] = await m.query<Array<{ id: number }>>(
        `SELECT id FROM dashboards WHERE workbook_id = $1`,
        [workbookId],
      );
      if (dto.dashboardId != null && dto.dashboardId !== existing?.id) {
        throw workbooksError(
          'dashboard_not_found',
          `Dashboard ${dto.dashboardId} is not the published dashboard of this workbook`,
        );
      }
      if (existing) {
        await m.query(
          `UPDATE dashboards SET config = $2::jsonb, version_number = version_number + 1, status = 'published',
             title = CASE WHEN $3::boolean THEN $4::varchar ELSE title END,
             allow_embed = COALESCE($5::boolean, allow_embed), updated_at = now()
           WHERE id = $1`,
          [
            existing.id,
            JSON.stringify(config),
            dto.title !== undefined,
            dto.title ?? null,
            dto.allowEmbed ?? null,
          ],
        );
        return existing.id;
      }
      const rows = await queryRows<{ id: number }>(
        m,
        `INSERT INTO dashboards (account_id, deployment_id, workbook_id, public_id, title, config, status,
           allow_embed, version_number, created_by)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'published', $7, 1, $8) RETURNING id`,
        [
          actor.accountId,
          deploymentId,
          workbookId,
          randomPublicId(),
          dto.title ?? null,
          JSON.stringify(config),
          dto.allowEmbed ?? false,
          actor.userId,
        ],
      );
      return rows[0].id;
    });
    const [dashboard] = await this.dataSource.query<Array<{ dashboard: DashboardDto }>>(
      `SELECT ${DASHBOARD_JSON} AS dashboard FROM dashboards d WHERE d.id = $1`,
      [dashboardId],
    );
    return dashboard.dashboard;
  }

  // --- helpers -------------------------------------------------------------------------------

  /** The Workbook shape of one row, in one query. */
  private async fetch(accountId: number, workbookId: number, db: Db = this.dataSource): Promise<WorkbookDto> {
    const [row] = await db.query<WorkbookDto[]>(
      `SELECT ${WORKBOOK_COLUMNS} FROM ${WORKBOOK_FROM} WHERE w.id = $1 AND w.account_id = $2`,
      [workbookId, accountId],
    );
    if (!row) throw notFound('Workbook', workbookId);
    return row;
  }

  private async assertDeployment(actor: Principal, deploymentId: number): Promise<void> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM deployments WHERE id = $1 AND account_id = $2`,
      [deploymentId, actor.accountId],
    );
    if (rows.length === 0)
      throw workbooksError('deployment_not_found', `Deployment ${deploymentId} was not found`);
  }

  /**
   * Finds a workbook of the deployment and checks `action` on it: 404 when the deployment or
   * workbook is missing or unreadable, 403 when readable without `action`.
   */
  private async locate(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    action: Action,
  ): Promise<WorkbookRef> {
    const [row] = await this.dataSource.query<Array<{ id: number | null; folderId: number | null }>>(
      `SELECT w.id, w.folder_id AS "folderId"
       FROM deployments dp LEFT JOIN workbooks w ON w.id = $3 AND w.deployment_id = dp.id
       WHERE dp.id = $1 AND dp.account_id = $2`,
      [deploymentId, actor.accountId, workbookId],
    );
    if (!row) throw workbooksError('deployment_not_found', `Deployment ${deploymentId} was not found`);
    if (row.id === null) throw notFound('Workbook', workbookId);
    await this.access.assert(actor, 'Workbook', workbookId, action, Action.WorkbookRead);
    return { id: row.id, folderId: row.folderId };
  }

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
    await this.access.assert(actor, 'Folder', folderId, Action.FolderEdit, Action.FolderRead);
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
    await this.access.assert(actor, 'Workbook', workbookId, Action.WorkbookManage, Action.WorkbookRead);
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

  /** The copy itself, inside the caller's transaction. Returns the new workbook's id. */
  private async copyWorkbook(
    m: EntityManager,
    actor: Principal,
    deploymentId: number,
    sourceId: number,
    folderId: number | null,
  ): Promise<number> {
    const [source] = await m.query<
      Array<{ name: string; meta: Json; calculatedFields: Json; draft: Json | null }>
    >(
      `SELECT name, meta, calculated_fields AS "calculatedFields", dashboard_draft AS draft
       FROM workbooks WHERE id = $1 FOR SHARE`,
      [sourceId],
    );
    if (!source) throw notFound('Workbook', sourceId);
    // New report ids are drawn first, so the copied configs can point at them.
    const reports = await m.query<Array<{ oldId: number; newId: number; hasPublicId: boolean }>>(
      `SELECT id AS "oldId", nextval(pg_get_serial_sequence('reports', 'id'))::int AS "newId",
              public_id IS NOT NULL AS "hasPublicId"
       FROM reports WHERE workbook_id = $1 ORDER BY id`,
      [sourceId],
    );
    const ids = new Map(reports.map((r) => [r.oldId, r.newId]));
    const [copy] = await queryRows<{ id: number }>(
      m,
      `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, meta, calculated_fields, dashboard_draft,
         user_id, created_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8, $8) RETURNING id`,
      [
        actor.accountId,
        deploymentId,
        folderId,
        copyName(source.name),
        JSON.stringify(source.meta),
        JSON.stringify(source.calculatedFields),
        jsonParam(source.draft && repointReportIds(source.draft, ids)),
        actor.userId,
      ],
    );
    if (reports.length > 0) {
      await m.query(
        `INSERT INTO reports (id, account_id, deployment_id, public_id, folder_id, workbook_id, name, title,
           description, json_query, sql_query, meta, pivot_items, source, version, user_id, created_by)
         SELECT c.new_id, r.account_id, r.deployment_id, c.public_id,
                CASE WHEN r.folder_id IS NULL THEN NULL ELSE $4::int END, $5, r.name, r.title, r.description,
                r.json_query, r.sql_query, r.meta, r.pivot_items, r.source, 1, $6, $6
         FROM unnest($1::int[], $2::int[], $3::text[]) AS c(old_id, new_id, public_id)
         JOIN reports r ON r.id = c.old_id`,
        [
          reports.map((r) => r.oldId),
          reports.map((r) => r.newId),
          reports.map((r) => (r.hasPublicId ? randomPublicId() : null)),
          folderId,
          copy.id,
          actor.userId,
        ],
      );
    }
    const [dashboard] = await m.query<Array<{ title: string | null; config: Json }>>(
      `SELECT title, config FROM dashboards WHERE workbook_id = $1`,
      [sourceId],
    );
    if (dashboard) {
      await m.query(
        `INSERT INTO dashboards (account_id, deployment_id, workbook_id, public_id, title, config, status,
           allow_embed, version_number, created_by)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'published', false, 1, $7)`,
        [
          actor.accountId,
          deploymentId,
          copy.id,
          randomPublicId(),
          dashboard.title,
          JSON.stringify(repointReportIds(dashboard.config, ids)),
          actor.userId,
        ],
      );
    }
    return copy.id;
  }
}

/** Takes a `dashboardDraft` key out of metadata, validated as a draft. */
async function splitMeta(meta: Json): Promise<MetaParts> {
  if (!Object.prototype.hasOwnProperty.call(meta, 'dashboardDraft')) return { meta, draft: undefined };
  const { dashboardDraft, ...rest } = meta;
  const draft =
    dashboardDraft === null
      ? null
      : await validateDashboardConfig(DashboardConfigDraftInputDto, dashboardDraft, 'meta.dashboardDraft');
  return { meta: rest, draft };
}
