import { createHmac } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import { EnvVarsService } from '../deployments/env-vars.service.js';
import { dataApiError } from './data-api.errors.js';

/** The deployment variable holding the secret its data API checks API tokens with. */
export const API_SECRET_VARIABLE = 'CUBEJS_API_SECRET';

/**
 * The secret a staging or development environment's data API checks its tokens with: HMAC-SHA256
 * of `environment:<id>` keyed with the deployment's `CUBEJS_API_SECRET`, in lowercase hex. A
 * token signed for one environment is refused by every other (production checks with
 * `CUBEJS_API_SECRET` itself). The same value, by hand:
 * `printf 'environment:42' | openssl dgst -sha256 -hmac "$CUBEJS_API_SECRET"`.
 */
export function environmentSecret(apiSecret: string, environmentId: number): string {
  return createHmac('sha256', apiSecret).update(`environment:${environmentId}`).digest('hex');
}

/**
 * A data API token: an HS256 JWT whose claims are exactly `claims` plus `iat` and `exp` (Unix
 * seconds), signed with `secret` as Cube reads `CUBEJS_API_SECRET` (its UTF-8 bytes).
 */
export function signDataApiToken(
  secret: string,
  claims: Record<string, unknown>,
  issuedAt: number,
  expiresAt: number,
): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(new TextEncoder().encode(secret));
}

/** The secrets data API tokens are signed with, read from each deployment's environment variables. */
@Injectable()
export class DataApiKeys {
  constructor(private readonly envVars: EnvVarsService) {}

  /**
   * The deployment's `CUBEJS_API_SECRET`, or 409 `data_api_not_configured` naming the variable.
   * The caller has checked that the deployment is in `accountId`.
   */
  async apiSecret(accountId: number, deploymentId: number): Promise<string> {
    const secret = (await this.envVars.values(accountId, deploymentId)).get(API_SECRET_VARIABLE);
    if (!secret || secret.trim() === '') {
      throw dataApiError(
        'data_api_not_configured',
        `Deployment ${deploymentId} has no ${API_SECRET_VARIABLE} environment variable to sign data API ` +
          'tokens with; set it (PUT /api/v1/deployments/{id}/env-vars) to the API secret its runtime uses',
      );
    }
    return secret;
  }
}
