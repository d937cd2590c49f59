import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/errors/api-error.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
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
import { EmbedGroupsRepository, type GroupLock } from './embed-groups.repository.js';
import { normalizeExternalId, normalizeTenantName, RESERVED_GROUP_PREFIX } from './embed-identity.js';
import { EmbedTenantsService, type TenantRef } from './embed-tenants.service.js';
import { EmbedUsersRepository } from './embed-users.repository.js';
import { EmbedUsersService } from './embed-users.service.js';
import { embeddingError } from './embedding.errors.js';

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
    private readonly db: Database,
    private readonly groups: EmbedGroupsRepository,
    private readonly tenants: EmbedTenantsService,
    private readonly users: EmbedUsersService,
    private readonly userRows: EmbedUsersRepository,
  ) {}

  async list(actor: Principal, rawTenant: string, query: PageQueryDto): Promise<Page<EmbedGroupDto>> {
    const tenant = await this.tenant(actor, rawTenant);
    const paging = resolvePaging(query, ['number']);
    const rows = await this.groups.list(
      tenant.id,
      paging.mode === 'cursor' ? paging.after : null,
      fetchLimit(paging),
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
      const id = await this.db.transaction(async () => {
        const tenant = await this.tenants.ensure(actor.accountId, tenantName);
        return this.groups.insert(actor.accountId, tenant.id, name, emptyToNull(dto.description));
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
    return this.fetch(await this.groupId(tenant, id));
  }

  /** Only the description can change: the name is part of the data model's security context. */
  async update(
    actor: Principal,
    rawTenant: string,
    id: number,
    dto: UpdateEmbedGroupDto,
  ): Promise<EmbedGroupDto> {
    const tenant = await this.tenant(actor, rawTenant);
    const groupId = await this.groupId(tenant, id);
    if (dto.description !== undefined)
      await this.groups.setDescription(groupId, emptyToNull(dto.description));
    return this.fetch(groupId);
  }

  /** Refused (400) while the group has members. */
  async remove(actor: Principal, rawTenant: string, id: number): Promise<void> {
    const tenant = await this.tenant(actor, rawTenant);
    await this.db.transaction(async () => {
      const groupId = await this.groupId(tenant, id, 'FOR UPDATE');
      if (await this.groups.hasMembers(groupId)) {
        throw embeddingError('embed_group_has_members', `Group ${id} still has members; remove them first`);
      }
      await this.groups.delete(groupId);
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
    const groupId = await this.groupId(tenant, id);
    const paging = resolvePaging(query, ['date', 'number']);
    const rows = await this.groups.members(
      groupId,
      paging.mode === 'cursor' ? paging.after : null,
      fetchLimit(paging),
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
    return this.db.transaction(async () => {
      const groupId = await this.groupId(tenant, id, 'FOR KEY SHARE');
      const userIds = await this.resolveMembers(actor.accountId, tenant, refs, true);
      const addedIds = await this.groups.addMembers(groupId, userIds);
      const users = await this.users.getMany(userIds);
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
    const groupId = await this.groupId(tenant, id);
    const userIds = await this.resolveMembers(actor.accountId, tenant, refs, false);
    await this.groups.removeMembers(groupId, userIds);
  }

  /**
   * The embed user ids of `refs`, distinct, in request order. With `provision`, unknown external
   * ids become users and unknown embed user ids are a 404; without, unknown ones are dropped.
   */
  private async resolveMembers(
    accountId: number,
    tenant: TenantRef,
    refs: MemberRef[],
    provision: boolean,
  ): Promise<number[]> {
    const externalIds = refs.flatMap((r) => ('externalId' in r ? [r.externalId] : []));
    const userIds = refs.flatMap((r) => ('embedUserId' in r ? [r.embedUserId] : []));
    const byExternal = await this.userRows.idsByExternalId(tenant.id, externalIds);
    const known = await this.userRows.existingIds(tenant.id, userIds);
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
          userId = await this.users.apply(accountId, tenant, { externalId: ref.externalId });
          byExternal.set(ref.externalId, userId);
        }
      }
      if (userId !== undefined && !out.includes(userId)) out.push(userId);
    }
    return out;
  }

  private tenant(actor: Principal, rawTenant: string): Promise<TenantRef> {
    return this.tenants.find(actor.accountId, normalizeTenantName(rawTenant));
  }

  /** The group `id` of the tenant (optionally row-locked), or 404. */
  private async groupId(tenant: TenantRef, id: number, lock: GroupLock = ''): Promise<number> {
    const groupId = await this.groups.findId(tenant.id, id, lock);
    if (groupId === undefined)
      throw embeddingError('embed_group_not_found', `Embed tenant "${tenant.name}" has no group ${id}`);
    return groupId;
  }

  private async fetch(id: number): Promise<EmbedGroupDto> {
    const row = await this.groups.get(id);
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
