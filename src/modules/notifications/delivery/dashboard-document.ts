/**
 * What a scheduled notification shows of a dashboard, and its three renderings: the HTML body of
 * the email, its plain-text alternative, and the page the headless browser prints to PDF or PNG.
 *
 * Pure: no I/O, no framework. Every value that reaches HTML (titles, column names, cells, the
 * error of a report, filters, the link) is escaped here, so report data can never become markup;
 * the browser that prints the page also runs no JavaScript and loads nothing (dashboard-renderer.ts).
 */

/** One report of the dashboard, as a table. */
export interface ReportTable {
  title: string;
  columns: string[];
  rows: Record<string, unknown>[];
  /** Why the report could not be read: shown instead of the table. */
  error?: string;
  /** True when `rows` holds only the first rows of the result. */
  truncated?: boolean;
}

export interface DashboardDocument {
  title: string;
  /** Where the dashboard is opened in the product; only an http(s) address becomes a link. */
  link: string;
  generatedAt: Date;
  /** IANA time zone in which `generatedAt` is shown (the notification's); UTC when unknown. */
  timezone: string;
  tables: ReportTable[];
  /** The filters applied, human-readable (`Country is France`). */
  filters?: string[];
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => HTML_ESCAPES[c] ?? c);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** A cell as text: nothing for null, ISO for dates, JSON for objects. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    // A circular object, or one holding a bigint.
    return '[unprintable value]';
  }
}

/** The link when it is an http(s) address, else null (a `javascript:` link is never emitted). */
export function safeLink(link: string): string | null {
  try {
    const url = new URL(link);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** `generatedAt` in the document's time zone, e.g. `24 Nov 2026, 09:00 (Europe/Berlin)`. */
export function formatGeneratedAt(doc: Pick<DashboardDocument, 'generatedAt' | 'timezone'>): string {
  const format = (timeZone: string): string =>
    new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' }).format(
      doc.generatedAt,
    ) + ` (${timeZone})`;
  try {
    return format(doc.timezone);
  } catch {
    return format('UTC');
  }
}

const FONT = "font-family:Helvetica,Arial,'DejaVu Sans',sans-serif";
const MUTED = 'color:#5f6b7a';

/**
 * The email's HTML body: tables and inline styles only (mail clients drop `<style>` blocks and
 * ignore most CSS), a width that reads on a phone, every value escaped.
 */
export function renderEmailHtml(doc: DashboardDocument): string {
  const link = safeLink(doc.link);
  const parts: string[] = [];
  parts.push(
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(doc.title)}</title></head>`,
    `<body style="margin:0;padding:0;background:#f4f6f8;${FONT};color:#1f2933">`,
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f4f6f8">',
    '<tr><td align="center" style="padding:24px 12px">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" ' +
      'style="max-width:960px;background:#ffffff;border:1px solid #dde3ea;border-radius:6px">',
    '<tr><td style="padding:20px 24px">',
    `<h1 style="margin:0 0 6px 0;font-size:22px;line-height:28px;${FONT}">${escapeHtml(doc.title)}</h1>`,
    `<p style="margin:0 0 12px 0;font-size:13px;${MUTED}">Generated ${escapeHtml(formatGeneratedAt(doc))}</p>`,
  );
  if (doc.filters && doc.filters.length > 0) {
    parts.push(
      `<p style="margin:0 0 12px 0;font-size:13px;${MUTED}">Filters: ` +
        doc.filters.map((f) => escapeHtml(f)).join('; ') +
        '</p>',
    );
  }
  if (link) {
    parts.push(
      '<p style="margin:0 0 8px 0">' +
        `<a href="${escapeHtml(link)}" style="display:inline-block;padding:8px 14px;background:#2563eb;` +
        `color:#ffffff;text-decoration:none;border-radius:4px;font-size:14px;${FONT}">Open the dashboard</a>` +
        '</p>',
    );
  }
  parts.push('</td></tr>');
  if (doc.tables.length === 0) {
    parts.push(
      `<tr><td style="padding:0 24px 20px 24px;font-size:14px;${MUTED}">This dashboard has no reports.</td></tr>`,
    );
  }
  for (const table of doc.tables) {
    parts.push('<tr><td style="padding:0 24px 24px 24px">', emailTable(table), '</td></tr>');
  }
  parts.push('</table>');
  if (link) {
    parts.push(
      `<p style="margin:12px 0 0 0;font-size:12px;${MUTED}">` +
        `<a href="${escapeHtml(link)}" style="color:#5f6b7a">${escapeHtml(link)}</a></p>`,
    );
  }
  parts.push('</td></tr></table></body></html>');
  return parts.join('\n');
}

