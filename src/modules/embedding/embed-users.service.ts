import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { isoSql, queryRows } from '../../core/database/sql.js';
import { clientFailure } from '../../core/http/bulk.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  type Page,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { GroupsService } from '../users/groups.service.js';
import type {
  EmbedUserDto,
  EmbedUsersQueryDto,
  ProvisionEmbedUserDto,
  ProvisionEmbedUsersDto,
  ProvisionEmbedUsersResponseDto,
} from './dto/embed-user.dto.js';
import { normalizeExternalId, normalizeTenantName, syntheticEmail } from './embed-identity.js';
import { EmbedTenantsService, type TenantRef } from './embed-tenants.service.js';
import { embeddingError } from './embedding.errors.js';

/** Every field of the EmbedUser shape, from `embed_users u`. */
export const EMBED_USER_COLUMNS = `u.id, u.external_id AS username, ${isoSql('u.created_at')} AS "createdAt",
  u.email, u.external_id AS "externalId", u.display_name AS "firstName", ${isoSql('u.last_login_at')} AS "lastLogin"`;

/** Namespace of the advisory lock that serialises the creation of embed users in one account. */
const EMBED_USER_CAP_LOCK = 0x656d62;

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
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly tenants: EmbedTenantsService,
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
    const id = await this.dataSource.transaction(async (m) => {
      const tenant = await this.tenants.ensure(m, actor.accountId, tenantName);
      return this.apply(m, actor.accountId, tenant, state);
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
    const tenant = await this.tenants.find(
      this.dataSource.manager,
      actor.accountId,
      normalizeTenantName(rawTenant),
    );
    const paging = resolvePaging(query, ['string', 'number']);
    const params: unknown[] = [tenant.id];
    let filter = 'u.tenant_id = $1';
    const search = query.search?.trim();
    if (search) {
      params.push(likePattern(search));
      filter += ` AND (u.email ILIKE $2 OR u.external_id ILIKE $2)`;
    }
    const keyset = keysetPredicate(
      ['u.email COLLATE "C"', 'u.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const rows = await queryRows<EmbedUserDto>(
      this.dataSource,
      `SELECT ${EMBED_USER_COLUMNS} FROM embed_users u WHERE ${filter} AND ${keyset.sql}
       ORDER BY u.email COLLATE "C", u.id LIMIT ${fetchLimit(paging)}`,
      [...params, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.email, r.id]);
  }

  async get(id: number, manager: EntityManager = this.dataSource.manager): Promise<EmbedUserDto> {
    const [row] = await queryRows<EmbedUserDto>(
      manager,
      `SELECT ${EMBED_USER_COLUMNS} FROM embed_users u WHERE u.id = $1`,
      [id],
    );
    if (!row) throw embeddingError('embed_user_not_found', `Embed user ${id} was not found`);
    return row;
  }

  async getMany(ids: readonly number[], manager: EntityManager): Promise<Map<number, EmbedUserDto>> {
    const rows = await queryRows<EmbedUserDto>(
      manager,
      `SELECT ${EMBED_USER_COLUMNS} FROM embed_users u WHERE u.id = ANY($1::int[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Creates or updates the embed user `state.externalId` of `tenant` inside the caller's
   * transaction and returns its id. Named groups must all exist (400 naming the missing ones,
   * before anything is written); a new user past the account's cap is a 429. Parallel calls
   * for one external id meet on the unique key and make one user.
   */
  async apply(
    m: EntityManager,
    accountId: number,
    tenant: TenantRef,
    state: EmbedUserState,
  ): Promise<number> {
    const groupIds = state.groups && (await this.groups.resolve(m, accountId, state.groups));
    const tenantGroupIds =
      state.tenantGroups && (await this.resolveTenantGroups(m, tenant, state.tenantGroups));
    if (!(await this.exists(m, tenant.id, state.externalId)))
      await this.reserveSeat(m, accountId, tenant.id, state);

    const [row] = await queryRows<{ id: number }>(
      m,
      `INSERT INTO embed_users AS u (account_id, tenant_id, external_id, email, display_name, picture)
       VALUES ($1, $2, $3, COALESCE($4, $5), $6, $7)
       ON CONFLICT (tenant_id, external_id) DO UPDATE SET
         email = COALESCE($4, u.email),
         display_name = CASE WHEN $8 THEN EXCLUDED.display_name ELSE u.display_name END,
         picture = CASE WHEN $9 THEN EXCLUDED.picture ELSE u.picture END,
         updated_at = now()
       RETURNING u.id`,
      [
        accountId,
        tenant.id,
        state.externalId,
        state.email ?? null,
        syntheticEmail(state.externalId),
        state.displayName ?? null,
        state.picture ?? null,
        state.displayName !== undefined,
        state.picture !== undefined,
      ],
    );
    if (groupIds) await replaceMemberships(m, 'embed_user_groups', row.id, groupIds);
    if (tenantGroupIds) await replaceMemberships(m, 'embed_group_members', row.id, tenantGroupIds);
    return row.id;
  }

  /** Ids of the named groups of the tenant; a 400 naming every missing one. */
  private async resolveTenantGroups(
    m: EntityManager,
    tenant: TenantRef,
    names: readonly string[],
  ): Promise<number[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const rows = await queryRows<{ id: number; name: string }>(
      m,
      `SELECT id, name FROM embed_groups WHERE tenant_id = $1 AND name = ANY($2::varchar[]) FOR KEY SHARE`,
      [tenant.id, unique],
    );
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

  private async exists(m: EntityManager, tenantId: number, externalId: string): Promise<boolean> {
    const rows = await queryRows(m, `SELECT 1 FROM embed_users WHERE tenant_id = $1 AND external_id = $2`, [
      tenantId,
      externalId,
    ]);
    return rows.length > 0;
  }

  /**
   * Makes room for one new embed user, or answers 429 at the account's cap. Creations in one
   * account queue on a transaction-scoped advisory lock, so two of them never both take the
   * last seat; a user created meanwhile by a parallel call is an update, not a new seat.
   */
  private async reserveSeat(
    m: EntityManager,
    accountId: number,
    tenantId: number,
    state: EmbedUserState,
  ): Promise<void> {
    await m.query(`SELECT pg_advisory_xact_lock($1, $2)`, [EMBED_USER_CAP_LOCK, accountId]);
    if (await this.exists(m, tenantId, state.externalId)) return;
    const [{ n }] = await queryRows<{ n: number }>(
      m,
      `SELECT count(*)::int AS n FROM embed_users WHERE account_id = $1`,
      [accountId],
    );
    if (n >= this.config.embedUsersMax) {
      throw embeddingError(
        'embed_user_limit_reached',
        `The account has reached its limit of ${this.config.embedUsersMax} embed users`,
      );
    }
  }
}

/** Makes `userId` a member of exactly `groupIds` in a membership table, without a read-modify-write. */
async function replaceMemberships(
  m: EntityManager,
  table: 'embed_user_groups' | 'embed_group_members',
  userId: number,
  groupIds: readonly number[],
): Promise<void> {
  await m.query(`DELETE FROM ${table} WHERE embed_user_id = $1 AND NOT (group_id = ANY($2::int[]))`, [
    userId,
    groupIds,
  ]);
  if (groupIds.length > 0) {
    await m.query(
      `INSERT INTO ${table} (embed_user_id, group_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
      [userId, groupIds],
    );
  }
}
