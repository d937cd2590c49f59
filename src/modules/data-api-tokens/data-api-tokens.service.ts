import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { buildPage, fetchLimit, resolvePaging, withLegacyFields } from '../../core/http/pagination.js';
import {
  DataApiKeys,
  environmentSecret,
  signDataApiToken,
} from '../data-api-client/data-api-keys.service.js';
import { ModelEnvironments, type ServedEnvironment } from '../data-model/model-environments.service.js';
import { dataApiTokensError } from './data-api-tokens.errors.js';
import { DataApiTokensRepository, type EnvironmentTokenRow } from './data-api-tokens.repository.js';
import {
  DEPLOYMENT_TOKEN_DEFAULT_SECONDS,
  ENVIRONMENT_TOKEN_DEFAULT_SECONDS,
  RESERVED_CLAIMS,
  type CreateDeploymentTokenDto,
  type CreateEnvironmentTokenDto,
  type DeploymentTokenDto,
  type EnvironmentTokenDto,
  type EnvironmentTokenResponseDto,
  type EnvironmentTokensListDto,
  type EnvironmentTokensQueryDto,
} from './dto/data-api-tokens.dto.js';

/** The largest security context a token carries, as JSON: the token must fit an HTTP header. */
export const MAX_SECURITY_CONTEXT_BYTES = 8 * 1024;

/** The scopes of a token for metadata sync: the data model's metadata and nothing else. */
export const META_SYNC_SCOPES = ['meta'];

/**
 * Data API tokens: credentials for querying a deployment's Core Data API.
 *
 * - `POST /deployments/{id}/token`: a token for the production environment with an empty
 *   security context, signed with the deployment's `CUBEJS_API_SECRET`; not stored.
 * - `POST /deployments/{id}/environments/{environmentId}/tokens` (and `tokens-for-meta-sync`):
 *   a token for one environment whose claims are exactly the security context given, `iat`,
 *   `exp` and, when asked for, `scopes`. Production's are signed with `CUBEJS_API_SECRET`, a
 *   staging or development environment's with its own secret ({@link environmentSecret}), so a
 *   token works only where it was issued for. Each is kept sealed until it expires, for the list.
 *
 * Who may: a token lets its holder read the environment's data as any security context, which is
 * the power of changing the data model's access rules there. So production and staging need
 * `SchemaUpdate` on the deployment, and a development environment needs `SchemaUpdateDevBranches`
 * and to be its owner's (another user's dev environment answers 404, as its branch is theirs).
 * `DeploymentRead` and `PlaygroundRead` are not enough. Listing tokens shows them, so it needs
 * the same.
 */
@Injectable()
export class DataApiTokens {
  constructor(
    private readonly config: AppConfig,
    private readonly db: Database,
    private readonly access: AccessService,
    private readonly environments: ModelEnvironments,
    private readonly keys: DataApiKeys,
    private readonly secrets: SecretBoxService,
    private readonly repository: DataApiTokensRepository,
  ) {}

