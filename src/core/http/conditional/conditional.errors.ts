import { errorsOf } from '../../errors/api-error.js';

/** The codes of conditional writes (see `conditional-requests.ts`). */
export const conditionalError = errorsOf(
  'precondition_failed',
  'invalid_precondition',
  'precondition_unsupported',
  'resource_busy',
);
