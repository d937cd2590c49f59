import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const deploymentsError = defineErrors({
  deployment_not_found: HttpStatus.NOT_FOUND,
  unknown_region: HttpStatus.BAD_REQUEST,
  release_version_invalid: HttpStatus.BAD_REQUEST,
});
