import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { FoldersRepository } from './folders.repository.js';
import { WorkbooksRepository } from './workbooks.repository.js';
import { folderRefs } from './workspace.fragments.js';

/**
 * Teaches the access service where folders and workbooks live, so grants on a folder reach
 * everything below it (reports register themselves in the reports module). One query per check.
 */
@Injectable()
export class ContentAccess implements OnModuleInit {
  constructor(
    private readonly folders: FoldersRepository,
    private readonly workbooks: WorkbooksRepository,
    private readonly access: AccessService,
  ) {}

  onModuleInit(): void {
    this.access.register('Folder', {
      resolve: async (accountId, ids) => {
        const rows = await this.folders.chains(accountId, ids);
        return new Map(
          rows.map((r) => [r.id, [{ type: 'Folder', id: r.id, ownerId: r.ownerId }, ...folderRefs(r.chain)]]),
        );
      },
    });
    this.access.register('Workbook', {
      resolve: async (accountId, ids) => {
        const rows = await this.workbooks.chains(accountId, ids);
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
