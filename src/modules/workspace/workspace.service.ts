import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Action, contentActions, type ContentType } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { clientFailure } from '../../core/http/bulk.js';
import { coreError } from '../../core/http/api-error.js';
import { buildPage, DEFAULT_PAGE_SIZE, type Page, type Paging } from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { ReportsService } from '../reports/reports.service.js';
import {
  folderPathSql,
  isoSql,
  ownerSql,
  WORKSPACE_ITEM_TYPES,
  type WorkspaceItemType,
} from './content.sql.js';
import type {
  BulkDeleteWorkspaceObjectsDto,
  BulkDeleteWorkspaceObjectsResponseDto,
  BulkMoveWorkspaceObjectsDto,
  BulkMoveWorkspaceObjectsResponseDto,
  MoveWorkspaceObjectDto,
  OrderDirection,
  WorkspaceBulkFailureDto,
  WorkspaceItemDto,
  WorkspaceItemRefDto,
  WorkspaceOrderField,
  WorkspaceQueryDto,
} from './dto/workspace.dto.js';
import { FoldersService } from './folders.service.js';
import { WorkbooksService } from './workbooks.service.js';

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** Order of the types among items with the same sort key; also the cursor's type slot. */
const TYPE_ORDER: Record<WorkspaceItemType, number> = { FOLDER: 0, WORKBOOK: 1, REPORT: 2 };

/** Sort key of each order field: a timestamp as integer microseconds (exact), a name lowercased. */
const SORT_KEY: Record<WorkspaceOrderField, { sql: (alias: string) => string; kind: 'text' | 'bigint' }> = {
  updated_at: { sql: (a) => micros(`${a}.updated_at`), kind: 'bigint' },
  created_at: { sql: (a) => micros(`${a}.created_at`), kind: 'bigint' },
  name: { sql: (a) => `lower(${a}.name)`, kind: 'text' },
  viewer_last_viewed_at: { sql: () => micros('rv.last_viewed_at'), kind: 'bigint' },
};

function micros(expr: string): string {
  return `(extract(epoch FROM ${expr}) * 1000000)::bigint`;
}

/** One row of the feed's sort: rank (0 folders, 1 the rest), position, key, type, id. */
interface FeedKey {
  rank: number;
  pos: number;
  skey: string | number | null;
  tord: number;
  id: number;
}

/** A cursor of the feed: the ordering it belongs to, then the full sort key of its row. */
type FeedCursor = [
  WorkspaceOrderField,
  OrderDirection,
  number,
  number,
  string | number | null,
  number,
  number,
];

class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    return `$${this.values.push(value)}`;
  }

  /** Appends a predicate built from `firstParam` onward (AccessService style) and returns its SQL. */
  scope(build: (firstParam: number) => { sql: string; params: unknown[] }): string {
    const { sql, params } = build(this.values.length + 1);
    this.values.push(...params);
    return sql;
  }
}

const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

function decodeFeedCursor(after: string, field: WorkspaceOrderField, dir: OrderDirection): FeedKey {
  let v: unknown = null;
  try {
    v = /^[A-Za-z0-9_-]+$/.test(after) ? JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) : null;
  } catch {
    v = null;
  }
  const ok =
    Array.isArray(v) &&
    v.length === 7 &&
    v[0] === field &&
    v[1] === dir &&
    isInt(v[2], 0, 1) &&
    isInt(v[3], INT_MIN, INT_MAX) &&
    (v[4] === null ||
      (SORT_KEY[field].kind === 'text'
        ? typeof v[4] === 'string' && v[4].length <= 1000 && !v[4].includes('\u0000')
        : Number.isSafeInteger(v[4]))) &&
    isInt(v[5], 0, 2) &&
    isInt(v[6], 1, INT_MAX);
  if (!ok) {
    throw coreError('invalid_cursor', 'after is not a cursor returned by this list with this ordering');
  }
  const c = v as FeedCursor;
  return { rank: c[2], pos: c[3], skey: c[4], tord: c[5], id: c[6] };
}

/**
 * `row > cursor` in the order of `cols` (lexicographic, each column with its own direction;
 * nullable columns sort NULLS LAST in both directions).
 */
