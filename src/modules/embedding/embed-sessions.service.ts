import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EmbedTokenClaims } from '../../core/auth/embed-principal.js';
import { EmbedTokensService } from '../../core/auth/embed-tokens.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type {
  GenerateEmbedTokenResponseDto,
  GenerateSessionDto,
  GenerateSessionResponseDto,
} from './dto/embed-session.dto.js';
import { EmbedGroupsRepository } from './embed-groups.repository.js';
import { normalizeTenantName, tenantGroupContextName } from './embed-identity.js';
import { EmbedSessionsRepository } from './embed-sessions.repository.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { EmbedUsersRepository } from './embed-users.repository.js';
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

/**
 * Embed sessions: generate-session provisions the embed user through the same code as the
 * provisioning endpoint and records a single-use session; the exchange turns it into a signed
 * embed token; revocation ends both.
 */
@Injectable()
export class EmbedSessionsService {
  constructor(
    private readonly db: Database,
    private readonly sessions: EmbedSessionsRepository,
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersService,
    private readonly userRows: EmbedUsersRepository,
    private readonly groups: EmbedGroupsRepository,
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
      throw notFound('Deployment', dto.deploymentId);
    }
    const sessionId = randomBytes(16).toString('hex');
    await this.db.transaction(async () => {
      const tenant = await this.tenants.ensure(actor.accountId, tenantName);
      if (dto.embedTenantProfile?.displayName !== undefined) {
        await this.tenants.setDisplayName(tenant.id, dto.embedTenantProfile.displayName);
      }
      for (const def of dto.tenantGroupDefinitions ?? []) {
        await this.groups.define(actor.accountId, tenant.id, def.name.trim(), def.description || null);
      }
      const userId = await this.users.apply(actor.accountId, tenant, state);
      await this.sessions.insert({
        accountId: actor.accountId,
        tenantId: tenant.id,
        embedUserId: userId,
        deploymentId: dto.deploymentId,
        sessionHash: hashSessionId(sessionId),
        context: sessionContext(dto),
        createdBy: actor.userId,
        ttlSeconds: SESSION_TTL_SECONDS,
      });
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
    // The key is read (or made) before the unit of work: one made inside it would roll back with it.
    const accountId = await this.sessions.accountOf(hash);
    if (accountId === undefined) throw invalid();
    const key = await this.tokens.signingKey(accountId);
    return this.db.transaction(async () => {
      const session = await this.sessions.exchange(hash, TOKEN_TTL_SECONDS);
      if (!session) throw invalid();
      const groups = await this.userRows.recordLogin(session.embedUserId);
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
    await this.sessions.revoke(hashSessionId(sessionId), actor.accountId);
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
