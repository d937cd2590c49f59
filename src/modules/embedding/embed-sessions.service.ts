import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { EmbedTokenClaims } from '../../core/auth/embed-principal.js';
import { EmbedTokensService } from '../../core/auth/embed-tokens.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type {
  GenerateEmbedTokenResponseDto,
  GenerateSessionDto,
  GenerateSessionResponseDto,
} from './dto/embed-session.dto.js';
import { normalizeTenantName, tenantGroupContextName } from './embed-identity.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { desiredState, EmbedUsersService } from './embed-users.service.js';
import { embeddingError } from './embedding.errors.js';

/** A session id can be exchanged for this long after it is made. */
export const SESSION_TTL_SECONDS = 5 * 60;
/** An embed token is valid for this long. */
export const TOKEN_TTL_SECONDS = 24 * 60 * 60;
/** The tenant of a session that names none. */
export const DEFAULT_TENANT = 'default';
const SESSION_ID = /^[0-9a-f]{32}$/;

const hashSessionId = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');

interface ExchangedSession {
  id: number;
  accountId: number;
  tenantName: string;
  embedUserId: number;
  externalId: string;
  deploymentId: number;
  context: Record<string, unknown>;
  exchangedAt: Date;
  tokenExpiresAt: Date;
}

/**
 * Embed sessions: generate-session provisions the embed user through the same code as the
 * provisioning endpoint and records a single-use session; the exchange turns it into a signed
 * embed token; revocation ends both.
 */
@Injectable()
export class EmbedSessionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersService,
    private readonly deployments: DeploymentsService,
    private readonly tokens: EmbedTokensService,
  ) {}

  async generate(actor: Principal, dto: GenerateSessionDto): Promise<GenerateSessionResponseDto> {
    if ((dto.tenantGroups != null || dto.tenantGroupDefinitions != null) && dto.creatorMode !== true) {
      throw embeddingError(
        'tenant_groups_need_creator_mode',
        'tenantGroups and tenantGroupDefinitions need creatorMode: true',
      );
    }
    const tenantName = normalizeTenantName(dto.embedTenantName ?? DEFAULT_TENANT);
    const state = desiredState(dto);
    if (!(await this.deployments.existsInAccount(actor.accountId, dto.deploymentId))) {
      throw embeddingError('deployment_not_found', `Deployment ${dto.deploymentId} was not found`);
    }
    const sessionId = randomBytes(16).toString('hex');
    await this.dataSource.transaction(async (m) => {
      const tenant = await this.tenants.ensure(m, actor.accountId, tenantName);
      if (dto.embedTenantProfile?.displayName !== undefined) {
        await this.tenants.setDisplayName(m, tenant.id, dto.embedTenantProfile.displayName);
      }
      for (const def of dto.tenantGroupDefinitions ?? []) {
        await m.query(
          `INSERT INTO embed_groups (account_id, tenant_id, name, description) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, name) DO UPDATE SET description = COALESCE(EXCLUDED.description, embed_groups.description)`,
          [actor.accountId, tenant.id, def.name.trim(), def.description || null],
        );
      }
      const userId = await this.users.apply(m, actor.accountId, tenant, state);
      await m.query(
        `INSERT INTO embed_sessions (account_id, tenant_id, embed_user_id, deployment_id, session_hash, context,
           created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, now() + make_interval(secs => $8))`,
        [
          actor.accountId,
          tenant.id,
          userId,
          dto.deploymentId,
          hashSessionId(sessionId),
          JSON.stringify(sessionContext(dto)),
          actor.userId,
          SESSION_TTL_SECONDS,
        ],
      );
    });
    return { sessionId };
  }

  /**
   * Consumes the session (one statement, so two parallel exchanges cannot both win) and signs
   * its token. Unknown, used, expired or revoked: 401.
   */
  async exchange(sessionId: string): Promise<GenerateEmbedTokenResponseDto> {
    const invalid = () =>
      embeddingError('invalid_embed_session', 'The session id is unknown, used, expired or revoked');
    if (!SESSION_ID.test(sessionId)) throw invalid();
    const hash = hashSessionId(sessionId);
    // The key is read (or made) before the transaction, which must not wait on a second connection.
    const [owner] = await queryRows<{ accountId: number }>(
      this.dataSource,
      `SELECT account_id AS "accountId" FROM embed_sessions WHERE session_hash = $1`,
      [hash],
    );
    if (!owner) throw invalid();
    const key = await this.tokens.signingKey(owner.accountId);
    return this.dataSource.transaction(async (m) => {
      const [session] = await queryRows<ExchangedSession>(
        m,
        `UPDATE embed_sessions s SET exchanged_at = now(), token_expires_at = now() + make_interval(secs => $2)
         FROM embed_tenants t, embed_users u
         WHERE s.session_hash = $1 AND s.exchanged_at IS NULL AND s.revoked_at IS NULL AND s.expires_at > now()
           AND t.id = s.tenant_id AND u.id = s.embed_user_id
         RETURNING s.id, s.account_id AS "accountId", t.name AS "tenantName", s.embed_user_id AS "embedUserId",
           u.external_id AS "externalId", s.deployment_id AS "deploymentId", s.context,
           s.exchanged_at AS "exchangedAt", s.token_expires_at AS "tokenExpiresAt"`,
        [hash, TOKEN_TTL_SECONDS],
      );
      if (!session) throw invalid();
      const [groups] = await queryRows<{ groups: string[]; tenantGroups: string[] }>(
        m,
        `UPDATE embed_users u SET last_login_at = now() WHERE u.id = $1
         RETURNING
           ARRAY(SELECT g.name FROM embed_user_groups ug JOIN groups g ON g.id = ug.group_id
                 WHERE ug.embed_user_id = u.id ORDER BY g.name) AS groups,
           ARRAY(SELECT g.name FROM embed_group_members gm JOIN embed_groups g ON g.id = gm.group_id
                 WHERE gm.embed_user_id = u.id ORDER BY g.name) AS "tenantGroups"`,
        [session.embedUserId],
      );
      const claims: EmbedTokenClaims = {
        acc: session.accountId,
        sid: session.id,
        tnt: session.tenantName,
        ext: session.externalId,
        dep: session.deploymentId,
        ctx: {
          ...session.context,
          groups: groups.groups,
          tenantGroups: groups.tenantGroups.map((g) => tenantGroupContextName(session.tenantName, g)),
        },
      };
      const token = await this.tokens.sign(
        key,
        claims,
        session.embedUserId,
        session.exchangedAt,
        session.tokenExpiresAt,
      );
      return { token };
    });
  }

  /** Ends the session and any token it produced. Idempotent; other accounts' sessions are untouched. */
  async revoke(actor: Principal, sessionId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE embed_sessions SET revoked_at = now() WHERE session_hash = $1 AND account_id = $2 AND revoked_at IS NULL`,
      [hashSessionId(sessionId), actor.accountId],
    );
  }
}

/** What a session carries into its token besides the user's identity and groups. */
function sessionContext(dto: GenerateSessionDto): Record<string, unknown> {
  const context: Record<string, unknown> = {
    creatorMode: dto.creatorMode ?? false,
    publicDashboardId: dto.publicDashboardId ?? null,
    branchName: dto.branchName ?? null,
    securityContext: dto.securityContext ?? null,
    settings: dto.settings ?? null,
    roles: dto.roles ?? null,
    userAttributes: dto.userAttributes ?? null,
    embedTheme: dto.embedTheme ?? null,
    internalId: dto.internalId ?? null,
    isEphemeral: dto.isEphemeral ?? null,
  };
  return JSON.parse(JSON.stringify(context)) as Record<string, unknown>;
}
