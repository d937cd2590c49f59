import { Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { AccountsService } from '../users/accounts.service.js';
import type { UsageAnalyticsTokenDto } from './dto/usage-analytics-token.dto.js';
import { usageError } from './usage.errors.js';

export const USAGE_TOKEN_TTL_SECONDS = 3600;

/**
 * Tokens for the usage-analytics deployment: its data API trusts JWTs signed with its API secret
 * and takes the claims as the security context, so the claims name the account and nothing else.
 */
@Injectable()
export class UsageService {
  private readonly key: Uint8Array | null;

  constructor(
    private readonly config: AppConfig,
    private readonly accounts: AccountsService,
  ) {
    const usage = config.usageAnalytics;
    this.key = usage ? new TextEncoder().encode(usage.apiSecret) : null;
  }

  async createToken(actor: Principal): Promise<UsageAnalyticsTokenDto> {
    const usage = this.config.usageAnalytics;
    if (!usage || !this.key) {
      throw usageError('usage_analytics_disabled', 'Usage analytics is not enabled on this installation');
    }
    const accountSlug = await this.accounts.slug(actor.accountId);
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + USAGE_TOKEN_TTL_SECONDS;
    const token = await new SignJWT({ accountId: actor.accountId, accountSlug })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(`user:${actor.userId}`)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return {
      token,
      apiUrl: usage.apiUrl,
      deploymentId: usage.deploymentId,
      expiresAt: new Date(expiresAt * 1000).toISOString(),
    };
  }
}
