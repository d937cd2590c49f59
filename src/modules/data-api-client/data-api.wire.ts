/**
 * The wire formats of Cube's Core Data API, framework-free: reading an answer under a size cap and
 * telling data from `Continue wait` and from an error in it.
 *
 * - `POST /cubejs-api/v1/load` with `{"query": {...}}` answers `{query, data: [{member: value}],
 *   annotation, lastRefreshTime, ...}`;
 * - `POST /cubejs-api/v1/cubesql` with `{"query": "SELECT ..."}` answers newline-delimited JSON:
 *   `{"schema": [{"name", "column_type"}], "lastRefreshTime"?}`, then `{"data": [[cell, ...]]}`
 *   lines; an error after the first line arrives as an `{"error": ...}` line of a 200 answer;
 * - `GET /cubejs-api/v1/meta` answers `{"cubes": [...]}`;
 * - any of them may answer `{"error": "Continue wait"}` (HTTP 200) while the query is computed,
 *   and `{"error": "..."}` with a 4xx or 5xx status when it fails.
 */

import { readBoundedText } from '../../core/http/bounded-body.js';

/** The answer of a `load`: one object per row, keyed by member name. */
export interface LoadResult {
  data: Record<string, unknown>[];
  annotation?: unknown;
  /** When the data was last refreshed, as the data API reports it (ISO 8601). */
  lastRefreshTime?: string;
  /** The number of rows without `limit`, when the query asked for it (`total: true`). */
  total?: number;
}

/** The answer of a SQL query: column names in order, and one object per row keyed by them. */
export interface SqlResult {
  columns: string[];
  /** The data API's type of each column (`column_type`: `Int64`, `Utf8`, ...), in column order. */
  columnTypes: string[];
  rows: Record<string, unknown>[];
}

/** What one answer says. */
export type Reading<T> =
  { kind: 'data'; value: T } | { kind: 'continue-wait' } | { kind: 'error'; message: string };

/** The answer is larger than the cap; the rest of it was not read. */
export class AnswerTooLarge extends Error {}

/** The answer is not of the expected shape; `what` says how (never with its content). */
export class UnreadableAnswer extends Error {}

/**
 * The body of `response` as text, reading at most `maxBytes` (after content decoding, so a
 * compressed answer cannot expand past the cap either); past it, the stream is cancelled and
 * {@link AnswerTooLarge} thrown.
 */
export function readCapped(response: Response, maxBytes: number): Promise<string> {
  return readBoundedText(response, maxBytes, () => new AnswerTooLarge());
}

/** The `error` of an answer object, as text; null when there is none. */
export function errorOf(value: unknown): string | null {
  if (!isObject(value) || !('error' in value) || value.error === undefined || value.error === null)
    return null;
  const error = value.error;
  if (typeof error === 'string') return error;
  if (isObject(error) && typeof error.message === 'string') return error.message;
  return JSON.stringify(error);
}

export function isContinueWait(message: string | null): boolean {
  return message !== null && message.trim().toLowerCase() === 'continue wait';
}

/** The error of an answer that is not data (a 4xx or 5xx), when its body is `{"error": ...}`. */
export function errorOfText(text: string): string | null {
  try {
    return errorOf(JSON.parse(text));
  } catch {
    // An NDJSON error line, or not JSON at all.
    const first = text.split('\n').find((l) => l.trim() !== '');
    if (first === undefined) return null;
    try {
      return errorOf(JSON.parse(first));
    } catch {
      return null;
    }
  }
}

/** Reads the answer of `POST /v1/load`. */
export function readLoad(text: string): Reading<LoadResult> {
  const body = parseJson(text);
  const error = readError(body);
  if (error) return error;
  if (!isObject(body) || !Array.isArray(body.data)) {
    throw new UnreadableAnswer('a load answer without a data array');
  }
  if (!body.data.every(isObject)) throw new UnreadableAnswer('a load answer whose rows are not objects');
  const value: LoadResult = { data: body.data };
  if (body.annotation !== undefined) value.annotation = body.annotation;
  if (typeof body.lastRefreshTime === 'string') value.lastRefreshTime = body.lastRefreshTime;
  if (typeof body.total === 'number') value.total = body.total;
  return { kind: 'data', value };
}

/** Reads the newline-delimited answer of `POST /v1/cubesql`. */
export function readSql(text: string): Reading<SqlResult> {
  const lines = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(parseJson);
  for (const line of lines) {
    const error = readError(line);
    if (error) return error;
  }
  const [head, ...chunks] = lines;
  if (!isObject(head) || !Array.isArray(head.schema)) {
    throw new UnreadableAnswer('a SQL answer that does not start with its schema');
  }
  const columns: string[] = [];
  const columnTypes: string[] = [];
  for (const column of head.schema) {
    if (!isObject(column) || typeof column.name !== 'string') {
      throw new UnreadableAnswer('a SQL answer with a column that has no name');
    }
    columns.push(column.name);
    columnTypes.push(typeof column.column_type === 'string' ? column.column_type : '');
  }
  const rows: Record<string, unknown>[] = [];
  for (const chunk of chunks) {
    if (!isObject(chunk) || !Array.isArray(chunk.data)) {
      throw new UnreadableAnswer('a SQL answer with a line that is neither data nor an error');
    }
    for (const row of chunk.data) {
      if (!Array.isArray(row)) throw new UnreadableAnswer('a SQL answer whose rows are not arrays');
      rows.push(Object.fromEntries(columns.map((name, i) => [name, i < row.length ? row[i] : null])));
    }
  }
  return { kind: 'data', value: { columns, columnTypes, rows } };
}

/** Reads the answer of `GET /v1/meta`: the model's cubes and views, as the data API gives them. */
export function readMeta(text: string): Reading<unknown> {
  const body = parseJson(text);
  const error = readError(body);
  if (error) return error;
  if (!isObject(body)) throw new UnreadableAnswer('a meta answer that is not an object');
  return { kind: 'data', value: body };
}

function readError(value: unknown): Reading<never> | null {
  const message = errorOf(value);
  if (message === null) return null;
  return isContinueWait(message) ? { kind: 'continue-wait' } : { kind: 'error', message };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UnreadableAnswer('an answer that is not JSON');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
