import type { Response } from 'express';
import { errorsOf } from '../../core/errors/api-error.js';
import type { ErrorBody } from '../../core/errors/exception.filter.js';

/**
 * SCIM errors. Codes named after the `scimType` values of RFC 7644 section 3.12 travel as
 * `scimType` in the SCIM error body (see {@link renderScimError}).
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

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimErrorBody {
  schemas: string[];
  status: string;
  scimType?: string;
  detail: string;
}

/** The `scimType` values of RFC 7644 section 3.12; codes of that name travel as `scimType`. */
const SCIM_TYPES: ReadonlySet<string> = new Set([
  'invalidFilter',
  'tooMany',
  'uniqueness',
  'mutability',
  'invalidSyntax',
  'invalidPath',
  'noTarget',
  'invalidValue',
  'invalidVers',
  'sensitive',
]);

/** Core input errors raised before SCIM's own validation, in SCIM's vocabulary. */
const SCIM_TYPE_OF_CORE_CODE: Readonly<Record<string, string>> = {
  malformed_json: 'invalidSyntax',
  invalid_characters: 'invalidValue',
};

/** The SCIM error body (RFC 7644 section 3.12) of an error in the one error shape. */
export function scimErrorBody(body: ErrorBody): ScimErrorBody {
  const detail = Array.isArray(body.message) ? body.message.join('; ') : body.message;
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(body.statusCode),
    ...(SCIM_TYPES.has(body.code)
      ? { scimType: body.code }
      : body.code in SCIM_TYPE_OF_CORE_CODE
        ? { scimType: SCIM_TYPE_OF_CORE_CODE[body.code] }
        : {}),
    detail,
  };
}

/**
 * Writes an error in the SCIM error schema (RFC 7644 section 3.12, `application/scim+json`),
 * where identity providers expect it: declared by every SCIM controller (`@ErrorShape`), so
 * errors raised before routing (malformed JSON, 415, 429) and by the guard answer so too.
 */
export function renderScimError(res: Response, body: ErrorBody): void {
  res
    .status(body.statusCode)
    .type('application/scim+json')
    .send(JSON.stringify(scimErrorBody(body)));
}
