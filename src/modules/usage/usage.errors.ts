import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const usageError = defineErrors({
  usage_analytics_disabled: HttpStatus.NOT_FOUND,
});
