/**
 * SQL fragments shared by the workspace and reports modules, so every folder, workbook and
 * report is shaped the same way in one query, without a second round trip per relation.
 */

import type { ResourceRef } from '../../core/auth/access.service.js';

/** How deep folders nest: a folder at the root has depth 1. */
export const MAX_FOLDER_DEPTH = 10;

export { isoSql } from '../../core/database/sql.js';

/** The ids of a folder's chain, root first and the folder itself last (`{NULL}` without one). */
export const folderChainSql = (folder: string): string => `(${folder}.ancestor_ids || ${folder}.id)`;

/**
 * The `folderPath` of an item whose containing folder is joined as `folder` (possibly by a LEFT
 * JOIN that found nothing): `[{id, name}]` from the root down, `[]` at the root.
 */
export const folderPathSql = (folder: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('id', pf.id, 'name', pf.name)
     ORDER BY array_position(${folderChainSql(folder)}, pf.id))
   FROM folders pf WHERE pf.id = ANY(${folderChainSql(folder)})), '[]'::json)`;

/** A ResourceOwner (`{id, email, firstName, picture}`) of the user joined as `user`. */
export const ownerSql = (user: string): string =>
  `CASE WHEN ${user}.id IS NULL THEN NULL ELSE json_build_object('id', ${user}.id, 'email', ${user}.email,
     'firstName', ${user}.first_name, 'picture', ${user}.picture) END`;

export interface ResourceOwner {
  id: number;
  email: string;
  firstName: string | null;
  picture: string | null;
}

export interface FolderPathEntry {
  id: number;
  name: string;
}

export type WorkspaceItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
export const WORKSPACE_ITEM_TYPES: readonly WorkspaceItemType[] = ['FOLDER', 'WORKBOOK', 'REPORT'];

/**
 * The folders a resource inherits grants from, nearest first, from a folder chain as
 * {@link folderChainSql} selects it (root first; `{NULL}` without a folder).
 */
export function folderRefs(chain: Array<number | null> | null): ResourceRef[] {
  return (chain ?? [])
    .filter((id): id is number => id !== null)
    .reverse()
    .map((id) => ({ type: 'Folder', id }));
}
