import type { Type } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { coreError } from '../errors/api-error.js';
import { encodeCursor, parseCursor, type CursorKind, type CursorValue } from './cursor.js';

export { encodeCursor, type CursorValue };
import { IntField, StringField } from './validation.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Cursor parameters every list takes. */
export class PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 1,
    max: MAX_PAGE_SIZE,
    description: 'Page size (default 100)',
  })
  first?: number;

  @StringField({ optional: true, maxLength: 512, description: 'Cursor: the endCursor of the previous page' })
  after?: string;
}

/** Cursor parameters plus the older offset parameters; the two styles cannot be mixed. */
export class LegacyPageQueryDto extends PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 0,
    max: MAX_PAGE_SIZE,
    deprecated: true,
    description: 'Legacy page size',
  })
  limit?: number;

  @IntField({ optional: true, query: true, min: 0, deprecated: true, description: 'Legacy offset' })
  offset?: number;
}

export class PageInfoDto {
  @ApiProperty() hasNextPage: boolean;
  @ApiProperty() hasPreviousPage: boolean;
  @ApiProperty({ type: String, nullable: true }) startCursor: string | null;
  @ApiProperty({ type: String, nullable: true }) endCursor: string | null;
}

export class LegacyPaginationDto {
  @ApiProperty({ minimum: 0 }) total: number;
  @ApiProperty({ minimum: 0 }) offset: number;
  @ApiProperty({ minimum: 0 }) limit: number;
}

/** The fields of a list's envelope. */
export type PageField = 'items' | 'data' | 'count' | 'pageInfo' | 'pagination';

/** How a list's envelope is made, besides `items` and `pageInfo`. */
export interface PageShape {
  /**
   * The deprecated fields older clients read: `data` (the items again, between `items` and
   * `pageInfo`), or `offset` (`data`, `count` and `pagination` after `pageInfo`: offset paging).
   */
  legacy?: 'data' | 'offset';
  /** `pageInfo` may be null (lists that are not paged by cursor yet). */
  nullablePageInfo?: boolean;
  /** What the deprecated `data` says of itself. */
  dataDescription?: string;
  /** What the deprecated `count` says of itself (`legacy: 'offset'`). */
  count?: { description?: string; minimum?: number };
  /**
   * The schema's field order, for a list published with an order of its own: the same fields as
   * `legacy` gives, each once (checked when the class is made).
   */
  order?: readonly PageField[];
}

/**
 * The response body of a list of `item`: `items` and `pageInfo`, with the deprecated fields its
 * {@link PageShape} names, in the order the schema shows them. Each list response is a subclass
 * named for the list (`class UsersListDto extends PageOf(UserDto, { legacy: 'offset' }) {}`): the
 * subclass's name is the schema's, and fields beyond the envelope are declared on it.
 */
