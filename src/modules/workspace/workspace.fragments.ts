/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
import { isoSql } from '../../core/database/sql-text.js';
import { resourceOwnerSql, userJoin } from '../users/users.fragments.js';
import type { SqlParams } from '../../core/database/named-params.js';
import type { CursorValue } from '../../core/http/pagination.js';
import type { OrderDirection, WorkspaceOrderField } from './dto/workspace.dto.js';

/** One folder of a `folderPath`, from the root down. */
export interface FolderPathEntry {
  id: number;
  name: string;
}

/**
 * Joins the folder whose id is the caller's expression `folderId` as `alias` (a LEFT JOIN: no
 * row at the workspace root). Read it with {@link folderChainSql} and {@link folderPathSql}.
 */
export const folderJoin = (folderId: string, alias: string): string =>
  `LEFT JOIN folders ${alias} ON ${alias}.id = ${folderId}`;

/**
 * The folders of one deployment as a FROM item aliased `alias`, with the columns of the folders
 * table (`id`, `name`, `parent_id`, `position`, `user_id`, `ancestor_ids`, ...); `accountId` and
 * `deploymentId` are the caller's SQL expressions.
 */
export const deploymentFoldersSql = (
  alias: string,
  at: { accountId: string; deploymentId: string },
): string =>
  `(SELECT * FROM folders WHERE account_id = ${at.accountId} AND deployment_id = ${at.deploymentId}) ${alias}`;

/**
 * The ids (an `integer[]`) of the chain of the folder joined as `folder`, root first and the
 * folder itself last (`{NULL}` without one): what an item in that folder inherits grants from.
 */
export const folderChainSql = (folder: string): string => `(${folder}.ancestor_ids || ${folder}.id)`;

/**
 * The `folderPath` JSON of an item whose containing folder is joined as `folder` (possibly by a
 * LEFT JOIN that found nothing): `[{id, name}]` from the root down, `[]` at the root.
 */
