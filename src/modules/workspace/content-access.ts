import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccessService, type ResourceRef } from '../../core/auth/access.service.js';

interface ChainRow {
  id: number;
  ownerId: number;
  workbookId?: number | null;
  chain: number[] | null;
}

/** Folders root first; a resource inherits from the nearest folder first. */
function folderRefs(chain: number[] | null): ResourceRef[] {
  return (chain ?? [])
    .filter((id) => id !== null)
    .reverse()
    .map((id) => ({ type: 'Folder', id }));
}

/**
 * Teaches the access service where folders, workbooks and reports live, so grants on a folder
 * reach everything below it and grants on a workbook reach its reports. One query per check.
 */
@Injectable()
export class ContentAccess implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
  ) {}

  onModuleInit(): void {
    this.access.register('Folder', {
      resolve: async (accountId, ids) => {
        const rows: ChainRow[] = await this.dataSource.query(
          `SELECT id, user_id AS "ownerId", ancestor_ids AS chain FROM folders WHERE account_id = $1 AND id = ANY($2)`,
          [accountId, ids],
        );
        return new Map(
          rows.map((r) => [
            r.id,
            [{ type: 'Folder', id: r.id, ownerId: r.ownerId }, ...folderRefs(r.chain)],
          ]),
        );
      },
    });
    this.access.register('Workbook', {
      resolve: async (accountId, ids) => {
        const rows: ChainRow[] = await this.dataSource.query(
          `SELECT w.id, w.user_id AS "ownerId", f.ancestor_ids || f.id AS chain
           FROM workbooks w LEFT JOIN folders f ON f.id = w.folder_id
           WHERE w.account_id = $1 AND w.id = ANY($2)`,
          [accountId, ids],
        );
        return new Map(
          rows.map((r) => [
            r.id,
            [{ type: 'Workbook', id: r.id, ownerId: r.ownerId }, ...folderRefs(r.chain)],
          ]),
        );
      },
    });
    this.access.register('Report', {
      resolve: async (accountId, ids) => {
        const rows: ChainRow[] = await this.dataSource.query(
          `SELECT r.id, r.user_id AS "ownerId", r.workbook_id AS "workbookId", f.ancestor_ids || f.id AS chain
           FROM reports r LEFT JOIN folders f ON f.id = r.folder_id
           WHERE r.account_id = $1 AND r.id = ANY($2)`,
          [accountId, ids],
        );
        return new Map(
          rows.map((r) => [
            r.id,
            [
              { type: 'Report', id: r.id, ownerId: r.ownerId },
              ...(r.workbookId ? [{ type: 'Workbook', id: r.workbookId } as ResourceRef] : []),
              ...folderRefs(r.chain),
            ],
          ]),
        );
      },
    });
  }
}
