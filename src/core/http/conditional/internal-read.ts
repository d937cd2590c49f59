import type { IncomingMessage } from 'node:http';

/** Marks the reads a conditional write makes; a symbol, which no client can put on a request. */
const INTERNAL_READ = Symbol('conditional:internal-read');

/** Marks `req` as the read of a conditional write (see `current-representation.ts`). */
export function markInternalRead(req: IncomingMessage): void {
  (req as IncomingMessage & { [INTERNAL_READ]?: true })[INTERNAL_READ] = true;
}

/**
 * Whether `req` is the read a conditional write makes of its resource: the rate limiter skips it
 * (the write was counted, and a 401 of both must not count one failed authentication twice). It
 * is authenticated and authorised like any request.
 */
export function isInternalRead(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [INTERNAL_READ]?: true })[INTERNAL_READ] === true;
}
