import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { databaseUnavailable } from '../database/unavailable.js';
import type { Request } from 'express';
import type { Action } from './action.js';
import { coreError } from '../errors/api-error.js';
import { ACCESS_METADATA, type AccessRule } from './access.decorators.js';
import type { EmbedPrincipal } from './embed-principal.js';
import { AuthService } from './auth.service.js';
import { EmbedTokensService } from './embed-tokens.service.js';
import { GitReadCredentials } from './git-read-credentials.js';
import type { Principal } from './principal.js';
import { basicPassword } from './token.js';

/** `Bearer <token>` as the spec says, or `Api-Key <token>` for compatibility. */
const AUTHORIZATION = /^(Bearer|Api-Key) +([^\s]+) *$/i;
/** Embed tokens come as `Bearer <jwt>` only. */
const EMBED_AUTHORIZATION = /^Bearer +([^\s]+) *$/i;
/**
 * What a domain module adds to the guard for object routes of its own actions: whether a caller
 * holding `action` neither account-wide nor on any one object passes the route anyway (the
 * service then decides on the addressed object). A module provides a subclass; the guard finds
 * every one at start-up, so core knows no module's rule.
 */
export abstract class ObjectRouteRule {
  abstract admits(principal: Principal, action: Action): boolean;
}

/**
 * The one global guard. Every route declares an {@link AccessRule}; a route without one is
 * refused (and a test fails). Authentication goes through passport's bearer strategy; the
 * token must come in the Authorization header (a token also sent as `access_token` is refused).
 */
@Injectable()
export class AccessGuard extends AuthGuard('bearer') implements CanActivate, OnApplicationBootstrap {
  private objectRules: readonly ObjectRouteRule[] = [];

  constructor(
    private readonly reflector: Reflector,
    private readonly embedTokens: EmbedTokensService,
    private readonly moduleRef: ModuleRef,
    private readonly auth: AuthService,
    private readonly gitCredentials: GitReadCredentials,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    try {
      this.objectRules = this.moduleRef.get(ObjectRouteRule, { strict: false, each: true });
    } catch {
      this.objectRules = []; // no module adds a rule
    }
  }

  override getAuthenticateOptions(): { property: string; session: boolean } {
    return { property: 'principal', session: false };
  }

  override async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_METADATA, [
      ctx.getHandler(),
      ctx.getClass(),
    ]);
    if (!rule) throw coreError('forbidden', 'This route has no access declaration');
    if (rule.kind === 'public') return true;

    const req = ctx
      .switchToHttp()
      .getRequest<
        Request & { principal?: Principal; embedPrincipal?: EmbedPrincipal; operationId?: string }
      >();
    // The audit log names what was attempted, including requests refused below.
    req.operationId = ctx.getHandler().name;
    if (rule.kind === 'embed') {
      const embed = EMBED_AUTHORIZATION.exec(req.headers.authorization ?? '');
      const principal = embed ? await this.embedTokens.verify(embed[1]) : null;
      if (principal) {
        req.embedPrincipal = principal;
        return true;
      }
      // A route that also takes Platform API tokens goes on to them (an invalid one is a 401 there).
      if (!rule.platformToken) {
        if (!embed)
          throw coreError(
            'unauthorized',
            'Send the embed token in the Authorization header: "Bearer <token>"',
          );
        throw coreError('unauthorized', 'The embed token is invalid, expired or revoked');
      }
    }
    const authorization = req.headers.authorization ?? '';
    const token =
      AUTHORIZATION.exec(authorization)?.[2] ??
      (rule.kind === 'object' && rule.basicAuth ? basicPassword(authorization) : undefined);
    if (token === undefined) {
      throw coreError('unauthorized', 'Send a token in the Authorization header: "Bearer <token>"');
    }
    // A git read credential is verified by its signature (Basic, on git routes only); a token
    // resolved a moment ago is taken from the principal cache.
    const gitCredential = GitReadCredentials.isOne(token);
    const recent = gitCredential ? undefined : this.auth.recentPrincipal(token);
    if (rule.kind === 'object' && rule.basicAuth && gitCredential) {
      // A deployment's pods fetch its model with a git read credential (Basic, on git routes only).
      const scoped = this.gitCredentials.verify(token);
      if (!scoped) throw coreError('unauthorized', 'The git read credential is invalid or expired');
      req.principal = scoped;
    } else if (recent) {
      req.principal = recent;
    } else {
      // passport's bearer strategy reads only the Bearer scheme: the Api-Key and Basic forms
      // carry the same token, and from there it goes to the same AuthService.
      req.headers.authorization = `Bearer ${token}`;
      await super.canActivate(ctx);
    }

    const principal = req.principal!;
    if (rule.kind === 'authenticated' || rule.kind === 'embed') return true;
    const held = (a: (typeof rule.actions)[number]) =>
      principal.actions.has(a) ||
      (rule.kind === 'object' &&
        (principal.objectActions.has(a) || this.objectRules.some((r) => r.admits(principal, a))));
    const missing = rule.actions.filter((a) => !held(a));
    if (missing.length > 0) {
      throw coreError('forbidden', `This operation requires the ${missing.join(', ')} action`);
    }
    return true;
  }

  override handleRequest<TUser = Principal>(err: unknown, user: TUser | false): TUser {
    // A database outage is not a bad token: it answers 503 (see the exception filter).
    if (err && databaseUnavailable(err)) throw err as Error;
    if (err) throw err instanceof Error ? err : coreError('unauthorized', 'The token could not be verified');
    if (!user) throw coreError('unauthorized', 'The token is unknown, expired or revoked');
    return user;
  }
}