function keysetAfter(
  cols: ReadonlyArray<{ expr: string; dir: OrderDirection; cast: string; nullable?: boolean }>,
  values: ReadonlyArray<unknown>,
  p: Params,
): string {
  const build = (i: number): string => {
    const { expr, dir, cast, nullable } = cols[i];
    const op = dir === 'ASC' ? '>' : '<';
    const value = values[i];
    if (i === cols.length - 1) return `${expr} ${op} ${p.add(value)}::${cast}`;
    const rest = build(i + 1);
    if (nullable && value === null) return `(${expr} IS NULL AND ${rest})`;
    const param = `${p.add(value)}::${cast}`;
    const later = nullable ? `${expr} ${op} ${param} OR ${expr} IS NULL` : `${expr} ${op} ${param}`;
    return `(${later} OR (${expr} = ${param} AND ${rest}))`;
  };
  return build(0);
}

/** The status and message an HTTP error would have answered; null for anything unexpected. */
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

const CONTENT_TYPE: Record<WorkspaceItemType, ContentType> = {
  FOLDER: 'Folder',
  WORKBOOK: 'Workbook',
  REPORT: 'Report',
};

/**
 * The unified workspace: one feed of folders, workbooks and reports, and moving or deleting
 * any of them one at a time or in bulk. Folders are handled here; workbooks and reports by
 * their own services, which apply the same access rules as their own endpoints.
 */