export const folderPathSql = (folder: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('id', pf.id, 'name', pf.name)
     ORDER BY array_position(${folderChainSql(folder)}, pf.id))
   FROM folders pf WHERE pf.id = ANY(${folderChainSql(folder)})), '[]'::json)`;

/**
 * Every field of the Workbook shape, as columns, over a row of {@link WORKBOOK_SHAPE_FROM};
 * `dashboard` is the published dashboard's JSON from the row joined as `d` ({@link dashboardJsonSql}).
 */
export const workbookShapeSql = (
  dashboard: string,
) => `w.id, w.name, w.slug, w.meta, w.calculated_fields AS "calculatedFields",
  w.deployment_id AS "deploymentId", w.folder_id AS "folderId", ${folderPathSql('f')} AS "folderPath",
  ${isoSql('w.created_at')} AS "createdAt", ${isoSql('w.updated_at')} AS "updatedAt", w.created_by AS "createdBy",
  w.user_id AS "userId", ${resourceOwnerSql('u')} AS "user", 'WORKBOOK' AS type, w.dashboard_draft AS "dashboardDraft",
  d.config AS "dashboardPublished", ${dashboard} AS "publishedDashboard", NULL::boolean AS "isFavorite"`;

/** What {@link workbookShapeSql} reads: the workbook `w`, its folder `f`, its owner `u` and its dashboard `d`. */
export const WORKBOOK_SHAPE_FROM = `workbooks w ${folderJoin('w.folder_id', 'f')} ${userJoin('w.user_id', 'u')}
  LEFT JOIN dashboards d ON d.workbook_id = w.id`;

/**
 * The folders a resource inherits grants from, nearest first, from a chain as
 * {@link folderChainSql} selects it (root first; `{NULL}` or null without a folder).
 */
export function folderRefs(chain: Array<number | null> | null): Array<{ type: 'Folder'; id: number }> {
  return (chain ?? [])
    .filter((id): id is number => id !== null)
    .reverse()
    .map((id) => ({ type: 'Folder' as const, id }));
}

/** The JSON array of a dashboard's report snapshots, as a function of the dashboard's alias. */
export type SnapshotsJsonSql = (d: string) => string;

/**
 * A published dashboard as JSON (the Dashboard shape), from the `dashboards` row joined as `d`;
 * NULL without one. Its `reportSnapshots` are the reports module's: `snapshots` writes them
 * (`reportSnapshotsJsonSql` of reports.fragments.ts; `WorkspaceContent.snapshots().jsonSql` here).
 */
export const dashboardJsonSql = (d: string, snapshots: SnapshotsJsonSql): string =>
  `CASE WHEN ${d}.id IS NULL THEN NULL ELSE json_build_object('id', ${d}.id, 'publicId', ${d}.public_id,
  'deploymentId', ${d}.deployment_id, 'workbookId', ${d}.workbook_id, 'status', ${d}.status, 'allowEmbed', ${d}.allow_embed,
  'config', ${d}.config, 'versionNumber', ${d}.version_number, 'versionId', ${d}.id,
  'reportSnapshots', ${snapshots(d)}, 'title', ${d}.title, 'createdBy', ${d}.created_by) END`;

/**
 * The dashboard published as `publicId` (or with the id `id`) in `accountId` and `deploymentId`
 * (the caller's SQL expressions), as a FROM item aliased `alias` with the columns `workbook_id`,
 * `allow_embed` and `dashboard` (the Dashboard JSON, its snapshots written by `snapshots`); no row
 * when there is none.
 */
export const publishedDashboardSql = (
  alias: string,
  at: ({ publicId: string } | { id: string }) & { accountId: string; deploymentId: string },
  snapshots: SnapshotsJsonSql,
): string =>
  `(SELECT d.workbook_id, d.allow_embed, ${dashboardJsonSql('d', snapshots)} AS dashboard FROM dashboards d
    WHERE ${'id' in at ? `d.id = ${at.id}` : `d.public_id = ${at.publicId}`}
      AND d.account_id = ${at.accountId} AND d.deployment_id = ${at.deploymentId}
      AND d.status = 'published') ${alias}`;

/** The `allow_embed` flag of the dashboard of the workbook `workbookId` (an expression); NULL without one. */
export const dashboardAllowEmbedSql = (workbookId: string): string =>
  `(SELECT da.allow_embed FROM dashboards da WHERE da.workbook_id = ${workbookId})`;

/*
 * An audience's view of a deployment's workspace (the users of an embed tenant, say), in the
 * order of the feed of `GET /workspace`. The audience sees the workbooks a caller's predicate
 * admits; the folders holding one of them, at any depth, are shown as the way to them, and nothing
 * else in those folders is. Owners are never shown to an audience.
 */

/*
 * The order of a workspace feed, shared by the workspace feed (`workspace-feed.repository.ts`)
 * and the audience feed below: folders first by position, then the other items by the order
 * field, then type and id. A row's place is its {@link FeedKey}; a page continues after the key
 * its cursor carries.
 */

/** A timestamp expression as integer microseconds (exact), the sort key of timestamps. */
export const microsSql = (expr: string): string => `(extract(epoch FROM ${expr}) * 1000000)::bigint`;

/**
 * Sort key of each order field: a timestamp as integer microseconds, a name lowercased. Only
 * reports have a viewer's last view (their kind joins it); other items sort NULL there.
 */
export const FEED_SORT_KEY: Record<
  WorkspaceOrderField,
  { sql: (alias: string) => string; kind: 'text' | 'bigint' }
> = {
  updated_at: { sql: (a) => microsSql(`${a}.updated_at`), kind: 'bigint' },
  created_at: { sql: (a) => microsSql(`${a}.created_at`), kind: 'bigint' },
  name: { sql: (a) => `lower(${a}.name)`, kind: 'text' },
  viewer_last_viewed_at: { sql: () => 'NULL::bigint', kind: 'bigint' },
};

/** One row's place in a feed: rank (0 folders, 1 the rest), position, sort key, type, id. */
export interface FeedKey {
  rank: number;
  pos: number;
  skey: string | number | null;
  tord: number;
  id: number;
}

/** `ORDER BY` of feed rows aliased `t` (columns `rank`, `pos`, `skey`, `tord`, `id`). */
export const feedOrderSql = (t: string, dir: OrderDirection): string =>
  `${t}.rank, ${t}.pos, ${t}.skey ${dir} NULLS LAST, ${t}.tord, ${t}.id`;

/**
 * `row > after` in the order of {@link feedOrderSql} over rows aliased `t` (`TRUE` without a
 * cursor); the cursor's values become `:after<i>` in `params`.
 */
export function feedAfterSql(
  t: string,
  after: FeedKey | null,
  dir: OrderDirection,
  kind: 'text' | 'bigint',
  params: Record<string, unknown>,
): string {
  if (!after) return 'TRUE';
  const cols = [
    { expr: `${t}.rank`, dir: 'ASC', cast: 'int', value: after.rank },
    { expr: `${t}.pos`, dir: 'ASC', cast: 'int', value: after.pos },
    { expr: `${t}.skey`, dir, cast: kind, value: after.skey, nullable: true },
    { expr: `${t}.tord`, dir: 'ASC', cast: 'int', value: after.tord },
    { expr: `${t}.id`, dir: 'ASC', cast: 'int', value: after.id },
  ];
  const param = (i: number) => {
    params[`after${i}`] = cols[i].value;
    return `:after${i}::${cols[i].cast}`;
  };
  // Lexicographic, each column with its own direction; a nullable column sorts NULLS LAST both ways.
  const build = (i: number): string => {
    const { expr, nullable, value } = cols[i];
    const op = cols[i].dir === 'ASC' ? '>' : '<';
    if (i === cols.length - 1) return `${expr} ${op} ${param(i)}`;
    const rest = build(i + 1);
    if (nullable && value === null) return `(${expr} IS NULL AND ${rest})`;
    const later = nullable ? `${expr} ${op} ${param(i)} OR ${expr} IS NULL` : `${expr} ${op} ${param(i)}`;
    return `(${later} OR (${expr} = ${param(i)} AND ${rest}))`;
  };
  return build(0);
}

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;
const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

/** A feed's cursor: the ordering it belongs to, then the {@link FeedKey} of its row. */
export function feedCursor(field: WorkspaceOrderField, dir: OrderDirection, row: FeedKey): CursorValue[] {
  // node-postgres reads bigint as a string; microseconds since 1970 fit a double exactly.
  const skey = row.skey !== null && FEED_SORT_KEY[field].kind === 'bigint' ? Number(row.skey) : row.skey;
  return [field, dir, row.rank, row.pos, skey, row.tord, row.id];
}

/**
 * The row a cursor of {@link feedCursor} stands for, in a feed whose type order runs to `maxTord`;
 * null for anything else, a cursor of another ordering included (the caller answers 400
 * `invalid_cursor`).
 */
export function parseFeedCursor(
  after: string,
  field: WorkspaceOrderField,
  dir: OrderDirection,
  maxTord: number,
): FeedKey | null {
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
      (FEED_SORT_KEY[field].kind === 'text'
        ? typeof v[4] === 'string' && v[4].length <= 1000 && !v[4].includes('\u0000')
        : Number.isSafeInteger(v[4]))) &&
    isInt(v[5], 0, maxTord) &&
    isInt(v[6], 1, INT_MAX);
  if (!ok) return null;
  const c = v as [unknown, unknown, number, number, string | number | null, number, number];
  return { rank: c[2], pos: c[3], skey: c[4], tord: c[5], id: c[6] };
}

/**
 * A boolean over a workbook aliased `w`, its folder joined as `folder` (a LEFT JOIN: no row at the
 * root; read its chain with {@link folderChainSql}): the audience sees it. The caller's SQL, with
 * the parameters it brings.
 */
export type AudienceSees = (w: string, folder: string) => { sql: string; params: SqlParams };

export interface AudienceFeedQuery {
  sees: AudienceSees;
  /** What to list: at least one of the two. */
  folders: boolean;
  workbooks: boolean;
  /** `:folderId` is bound: list that folder (with `search`, its subtree); otherwise the root. */
  inFolder: boolean;
  /** `:search` (a LIKE pattern over names) is bound. */
  search: boolean;
  field: WorkspaceOrderField;
  dir: OrderDirection;
  after: FeedKey | null;
  limit: number;
}

/** The workbooks of `:deploymentId` (in `:accountId`) the audience sees, as `SELECT id, folder_id`. */
function seenWorkbooksSql(sees: AudienceSees): { sql: string; params: SqlParams } {
  const seen = sees('w', 'wsf');
  return {
    sql: `SELECT w.id, w.folder_id FROM workbooks w ${folderJoin('w.folder_id', 'wsf')}
   WHERE w.account_id = :accountId AND w.deployment_id = :deploymentId AND ${seen.sql}`,
    params: seen.params,
  };
}

/**
 * A boolean: `:folderId` is a folder of `:deploymentId` (in `:accountId`) holding, at any depth, a
 * workbook the audience sees; the folders of its view.
 */
export function audienceFolderSql(sees: AudienceSees): { sql: string; params: SqlParams } {
  const seen = seenWorkbooksSql(sees);
  return {
    sql: `EXISTS (SELECT 1 FROM (${seen.sql}) s JOIN folders sf ON sf.id = s.folder_id
     WHERE sf.id = :folderId OR :folderId = ANY(sf.ancestor_ids))`,
    params: seen.params,
  };
}

/**
 * One page of the audience's view of the workspace, in one query: rows `rank, pos, skey, tord, id`
 * (the page's keys) and `item`. Binds `:accountId`, `:deploymentId` and, as asked, `:folderId` and
 * `:search`; the returned `params` hold the cursor's values and those `sees` brings.
 *
 * - Where: the root, or `:folderId`; with a search, every level (below `:folderId` when bound).
 * - Order: folders first, by position then id; then workbooks by the order field (NULLS LAST in
 *   both directions), then id.
 * - Items (a WorkspaceItem): `type`, `id`, `name`, `deploymentId`, `folderId`, `folderPath`,
 *   `createdAt`, `updatedAt`, `meta` and `calculatedFields`; folders add `parentId` and `position`
 *   (their `meta` and `calculatedFields` are `{}`), workbooks `slug` and `publicId` (their published
 *   dashboard's, or null). `userId` and `user` are null and `createdBy` is left out: owners are
 *   not shown to an audience. A folder path only ever names folders of the view.
 */
export function audienceFeedSql(q: AudienceFeedQuery): { sql: string; params: Record<string, unknown> } {
  const key = FEED_SORT_KEY[q.field];
  const seen = seenWorkbooksSql(q.sees);
  const params: Record<string, unknown> = { ...seen.params };
  const named = (alias: string) => (q.search ? `${alias}.name ILIKE :search` : 'TRUE');
  const branches: string[] = [];
  if (q.folders) {
    const where = q.search
      ? q.inFolder
        ? ':folderId = ANY(f.ancestor_ids)'
        : 'TRUE'
      : q.inFolder
        ? 'f.parent_id = :folderId'
        : 'f.parent_id IS NULL';
    branches.push(`SELECT 0 AS rank, f.position AS pos, NULL::${key.kind} AS skey, 0 AS tord, f.id
      FROM folders f
      WHERE f.id IN (SELECT v.id FROM view_folders v) AND f.deployment_id = :deploymentId
        AND ${where} AND ${named('f')}`);
  }
  if (q.workbooks) {
    const where = q.search
      ? q.inFolder
        ? '(wf.id = :folderId OR :folderId = ANY(wf.ancestor_ids))'
        : 'TRUE'
      : q.inFolder
        ? 'w.folder_id = :folderId'
        : 'w.folder_id IS NULL';
    branches.push(`SELECT 1 AS rank, 0 AS pos, ${key.sql('w')} AS skey, 1 AS tord, w.id
      FROM seen s JOIN workbooks w ON w.id = s.id ${folderJoin('w.folder_id', 'wf')}
      WHERE ${where} AND ${named('w')}`);
  }
  if (branches.length === 0) throw new Error('audienceFeedSql: list folders, workbooks or both');
  const keyset = feedAfterSql('x', q.after, q.dir, key.kind, params);
  const order = (t: string) => feedOrderSql(t, q.dir);
  const sql = `WITH seen AS (${seen.sql}),
    view_folders AS (
      SELECT DISTINCT c.id FROM seen s JOIN folders sf ON sf.id = s.folder_id
      CROSS JOIN LATERAL unnest(sf.ancestor_ids || sf.id) AS c(id)
    ),
    page AS (
      SELECT x.* FROM (${branches.join('\n      UNION ALL\n      ')}) x
      WHERE ${keyset} ORDER BY ${order('x')} LIMIT ${q.limit}
    )
    SELECT page.rank, page.pos, page.skey, page.tord, page.id,
      CASE page.tord
        WHEN 0 THEN json_build_object('type', 'FOLDER', 'id', f.id, 'name', f.name,
          'deploymentId', f.deployment_id, 'folderId', f.parent_id, 'folderPath', ${folderPathSql('p')},
          'parentId', f.parent_id, 'position', f.position, 'createdAt', ${isoSql('f.created_at')},
          'updatedAt', ${isoSql('f.updated_at')}, 'userId', NULL, 'user', NULL,
          'meta', '{}'::json, 'calculatedFields', '{}'::json)
        ELSE json_build_object('type', 'WORKBOOK', 'id', w.id, 'name', w.name,
          'deploymentId', w.deployment_id, 'folderId', w.folder_id, 'folderPath', ${folderPathSql('wf')},
          'slug', w.slug, 'publicId', d.public_id, 'createdAt', ${isoSql('w.created_at')},
          'updatedAt', ${isoSql('w.updated_at')}, 'userId', NULL, 'user', NULL,
          'meta', w.meta, 'calculatedFields', w.calculated_fields)
      END AS item
    FROM page
    LEFT JOIN folders f ON page.tord = 0 AND f.id = page.id
    ${folderJoin('f.parent_id', 'p')}
    LEFT JOIN workbooks w ON page.tord = 1 AND w.id = page.id
    ${folderJoin('w.folder_id', 'wf')}
    LEFT JOIN dashboards d ON d.workbook_id = w.id AND d.status = 'published'
    ORDER BY ${order('page')}`;
  return { sql, params };
}
