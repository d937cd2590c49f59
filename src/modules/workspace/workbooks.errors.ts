import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

/** Codes of the workbooks and dashboards endpoints. */
export const workbooksError = defineErrors({
  deployment_not_found: HttpStatus.NOT_FOUND,
  dashboard_not_found: HttpStatus.NOT_FOUND,
  slug_taken: HttpStatus.CONFLICT,
  upsert_branch_changed: HttpStatus.CONFLICT,
  workbook_id_mismatch: HttpStatus.BAD_REQUEST,
  nothing_to_publish: HttpStatus.BAD_REQUEST,
  shared_workspace_unavailable: HttpStatus.FORBIDDEN,
});
