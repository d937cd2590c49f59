import type { SqlParams } from '../../core/database/named-params.js';
import { userExistsSql } from '../users/users.fragments.js';

/** Writes a batch of views; reports or users deleted meanwhile are skipped. */
export const FLUSH_VIEWS_SQL = `
INSERT INTO report_views (report_id, user_id, last_viewed_at)
SELECT v.report_id, v.user_id, v.at
FROM unnest(:reportIds::int[], :userIds::int[], :times::timestamptz[]) AS v(report_id, user_id, at)
WHERE EXISTS (SELECT 1 FROM reports r WHERE r.id = v.report_id)
  AND ${userExistsSql('v.user_id')}
ON CONFLICT (report_id, user_id)
DO UPDATE SET last_viewed_at = GREATEST(report_views.last_viewed_at, excluded.last_viewed_at)`;

/** More pending views than this are written at once instead of waiting for the timer. */
const MAX_PENDING = 5000;

/** Runs SQL with named parameters (`Database.query`). */
type Writer = (sql: string, params: SqlParams) => Promise<unknown>;

/**
 * Buffers "user U viewed report R at T" in memory and writes the latest view of each pair in one
 * statement per interval. Reading a report then stays a read: a write (and a commit waiting on
 * the disk) per GET would bound report reads by the disk. A crash loses at most one interval of
 * view times, which only order the caller's `lastViewedAt` list. Plain class, so the bench
 * baseline buffers views the same way.
 */
export class ViewBuffer {
  private pending = new Map<string, { reportId: number; userId: number; at: Date }>();
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: Writer,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  record(reportId: number, userId: number, at = new Date()): void {
    this.pending.set(`${reportId}:${userId}`, { reportId, userId, at });
    if (this.pending.size >= MAX_PENDING) void this.flush();
  }

  /** Writes everything recorded so far; resolves when it is stored. */
  flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const previous = this.flushing;
    this.flushing = (async () => {
      await previous;
      if (batch.length === 0) return;
      try {
        await this.write(FLUSH_VIEWS_SQL, {
          reportIds: batch.map((v) => v.reportId),
          userIds: batch.map((v) => v.userId),
          times: batch.map((v) => v.at.toISOString()),
        });
      } catch (error) {
        this.onError(error);
      }
    })();
    return this.flushing;
  }
}
