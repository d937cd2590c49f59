import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../../core/events/domain-events.js';
import { DbtSyncRepository, type EndedSyncRow } from './dbt-sync.repository.js';

/** How a sync ended, as `dbt_sync.finished` tells it. */
export type SyncEnding =
  | { status: 'succeeded' }
  | { status: 'failed'; error: string; phase: string | null }
  | { status: 'cancelled' };

/**
 * `dbt_sync.finished` (docs/webhooks.md, Event types): published once per sync, at the end of its
 * run, in the unit of work that marks it ended (`done_at`, compare-and-set). The data is the sync
 * as its history item shows it, with `status` `succeeded`, `failed` or `cancelled`.
 */
@Injectable()
export class DbtSyncEvents {
  constructor(
    private readonly events: DomainEvents,
    private readonly repository: DbtSyncRepository,
  ) {}

  /**
   * Marks a sync that did not succeed as ended and publishes how; nothing when it was marked
   * before (a second ending of the same run). Call inside a unit of work.
   */
  async ended(syncId: string, ending: Exclude<SyncEnding, { status: 'succeeded' }>): Promise<void> {
    const row = await this.repository.markEnded(syncId);
    if (row) await this.publish(row, ending);
  }

  /** Publishes the ending of a sync its caller marked ended (`finish` answered its row). */
  async publish(row: EndedSyncRow, ending: SyncEnding): Promise<void> {
    const { accountId, ...sync } = row;
    await this.events.publish({
      accountId,
      type: 'dbt_sync.finished',
      resource: { type: 'dbt_sync', id: sync.syncJobId },
      data: {
        ...sync,
        status: ending.status,
        errorMessage: ending.status === 'failed' ? ending.error : null,
        failedPhase: ending.status === 'failed' ? ending.phase : null,
      },
    });
  }
}
