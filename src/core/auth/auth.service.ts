import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from './principal.js';
import { PrincipalCache, type ResolvedToken } from './principal-cache.js';
import { PrincipalSource } from './principal-source.js';
import { hashToken, TOKEN_PATTERN } from './token.js';
import { toPrincipal } from './token-principal.js';

/** Writing `last_used_at` on every request would turn every read into a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

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