function emailTable(table: ReportTable): string {
  const out: string[] = [
    `<h2 style="margin:0 0 8px 0;font-size:16px;line-height:22px;${FONT}">${escapeHtml(table.title)}</h2>`,
  ];
  if (table.error !== undefined) {
    out.push(
      '<p style="margin:0;padding:10px 12px;background:#fdecea;border:1px solid #f5c2c0;color:#8a1c13;' +
        `font-size:13px">This report could not be read: ${escapeHtml(table.error)}</p>`,
    );
    return out.join('\n');
  }
  if (table.rows.length === 0) {
    out.push(`<p style="margin:0;font-size:13px;${MUTED}">No rows.</p>`);
    return out.join('\n');
  }
  const th =
    'style="padding:6px 8px;border-bottom:2px solid #cbd2d9;background:#f0f3f6;text-align:left;' +
    'font-size:12px;font-weight:bold;white-space:nowrap"';
  // Short values (dates, numbers, codes) stay on one line; long text wraps.
  const td = 'style="padding:5px 8px;border-bottom:1px solid #e4e7eb;font-size:12px;vertical-align:top';
  const cell = (value: unknown): string => {
    const text = cellText(value);
    return `<td ${td}${text.length <= 24 ? ';white-space:nowrap' : ''}">${escapeHtml(text)}</td>`;
  };
  out.push(
    '<table cellpadding="0" cellspacing="0" border="0" width="100%" style="border-collapse:collapse;' +
      `${FONT}">`,
    '<thead><tr>' + table.columns.map((c) => `<th ${th}>${escapeHtml(c)}</th>`).join('') + '</tr></thead>',
    '<tbody>',
  );
  for (const row of table.rows) {
    out.push('<tr>' + table.columns.map((c) => cell(row[c])).join('') + '</tr>');
  }
  out.push('</tbody></table>');
  if (table.truncated) {
    out.push(
      `<p style="margin:6px 0 0 0;font-size:12px;${MUTED}">Only the first ${table.rows.length} rows are ` +
        'shown: open the dashboard for all of them.</p>',
    );
  }
  return out.join('\n');
}

/** The plain-text alternative: the same content, each table as aligned columns. */
export function renderEmailText(doc: DashboardDocument): string {
  const link = safeLink(doc.link);
  const lines: string[] = [doc.title, '='.repeat(Math.min(Math.max(doc.title.length, 3), 80)), ''];
  lines.push(`Generated ${formatGeneratedAt(doc)}`);
  if (doc.filters && doc.filters.length > 0) lines.push(`Filters: ${doc.filters.join('; ')}`);
  if (link) lines.push(`Open the dashboard: ${link}`);
  lines.push('');
  if (doc.tables.length === 0) lines.push('This dashboard has no reports.', '');
  for (const table of doc.tables) {
    lines.push(table.title, '-'.repeat(Math.min(Math.max(table.title.length, 3), 80)));
    if (table.error !== undefined) {
      lines.push(`This report could not be read: ${table.error}`);
    } else if (table.rows.length === 0) {
      lines.push('No rows.');
    } else {
      lines.push(...textTable(table));
      if (table.truncated) {
        lines.push(
          `(Only the first ${table.rows.length} rows are shown: open the dashboard for all of them.)`,
        );
      }
    }
    lines.push('');
  }
  return lines.join('\n').replace(/\r/g, '');
}

const TEXT_CELL_MAX = 40;

