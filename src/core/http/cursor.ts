/**
 * The opaque cursors of keyset lists: the sort key of a row as base64url JSON. No framework in
 * here, so the bench baseline decodes cursors with the very same code.
 */

export type CursorValue = string | number | null;
export type CursorKind = 'string' | 'number' | 'date';

/** The instants cursors carry: ISO 8601 in UTC or with an offset, as `toISOString` writes them. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

export function encodeCursor(values: readonly CursorValue[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
}

/** The values of a cursor made by {@link encodeCursor} for a sort of `kinds`, or null. */
export function parseCursor(after: string, kinds: readonly CursorKind[]): CursorValue[] | null {
  let values: unknown;
  try {
    values = /^[A-Za-z0-9_-]+$/.test(after)
      ? JSON.parse(Buffer.from(after, 'base64url').toString('utf8'))
      : null;
  } catch {
    return null;
  }
  const ok =
    Array.isArray(values) &&
    values.length === kinds.length &&
    values.every((v, i) => {
      const kind = kinds[i];
      if (kind === 'number') return Number.isSafeInteger(v);
      if (typeof v !== 'string' || v.length > 1000 || v.includes('\u0000')) return false;
      return kind === 'string' || (ISO_INSTANT.test(v) && !Number.isNaN(Date.parse(v)));
    });
  return ok ? (values as CursorValue[]) : null;
}
