import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiConsumes, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ScimErrorDto } from './dto/scim.dto.js';
import { ScimContentTypeInterceptor } from './scim-http.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request; scimType says why (invalidFilter, invalidSyntax, invalidPath, invalidValue, noTarget, mutability)',
  401: 'Missing, malformed, unknown or revoked token',
  403: 'Not an admin; for users also: deactivating or deleting yourself or the last active admin',
  404: 'No such resource in the account',
  409: 'scimType uniqueness: the userName, email or group name is taken',
  412: 'If-Match does not match the current version',
};

/** Documents the error statuses of a SCIM route, in the SCIM error body. */
export const ScimErrors = (...statuses: number[]) =>
  applyDecorators(
    ...[401, 403, ...statuses].map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error', type: ScimErrorDto }),
    ),
  );

/** A SCIM controller: tag, media types (`application/scim+json` and `application/json`). */
export const ScimController = () =>
  applyDecorators(
    ApiTags('SCIM'),
    ApiProduces('application/scim+json', 'application/json'),
    ApiConsumes('application/scim+json', 'application/json'),
    UseInterceptors(ScimContentTypeInterceptor),
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
