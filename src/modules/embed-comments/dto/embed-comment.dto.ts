import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { BoolField, IntField, StringField } from '../../../core/http/validation.js';

/** The longest comment, in characters (the reference's bound). */
export const COMMENT_BODY_MAX = 10_000;

const BODY_DESCRIPTION =
  'The comment’s text, 1 to 10 000 characters, not only spaces; stored and answered exactly as sent (clients ' +
  'show it as text). `@[shown name](id)` mentions the embed user `id`, one of `GET .../mentionable-users` ' +
  '(at most 20 different users).';

const bodyField = () =>
  StringField({
    minLength: 1,
    maxLength: COMMENT_BODY_MAX,
    pattern: /\S/,
    patternMessage: 'body must not be blank',
    description: BODY_DESCRIPTION,
    example: 'Revenue dips in March: @[Dana Reyes](42) can you check the EU rows?',
  });

/** `POST /embed/dashboard/{publicId}/comments` (the reference's CreateEmbedDashboardCommentBody). */
export class CreateEmbedDashboardCommentBodyDto {
  @bodyField()
  body: string;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'Reply to this thread: the id of its first comment. Absent or null: start a thread.',
    example: 17,
  })
  parentId?: number | null;
}

/** `PATCH .../comments/{commentId}` (the reference's UpdateEmbedDashboardCommentBody). */
export class UpdateEmbedDashboardCommentBodyDto {
  @bodyField()
  body: string;
}

/** `POST .../comments/{commentId}/resolve` (the reference's SetEmbedDashboardCommentResolvedBody). */
export class SetEmbedDashboardCommentResolvedBodyDto {
  @BoolField({ description: '`true` resolves the thread, `false` re-opens it', example: true })
  resolved: boolean;
}

/** `GET .../comments`: one page of threads. */
export class DashboardCommentsQueryDto extends PageQueryDto {
  @BoolField({
    optional: true,
    nullable: true,
    query: true,
    description: 'Also list resolved threads (default: open threads only)',
  })
  includeResolved?: boolean | null;

  @BoolField({
    optional: true,
    nullable: true,
    query: true,
    description: 'List resolved threads only (wins over `includeResolved`)',
  })
  resolvedOnly?: boolean | null;
}

/** `GET .../comments/mentionable-users`. */
export class MentionableUsersQueryDto extends PageQueryDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'Case-insensitive part of the username (external id) or email',
  })
  search?: string | null;
}

/** One comment (the reference's EmbedDashboardCommentDto). */
export class EmbedDashboardCommentDto {
  @ApiProperty({ type: 'integer' }) id: number;

  @ApiProperty({ description: 'The dashboard’s public id' }) dashboardId: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The thread’s first comment for a reply; null for a thread’s first comment',
  })
  parentId: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The embed user who wrote it; null once that user is gone',
  })
  userId: number | null;

  @ApiProperty({ description: 'As written; empty once deleted' }) body: string;

  @ApiProperty({ format: 'date-time' }) createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Last edit, if any' })
  editedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it was deleted' })
  removedAt: string | null;

  @ApiProperty({ description: 'Whether the caller wrote it' }) isOwn: boolean;
}

/** A thread: its first comment and its replies, oldest first (the reference's EmbedDashboardCommentThreadDto). */
export class EmbedDashboardCommentThreadDto {
  @ApiProperty({ type: EmbedDashboardCommentDto }) root: EmbedDashboardCommentDto;

  @ApiProperty({ type: EmbedDashboardCommentDto, isArray: true, description: 'Oldest first' })
  replies: EmbedDashboardCommentDto[];

  @ApiProperty({ type: String, format: 'date-time', nullable: true }) resolvedAt: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The embed user who resolved it' })
  resolvedBy: number | null;
}

export class EmbedDashboardCommentThreadsListDto extends PageOf(EmbedDashboardCommentThreadDto) {}

/** An embed user a comment may mention (the reference's EmbedMentionableUserDto). */
export class EmbedMentionableUserDto {
  @ApiProperty({ type: 'integer' }) id: number;

  @ApiProperty({ description: 'The external id' }) username: string;

  @ApiProperty({ type: String, nullable: true, description: 'Null while the user has no real address' })
  email: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The display name' }) firstName: string | null;
}

export class EmbedMentionableUsersListDto extends PageOf(EmbedMentionableUserDto) {}
