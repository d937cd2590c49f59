import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

/**
 * SCIM errors. Codes named after the `scimType` values of RFC 7644 section 3.12 travel as
 * `scimType` in the SCIM error body (see `sendError` in the exception filter).
 */
export const scimError = defineErrors({
  invalidFilter: HttpStatus.BAD_REQUEST,
  invalidSyntax: HttpStatus.BAD_REQUEST,
  invalidPath: HttpStatus.BAD_REQUEST,
  invalidValue: HttpStatus.BAD_REQUEST,
  noTarget: HttpStatus.BAD_REQUEST,
  mutability: HttpStatus.BAD_REQUEST,
  tooMany: HttpStatus.BAD_REQUEST,
  uniqueness: HttpStatus.CONFLICT,
  scim_not_found: HttpStatus.NOT_FOUND,
  precondition_failed: HttpStatus.PRECONDITION_FAILED,
});

export type ScimErrorCode = Parameters<typeof scimError>[0];
