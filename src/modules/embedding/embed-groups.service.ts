import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  type Page,
} from '../../core/http/pagination.js';
import type { PageQueryDto } from '../../core/http/pagination.js';
import type {
  CreateEmbedGroupDto,
  EmbedGroupDto,
  EmbedGroupMemberInputDto,
  EmbedGroupMembersDto,
  EmbedGroupMembersMutationDto,
  UpdateEmbedGroupDto,
} from './dto/embed-group.dto.js';
import type { EmbedUserDto } from './dto/embed-user.dto.js';
import { normalizeExternalId, normalizeTenantName, RESERVED_GROUP_PREFIX } from './embed-identity.js';
import { EmbedTenantsService, type TenantRef } from './embed-tenants.service.js';
import { EMBED_USER_COLUMNS, EmbedUsersService } from './embed-users.service.js';
import { embeddingError } from './embedding.errors.js';

const GROUP_COLUMNS = `g.id, g.name, g.description,
  (SELECT count(*) FROM embed_group_members gm WHERE gm.group_id = g.id)::int AS "userCount"`;

/** A member as requested: by external id (normalised) or by embed user id. */
type MemberRef = { externalId: string } | { embedUserId: number };

/**
 * Groups of an embed tenant and their members. Membership writes are single statements
 * (`INSERT ... ON CONFLICT DO NOTHING`, `DELETE`), so parallel changes never lose one another;
 * a group being deleted is locked against new members.
 */
