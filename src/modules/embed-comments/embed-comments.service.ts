import { Injectable } from '@nestjs/common';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { likePattern } from '../../core/http/sql.js';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  encodeCursor,
  type CursorValue,
  type Page,
} from '../../core/http/pagination.js';
import { SUCCESS, type SuccessResponseDto } from '../../core/http/success-response.dto.js';
import { EmbedAccessService } from '../embedding/embed-access.service.js';
import { MAX_MENTIONS, mentionedIds } from './comment-mentions.js';
import type {
  CreateEmbedDashboardCommentBodyDto,
  DashboardCommentsQueryDto,
  EmbedDashboardCommentDto,
  EmbedDashboardCommentThreadDto,
  EmbedMentionableUserDto,
  MentionableUsersQueryDto,
} from './dto/embed-comment.dto.js';
import { embedCommentsError } from './embed-comments.errors.js';
import {
  EmbedCommentsRepository,
  type CommentRow,
  type CommentScope,
  type ThreadFilter,
} from './embed-comments.repository.js';

/** The most replies one thread holds (deleted ones included: they keep their place). */
export const MAX_REPLIES_PER_THREAD = 500;
/** The most comments (not deleted) one dashboard holds in one embed tenant. */
export const MAX_COMMENTS_PER_DASHBOARD = 10_000;
/**
 * A page of threads stops before the comments it holds (first comments and replies) would pass
 * this, so one page stays bounded whatever `first` asks; it always holds at least one thread.
 */
export const PAGE_COMMENT_BUDGET = 1_000;

const MAX_ID = 2_147_483_647;

/** The dashboard a request is about, once the embed user may open it. */
interface Conversation extends CommentScope {
  accountId: number;
  deploymentId: number;
  workbookId: number;
  publicId: string;
  me: number;
}

/**
 * Comments on embedded dashboards. Every route is authorised exactly as
 * `GET /embed/dashboard/{publicId}` (404, or 403 `embedding_not_allowed`), and reaches only the
 * comments of the caller's embed tenant on that dashboard: another tenant's comment is a 404.
 * Authors edit and delete their own comments and resolve their own threads (403 otherwise);
 * mentions name only embed users of the tenant whom the dashboard is shared with. Each embed
 * user's writes are bounded per minute (`EMBED_COMMENT_WRITES_PER_MINUTE`).
 */
@Injectable()
export class EmbedCommentsService {
  private readonly writesPerMinute: number;

  constructor(
    private readonly db: Database,
    private readonly comments: EmbedCommentsRepository,
    private readonly embedAccess: EmbedAccessService,
    config: AppConfig,
  ) {
    this.writesPerMinute = config.embedCommentWritesPerMinute;
  }

  async list(
    user: EmbedPrincipal,
    publicId: string,
    query: DashboardCommentsQueryDto,
  ): Promise<Page<EmbedDashboardCommentThreadDto>> {
    const at = await this.conversation(user, publicId);
    const filter: ThreadFilter = query.resolvedOnly ? 'resolved' : query.includeResolved ? 'all' : 'open';
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after = query.after !== undefined ? idCursor(query.after) : null;
    const rows = await this.comments.threads(at, filter, after, first + 1);
    // Threads while the page's comments stay within the budget (at least one), up to `first`.
    let taken = 0;
    let held = 0;
    while (taken < Math.min(first, rows.length)) {
      const size = 1 + rows[taken].replyCount;
      if (taken > 0 && held + size > PAGE_COMMENT_BUDGET) break;
      held += size;
      taken += 1;
    }
    const roots = rows.slice(0, taken);
    const replies = await this.comments.replies(roots.map((r) => r.id));
    const byThread = new Map<number, CommentRow[]>();
    for (const reply of replies) {
      const list = byThread.get(reply.parentId!) ?? [];
      list.push(reply);
      byThread.set(reply.parentId!, list);
    }
    return {
      items: roots.map((root) => this.thread(at, root, byThread.get(root.id) ?? [])),
      pageInfo: {
        hasNextPage: rows.length > taken,
        hasPreviousPage: after !== null,
        startCursor: roots.length ? encodeCursor([roots[0].id]) : null,
        endCursor: roots.length ? encodeCursor([roots[roots.length - 1].id]) : null,
      },
    };
  }