function textTable(table: ReportTable): string[] {
  const clip = (s: string): string => {
    const flat = s.replace(/\s+/g, ' ');
    return flat.length > TEXT_CELL_MAX ? `${flat.slice(0, TEXT_CELL_MAX - 1)}…` : flat;
  };
  const header = table.columns.map(clip);
  const body = table.rows.map((row) => table.columns.map((c) => clip(cellText(row[c]))));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-+-'), ...body.map(line)];
}

/**
 * The page the browser prints: A4 landscape, the tables' headers repeated on every printed page,
 * rows never split across pages. Same content as the email. No script, no external resource.
 */
export function renderPageHtml(doc: DashboardDocument): string {
  const link = safeLink(doc.link);
  const parts: string[] = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // Belt and braces: the browser runs no script and loads nothing anyway.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${escapeHtml(doc.title)}</title>`,
    `<style>${PAGE_CSS}</style>`,
    '</head><body>',
    '<header>',
    `<h1>${escapeHtml(doc.title)}</h1>`,
    `<p class="meta">Generated ${escapeHtml(formatGeneratedAt(doc))}</p>`,
  ];
  if (doc.filters && doc.filters.length > 0) {
    parts.push(`<p class="meta">Filters: ${doc.filters.map((f) => escapeHtml(f)).join('; ')}</p>`);
  }
  if (link) parts.push(`<p class="meta"><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`);
  parts.push('</header>');
  if (doc.tables.length === 0) parts.push('<p class="note">This dashboard has no reports.</p>');
  for (const table of doc.tables) {
    parts.push('<section>', `<h2>${escapeHtml(table.title)}</h2>`);
    if (table.error !== undefined) {
      parts.push(`<p class="error">This report could not be read: ${escapeHtml(table.error)}</p>`);
    } else if (table.rows.length === 0) {
      parts.push('<p class="note">No rows.</p>');
    } else {
      parts.push(
        '<table><thead><tr>' +
          table.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('') +
          '</tr></thead><tbody>',
      );
      for (const row of table.rows) {
        parts.push(
          '<tr>' + table.columns.map((c) => `<td>${escapeHtml(cellText(row[c]))}</td>`).join('') + '</tr>',
        );
      }
      parts.push('</tbody></table>');
      if (table.truncated) {
        parts.push(
          `<p class="note">Only the first ${table.rows.length} rows are shown: open the dashboard for all of them.</p>`,
        );
      }
    }
    parts.push('</section>');
  }
  parts.push('</body></html>');
  return parts.join('\n');
}

const PAGE_CSS = [
  '@page { size: A4 landscape; margin: 12mm; }',
  "html { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; font-size: 10pt; color: #1f2933; }",
  'body { margin: 0; padding: 16px; background: #ffffff; width: 1100px; }',
  '@media print { body { padding: 0; width: auto; } }',
  'h1 { font-size: 18pt; margin: 0 0 4px 0; }',
  'h2 { font-size: 12pt; margin: 0 0 6px 0; break-after: avoid; }',
  '.meta { margin: 0 0 4px 0; color: #5f6b7a; font-size: 9pt; }',
  '.meta a { color: #2563eb; word-break: break-all; }',
  'header { margin-bottom: 14px; padding-bottom: 8px; border-bottom: 2px solid #2563eb; }',
  'section { margin: 0 0 16px 0; }',
  'table { border-collapse: collapse; width: 100%; }',
  'thead { display: table-header-group; }',
  'tr { break-inside: avoid; }',
  'th { text-align: left; background: #f0f3f6; border-bottom: 2px solid #cbd2d9; padding: 4px 6px; font-size: 9pt; }',
  'td { border-bottom: 1px solid #e4e7eb; padding: 3px 6px; font-size: 9pt; vertical-align: top; ' +
    'overflow-wrap: anywhere; }',
  '.note { color: #5f6b7a; font-size: 9pt; margin: 4px 0 0 0; }',
  '.error { background: #fdecea; border: 1px solid #f5c2c0; color: #8a1c13; padding: 6px 8px; margin: 0; }',
].join('\n');