@Injectable()
export class EmbedGroupsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersService,
  ) {}

  async list(actor: Principal, rawTenant: string, query: PageQueryDto): Promise<Page<EmbedGroupDto>> {
    const tenant = await this.tenant(actor, rawTenant);
    const paging = resolvePaging(query, ['number']);
    const keyset = keysetPredicate(['g.id'], 'DESC', paging.mode === 'cursor' ? paging.after : null, 2);
    const rows = await queryRows<EmbedGroupDto>(
      this.dataSource,
      `SELECT ${GROUP_COLUMNS} FROM embed_groups g WHERE g.tenant_id = $1 AND ${keyset.sql}
       ORDER BY g.id DESC LIMIT ${fetchLimit(paging)}`,
      [tenant.id, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.id]);
  }

  /** Creates the group, and the tenant when it does not exist yet. */
  async create(actor: Principal, rawTenant: string, dto: CreateEmbedGroupDto): Promise<EmbedGroupDto> {
    const tenantName = normalizeTenantName(rawTenant);
    const name = dto.name.trim();
    if (name === '') throw coreError('validation_failed', ['name must not be blank']);
    if (name.toLowerCase().startsWith(RESERVED_GROUP_PREFIX)) {
      throw embeddingError(
        'embed_group_name_reserved',
        `Group names may not start with "${RESERVED_GROUP_PREFIX}": it is reserved for the platform`,
      );
    }
    try {
      const id = await this.dataSource.transaction(async (m) => {
        const tenant = await this.tenants.ensure(m, actor.accountId, tenantName);
        const [row] = await queryRows<{ id: number }>(
          m,
          `INSERT INTO embed_groups (account_id, tenant_id, name, description) VALUES ($1, $2, $3, $4) RETURNING id`,
          [actor.accountId, tenant.id, name, emptyToNull(dto.description)],
        );
        return row.id;
      });
      return this.fetch(id);
    } catch (err) {
      if (uniqueViolation(err) !== null) {
        throw embeddingError(
          'embed_group_name_taken',
          `Embed tenant "${tenantName}" already has a group "${name}"`,
        );
      }
      throw err;
    }
  }

  async get(actor: Principal, rawTenant: string, id: number): Promise<EmbedGroupDto> {
    const tenant = await this.tenant(actor, rawTenant);
    return this.fetch(await this.groupId(this.dataSource.manager, tenant, id));
  }

  /** Only the description can change: the name is part of the data model's security context. */
  async update(
    actor: Principal,
    rawTenant: string,
    id: number,
    dto: UpdateEmbedGroupDto,
  ): Promise<EmbedGroupDto> {
    const tenant = await this.tenant(actor, rawTenant);
    const groupId = await this.groupId(this.dataSource.manager, tenant, id);
    if (dto.description !== undefined) {
      await this.dataSource.query(`UPDATE embed_groups SET description = $2 WHERE id = $1`, [
        groupId,
        emptyToNull(dto.description),
      ]);
    }
    return this.fetch(groupId);
  }

  /** Refused (400) while the group has members. */
  async remove(actor: Principal, rawTenant: string, id: number): Promise<void> {
    const tenant = await this.tenant(actor, rawTenant);
    await this.dataSource.transaction(async (m) => {
      const groupId = await this.groupId(m, tenant, id, 'FOR UPDATE');
      const members = await queryRows(m, `SELECT 1 FROM embed_group_members WHERE group_id = $1 LIMIT 1`, [
        groupId,
      ]);
      if (members.length > 0) {
        throw embeddingError('embed_group_has_members', `Group ${id} still has members; remove them first`);
      }
      await m.query(`DELETE FROM embed_groups WHERE id = $1`, [groupId]);
    });
  }

  /** Most recently added first. */
  async members(
    actor: Principal,
    rawTenant: string,
    id: number,
    query: PageQueryDto,
  ): Promise<Page<EmbedUserDto>> {
    const tenant = await this.tenant(actor, rawTenant);
    const groupId = await this.groupId(this.dataSource.manager, tenant, id);
    const paging = resolvePaging(query, ['date', 'number']);
    const keyset = keysetPredicate(
      ['gm.created_at', 'gm.embed_user_id'],
      'DESC',
      paging.mode === 'cursor' ? paging.after : null,
      2,
    );
    const rows = await queryRows<EmbedUserDto & { addedAt: string }>(
      this.dataSource,
      `SELECT ${EMBED_USER_COLUMNS}, ${isoSql('gm.created_at')} AS "addedAt"
       FROM embed_group_members gm JOIN embed_users u ON u.id = gm.embed_user_id
       WHERE gm.group_id = $1 AND ${keyset.sql}
       ORDER BY gm.created_at DESC, gm.embed_user_id DESC LIMIT ${fetchLimit(paging)}`,
      [groupId, ...keyset.params],
    );
    return buildPage(
      rows,
      paging,
      (r) => [r.addedAt, r.id],
      ({ addedAt: _, ...user }) => user,
    );
  }

  /**
   * Adds members; an unknown external id is provisioned (as a user with nothing but its id), an
   * unknown embed user id is a 404. One transaction: a failure adds nobody.
   */
  async addMembers(
    actor: Principal,
    rawTenant: string,
    id: number,
    dto: EmbedGroupMembersDto,
  ): Promise<EmbedGroupMembersMutationDto> {
    const refs = memberRefs(dto.members);
    const tenant = await this.tenant(actor, rawTenant);
    return this.dataSource.transaction(async (m) => {
      const groupId = await this.groupId(m, tenant, id, 'FOR KEY SHARE');
      const userIds = await this.resolveMembers(m, actor.accountId, tenant, refs, true);
      const added = await queryRows<{ id: number }>(
        m,
        `INSERT INTO embed_group_members (group_id, embed_user_id) SELECT $1, unnest($2::int[])
         ON CONFLICT DO NOTHING RETURNING embed_user_id AS id`,
        [groupId, userIds],
      );
      const addedIds = new Set(added.map((r) => r.id));
      const users = await this.users.getMany(userIds, m);
      return {
        addedMembers: userIds.filter((u) => addedIds.has(u)).map((u) => users.get(u)!),
        unchangedMembers: userIds.filter((u) => !addedIds.has(u)).map((u) => users.get(u)!),
      };
    });
  }

  /** Removes members; unknown users and non-members are ignored, nobody is provisioned. */
  async removeMembers(
    actor: Principal,
    rawTenant: string,
    id: number,
    dto: EmbedGroupMembersDto,
  ): Promise<void> {
    const refs = memberRefs(dto.members);
    const tenant = await this.tenant(actor, rawTenant);
    const groupId = await this.groupId(this.dataSource.manager, tenant, id);
    const userIds = await this.resolveMembers(this.dataSource.manager, actor.accountId, tenant, refs, false);
    await this.dataSource.query(
      `DELETE FROM embed_group_members WHERE group_id = $1 AND embed_user_id = ANY($2::int[])`,
      [groupId, userIds],
    );
  }

  /**
   * The embed user ids of `refs`, distinct, in request order. With `provision`, unknown external
   * ids become users and unknown embed user ids are a 404; without, unknown ones are dropped.
   */
  private async resolveMembers(
    m: EntityManager,
    accountId: number,
    tenant: TenantRef,
    refs: MemberRef[],
    provision: boolean,
  ): Promise<number[]> {
    const externalIds = refs.flatMap((r) => ('externalId' in r ? [r.externalId] : []));
    const userIds = refs.flatMap((r) => ('embedUserId' in r ? [r.embedUserId] : []));
    const byExternal = new Map(
      (
        await queryRows<{ id: number; externalId: string }>(
          m,
          `SELECT id, external_id AS "externalId" FROM embed_users WHERE tenant_id = $1 AND external_id = ANY($2::varchar[])`,
          [tenant.id, externalIds],
        )
      ).map((r) => [r.externalId, r.id]),
    );
    const known = new Set(
      (
        await queryRows<{ id: number }>(
          m,
          `SELECT id FROM embed_users WHERE tenant_id = $1 AND id = ANY($2::int[])`,
          [tenant.id, userIds],
        )
      ).map((r) => r.id),
    );
    const unknownIds = [...new Set(userIds.filter((u) => !known.has(u)))];
    if (provision && unknownIds.length > 0) {
      throw embeddingError(
        'embed_user_not_found',
        `No embed user of tenant "${tenant.name}" has id ${unknownIds.join(', ')}`,
      );
    }
    const out: number[] = [];
    for (const ref of refs) {
      let userId: number | undefined;
      if ('embedUserId' in ref) userId = known.has(ref.embedUserId) ? ref.embedUserId : undefined;
      else {
        userId = byExternal.get(ref.externalId);
        if (userId === undefined && provision) {
          userId = await this.users.apply(m, accountId, tenant, { externalId: ref.externalId });
          byExternal.set(ref.externalId, userId);
        }
      }
      if (userId !== undefined && !out.includes(userId)) out.push(userId);
    }
    return out;
  }

  private tenant(actor: Principal, rawTenant: string): Promise<TenantRef> {
    return this.tenants.find(this.dataSource.manager, actor.accountId, normalizeTenantName(rawTenant));
  }

  /** The group `id` of the tenant (optionally row-locked), or 404. */
  private async groupId(
    m: EntityManager,
    tenant: TenantRef,
    id: number,
    lock: '' | 'FOR UPDATE' | 'FOR KEY SHARE' = '',
  ): Promise<number> {
    const [row] = await queryRows<{ id: number }>(
      m,
      `SELECT id FROM embed_groups WHERE id = $1 AND tenant_id = $2 ${lock}`,
      [id, tenant.id],
    );
    if (!row)
      throw embeddingError('embed_group_not_found', `Embed tenant "${tenant.name}" has no group ${id}`);
    return row.id;
  }

  private async fetch(id: number): Promise<EmbedGroupDto> {
    const [row] = await queryRows<EmbedGroupDto>(
      this.dataSource,
      `SELECT ${GROUP_COLUMNS} FROM embed_groups g WHERE g.id = $1`,
      [id],
    );
    if (!row) throw embeddingError('embed_group_not_found', `Group ${id} was not found`);
    return row;
  }
}

const emptyToNull = (s: string | null | undefined): string | null => (s == null || s === '' ? null : s);

/** Each member names exactly one of `externalId` and `embedUserId`; a 400 names the bad ones. */
function memberRefs(members: readonly EmbedGroupMemberInputDto[]): MemberRef[] {
  const bad: string[] = [];
  const refs = members.map((member, i): MemberRef => {
    const hasExternal = member.externalId != null;
    const hasId = member.embedUserId != null;
    if (hasExternal === hasId) {
      bad.push(`members.${i} must have exactly one of externalId and embedUserId`);
      return { embedUserId: 0 };
    }
    if (hasExternal) {
      try {
        return { externalId: normalizeExternalId(member.externalId!) };
      } catch {
        bad.push(`members.${i}.externalId must not be blank`);
        return { embedUserId: 0 };
      }
    }
    return { embedUserId: member.embedUserId! };
  });
  if (bad.length > 0) throw embeddingError('invalid_member', bad);
  return refs;
}
