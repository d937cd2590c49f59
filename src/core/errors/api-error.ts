import { HttpException, type HttpStatus } from '@nestjs/common';

import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * An error with a stable machine-readable `code`. Throw it through {@link errorsOf}, which takes
 * the status from the catalogue, so a code that is not declared there does not type-check.
 */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: ErrorCode,
    message: string | string[],
    /** When a retry may succeed, seconds: answered as `Retry-After` (a 429 or 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super({ message, code }, status);
  }

  get messages(): string | string[] {
    return (this.getResponse() as { message: string | string[] }).message;
  }
}

/**
 * A typed thrower for a slice of the catalogue ({@link ERROR_CODES}): a module lists the codes it
 * answers and can throw no other; the status and meaning stay declared once.
 */
export function errorsOf<const C extends ErrorCode>(...codes: readonly C[]) {
  const thrower = (
    code: C,
    message: string | string[],
    options: { retryAfterSeconds?: number } = {},
  ): ApiError => new ApiError(ERROR_CODES[code].status, code, message, options.retryAfterSeconds);
  return Object.assign(thrower, { codes });
}

/** Codes any module may throw. A missing resource is a `<kind>_not_found` code instead of `not_found`. */
export const coreError = errorsOf(
  'bad_request',
  'validation_failed',
  'invalid_cursor',
  'pagination_conflict',
  'unauthorized',
  'forbidden',
  'conflict',
  'unsupported_media_type',
  'queue_unavailable',
  'service_unavailable',
);
