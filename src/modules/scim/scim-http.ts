import { createHash } from 'node:crypto';
import {
  Injectable,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { coreError } from '../../core/errors/api-error.js';
import { parseFilter, type FilterNode } from './filter/filter-parser.js';
import { hasSchema, isObject, member } from './patch/patch-request.js';
import { parseProjection, type Projection } from './scim-projection.js';
import { scimError } from './scim.errors.js';
import { SCIM_CONTENT_TYPE, URN, type ResourceSchema } from './scim.schema.js';

export const SCIM_PREFIX = '/api/scim/v2';
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 1000;

/** Where the interceptor keeps a request's `If-None-Match` for `sendResource`. */
const IF_NONE_MATCH = 'scimIfNoneMatch';

/**
 * Every SCIM success answers `application/scim+json` (errors get it from `renderScimError`).
 * The conditional GET headers are taken off the request: Express would otherwise answer 304 to
 * any list or discovery GET with `If-None-Match: *` or with the hash it computes of the body.
 * Only single resources are versioned (RFC 7644 section 3.14); `sendResource` compares them.
 */
@Injectable()
export class ScimContentTypeInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<Request>();
    const res = ctx.switchToHttp().getResponse<Response>();
    res.setHeader('Content-Type', SCIM_CONTENT_TYPE);
    res.locals[IF_NONE_MATCH] = req.get('if-none-match');
    delete req.headers['if-none-match'];
    delete req.headers['if-modified-since'];
    return next.handle();
  }
}

/**
 * Discovery endpoints take no `filter`: RFC 7644 section 4 says the service provider SHOULD
 * answer 403 to one (any other query parameter is ignored there, see `ScimDiscoveryQuery`).
 * Runs after the global guards, so 401 and the admin check come first.
 */
@Injectable()
export class ScimDiscoveryFilterGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    const query = ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown> | undefined;
    if (query && Object.hasOwn(query, 'filter'))
      throw coreError('forbidden', 'Discovery endpoints take no filter (RFC 7644 section 4)');
    return true;
  }
}

/** The absolute base URL of the SCIM API, from the request's protocol and Host. */
export function scimBase(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${SCIM_PREFIX}`;
}

/** Our ids are positive integers as strings; null for anything else. */
export function parseResourceId(raw: string): number | null {
  return /^[1-9]\d{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647 ? Number(raw) : null;
}

/** The id of a path: a string that is none of our ids names no resource (404, never 400). */
export function resourceId(raw: string, type: 'User' | 'Group'): number {
  const id = parseResourceId(raw);
  if (id === null) throw scimError('scim_not_found', `${type} ${raw.slice(0, 64)} was not found`);
  return id;
}

/** A weak entity tag of a resource's state. */
export function weakEtag(state: unknown): string {
  return `W/"${createHash('sha256').update(JSON.stringify(state)).digest('base64url').slice(0, 27)}"`;
}

function tags(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .filter(Boolean);
}

/** `If-Match` (RFC 7232, weak comparison as RFC 7644 section 3.14 uses it): 412 when no tag matches. */
export function checkIfMatch(header: string | undefined, etag: string): void {
  if (header === undefined || header.trim() === '') return;
  const list = tags(header);
  if (list.includes('*') || list.includes(etag.replace(/^W\//, ''))) return;
  throw scimError('precondition_failed', 'The resource has changed: its version does not match If-Match');
}

/** Whether `If-None-Match` names the current version (GET answers 304 then). */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const list = tags(header);
  return list.includes('*') || list.includes(etag.replace(/^W\//, ''));
}

/** Answers a single resource with its ETag, or 304 when `If-None-Match` names that version. */
export function sendResource(res: Response, body: unknown, etag: string): void {
  res.setHeader('ETag', etag);
  if (noneMatchHits(res.locals[IF_NONE_MATCH] as string | undefined, etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** The headers of a resource a request wrote: its ETag, and its Location when it was created. */
export function setWrittenHeaders(
  res: Response,
  result: { resource: Record<string, unknown>; etag: string },
  created: boolean,
): void {
  res.setHeader('ETag', result.etag);
  if (created) res.setHeader('Location', (result.resource.meta as { location: string }).location);
}

export interface ListQuery {
  filter: FilterNode | null;
  startIndex: number;
  count: number;
  projection: Projection;
}

export interface ListResponse {
  schemas: string[];
  totalResults: number;
  itemsPerPage: number;
  startIndex: number;
  Resources: Record<string, unknown>[];
}

function single(source: Record<string, unknown>, name: string): unknown {
  const value = member(source, name);
  if (Array.isArray(value)) {
    throw scimError(name === 'filter' ? 'invalidFilter' : 'invalidValue', `${name} was given more than once`);
  }
  return value;
}

function integer(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^[+-]?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  throw scimError('invalidValue', `${name} must be an integer`);
}

function text(value: unknown, name: string, code: 'invalidFilter' | 'invalidValue'): string | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value) && code === 'invalidValue' && value.every((v) => typeof v === 'string')) {
    return value.join(',');
  }
  if (typeof value !== 'string') throw scimError(code, `${name} must be a string`);
  return value;
}

/**
 * The list parameters of RFC 7644 section 3.4.2, from a query string or a SearchRequest body:
 * `startIndex` (1-based; below 1 means 1), `count` (default 100, at most 1000, negative means 0),
 * `filter`, `attributes`, `excludedAttributes`. `sortBy` and `sortOrder` are ignored.
 */
export function parseListQuery(source: Record<string, unknown>, schema: ResourceSchema): ListQuery {
  const start = integer(single(source, 'startIndex'), 'startIndex') ?? 1;
  const count = integer(single(source, 'count'), 'count') ?? DEFAULT_COUNT;
  const filterText = text(single(source, 'filter'), 'filter', 'invalidFilter');
  const projection = parseProjection(
    text(member(source, 'attributes'), 'attributes', 'invalidValue'),
    text(member(source, 'excludedAttributes'), 'excludedAttributes', 'invalidValue'),
    schema,
  );
  return {
    filter: filterText === null || filterText.trim() === '' ? null : parseFilter(filterText),
    startIndex: Math.max(1, start),
    count: Math.min(MAX_COUNT, Math.max(0, count)),
    projection,
  };
}

/** The list parameters of a POST `.search` body (RFC 7644 section 3.4.3). */
export function parseSearchRequest(body: unknown, schema: ResourceSchema): ListQuery {
  if (!isObject(body))
    throw scimError('invalidSyntax', 'The request body must be a SearchRequest JSON object');
  if (!hasSchema(body, URN.searchRequest)) {
    throw scimError('invalidSyntax', `schemas must contain "${URN.searchRequest}"`);
  }
  return parseListQuery(body, schema);
}

/** The projection parameters of a single-resource request. */
export function parseRequestProjection(req: Request, schema: ResourceSchema): Projection {
  const query = req.query as Record<string, unknown>;
  return parseProjection(
    text(member(query, 'attributes'), 'attributes', 'invalidValue'),
    text(member(query, 'excludedAttributes'), 'excludedAttributes', 'invalidValue'),
    schema,
  );
}

/** Items grouped by a key, in their order (a page's memberships by user or group id). */
export function byKey<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

export function listResponse(
  total: number,
  startIndex: number,
  resources: Record<string, unknown>[],
): ListResponse {
  return {
    schemas: [URN.listResponse],
    totalResults: total,
    itemsPerPage: resources.length,
    startIndex,
    Resources: resources,
  };
}