  async deploymentToken(
    actor: Principal,
    deploymentId: number,
    body: CreateDeploymentTokenDto,
  ): Promise<DeploymentTokenDto> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaUpdate);
    const secret = await this.keys.apiSecret(actor.accountId, deploymentId);
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresIn = body.expiresIn ?? DEPLOYMENT_TOKEN_DEFAULT_SECONDS;
    return { cubeApiToken: await signDataApiToken(secret, {}, issuedAt, issuedAt + expiresIn) };
  }

  async issue(
    actor: Principal,
    deploymentId: number,
    environmentId: number,
    body: CreateEnvironmentTokenDto,
    purpose: 'api' | 'meta-sync',
  ): Promise<EnvironmentTokenResponseDto> {
    const securityContext = checkedSecurityContext(body.security_context);
    const scopes = purpose === 'meta-sync' ? META_SYNC_SCOPES : (body.scopes ?? null);
    const expiresIn = body.expires_in ?? ENVIRONMENT_TOKEN_DEFAULT_SECONDS;
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    return this.db.transaction(async () => {
      const environment = await this.environments.find(actor.accountId, deploymentId, environmentId, {
        lock: true,
      });
      await this.requireIssuer(actor, deploymentId, environment);
      const secret = await this.keys.apiSecret(actor.accountId, deploymentId);
      const live = await this.repository.pruneAndCount(environment.id);
      const max = this.config.environmentTokensMax;
      if (live.count >= max) {
        throw dataApiTokensError(
          'token_limit_reached',
          `Environment ${environment.id} holds ${live.count} tokens that have not expired, the most it may ` +
            `hold (ENVIRONMENT_TOKENS_MAX=${max}); reuse a token until it expires instead of issuing one per request`,
          {
            retryAfterSeconds: Math.max(
              1,
              Math.ceil(((live.firstExpiry?.getTime() ?? 0) - Date.now()) / 1000),
            ),
          },
        );
      }
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = issuedAt + expiresIn;
      const claims = scopes ? { ...securityContext, scopes } : securityContext;
      const key = environment.type === 'production' ? secret : environmentSecret(secret, environment.id);
      const token = await signDataApiToken(key, claims, issuedAt, expiresAt);
      await this.repository.insert({
        accountId: actor.accountId,
        environmentId: environment.id,
        tokenSealed: this.secrets.seal(token, sealContext(actor.accountId, environment.id)),
        securityContext,
        scopes,
        purpose,
        createdBy: actor.userId,
        createdAt: new Date(issuedAt * 1000),
        expiresAt: new Date(expiresAt * 1000),
      });
      return {
        data: {
          token,
          security_context: securityContext,
          created_at: new Date(issuedAt * 1000).toISOString(),
          expires_at: new Date(expiresAt * 1000).toISOString(),
        },
      };
    });
  }

  async list(
    actor: Principal,
    deploymentId: number,
    environmentId: number,
    query: EnvironmentTokensQueryDto,
  ): Promise<EnvironmentTokensListDto> {
    const paging = resolvePaging(query, ['number']);
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const environment = await this.environments.find(actor.accountId, deploymentId, environmentId);
    await this.requireIssuer(actor, deploymentId, environment);
    const rows = await this.repository.page({
      environmentId: environment.id,
      afterId: paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null,
      limit: fetchLimit(paging),
      offset: paging.mode === 'offset' ? paging.offset : 0,
    });
    const total = rows[0]?.total ?? 0;
    const tokens = rows.filter((r): r is EnvironmentTokenRow & { total: number } => r.id !== null);
    return withLegacyFields(
      buildPage(
        tokens,
        paging,
        (r) => [r.id],
        (r) => this.toDto(actor.accountId, environment.id, r),
      ),
      paging,
      total,
    );
  }

  /**
   * 403 unless `actor` may issue tokens for `environment` (see the class); 404 for another user's
   * development environment.
   */
  private async requireIssuer(
    actor: Principal,
    deploymentId: number,
    environment: ServedEnvironment,
  ): Promise<void> {
    if (environment.type !== 'development') {
      await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaUpdate);
      return;
    }
    if (environment.userId !== actor.userId) {
      throw coreError(
        'forbidden',
        `Environment ${environment.id} serves another user's dev branch: its tokens are issued to that user only`,
      );
    }
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaUpdateDevBranches);
  }

  private toDto(accountId: number, environmentId: number, row: EnvironmentTokenRow): EnvironmentTokenDto {
    return {
      token: this.secrets.open(row.tokenSealed, sealContext(accountId, environmentId)).toString('utf8'),
      security_context: row.securityContext,
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt.toISOString(),
    };
  }
}

const sealContext = (accountId: number, environmentId: number): string =>
  `environment-token:${accountId}:${environmentId}`;

/** The security context as given, or 400 when it holds a claim this service sets or is too large. */
function checkedSecurityContext(context: Record<string, unknown>): Record<string, unknown> {
  const reserved = RESERVED_CLAIMS.filter((claim) => Object.hasOwn(context, claim));
  if (reserved.length > 0) {
    throw coreError(
      'validation_failed',
      `security_context may not hold ${reserved.join(', ')}: iat and exp come from expires_in, scopes from scopes`,
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(context), 'utf8');
  if (bytes > MAX_SECURITY_CONTEXT_BYTES) {
    throw coreError(
      'validation_failed',
      `security_context is ${bytes} bytes as JSON; at most ${MAX_SECURITY_CONTEXT_BYTES} fit in a token`,
    );
  }
  return context;
}
