import { Injectable, Logger } from '@nestjs/common';
import { Action, builtInRoleActions, expandActions } from './action.js';
import type { Principal } from './principal.js';
import { PrincipalCache, type ResolvedToken } from './principal-cache.js';
import { PrincipalSource, type TokenPrincipalRow } from './principal-source.js';
import { hashToken, TOKEN_PATTERN } from './token.js';

/** Writing `last_used_at` on every request would turn every read into a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** `Type:Action` pairs as expanded actions by resource type. */
function byType(pairs: readonly string[]): Map<string, ReadonlySet<Action>> {
  const grouped = new Map<string, string[]>();
  for (const pair of pairs) {
    const at = pair.indexOf(':');
    const type = pair.slice(0, at);
    grouped.set(type, [...(grouped.get(type) ?? []), pair.slice(at + 1)]);
  }
  return new Map([...grouped].map(([type, actions]) => [type, expandActions(actions)]));
}

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly principals: PrincipalSource,
    private readonly cache: PrincipalCache,
  ) {}

  /**
   * The principal of a token resolved within the cache's time to live, or undefined: the
   * guard's fast path, which skips passport for a token it has just seen.
   */
  recentPrincipal(token: string): Principal | undefined {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    const resolved = this.cache.get(hashToken(token));
    if (!resolved) return undefined;
    this.touch(resolved);
    return resolved.principal;
  }

  async authenticate(token: string): Promise<Principal | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    const tokenHash = hashToken(token);
    let resolved = this.cache.get(tokenHash);
    if (!resolved) {
      const version = this.cache.version;
      const row = await this.principals.byTokenHash(tokenHash);
      if (!row) return null;
      resolved = { principal: toPrincipal(row), lastUsedAt: row.lastUsedAt };
      this.cache.store(tokenHash, resolved, row.expiresAt, version);
    }
    this.touch(resolved);
    return resolved.principal;
  }

  private touch(resolved: ResolvedToken): void {
    const now = Date.now();
    if (resolved.lastUsedAt && now - resolved.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    resolved.lastUsedAt = new Date(now);
    this.principals
      .touch(resolved.principal.apiKeyId)
      .catch((err: unknown) => this.logger.warn(`could not record token use: ${String(err)}`));
  }
}

/** The principal of a token row: built-in roles and grants expanded into action sets. */
function toPrincipal(row: TokenPrincipalRow): Principal {
  const actions = expandActions([...builtInRoleActions(row.defaultRoles), ...row.globalActions]);
  return {
    userId: row.userId,
    accountId: row.accountId,
    email: row.email,
    apiKeyId: row.keyId,
    roleIds: row.roleIds,
    groupIds: row.groupIds,
    actions,
    objectActions: expandActions(row.objectActions),
    typeActions: byType(row.typeActions),
    isAdmin: actions.has(Action.All),
  };
}
