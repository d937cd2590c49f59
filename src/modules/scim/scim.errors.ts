import { errorsOf } from '../../core/http/api-error.js';

/**
 * SCIM errors. Codes named after the `scimType` values of RFC 7644 section 3.12 travel as
 * `scimType` in the SCIM error body (see `sendError` in the exception filter).
 */
export const scimError = errorsOf(
  'invalidFilter',
  'invalidSyntax',
  'invalidPath',
  'invalidValue',
  'noTarget',
  'mutability',
  'tooMany',
  'uniqueness',
  'scim_not_found',
  'precondition_failed',
);

export type ScimErrorCode = Parameters<typeof scimError>[0];
