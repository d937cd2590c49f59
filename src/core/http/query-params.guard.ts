import {
  Injectable,
  SetMetadata,
  type CanActivate,
  type CustomDecorator,
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request } from 'express';
import { coreError } from '../errors/api-error.js';

/** Where `@ApiQuery` (and other parameter decorators) of @nestjs/swagger keep their declarations, per method. */
const SWAGGER_PARAMETERS = 'swagger/apiParameters';
/** The metadata of {@link IgnoreUnknownQueryParams}. */
const UNKNOWN_QUERY_IGNORED = 'platform:unknown-query-ignored';

/**
 * On a route or controller: query parameters the route does not declare are ignored instead of
 * refused, where a protocol says so (SCIM discovery, RFC 7644 section 4). The route still reads
 * and checks the ones it cares about itself.
 */
export const IgnoreUnknownQueryParams = (): CustomDecorator<string> =>
  SetMetadata(UNKNOWN_QUERY_IGNORED, true);

/**
 * What a route accepts in its query string: the names it declares, `dto` when a whole-query
 * DTO declares them (the validation pipe then rejects the others, naming them), or `any` for a
 * route that takes the whole query as a free-form map (the OAuth callback, whose providers add
 * parameters of their own) or is marked {@link IgnoreUnknownQueryParams}.
 */
type Accepted = { names: ReadonlySet<string> } | 'dto' | 'any';

interface RouteArg {
  index: number;
  data?: unknown;
}

interface SwaggerParameter {
  in?: string;
  name?: string;
}

const isDtoClass = (t: unknown): boolean =>
  typeof t === 'function' && ![String, Number, Boolean, Array, Object].includes(t as never);

/**
 * The query parameters a route declares, read from Nest's metadata: a `@Query()` DTO, named
 * `@Query('x')` parameters, and `@ApiQuery` declarations (routes that read `req.query`
 * themselves, such as SCIM lists, declare their parameters that way). A route declaring none
 * accepts none.
 */
export function acceptedQuery(controller: Type<unknown>, handler: { name: string }): Accepted {
  const ignores = (target: object) => Reflect.getMetadata(UNKNOWN_QUERY_IGNORED, target) === true;
  if (ignores(handler) || ignores(controller)) return 'any';
  const args: Record<string, RouteArg> =
    Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {};
  const paramTypes: unknown[] =
    Reflect.getMetadata('design:paramtypes', controller.prototype as object, handler.name) ?? [];
  const names = new Set<string>();
  for (const [key, arg] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== (RouteParamtypes.QUERY as number)) continue;
    if (typeof arg.data === 'string') {
      names.add(arg.data);
      continue;
    }
    return isDtoClass(paramTypes[arg.index]) ? 'dto' : 'any';
  }
  // A class-level @ApiQuery is copied onto every method, so the method's list is complete.
  const documented: SwaggerParameter[] = Reflect.getMetadata(SWAGGER_PARAMETERS, handler) ?? [];
  for (const p of documented) if (p.in === 'query' && p.name) names.add(p.name);
  return { names };
}

/**
 * Rejects query parameters a route does not declare with `400 validation_failed`, before the
 * handler runs, so a misspelt or unsupported parameter (`?dryRun=true`) changes nothing instead of
 * being ignored. The second global guard, after the access guard, so 401 and 403 still come
 * first; a guard rather than an interceptor, so that a read with no interceptor of its own runs
 * none (Nest then skips its observable pipeline altogether).
 */
@Injectable()
export class QueryParamsGuard implements CanActivate {
  private readonly accepted = new WeakMap<object, Accepted>();

  canActivate(ctx: ExecutionContext): boolean {
    if (ctx.getType() !== 'http') return true;
    const handler = ctx.getHandler();
    let accepted = this.accepted.get(handler);
    if (accepted === undefined) {
      accepted = acceptedQuery(ctx.getClass(), handler);
      this.accepted.set(handler, accepted);
    }
    if (accepted === 'dto' || accepted === 'any') return true;
    const { names } = accepted;
    const query = ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown> | undefined;
    const unknown = Object.keys(query ?? {}).filter((name) => !names.has(name));
    if (unknown.length > 0) {
      throw coreError(
        'validation_failed',
        unknown.map((name) => `property ${name} should not exist`),
      );
    }
    return true;
  }
}
