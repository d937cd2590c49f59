/**
 * What the workspace's folders, workbooks and feed share (reports read folders through
 * `workspace.fragments.ts`).
 */

/** How deep folders nest: a folder at the root has depth 1. */
export const MAX_FOLDER_DEPTH = 10;

export type WorkspaceItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
export const WORKSPACE_ITEM_TYPES: readonly WorkspaceItemType[] = ['FOLDER', 'WORKBOOK', 'REPORT'];
