import { HttpException, HttpStatus } from '@nestjs/common';

/** Codes shared by every module. Modules add their own through {@link defineErrors}. */
export const CORE_ERRORS = {
  bad_request: HttpStatus.BAD_REQUEST,
  validation_failed: HttpStatus.BAD_REQUEST,
  malformed_json: HttpStatus.BAD_REQUEST,
  invalid_characters: HttpStatus.BAD_REQUEST,
  invalid_cursor: HttpStatus.BAD_REQUEST,
  pagination_conflict: HttpStatus.BAD_REQUEST,
  unauthorized: HttpStatus.UNAUTHORIZED,
  forbidden: HttpStatus.FORBIDDEN,
  https_required: HttpStatus.FORBIDDEN,
  not_found: HttpStatus.NOT_FOUND,
  method_not_allowed: HttpStatus.METHOD_NOT_ALLOWED,
  conflict: HttpStatus.CONFLICT,
  payload_too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  unsupported_media_type: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  rate_limited: HttpStatus.TOO_MANY_REQUESTS,
  internal_error: HttpStatus.INTERNAL_SERVER_ERROR,
  queue_unavailable: HttpStatus.SERVICE_UNAVAILABLE,
  service_unavailable: HttpStatus.SERVICE_UNAVAILABLE,
} as const satisfies Record<string, HttpStatus>;

export type CoreErrorCode = keyof typeof CORE_ERRORS;

/**
 * An error with a stable machine-readable `code`. The status comes from the code's table, so a
 * code without a status does not type-check.
 */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: string,
    message: string | string[],
  ) {
    super({ message, code }, status);
  }

  get messages(): string | string[] {
    return (this.getResponse() as { message: string | string[] }).message;
  }
}

/** Builds a typed thrower for one module's table of codes. */
export function defineErrors<T extends Record<string, HttpStatus>>(table: T) {
  return (code: keyof T & string, message: string | string[]): ApiError =>
    new ApiError(table[code], code, message);
}

export const coreError = defineErrors(CORE_ERRORS);
