import { Injectable } from '@nestjs/common';
import { OwnedContent } from '../users/owned-content.js';
import { FoldersRepository } from './folders.repository.js';
import { WorkbooksRepository } from './workbooks.repository.js';

/** A deleted user's folders and workbooks pass to the admin who deletes them. */
@Injectable()
export class WorkspaceOwnedContent extends OwnedContent {
  constructor(
    private readonly folders: FoldersRepository,
    private readonly workbooks: WorkbooksRepository,
  ) {
    super();
  }

  async handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void> {
    await this.folders.handOver(accountId, fromUserId, toUserId);
    await this.workbooks.handOver(accountId, fromUserId, toUserId);
  }
}
