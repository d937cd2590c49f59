/**
 * A1 notation as spreadsheets write it, for matching placements. Cells compare
 * case-insensitively and without `$` (`$b$3` is `B3`); sheet names compare exactly.
 *
 * A location is `Sheet!A1`, `'Sheet name'!A1` (a quote inside a quoted name is doubled) or a
 * range `Sheet!A1:D20`, whose first cell is the anchor. A location without a sheet (`A1`,
 * `A1:D20`) names only a cell.
 */

/** Columns up to XFD and rows up to 1,048,576: the largest grid either spreadsheet host allows. */
const CELL = /^\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})$/;
const MAX_ROW = 1_048_576;
const MAX_COLUMN = 16_384;

export interface ParsedLocation {
  /** The sheet name, unquoted; null when the location names no sheet. */
  sheet: string | null;
  /** The first cell, normalised. */
  anchor: string;
  /** The last cell of a range, normalised; null for a single cell. */
  end: string | null;
}

function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/** `$b$3` → `B3`; null when `text` is not one cell inside the grid. */
export function normalizeCell(text: string): string | null {
  const m = CELL.exec(text.trim());
  if (!m) return null;
  const column = m[1].toUpperCase();
  const row = Number(m[2]);
  if (row > MAX_ROW || columnNumber(column) > MAX_COLUMN) return null;
  return `${column}${row}`;
}

/** Splits `Sheet!ref` into the unquoted sheet name and the reference; null sheet when absent. */
function splitSheet(text: string): { sheet: string | null; ref: string } | null {
  if (text.startsWith("'")) {
    let i = 1;
    let name = '';
    for (;;) {
      const q = text.indexOf("'", i);
      if (q < 0) return null;
      name += text.slice(i, q);
      if (text[q + 1] === "'") {
        name += "'";
        i = q + 2;
        continue;
      }
      if (text[q + 1] !== '!') return null;
      return name === '' ? null : { sheet: name, ref: text.slice(q + 2) };
    }
  }
  const bang = text.lastIndexOf('!');
  if (bang < 0) return { sheet: null, ref: text };
  const sheet = text.slice(0, bang);
  return sheet === '' ? null : { sheet, ref: text.slice(bang + 1) };
}

/** Parses a location; null when it is not A1 notation. */
export function parseLocation(text: string): ParsedLocation | null {
  const split = splitSheet(text.trim());
  if (!split) return null;
  const [first, last, ...rest] = split.ref.split(':');
  if (rest.length > 0) return null;
  const anchor = normalizeCell(first);
  if (!anchor) return null;
  if (last === undefined) return { sheet: split.sheet, anchor, end: null };
  const end = normalizeCell(last);
  return end ? { sheet: split.sheet, anchor, end } : null;
}

/** Whether a sheet name must be quoted in a location. */
function needsQuotes(sheet: string): boolean {
  return !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(sheet) || CELL.test(sheet);
}

/** Writes `sheet!cell` (or `sheet!cell:end`), quoting the sheet name when it needs it. */
export function formatLocation(sheet: string, anchor: string, end: string | null = null): string {
  const name = needsQuotes(sheet) ? `'${sheet.replaceAll("'", "''")}'` : sheet;
  return `${name}!${anchor}${end ? `:${end}` : ''}`;
}
