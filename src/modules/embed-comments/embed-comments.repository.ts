import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { keysetPredicate, type CursorValue } from '../../core/http/pagination.js';
import { dashboardAudienceSql } from '../embedding/embedding.fragments.js';

/** Where a conversation lives: one dashboard, inside one embed tenant's partition. */
export interface CommentScope {
  dashboardId: number;
  tenantId: number;
}

/** A comment as stored, its times as ISO 8601 strings. */
export interface CommentRow {
  id: number;
  parentId: number | null;
  authorId: number | null;
  body: string;
  createdAt: string;
  editedAt: string | null;
  removedAt: string | null;
  resolvedAt: string | null;
  resolvedBy: number | null;
}

/** A thread's first comment with how many replies (deleted ones included) it holds. */
export interface ThreadRow extends CommentRow {
  replyCount: number;
}

export interface NewComment extends CommentScope {
  accountId: number;
  deploymentId: number;
  authorId: number;
  parentId: number | null;
  body: string;
}

/** Which threads a page lists. */
export type ThreadFilter = 'open' | 'all' | 'resolved';

export interface MentionableRow {
  id: number;
  username: string;
  email: string | null;
  firstName: string | null;
}

/** Namespace of the advisory lock that queues the creations and deletions on one dashboard. */
const DASHBOARD_LOCK = 0x636d74;

const COLUMNS = `c.id, c.parent_id AS "parentId", c.author_id AS "authorId", c.body,
  ${isoSql('c.created_at')} AS "createdAt", ${isoSql('c.edited_at')} AS "editedAt",
  ${isoSql('c.removed_at')} AS "removedAt", ${isoSql('c.resolved_at')} AS "resolvedAt",
  c.resolved_by AS "resolvedBy"`;

const IN_SCOPE = 'c.dashboard_id = :dashboardId AND c.tenant_id = :tenantId';

/** The scope's parameters alone (callers may pass a wider object). */
const scoped = (s: CommentScope) => ({ dashboardId: s.dashboardId, tenantId: s.tenantId });

/** The audience's parameters alone. */
const audience = (a: { tenantId: number; workbookId: number }) => ({
  tenantId: a.tenantId,
  workbookId: a.workbookId,
});

const THREAD_FILTERS: Record<ThreadFilter, string> = {
  open: 'c.resolved_at IS NULL',
  all: 'TRUE',
  resolved: 'c.resolved_at IS NOT NULL',
};

