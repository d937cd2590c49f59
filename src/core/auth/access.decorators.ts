import {
  applyDecorators,
  createParamDecorator,
  SetMetadata,
  type ExecutionContext,
  type CustomDecorator,
} from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { Action } from './action.js';
import type { EmbedPrincipal } from './embed-principal.js';
import type { Principal } from './principal.js';

export const ACCESS_METADATA = 'platform:access';

/**
 * How a route is guarded:
 * - `public`: no token (probes and the Swagger UI only);
 * - `authenticated`: any valid token;
 * - `actions`: every listed action held account-wide;
 * - `object`: the action held account-wide or on at least one resource; the service then
 *   checks the addressed resource through `AccessService`; with `basicAuth`, the token may also
 *   come as the password of HTTP Basic (see {@link RequireObjectAction});
 * - `embed`: an embed token (not a Platform API token); the caller is an embed user. With
 *   `platformToken`, any valid Platform API token is taken too (the handler reads whichever came).
 */
export type AccessRule =
  | { kind: 'public' }
  | { kind: 'embed'; platformToken?: true }
  | { kind: 'authenticated' }
  | { kind: 'actions'; actions: readonly Action[] }
  | { kind: 'object'; actions: readonly Action[]; basicAuth?: true };

/**
 * Sets the rule and its security requirements. The rule's error responses (401, 403, 429) are
 * added to the OpenAPI document from this metadata (see `documentErrorResponses`).
 */
function documented(rule: AccessRule): MethodDecorator & ClassDecorator {
  const decorators: Array<MethodDecorator | ClassDecorator | CustomDecorator<string>> = [
    SetMetadata(ACCESS_METADATA, rule),
  ];
  if (rule.kind === 'embed') {
    decorators.push(ApiBearerAuth('embedToken'));
    if (rule.platformToken) decorators.push(ApiBearerAuth('bearer'), ApiSecurity('apiKey'));
  } else if (rule.kind === 'public') {
    // An empty requirement object: no credential needed (OpenAPI 3.1, Security Requirement Object).
    decorators.push(ApiSecurity({}));
  } else {
    decorators.push(ApiBearerAuth('bearer'), ApiSecurity('apiKey'));
    if (rule.kind === 'object' && rule.basicAuth) decorators.push(ApiSecurity('basicToken'));
  }
  if (rule.kind === 'actions' || rule.kind === 'object') {
    decorators.push(ApiExtension('x-required-actions', rule.actions));
  }
  return applyDecorators(...decorators);
}

/** The route needs every listed action, held account-wide. `Action.All` means admin only. */
export const RequireActions = (...actions: [Action, ...Action[]]) => documented({ kind: 'actions', actions });

/**
 * The route addresses one resource; the action may come from a grant on that resource.
 * `basicAuth`: the token is also taken as the password of HTTP Basic (any user name), the one way
 * git's client sends a credential; for git's own routes only.
 */
export const RequireObjectAction = (action: Action, options: { basicAuth?: true } = {}) =>
  documented({ kind: 'object', actions: [action], ...options });

/** Any valid token. */
export const Authenticated = () => documented({ kind: 'authenticated' });

/** An embed token; the handler reads the embed user with {@link CurrentEmbedUser}. */
export const EmbedTokenRequired = () => documented({ kind: 'embed' });

/**
 * An embed token or any valid Platform API token; the handler reads the embed user with
 * {@link CurrentEmbedUser} or the console caller with {@link CurrentPrincipal}, one of them set.
 */
export const EmbedOrPlatformToken = () => documented({ kind: 'embed', platformToken: true });

/** No token: the probes, and the embed session exchange, whose body is the credential. */
export const Public = () => documented({ kind: 'public' });

/** The embed user of an {@link EmbedTokenRequired} route. */
export const CurrentEmbedUser = createParamDecorator((_: unknown, ctx: ExecutionContext): EmbedPrincipal => {
  const req = ctx.switchToHttp().getRequest<{ embedPrincipal?: EmbedPrincipal }>();
  return req.embedPrincipal!;
});

/** The authenticated caller. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<{ principal?: Principal }>();
  return req.principal!;
});