  async create(
    user: EmbedPrincipal,
    publicId: string,
    dto: CreateEmbedDashboardCommentBodyDto,
  ): Promise<EmbedDashboardCommentDto> {
    const at = await this.conversation(user, publicId);
    await this.admitWrite(at.me);
    await this.checkMentions(at, dto.body);
    const parentId = dto.parentId ?? null;
    const row = await this.db.transaction(async () => {
      await this.comments.lockDashboard(at.dashboardId);
      if (parentId !== null) {
        const parent = await this.comments.find(at, parentId);
        if (!parent || parent.removedAt !== null) throw notFound('Comment', parentId);
        if (parent.parentId !== null) {
          throw embedCommentsError(
            'comment_is_reply',
            `Comment ${parentId} is a reply: reply to its thread’s first comment, ${parent.parentId}`,
          );
        }
        if ((await this.comments.countReplies(parentId)) >= MAX_REPLIES_PER_THREAD) {
          throw embedCommentsError(
            'comment_limit_reached',
            `The thread of comment ${parentId} holds ${MAX_REPLIES_PER_THREAD} replies, its most`,
          );
        }
      }
      if ((await this.comments.countLive(at)) >= MAX_COMMENTS_PER_DASHBOARD) {
        throw embedCommentsError(
          'comment_limit_reached',
          `Dashboard ${at.publicId} holds ${MAX_COMMENTS_PER_DASHBOARD} comments in this embed tenant, its most`,
        );
      }
      return this.comments.insert({
        accountId: at.accountId,
        deploymentId: at.deploymentId,
        dashboardId: at.dashboardId,
        tenantId: at.tenantId,
        authorId: at.me,
        parentId,
        body: dto.body,
      });
    });
    return this.comment(at, row);
  }

  async mentionable(
    user: EmbedPrincipal,
    publicId: string,
    query: MentionableUsersQueryDto,
  ): Promise<Page<EmbedMentionableUserDto>> {
    const at = await this.conversation(user, publicId);
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after = query.after !== undefined ? decodeCursor(query.after, ['string', 'number']) : null;
    if (after && !isId(after[1])) throw invalidCursor();
    const search = query.search?.trim();
    const rows = await this.comments.mentionable(
      at,
      at.me,
      search ? likePattern(search) : null,
      after,
      first + 1,
    );
    const items = rows.slice(0, first);
    return {
      items,
      pageInfo: {
        hasNextPage: rows.length > first,
        hasPreviousPage: after !== null,
        startCursor: items.length ? encodeCursor([items[0].username, items[0].id]) : null,
        endCursor: items.length ? encodeCursor([items.at(-1)!.username, items.at(-1)!.id]) : null,
      },
    };
  }

  async update(
    user: EmbedPrincipal,
    publicId: string,
    commentId: number,
    body: string,
  ): Promise<EmbedDashboardCommentDto> {
    const at = await this.conversation(user, publicId);
    await this.admitWrite(at.me);
    await this.checkMentions(at, body);
    const row = await this.comments.updateBody(at, commentId, at.me, body);
    if (!row) throw await this.refusal(at, commentId, false);
    return this.comment(at, row);
  }

  async remove(user: EmbedPrincipal, publicId: string, commentId: number): Promise<SuccessResponseDto> {
    const at = await this.conversation(user, publicId);
    await this.admitWrite(at.me);
    const removed = await this.db.transaction(async () => {
      await this.comments.lockDashboard(at.dashboardId);
      return this.comments.remove(at, commentId, at.me);
    });
    if (!removed) throw await this.refusal(at, commentId, false);
    return SUCCESS;
  }

  async setResolved(
    user: EmbedPrincipal,
    publicId: string,
    commentId: number,
    resolved: boolean,
  ): Promise<EmbedDashboardCommentThreadDto> {
    const at = await this.conversation(user, publicId);
    await this.admitWrite(at.me);
    const root = await this.comments.setResolved(at, commentId, at.me, resolved);
    if (!root) throw await this.refusal(at, commentId, true);
    return this.thread(at, root, await this.comments.replies([root.id]));
  }

