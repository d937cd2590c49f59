import { coreError } from '../errors/api-error.js';

/**
 * For a POST that takes no body (its options, if any, are query parameters): an empty or absent
 * body passes; fields sent anyway are refused, as unknown fields are everywhere else.
 */
export function refuseBody(body: unknown, route: string): void {
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && Object.keys(body).length === 0) return;
  throw coreError('validation_failed', [`${route} takes no body`]);
}
