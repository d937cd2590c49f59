/**
 * Mentions in a comment's text. A mention is written `@[shown name](id)`, where `id` is the
 * embed user's id from `GET .../comments/mentionable-users` and the shown name is any text
 * without `]` or a line break, up to 255 characters (what a mention input such as
 * react-mentions writes with its default markup). Nothing else in the text is a mention.
 */
const MENTION = /@\[[^\]\r\n]{1,255}\]\((\d{1,10})\)/g;

/** The most different embed users one comment may mention. */
export const MAX_MENTIONS = 20;

/** The distinct ids a comment's text mentions, in the order first mentioned. */
export function mentionedIds(body: string): number[] {
  const ids = new Set<number>();
  for (const m of body.matchAll(MENTION)) ids.add(Number(m[1]));
  return [...ids];
}
