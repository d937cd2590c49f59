import { createHash } from 'node:crypto';

const names = new Map<string, string>();
const NAME_CACHE_LIMIT = 2_000;

/**
 * The name a prepared statement of `text` carries on every connection: derived from the text,
 * so one text always maps to one name and two texts never share one (pg refuses a name reused
 * for another text on the same connection).
 */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha1').update(text).digest('base64url')}`;
    if (names.size < NAME_CACHE_LIMIT) names.set(text, name);
  }
  return name;
}
