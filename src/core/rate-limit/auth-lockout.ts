import type { Request } from 'express';

/**
 * Requests from an address past its budget of failed authentications (see `rate-limit.ts`), with
 * the instant (`Date.now()`) that budget comes back. Such a request is not refused up front: it is
 * authenticated as any other, and only an answer of 401 (its token, embed token or session id
 * is not valid) is turned into 429 by `sendError`. A valid token is never refused for the
 * failures of other requests from the same address.
 */
const lockedOut = new WeakMap<Request, number>();

/** Marks `req` as coming from an address locked out for another `retryAfterMs`. */
export function markLockedOut(req: Request, retryAfterMs: number): void {
  lockedOut.set(req, Date.now() + retryAfterMs);
}

/** Seconds until the address of `req` may fail again (at least 1), or undefined when it is not locked out. */
export function lockoutRetryAfterSeconds(req: Request): number | undefined {
  const until = lockedOut.get(req);
  return until === undefined ? undefined : Math.max(1, Math.ceil((until - Date.now()) / 1000));
}
