import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const REPORTS_ERRORS = {
  public_id_reserved: HttpStatus.BAD_REQUEST,
  public_id_immutable: HttpStatus.BAD_REQUEST,
  public_id_mismatch: HttpStatus.BAD_REQUEST,
  public_id_taken: HttpStatus.CONFLICT,
  public_id_in_other_deployment: HttpStatus.CONFLICT,
  upsert_branch_changed: HttpStatus.CONFLICT,
  version_conflict: HttpStatus.CONFLICT,
  cursor_unavailable_for_sort: HttpStatus.BAD_REQUEST,
  invalid_location: HttpStatus.BAD_REQUEST,
  location_mismatch: HttpStatus.BAD_REQUEST,
  blank_name: HttpStatus.BAD_REQUEST,
} as const;

export const reportsError = defineErrors(REPORTS_ERRORS);