@Injectable()
export class WorkspaceService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly folders: FoldersService,
    private readonly workbooks: WorkbooksService,
    private readonly reports: ReportsService,
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
    const after = query.after !== undefined ? decodeFeedCursor(query.after, field, dir) : null;
    const key = SORT_KEY[field];

    const p = new Params();
    const account = p.add(actor.accountId);
    const deployment = p.add(deploymentId);
    const folderParam = folderId !== null ? p.add(folderId) : null;
    const searchParam = search !== null ? p.add(likePattern(search)) : null;
    /** Where an item whose containing folder is joined as `folder` (id column `column`) belongs. */
    const location = (column: string, folder: string): string => {
      if (searchParam === null)
        return folderParam === null ? `${column} IS NULL` : `${column} = ${folderParam}`;
      if (folderParam === null) return 'TRUE';
      return `(${folder}.id = ${folderParam} OR ${folderParam} = ANY(${folder}.ancestor_ids))`;
    };
    const named = (alias: string) => (searchParam === null ? 'TRUE' : `${alias}.name ILIKE ${searchParam}`);
    const scope = (type: WorkspaceItemType, alias: string, folder: string) =>
      p.scope((firstParam) =>
        this.access.contentScope(
          actor,
          CONTENT_TYPE[type],
          contentActions(CONTENT_TYPE[type])[0],
          {
            id: `${alias}.id`,
            owner: `${alias}.user_id`,
            folderChain: `(${folder}.ancestor_ids || ${folder}.id)`,
          },
          firstParam,
        ),
      );

    const branches: string[] = [];
    if (types.has('FOLDER')) {
      branches.push(`SELECT 0 AS rank, f.position AS pos, NULL::${key.kind} AS skey, ${TYPE_ORDER.FOLDER} AS tord, f.id
        FROM folders f LEFT JOIN folders p ON p.id = f.parent_id
        WHERE f.account_id = ${account} AND f.deployment_id = ${deployment} AND ${location('f.parent_id', 'p')}
          AND ${named('f')} AND ${scope('FOLDER', 'f', 'f')}`);
    }
    if (types.has('WORKBOOK')) {
      const skey = field === 'viewer_last_viewed_at' ? `NULL::${key.kind}` : key.sql('w');
      branches.push(`SELECT 1 AS rank, 0 AS pos, ${skey} AS skey, ${TYPE_ORDER.WORKBOOK} AS tord, w.id
        FROM workbooks w LEFT JOIN folders wf ON wf.id = w.folder_id
        WHERE w.account_id = ${account} AND w.deployment_id = ${deployment} AND ${location('w.folder_id', 'wf')}
          AND ${named('w')} AND ${scope('WORKBOOK', 'w', 'wf')}`);
    }
    if (types.has('REPORT')) {
      const views =
        field === 'viewer_last_viewed_at'
          ? `LEFT JOIN report_views rv ON rv.report_id = r.id AND rv.user_id = ${p.add(actor.userId)}`
          : '';
      branches.push(`SELECT 1 AS rank, 0 AS pos, ${key.sql('r')} AS skey, ${TYPE_ORDER.REPORT} AS tord, r.id
        FROM reports r LEFT JOIN folders rf ON rf.id = r.folder_id ${views}
        WHERE r.account_id = ${account} AND r.deployment_id = ${deployment} AND r.workbook_id IS NULL
          AND ${location('r.folder_id', 'rf')} AND ${named('r')} AND ${scope('REPORT', 'r', 'rf')}`);
    }
    const keyset = after
      ? keysetAfter(
          [
            { expr: 'x.rank', dir: 'ASC', cast: 'int' },
            { expr: 'x.pos', dir: 'ASC', cast: 'int' },
            { expr: 'x.skey', dir, cast: key.kind, nullable: true },
            { expr: 'x.tord', dir: 'ASC', cast: 'int' },
            { expr: 'x.id', dir: 'ASC', cast: 'int' },
          ],
          [after.rank, after.pos, after.skey, after.tord, after.id],
          p,
        )
      : 'TRUE';
    const order = (t: string) => `${t}.rank, ${t}.pos, ${t}.skey ${dir} NULLS LAST, ${t}.tord, ${t}.id`;
    const rows = await queryRows<FeedKey & { item: WorkspaceItemDto }>(
      this.dataSource,
      `WITH page AS (
         SELECT x.* FROM (${branches.join('\nUNION ALL\n')}) x
         WHERE ${keyset} ORDER BY ${order('x')} LIMIT ${first + 1}
       )
       SELECT page.rank, page.pos, page.skey, page.tord, page.id,
         CASE page.tord
           WHEN 0 THEN json_build_object('type', 'FOLDER', 'id', f.id, 'name', f.name,
             'deploymentId', f.deployment_id, 'folderId', f.parent_id, 'folderPath', ${folderPathSql('p')},
             'parentId', f.parent_id, 'position', f.position, 'createdAt', ${isoSql('f.created_at')},
             'updatedAt', ${isoSql('f.updated_at')}, 'createdBy', f.created_by, 'userId', f.user_id,
             'user', ${ownerSql('u')})
           WHEN 1 THEN json_build_object('type', 'WORKBOOK', 'id', w.id, 'name', w.name,
             'deploymentId', w.deployment_id, 'folderId', w.folder_id, 'folderPath', ${folderPathSql('wf')},
             'slug', w.slug, 'createdAt', ${isoSql('w.created_at')}, 'updatedAt', ${isoSql('w.updated_at')},
             'createdBy', w.created_by, 'userId', w.user_id, 'user', ${ownerSql('u')})
           ELSE json_build_object('type', 'REPORT', 'id', r.id, 'name', r.name,
             'deploymentId', r.deployment_id, 'folderId', r.folder_id, 'folderPath', ${folderPathSql('rf')},
             'publicId', r.public_id, 'createdAt', ${isoSql('r.created_at')}, 'updatedAt', ${isoSql('r.updated_at')},
             'createdBy', r.created_by, 'userId', r.user_id, 'user', ${ownerSql('u')})
         END AS item
       FROM page
       LEFT JOIN folders f ON page.tord = 0 AND f.id = page.id
       LEFT JOIN folders p ON p.id = f.parent_id
       LEFT JOIN workbooks w ON page.tord = 1 AND w.id = page.id
       LEFT JOIN folders wf ON wf.id = w.folder_id
       LEFT JOIN reports r ON page.tord = 2 AND r.id = page.id
       LEFT JOIN folders rf ON rf.id = r.folder_id
       LEFT JOIN users u ON u.id = COALESCE(f.user_id, w.user_id, r.user_id)
       ORDER BY ${order('page')}`,
      p.values,
    );
    const paging: Paging = { mode: 'cursor', first, after: after ? [after.id] : null };
    return buildPage(
      rows,
      paging,
      (r) => {
        // node-postgres reads bigint as a string; microseconds since 1970 fit a double exactly.
        const skey = r.skey === null || key.kind === 'text' ? r.skey : Number(r.skey);
        return [field, dir, r.rank, r.pos, skey, r.tord, r.id] satisfies FeedCursor;
      },
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
        else await this.reports.remove(actor, deploymentId, item.id);
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
    return (await this.reports.move(actor, deploymentId, item.id, folderId)) as unknown as WorkspaceItemDto;
  }

  private failure(item: WorkspaceItemRefDto, e: unknown): WorkspaceBulkFailureDto {
    const error = clientFailure(e);
    if (!error) throw e;
    return { type: item.type, id: item.id, error };
  }
}
