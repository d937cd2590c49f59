import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../core/audit/audited.decorator.js';
import { CurrentEmbedUser, EmbedTokenRequired } from '../../core/auth/access.decorators.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { ApiSuccessResponse, type SuccessResponseDto } from '../../core/http/success-response.dto.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  CreateEmbedDashboardCommentBodyDto,
  DashboardCommentsQueryDto,
  EmbedDashboardCommentDto,
  EmbedDashboardCommentThreadDto,
  EmbedDashboardCommentThreadsListDto,
  EmbedMentionableUsersListDto,
  MentionableUsersQueryDto,
  SetEmbedDashboardCommentResolvedBodyDto,
  UpdateEmbedDashboardCommentBodyDto,
} from './dto/embed-comment.dto.js';
import { EmbedCommentsService } from './embed-comments.service.js';

const PUBLIC_ID = { name: 'publicId', description: 'The dashboard’s public id' };

const ACCESS =
  'For an embed token, authorised exactly as `GET /api/v1/embed/dashboard/{publicId}` (404, or 403 ' +
  '`embedding_not_allowed`); only the comments of the caller’s embed tenant on that dashboard are reached.';

/** The refusals every write shares, besides its own. */
const WRITE_ERRORS = ['dashboard_not_found', 'embedding_not_allowed', 'comment_write_limit_reached'] as const;

@ApiTags('Embed')
@Controller('api/v1/embed/dashboard/:publicId/comments')
@ApiParam(PUBLIC_ID)
export class EmbedCommentsController {
  constructor(private readonly comments: EmbedCommentsService) {}

  @Get()
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'List comment threads on an embedded dashboard',
    description:
      `${ACCESS} Threads (a first comment and its replies, oldest first), newest thread first by when it ` +
      'started. Open threads by default; `includeResolved=true` adds resolved ones, `resolvedOnly=true` lists ' +
      'only those. A deleted reply is listed with an empty `body` and `removedAt`; a deleted thread is not ' +
      'listed. A page stops before it would hold more than 1000 comments (always at least one thread), so ' +
      'it may hold fewer threads than `first`: follow `hasNextPage`.',
  })
  @ApiOkResponse({ type: EmbedDashboardCommentThreadsListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'dashboard_not_found', 'embedding_not_allowed')
  listDashboardComments(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @Query() query: DashboardCommentsQueryDto,
  ): Promise<EmbedDashboardCommentThreadsListDto> {
    return this.comments.list(user, publicId, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Comment on an embedded dashboard',
    description:
      `${ACCESS} Starts a thread, or replies to one when \`parentId\` names its first comment; the author ` +
      'is the calling embed user. Replies nest one level: `parentId` naming a reply is a 400, naming a ' +
      'deleted thread or no comment of this dashboard and tenant a 404. Mentions (`@[name](id)`) must name ' +
      'embed users of the tenant whom the dashboard is shared with (400 listing the others). A thread holds ' +
      'at most 500 replies and a dashboard 10 000 comments per tenant (429).',
  })
  @ApiOkResponse({ type: EmbedDashboardCommentDto })
  @ApiErrors(
    'validation_failed',
    ...WRITE_ERRORS,
    'comment_not_found',
    'comment_is_reply',
    'unknown_mentions',
    'too_many_mentions',
    'comment_limit_reached',
  )
  createDashboardComment(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @Body() dto: CreateEmbedDashboardCommentBodyDto,
  ): Promise<EmbedDashboardCommentDto> {
    return this.comments.create(user, publicId, dto);
  }

  @Get('mentionable-users')
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'List the embed users a comment may mention',
    description:
      `${ACCESS} The other embed users of the caller’s tenant whom the dashboard is shared with (never ` +
      'console users), by username (the external id); `search` matches part of the username or email, ' +
      'ignoring case. `email` is null while the user has no real address.',
  })
  @ApiOkResponse({ type: EmbedMentionableUsersListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'dashboard_not_found', 'embedding_not_allowed')
  listMentionableEmbedUsers(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @Query() query: MentionableUsersQueryDto,
  ): Promise<EmbedMentionableUsersListDto> {
    return this.comments.mentionable(user, publicId, query);
  }

  @Patch(':commentId')
  @Audited()
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Edit a comment on an embedded dashboard',
    description:
      `${ACCESS} Replaces the text and stamps \`editedAt\`. Only the author: another user’s comment is a 403; ` +
      'a deleted comment, or one that is not on this dashboard in this tenant, a 404. Mentions as on create.',
  })
  @ApiOkResponse({ type: EmbedDashboardCommentDto })
  @ApiErrors(
    'validation_failed',
    ...WRITE_ERRORS,
    'comment_not_found',
    'not_comment_author',
    'unknown_mentions',
    'too_many_mentions',
  )
  updateDashboardComment(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @IdParam('commentId') commentId: number,
    @Body() dto: UpdateEmbedDashboardCommentBodyDto,
  ): Promise<EmbedDashboardCommentDto> {
    return this.comments.update(user, publicId, commentId, dto.body);
  }

  @Delete(':commentId')
  @Audited()
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Delete a comment on an embedded dashboard',
    description:
      `${ACCESS} Only the author (403 otherwise). The text is wiped; a deleted reply stays in its thread ` +
      'with an empty `body` and `removedAt`, and deleting a thread’s first comment deletes the whole thread. ' +
      'A comment already deleted, or not on this dashboard in this tenant: 404.',
  })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', ...WRITE_ERRORS, 'comment_not_found', 'not_comment_author')
  removeDashboardComment(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @IdParam('commentId') commentId: number,
  ): Promise<SuccessResponseDto> {
    return this.comments.remove(user, publicId, commentId);
  }

  @Post(':commentId/resolve')
  @Audited()
  @HttpCode(200)
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Resolve or re-open a comment thread',
    description:
      `${ACCESS} \`commentId\` is the thread’s first comment (a reply: 400). Only the embed user who started ` +
      'the thread (403 otherwise). Resolving a resolved thread keeps its `resolvedAt`. Answers the thread.',
  })
  @ApiOkResponse({ type: EmbedDashboardCommentThreadDto })
  @ApiErrors(
    'validation_failed',
    ...WRITE_ERRORS,
    'comment_not_found',
    'comment_is_reply',
    'not_comment_author',
  )
  setDashboardCommentResolved(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @IdParam('commentId') commentId: number,
    @Body() dto: SetEmbedDashboardCommentResolvedBodyDto,
  ): Promise<EmbedDashboardCommentThreadDto> {
    return this.comments.setResolved(user, publicId, commentId, dto.resolved);
  }
}
