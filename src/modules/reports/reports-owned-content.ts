import { Injectable } from '@nestjs/common';
import { OwnedContent } from '../users/owned-content.js';
import { ReportsRepository } from './reports.repository.js';

/** A deleted user's reports pass to the admin who deletes them. */
@Injectable()
export class ReportsOwnedContent extends OwnedContent {
  constructor(private readonly reports: ReportsRepository) {
    super();
  }

  handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void> {
    return this.reports.handOver(accountId, fromUserId, toUserId);
  }
}
