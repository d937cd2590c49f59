import { applyDecorators, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiConsumes, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ScimErrorDto } from './dto/scim.dto.js';
import { ERROR_CODES, type ErrorCode } from '../../core/errors/error-codes.js';
import { errorBody } from '../../core/errors/exception.filter.js';
import { renderScimError, scimErrorBody } from './scim.errors.js';
import { IgnoreUnknownQueryParams } from '../../core/http/query-params.guard.js';
import { ErrorShape } from '../../core/http/route-behaviour.js';
import { ScimContentTypeInterceptor, ScimDiscoveryFilterGuard } from './scim-http.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request; scimType says why (invalidFilter, invalidSyntax, invalidPath, invalidValue, noTarget, mutability)',
  401: 'Missing, malformed, unknown or revoked token',
  403: 'Not an admin; for users also: deactivating or deleting yourself or the last active admin',
  404: 'No such resource in the account',
  409: 'scimType uniqueness: the userName, email or group name is taken',
  412: 'If-Match does not match the current version',
  429: 'Too many failed authentications from this address, or too many requests; see Retry-After',
};

/** The codes each status is illustrated with: the scimType values for 400 and 409. */
const EXAMPLE_CODES: Record<number, readonly ErrorCode[]> = {
  400: ['invalidFilter', 'invalidSyntax', 'invalidPath', 'invalidValue', 'noTarget', 'mutability'],
  401: ['unauthorized'],
  403: ['forbidden'],
  404: ['scim_not_found'],
  409: ['uniqueness'],
  412: ['precondition_failed'],
  429: ['rate_limited'],
};

/** One example per code, in the SCIM error body the route answers, with the response's status. */
function scimExamples(status: number) {
  return Object.fromEntries(
    (EXAMPLE_CODES[status] ?? []).map((code) => {
      const spec = ERROR_CODES[code];
      if (spec.status !== status) throw new Error(`${code} is a ${spec.status}, not a ${status}`);
      const detail = spec.meaning.replace(/^SCIM: /, '').replace(/`/g, '');
      return [code, { summary: code, value: scimErrorBody(errorBody(status, code, detail)) }];
    }),
  );
}

/** Documents the error statuses of a SCIM route, in the SCIM error body, with examples. */
export const ScimErrors = (...statuses: number[]) =>
  applyDecorators(
    ...[401, 403, 429, ...statuses].map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status] ?? 'Error',
        type: ScimErrorDto,
        examples: scimExamples(status),
      }),
    ),
  );

/**
 * A SCIM controller: tag, media types (`application/scim+json` and `application/json`), and
 * errors in the SCIM error schema for every request under its path, whatever raises them.
 */
export const ScimController = () =>
  applyDecorators(
    ErrorShape(renderScimError),
    ApiTags('SCIM'),
    ApiProduces('application/scim+json', 'application/json'),
    ApiConsumes('application/scim+json', 'application/json'),
    UseInterceptors(ScimContentTypeInterceptor),
  );

/**
 * The query of a discovery endpoint (RFC 7644 section 4): parameters are ignored, except
 * `filter`, which is refused with 403. Elsewhere in SCIM an undeclared parameter stays a 400.
 */
export const ScimDiscoveryQuery = () =>
  applyDecorators(
    IgnoreUnknownQueryParams(),
    UseGuards(ScimDiscoveryFilterGuard),
    ApiQuery({
      name: 'filter',
      required: false,
      type: String,
      description: 'Not supported here: 403 (RFC 7644 section 4). Other query parameters are ignored.',
    }),
  );

/** The query parameters of a list (RFC 7644 section 3.4.2). */
export const ScimListQuery = () =>
  applyDecorators(
    ApiQuery({ name: 'filter', required: false, type: String, example: 'userName eq "jane@example.com"' }),
    ApiQuery({ name: 'startIndex', required: false, type: 'integer', description: '1-based; default 1' }),
    ApiQuery({
      name: 'count',
      required: false,
      type: 'integer',
      description: 'Default 100, at most 1000; 0 answers totalResults only',
    }),
    // Sorting is not supported (`sort.supported: false`); identity providers may still send these.
    ApiQuery({
      name: 'sortBy',
      required: false,
      type: String,
      description: 'Ignored: results are ordered by id',
    }),
    ApiQuery({
      name: 'sortOrder',
      required: false,
      enum: ['ascending', 'descending'],
      description: 'Ignored: results are ordered by id',
    }),
    ScimProjectionQuery(),
  );

/** `attributes` and `excludedAttributes` (RFC 7644 section 3.4.2.5). */
export const ScimProjectionQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'attributes',
      required: false,
      type: String,
      description: 'Comma-separated; only these',
    }),
    ApiQuery({
      name: 'excludedAttributes',
      required: false,
      type: String,
      description: 'Comma-separated; all but these',
    }),
  );
