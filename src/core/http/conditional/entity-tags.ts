/**
 * Entity tags and the two precondition headers of RFC 9110 (sections 8.8.3, 13.1.1 and 13.1.2),
 * framework-free.
 */

/** One entity tag: `"xyz"` (strong) or `W/"xyz"` (weak); `opaque` keeps its quotes. */
export interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

/** `*`, or a list of one or more entity tags. */
export type TagCondition = '*' | readonly EntityTag[];

/** etagc: `!`, `#` to `~`, and obs-text (bytes 0x80 to 0xFF, as Node hands them over: latin1). */
const ETAGC = /^[\x21\x23-\x7e\x80-\xff]*$/;

/**
 * Parses `If-Match` or `If-None-Match`: `*`, or `#entity-tag` (a comma-separated list whose empty
 * elements are ignored, as RFC 9110 section 5.6.1 asks). Null when the value is neither, or names
 * no tag at all (an empty header can never hold: a client's mistake, refused rather than
 * answered 412); a value of several header lines (joined by Node with `, `) is read as one list.
 */
export function parseTagCondition(value: string | string[]): TagCondition | null {
  const text = (Array.isArray(value) ? value.join(', ') : value).trim();
  if (text === '*') return '*';
  const tags: EntityTag[] = [];
  let i = 0;
  const skipSpace = () => {
    while (text[i] === ' ' || text[i] === '\t') i += 1;
  };
  for (;;) {
    skipSpace();
    if (i >= text.length) break;
    if (text[i] === ',') {
      i += 1;
      continue;
    }
    const weak = text.startsWith('W/', i);
    if (weak) i += 2;
    if (text[i] !== '"') return null;
    const close = text.indexOf('"', i + 1);
    if (close < 0) return null;
    const opaque = text.slice(i, close + 1);
    if (!ETAGC.test(opaque.slice(1, -1))) return null;
    tags.push({ weak, opaque });
    i = close + 1;
    skipSpace();
    if (i < text.length && text[i] !== ',') return null;
  }
  return tags.length > 0 ? tags : null;
}

/** Parses one `ETag` value; null when it is not an entity tag. */
export function parseEntityTag(value: string | undefined): EntityTag | null {
  if (value === undefined) return null;
  const list = parseTagCondition(value);
  return list !== null && list !== '*' && list.length === 1 ? list[0] : null;
}

/**
 * `If-Match` against the current representation's tag (`current`; null when it carries none):
 * `*` holds for any representation; a list holds when one of its tags is strongly equal to the
 * current one (both strong, same opaque tag). A weak tag never matches.
 */
export function ifMatchHolds(condition: TagCondition, current: EntityTag | null): boolean {
  if (condition === '*') return true;
  if (!current || current.weak) return false;
  return condition.some((tag) => !tag.weak && tag.opaque === current.opaque);
}

/**
 * `If-None-Match` against an existing representation: false for `*`, and false when one of the
 * listed tags is weakly equal to the current one (the same opaque tag, either of them weak).
 */
export function ifNoneMatchHolds(condition: TagCondition, current: EntityTag | null): boolean {
  if (condition === '*') return false;
  if (!current) return true;
  return !condition.some((tag) => tag.opaque === current.opaque);
}
