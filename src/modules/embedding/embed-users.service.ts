import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { clientFailure } from '../../core/http/bulk.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { GroupsService } from '../users/groups.service.js';
import type {
  EmbedUserDto,
  EmbedUsersQueryDto,
  ProvisionEmbedUserDto,
  ProvisionEmbedUsersDto,
  ProvisionEmbedUsersResponseDto,
} from './dto/embed-user.dto.js';
import { EmbedGroupsRepository } from './embed-groups.repository.js';
import { normalizeExternalId, normalizeTenantName, syntheticEmail } from './embed-identity.js';
import { EmbedTenantsService, type TenantRef } from './embed-tenants.service.js';
import { EmbedUsersRepository } from './embed-users.repository.js';
import { embeddingError } from './embedding.errors.js';

/**
 * The desired state of one embed user, already normalised. `undefined` leaves a stored value
 * alone; for the group lists an array replaces the stored memberships.
 */
export interface EmbedUserState {
  externalId: string;
  email?: string;
  displayName?: string;
  picture?: string;
  groups?: readonly string[];
  tenantGroups?: readonly string[];
}

/** The state a provisioning request (or the user part of a session request) asks for. */
export function desiredState(dto: {
  externalId: string;
  email?: string | null;
  groups?: string[] | null;
  tenantGroups?: string[] | null;
  userProfile?: { displayName?: string | null; picture?: string | null } | null;
}): EmbedUserState {
  return {
    externalId: normalizeExternalId(dto.externalId),
    email: dto.email == null ? undefined : dto.email.trim().toLowerCase(),
    displayName: dto.userProfile?.displayName ?? undefined,
    picture: dto.userProfile?.picture ?? undefined,
    groups: dto.groups ?? undefined,
    tenantGroups: dto.tenantGroups ?? undefined,
  };
}

/**
 * Embed users. {@link apply} is the one code path that creates or updates an embed user: the
 * provisioning endpoints, group membership and generate-session all go through it.
 */
@Injectable()
export class EmbedUsersService {
  constructor(
    private readonly db: Database,
    private readonly config: AppConfig,
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersRepository,
    private readonly tenantGroups: EmbedGroupsRepository,
    private readonly groups: GroupsService,
  ) {}

  /** `POST /embed-tenants/{name}/user`: one transaction; a failure changes nothing. */
  provision(actor: Principal, rawTenant: string, dto: ProvisionEmbedUserDto): Promise<EmbedUserDto> {
    return this.provisionIn(actor, normalizeTenantName(rawTenant), dto);
  }

  private async provisionIn(
    actor: Principal,
    tenantName: string,
    dto: ProvisionEmbedUserDto,
  ): Promise<EmbedUserDto> {
    const state = desiredState(dto);
    const id = await this.db.transaction(async () => {
      const tenant = await this.tenants.ensure(actor.accountId, tenantName);
      return this.apply(actor.accountId, tenant, state);
    });
    return this.get(id);
  }

  /**
   * `POST /embed-tenants/{name}/users`: each user in order, each in its own transaction, as the
   * single endpoint would; client errors are reported per user, earlier users stay applied.
   */
  async provisionMany(
    actor: Principal,
    rawTenant: string,
    dto: ProvisionEmbedUsersDto,
  ): Promise<ProvisionEmbedUsersResponseDto> {
    const tenantName = normalizeTenantName(rawTenant);
    const result: ProvisionEmbedUsersResponseDto = { succeeded: [], failed: [] };
    for (const entry of dto.users) {
      try {
        result.succeeded.push(await this.provisionIn(actor, tenantName, entry));
      } catch (e) {
        const error = clientFailure(e);
        if (!error) throw e;
        result.failed.push({ externalId: entry.externalId.trim().toLowerCase(), error });
      }
    }
    return result;
  }

  async list(actor: Principal, rawTenant: string, query: EmbedUsersQueryDto): Promise<Page<EmbedUserDto>> {
    const tenant = await this.tenants.find(actor.accountId, normalizeTenantName(rawTenant));
    const paging = resolvePaging(query, ['string', 'number']);
    const search = query.search?.trim();
    const rows = await this.users.list(
      tenant.id,
      search ? likePattern(search) : null,
      paging.mode === 'cursor' ? paging.after : null,
      fetchLimit(paging),
    );
    return buildPage(rows, paging, (r) => [r.email, r.id]);
  }

  async get(id: number): Promise<EmbedUserDto> {
    const row = await this.users.get(id);
    if (!row) throw embeddingError('embed_user_not_found', `Embed user ${id} was not found`);
    return row;
  }

  async getMany(ids: readonly number[]): Promise<Map<number, EmbedUserDto>> {
    const rows = await this.users.getMany(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Creates or updates the embed user `state.externalId` of `tenant` inside the caller's
   * transaction and returns its id. Named groups must all exist (400 naming the missing ones,
   * before anything is written); a new user past the account's cap is a 429. Parallel calls
   * for one external id meet on the unique key and make one user.
   */
  async apply(accountId: number, tenant: TenantRef, state: EmbedUserState): Promise<number> {
    const groupIds = state.groups && (await this.groups.resolve(accountId, state.groups));
    const tenantGroupIds = state.tenantGroups && (await this.resolveTenantGroups(tenant, state.tenantGroups));
    if (!(await this.users.exists(tenant.id, state.externalId)))
      await this.reserveSeat(accountId, tenant.id, state);

    const id = await this.users.upsert({
      accountId,
      tenantId: tenant.id,
      externalId: state.externalId,
      email: state.email ?? null,
      syntheticEmail: syntheticEmail(state.externalId),
      displayName: state.displayName,
      picture: state.picture,
    });
    if (groupIds) await this.users.replaceMemberships('embed_user_groups', id, groupIds);
    if (tenantGroupIds) await this.users.replaceMemberships('embed_group_members', id, tenantGroupIds);
    return id;
  }

  /** Ids of the named groups of the tenant (share-locked); a 400 naming every missing one. */
  private async resolveTenantGroups(tenant: TenantRef, names: readonly string[]): Promise<number[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const rows = await this.tenantGroups.idsByName(tenant.id, unique);
    const found = new Set(rows.map((r) => r.name));
    const missing = unique.filter((n) => !found.has(n));
    if (missing.length > 0) {
      throw embeddingError(
        'unknown_tenant_groups',
        `These groups do not exist in embed tenant "${tenant.name}": ${missing.map((n) => JSON.stringify(n)).join(', ')}`,
      );
    }
    return rows.map((r) => r.id);
  }

  /**
   * Makes room for one new embed user, or answers 429 at the account's cap. Creations in one
   * account queue on a transaction-scoped advisory lock, so two of them never both take the
   * last seat; a user created meanwhile by a parallel call is an update, not a new seat.
   */
  private async reserveSeat(accountId: number, tenantId: number, state: EmbedUserState): Promise<void> {
    await this.users.lockCreations(accountId);
    if (await this.users.exists(tenantId, state.externalId)) return;
    if ((await this.users.countInAccount(accountId)) >= this.config.embedUsersMax) {
      throw embeddingError(
        'embed_user_limit_reached',
        `The account has reached its limit of ${this.config.embedUsersMax} embed users`,
      );
    }
  }
}
