import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccessService } from '../../core/auth/access.service.js';
import { folderRefs } from './content.sql.js';

interface ChainRow {
  id: number;
  ownerId: number;
  chain: number[] | null;
}

/**
 * Teaches the access service where folders and workbooks live, so grants on a folder reach
 * everything below it (reports register themselves in the reports module). One query per check.
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
          rows.map((r) => [r.id, [{ type: 'Folder', id: r.id, ownerId: r.ownerId }, ...folderRefs(r.chain)]]),
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
  }
}