export function PageOf<T>(item: Type<T>, shape?: PageShape & { legacy?: undefined }): Type<Page<T>>;
export function PageOf<T>(
  item: Type<T>,
  shape: PageShape & { legacy: 'data' },
): Type<Page<T> & { data: T[] }>;
export function PageOf<T>(item: Type<T>, shape: PageShape & { legacy: 'offset' }): Type<LegacyPage<T>>;
export function PageOf<T>(item: Type<T>, shape: PageShape = {}): Type<Page<T>> {
  abstract class PageOfItems {
    items: T[];
    pageInfo: PageInfoDto;
    data: T[];
    count: number;
    pagination: LegacyPaginationDto;
  }
  const data: ApiPropertyOptions = {
    type: item,
    isArray: true,
    deprecated: true,
    ...(shape.dataDescription ? { description: shape.dataDescription } : {}),
  };
  // Insertion order is the variant's own field order.
  const fields = new Map<PageField, ApiPropertyOptions>();
  fields.set('items', { type: item, isArray: true });
  if (shape.legacy === 'data') fields.set('data', data);
  fields.set('pageInfo', { type: PageInfoDto, ...(shape.nullablePageInfo ? { nullable: true } : {}) });
  if (shape.legacy === 'offset') {
    fields.set('data', data);
    fields.set('count', { type: Number, deprecated: true, ...shape.count });
    fields.set('pagination', { type: LegacyPaginationDto, deprecated: true });
  }
  const order = shape.order ?? [...fields.keys()];
  if (new Set(order).size !== fields.size || order.some((name) => !fields.has(name))) {
    throw new Error(`PageOf(${item.name}): order must list ${[...fields.keys()].join(', ')}, each once`);
  }
  for (const name of order) ApiProperty(fields.get(name))(PageOfItems.prototype, name);
  return PageOfItems as unknown as Type<Page<T>>;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface Page<T> {
  items: T[];
  pageInfo: PageInfo;
}

export interface LegacyPage<T> extends Page<T> {
  data: T[];
  count: number;
  pagination: { total: number; offset: number; limit: number };
}

export type Paging =
  | { mode: 'cursor'; first: number; after: CursorValue[] | null }
  | { mode: 'offset'; limit: number; offset: number };

/**
 * Decodes a cursor made by {@link encodeCursor} for a sort of `kinds`; anything else is a 400,
 * never a query with garbage in it.
 */
export function decodeCursor(after: string, kinds: readonly CursorKind[]): CursorValue[] {
  return parseCursor(after, kinds) ?? invalidCursor();
}

/** The 400 of an `after` that is not a cursor this list returned (with this ordering). */
export function invalidCursor(): never {
  throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
}

/** Resolves the paging style of a request; mixing `first`/`after` with `limit`/`offset` is a 400. */
export function resolvePaging(
  query: PageQueryDto & Partial<LegacyPageQueryDto>,
  kinds: ReadonlyArray<'string' | 'number' | 'date'>,
): Paging {
  const legacy = query.limit !== undefined || query.offset !== undefined;
  const cursor = query.first !== undefined || query.after !== undefined;
  if (legacy && cursor) {
    throw coreError('pagination_conflict', 'Use either first/after or limit/offset, not both');
  }
  if (legacy) return { mode: 'offset', limit: query.limit ?? DEFAULT_PAGE_SIZE, offset: query.offset ?? 0 };
  return {
    mode: 'cursor',
    first: query.first ?? DEFAULT_PAGE_SIZE,
    after: query.after !== undefined ? decodeCursor(query.after, kinds) : null,
  };
}

/** The SQL row limit for a page: one more row than asked, to learn whether another page exists. */
export function fetchLimit(paging: Paging): number {
  return (paging.mode === 'cursor' ? paging.first : paging.limit) + 1;
}

/**
 * Builds a page from rows fetched with {@link fetchLimit}. `cursorOf` gives the sort key of a
 * row, which becomes its cursor.
 */
export function buildPage<R, T = R>(
  rows: R[],
  paging: Paging,
  cursorOf: (row: R) => CursorValue[],
  map: (row: R) => T = (r) => r as unknown as T,
): Page<T> {
  const size = paging.mode === 'cursor' ? paging.first : paging.limit;
  const slice = rows.slice(0, size);
  return {
    items: slice.map(map),
    pageInfo: {
      hasNextPage: rows.length > size,
      hasPreviousPage: paging.mode === 'cursor' ? paging.after !== null : paging.offset > 0,
      startCursor: slice.length ? encodeCursor(cursorOf(slice[0])) : null,
      endCursor: slice.length ? encodeCursor(cursorOf(slice[slice.length - 1])) : null,
    },
  };
}

/**
 * Adds the deprecated `data`, `count` and `pagination` fields that older clients read. `data` is
 * the `items` array itself, never a copy: `res.json` (json-body.ts) recognises the shared array
 * and serialises it once for both keys.
 */
export function withLegacyFields<T>(page: Page<T>, paging: Paging, total: number): LegacyPage<T> {
  return {
    ...page,
    data: page.items,
    count: total,
    pagination: {
      total,
      offset: paging.mode === 'offset' ? paging.offset : 0,
      limit: paging.mode === 'offset' ? paging.limit : paging.first,
    },
  };
}

/**
 * The keyset condition of a page after the row whose sort values are `after` (`TRUE` for the
 * first page), over `columns` in `direction` (the last column breaks ties), with the named
 * parameters `:after1`, `:after2`… (one per column).
 */
export function keysetPredicate(
  columns: readonly string[],
  direction: 'ASC' | 'DESC',
  after: readonly CursorValue[] | null,
): { sql: string; params: Record<string, CursorValue> } {
  if (!after) return { sql: 'TRUE', params: {} };
  const names = columns.map((_, i) => `after${i + 1}`);
  const op = direction === 'ASC' ? '>' : '<';
  return {
    sql: `(${columns.join(', ')}) ${op} (${names.map((n) => `:${n}`).join(', ')})`,
    params: Object.fromEntries(names.map((n, i) => [n, after[i]!])),
  };
}
