/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
export {};

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
