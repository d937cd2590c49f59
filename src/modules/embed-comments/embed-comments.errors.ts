import { errorsOf } from '../../core/errors/api-error.js';

export const embedCommentsError = errorsOf(
  'not_comment_author',
  'comment_is_reply',
  'unknown_mentions',
  'too_many_mentions',
  'comment_limit_reached',
  'comment_write_limit_reached',
);