  /** The dashboard, authorised as its GET is, with the caller's partition of its comments. */
  private async conversation(user: EmbedPrincipal, publicId: string): Promise<Conversation> {
    const dashboard = await this.embedAccess.embedDashboard(user, publicId);
    return {
      accountId: user.accountId,
      deploymentId: dashboard.deploymentId,
      dashboardId: dashboard.id,
      workbookId: dashboard.workbookId,
      publicId: dashboard.publicId,
      tenantId: user.tenantId,
      me: user.embedUserId,
    };
  }

  /** Counts a write of the embed user; 429 past `EMBED_COMMENT_WRITES_PER_MINUTE` this minute. */
  private async admitWrite(embedUserId: number): Promise<void> {
    const { writes, retryAfterSeconds } = await this.comments.countWrite(embedUserId);
    if (writes > this.writesPerMinute) {
      throw embedCommentsError(
        'comment_write_limit_reached',
        `At most ${this.writesPerMinute} comment writes a minute; retry in ${retryAfterSeconds} s`,
        { retryAfterSeconds },
      );
    }
  }

  /** 400 unless every user the text mentions is one the comment may mention (at most 20 of them). */
  private async checkMentions(at: Conversation, body: string): Promise<void> {
    const ids = mentionedIds(body);
    if (ids.length === 0) return;
    if (ids.length > MAX_MENTIONS) {
      throw embedCommentsError(
        'too_many_mentions',
        `A comment mentions at most ${MAX_MENTIONS} different embed users; this one mentions ${ids.length}`,
      );
    }
    const known = await this.comments.mentionableAmong(at, ids.filter(isId));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw embedCommentsError(
        'unknown_mentions',
        `Not embed users of this tenant whom the dashboard is shared with: ${unknown.join(', ')}`,
      );
    }
  }

  /** Why a write on comment `id` matched nothing: 404, 400 for a reply (`rootOnly`), or 403. */
  private async refusal(at: Conversation, id: number, rootOnly: boolean): Promise<Error> {
    const row = await this.comments.find(at, id);
    if (!row || row.removedAt !== null) return notFound('Comment', id);
    if (rootOnly && row.parentId !== null) {
      return embedCommentsError(
        'comment_is_reply',
        `Comment ${id} is a reply: resolve its thread through its first comment, ${row.parentId}`,
      );
    }
    if (row.authorId !== at.me) {
      return embedCommentsError(
        'not_comment_author',
        rootOnly
          ? `Only the embed user who started the thread of comment ${id} may resolve or re-open it`
          : `Only the author of comment ${id} may change or delete it`,
      );
    }
    // Changed between the write and this read (deleted, or its thread deleted): gone.
    return notFound('Comment', id);
  }

  private comment(at: Conversation, row: CommentRow): EmbedDashboardCommentDto {
    return {
      id: row.id,
      dashboardId: at.publicId,
      parentId: row.parentId,
      userId: row.authorId,
      body: row.removedAt !== null ? '' : row.body,
      createdAt: row.createdAt,
      editedAt: row.editedAt,
      removedAt: row.removedAt,
      isOwn: row.authorId === at.me,
    };
  }

  private thread(at: Conversation, root: CommentRow, replies: CommentRow[]): EmbedDashboardCommentThreadDto {
    return {
      root: this.comment(at, root),
      replies: replies.map((r) => this.comment(at, r)),
      resolvedAt: root.resolvedAt,
      resolvedBy: root.resolvedBy,
    };
  }
}

const isId = (v: CursorValue | number): v is number => typeof v === 'number' && v >= 1 && v <= MAX_ID;

const invalidCursor = () => coreError('invalid_cursor', 'after is not a cursor returned by this list');

/** A thread list's cursor: the id of a thread's first comment. */
function idCursor(after: string): CursorValue[] {
  const values = decodeCursor(after, ['number']);
  if (!isId(values[0])) throw invalidCursor();
  return values;
}