/** SQL over `embed_dashboard_comments` and `embed_comment_write_windows`. */
@Injectable()
export class EmbedCommentsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Counts one comment write of the embed user in its current window (a fixed minute from the
   * window's first write; a new one starts once it is over), in one statement every process
   * shares. Returns the writes counted in the window, this one included, and the seconds left.
   */
  async countWrite(embedUserId: number): Promise<{ writes: number; retryAfterSeconds: number }> {
    const row = await this.db.one<{ writes: number; retryAfterSeconds: number }>(
      `INSERT INTO embed_comment_write_windows AS w (embed_user_id, window_started_at, writes)
       VALUES (:embedUserId, now(), 1)
       ON CONFLICT (embed_user_id) DO UPDATE SET
         window_started_at = CASE WHEN w.window_started_at > now() - interval '1 minute'
                                  THEN w.window_started_at ELSE now() END,
         writes = CASE WHEN w.window_started_at > now() - interval '1 minute' THEN w.writes + 1 ELSE 1 END
       RETURNING w.writes,
         GREATEST(1, ceil(extract(epoch FROM w.window_started_at + interval '1 minute' - now())))::int
           AS "retryAfterSeconds"`,
      { embedUserId },
      { prepare: true },
    );
    return row!;
  }

  /** Queues the creations and deletions of comments on the dashboard until the unit of work ends. */
  async lockDashboard(dashboardId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(:namespace, :dashboardId)`, {
      namespace: DASHBOARD_LOCK,
      dashboardId,
    });
  }

  /** The comment `id` in the scope, deleted or not; undefined when there is none. */
  find(scope: CommentScope, id: number): Promise<CommentRow | undefined> {
    return this.db.one<CommentRow>(
      `SELECT ${COLUMNS} FROM embed_dashboard_comments c WHERE c.id = :id AND ${IN_SCOPE}`,
      { id, ...scoped(scope) },
      { prepare: true },
    );
  }

  /** How many replies (deleted ones included) the thread of `rootId` holds. */
  async countReplies(rootId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM embed_dashboard_comments WHERE parent_id = :rootId`,
      { rootId },
    );
    return row!.n;
  }

  /** How many comments that are not deleted the scope holds. */
  async countLive(scope: CommentScope): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM embed_dashboard_comments c WHERE ${IN_SCOPE} AND c.removed_at IS NULL`,
      { ...scoped(scope) },
    );
    return row!.n;
  }

  async insert(c: NewComment): Promise<CommentRow> {
    const row = await this.db.one<CommentRow>(
      `INSERT INTO embed_dashboard_comments AS c (account_id, deployment_id, dashboard_id, tenant_id, author_id,
         parent_id, body)
       VALUES (:accountId, :deploymentId, :dashboardId, :tenantId, :authorId, :parentId, :body)
       RETURNING ${COLUMNS}`,
      { ...c },
      { prepare: true },
    );
    return row!;
  }

  /** Replaces the text of the author's live comment and stamps the edit; undefined when no such comment. */
  updateBody(
    scope: CommentScope,
    id: number,
    authorId: number,
    body: string,
  ): Promise<CommentRow | undefined> {
    return this.db.one<CommentRow>(
      `UPDATE embed_dashboard_comments c SET body = :body, edited_at = now()
       WHERE c.id = :id AND ${IN_SCOPE} AND c.removed_at IS NULL AND c.author_id = :authorId
       RETURNING ${COLUMNS}`,
      { id, ...scoped(scope), authorId, body },
      { prepare: true },
    );
  }

  /**
   * Deletes the author's live comment (its text wiped, `removed_at` set) and, for a thread's
   * first comment, every reply of the thread. False when there is no such comment.
   */
  async remove(scope: CommentScope, id: number, authorId: number): Promise<boolean> {
    const rows = await this.db.query<{ id: number }>(
      `WITH target AS (
         SELECT c.id, c.parent_id FROM embed_dashboard_comments c
         WHERE c.id = :id AND ${IN_SCOPE} AND c.removed_at IS NULL AND c.author_id = :authorId
         FOR UPDATE)
       UPDATE embed_dashboard_comments r SET removed_at = now(), body = ''
       FROM target t
       WHERE r.removed_at IS NULL AND (r.id = t.id OR (t.parent_id IS NULL AND r.parent_id = t.id))
       RETURNING r.id`,
      { id, ...scoped(scope), authorId },
      { prepare: true },
    );
    return rows.length > 0;
  }

  /**
   * Resolves (keeping an earlier resolution's time) or re-opens the live thread whose first
   * comment `id` the author wrote; undefined when there is no such thread.
   */
  setResolved(
    scope: CommentScope,
    id: number,
    authorId: number,
    resolved: boolean,
  ): Promise<CommentRow | undefined> {
    return this.db.one<CommentRow>(
      `UPDATE embed_dashboard_comments c SET
         resolved_at = CASE WHEN :resolved::boolean THEN COALESCE(c.resolved_at, now()) END,
         resolved_by = CASE WHEN :resolved::boolean THEN CASE WHEN c.resolved_at IS NULL THEN :authorId::int
                                                             ELSE c.resolved_by END END
       WHERE c.id = :id AND ${IN_SCOPE} AND c.parent_id IS NULL AND c.removed_at IS NULL
         AND c.author_id = :authorId
       RETURNING ${COLUMNS}`,
      { id, ...scoped(scope), authorId, resolved },
      { prepare: true },
    );
  }

  /**
   * Live threads of the scope, newest first by their first comment (so a thread keeps its place
   * while it is replied to), after the cursor `after` (the first comment's id).
   */
  threads(
    scope: CommentScope,
    filter: ThreadFilter,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<ThreadRow[]> {
    const keyset = keysetPredicate(['c.id'], 'DESC', after);
    return this.db.query<ThreadRow>(
      `SELECT ${COLUMNS},
         (SELECT count(*)::int FROM embed_dashboard_comments r WHERE r.parent_id = c.id) AS "replyCount"
       FROM embed_dashboard_comments c
       WHERE ${IN_SCOPE} AND c.parent_id IS NULL AND c.removed_at IS NULL
         AND ${THREAD_FILTERS[filter]} AND ${keyset.sql}
       ORDER BY c.id DESC LIMIT :limit`,
      { ...scoped(scope), ...keyset.params, limit },
      { prepare: true },
    );
  }

  /** The replies (deleted ones included) of the threads `rootIds`, oldest first. */
  replies(rootIds: readonly number[]): Promise<CommentRow[]> {
    if (rootIds.length === 0) return Promise.resolve([]);
    return this.db.query<CommentRow>(
      `SELECT ${COLUMNS} FROM embed_dashboard_comments c
       WHERE c.parent_id = ANY(:rootIds::int[]) ORDER BY c.parent_id, c.id`,
      { rootIds },
      { prepare: true },
    );
  }

  /**
   * The embed users a comment of the tenant on the workbook's dashboard may mention, but
   * `exceptId`, by username then id, after the cursor `after`; `pattern` is an ILIKE pattern
   * over the username and email.
   */
  mentionable(
    at: { tenantId: number; workbookId: number },
    exceptId: number,
    pattern: string | null,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<MentionableRow[]> {
    const keyset = keysetPredicate(['m.username', 'm.id'], 'ASC', after);
    const search = pattern === null ? '' : 'AND (m.username ILIKE :pattern OR m.email ILIKE :pattern)';
    return this.db.query<MentionableRow>(
      `SELECT m.id, m.username, m.email, m.first_name AS "firstName"
       FROM ${dashboardAudienceSql('m', { tenantId: ':tenantId', workbookId: ':workbookId' })}
       WHERE m.id <> :exceptId ${search} AND ${keyset.sql}
       ORDER BY m.username, m.id LIMIT :limit`,
      { ...audience(at), exceptId, ...(pattern === null ? {} : { pattern }), ...keyset.params, limit },
      { prepare: true },
    );
  }

  /** Which of `ids` a comment of the tenant on the workbook's dashboard may mention. */
  async mentionableAmong(
    at: { tenantId: number; workbookId: number },
    ids: readonly number[],
  ): Promise<Set<number>> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT m.id FROM ${dashboardAudienceSql('m', { tenantId: ':tenantId', workbookId: ':workbookId' })}
       WHERE m.id = ANY(:ids::int[])`,
      { ...audience(at), ids },
      { prepare: true },
    );
    return new Set(rows.map((r) => r.id));
  }
}
