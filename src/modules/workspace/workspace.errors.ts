import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

/** Codes of the folders and workspace endpoints. */
export const workspaceError = defineErrors({
  deployment_not_found: HttpStatus.NOT_FOUND,
  folder_not_empty: HttpStatus.BAD_REQUEST,
  folder_too_deep: HttpStatus.BAD_REQUEST,
  folder_into_descendant: HttpStatus.BAD_REQUEST,
});
