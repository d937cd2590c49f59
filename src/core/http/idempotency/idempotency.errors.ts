import { errorsOf } from '../../errors/api-error.js';

/** The codes of `Idempotency-Key` handling (see `idempotency.interceptor.ts`). */
export const idempotencyError = errorsOf(
  'invalid_idempotency_key',
  'idempotency_key_in_progress',
  'idempotency_key_reused',
);
