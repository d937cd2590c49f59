import { RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { AuditInterceptor } from './audit.interceptor.js';
import { IdempotencyInterceptor } from '../http/idempotency/idempotency.interceptor.js';

const AUDITED = Symbol('audited');

/** The HTTP methods that change something: each of their handlers is `@Audited()`. */
export const MUTATING_METHODS: ReadonlySet<RequestMethod> = new Set([
  RequestMethod.POST,
  RequestMethod.PUT,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
  RequestMethod.ALL,
]);

/**
 * Records the route's requests in the audit log: the audit interceptor on this handler (reads run
 * none), outermost of its interceptors wherever the decorator stands, so it sees what the client
 * is sent. Every handler of a mutating route carries it: `AuditModule` refuses to start otherwise.
 * Failures, the guard's refusals included, are recorded by the exception filter.
 *
 * Outside it, the `Idempotency-Key` interceptor (core/http/idempotency), which acts on POST only:
 * a replayed answer runs neither the handler nor the audit interceptor, so a retry is not
 * recorded as a second create.
 */
export function Audited(): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const others = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? [];
    Reflect.defineMetadata(
      INTERCEPTORS_METADATA,
      [IdempotencyInterceptor, AuditInterceptor, ...others],
      handler,
    );
    Reflect.defineMetadata(AUDITED, true, handler);
    return descriptor;
  };
}

/** Whether a handler is `@Audited()`. */
export const isAudited = (handler: object): boolean => Reflect.getMetadata(AUDITED, handler) === true;

/** Whether a handler serves a mutating route. */
export function isMutating(handler: object): boolean {
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  return method !== undefined && MUTATING_METHODS.has(method);
}
