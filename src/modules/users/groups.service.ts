import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { foreignKeyViolation, uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, resolvePaging, fetchLimit, type Page } from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type {
  CreateGroupDto,
  GroupDto,
  GroupMemberDto,
  GroupsQueryDto,
  UpdateGroupDto,
} from './dto/group.dto.js';
import type { PoliciesInputDto, PoliciesResponseDto } from './dto/policy.dto.js';
import type { UserGroupDto } from './dto/user-group.dto.js';
import type { PageQueryDto } from '../../core/http/pagination.js';
import { GroupsRepository } from './groups.repository.js';
import { PoliciesService } from './policies.service.js';
import { UsersRepository } from './users.repository.js';
import { usersError } from './users.errors.js';

/**
 * Account-wide groups. Console users are members and inherit the group's roles and grants;
 * embed users join them by name (`groups` of provisioning and sessions), where they gate
 * data-model access. Every write joins the caller's unit of work when one is open.
 */
@Injectable()
export class GroupsService {
  constructor(
    private readonly db: Database,
    private readonly repo: GroupsRepository,
    private readonly users: UsersRepository,
    private readonly policies: PoliciesService,
    private readonly access: AccessService,
  ) {}

  async list(actor: Principal, query: GroupsQueryDto): Promise<Page<GroupDto>> {
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const search = query.search ? likePattern(query.search) : null;
    const rows = await this.repo.page(actor.accountId, search, afterId, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.id]);
  }

  /** The list of {@link list}, each group with its member count as `userCount` (`GET /user-groups/`). */
  async listWithUserCount(actor: Principal, query: GroupsQueryDto): Promise<Page<UserGroupDto>> {
    const page = await this.list(actor, query);
    return { ...page, items: page.items.map((g) => ({ ...g, userCount: g.memberCount })) };
  }

  async get(actor: Principal, id: number): Promise<GroupDto> {
    const row = await this.repo.find(actor.accountId, id);
    if (!row) throw notFound('Group', id);
    return row;
  }

  async create(actor: Principal, dto: CreateGroupDto): Promise<GroupDto> {
    const name = this.name(dto.name);
    try {
      const id = await this.repo.insert(actor.accountId, {
        name,
        description: dto.description ?? null,
        externalId: dto.externalId ?? null,
      });
      return await this.get(actor, id);
    } catch (err) {
      throw this.nameTaken(err, name);
    }
  }

  async update(actor: Principal, id: number, dto: UpdateGroupDto): Promise<GroupDto> {
    const name = dto.name === undefined ? null : this.name(dto.name);
    try {
      const found = await this.repo.update(actor.accountId, id, {
        name,
        description: dto.description,
        externalId: dto.externalId,
      });
      if (!found) throw notFound('Group', id);
    } catch (err) {
      throw this.nameTaken(err, name ?? '');
    }
    return this.get(actor, id);
  }

  /** Deletes a group and its grants; joins the caller's unit of work when one is open. */
  async remove(actor: Principal, id: number): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.repo.delete(actor.accountId, id))) throw notFound('Group', id);
      // Grants have no foreign key to their principal: the group's grants go with the group.
      await this.access.forgetPrincipal(actor.accountId, { type: 'group', id });
    });
  }

  async listMembers(actor: Principal, id: number, query: PageQueryDto): Promise<Page<GroupMemberDto>> {
    await this.get(actor, id);
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.repo.members(actor.accountId, id, afterId, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.id]);
  }

  /** Adds users to a group; members already in it stay. 404 for an unknown group or user. */
  async addMembers(actor: Principal, id: number, userIds: readonly number[]): Promise<void> {
    const unique = [...new Set(userIds)];
    await this.db.transaction(async () => {
      await this.lockGroup(actor.accountId, id);
      const found = await this.users.existingIds(actor.accountId, unique);
      if (found.length !== unique.length) {
        const known = new Set(found);
        const missing = unique.filter((u) => !known.has(u));
        throw usersError('user_not_found', `Users not found: ${missing.join(', ')}`);
      }
      try {
        await this.repo.addMembers(actor.accountId, id, unique);
      } catch (err) {
        // The rows are share-locked above, so this only guards against a change of that design.
        if (foreignKeyViolation(err)) {
          const constraint = (err as { driverError?: { constraint?: string } }).driverError?.constraint;
          throw constraint === 'fk_group_members_user'
            ? usersError('user_not_found', 'A user was deleted while being added')
            : notFound('Group', id);
        }
        throw err;
      }
    });
  }

  /** Removes users from a group (`'all'`: every member); users who are not members are ignored. */
  async removeMembers(actor: Principal, id: number, userIds: readonly number[] | 'all'): Promise<void> {
    await this.db.transaction(async () => {
      await this.lockGroup(actor.accountId, id);
      await this.repo.removeMembers(actor.accountId, id, userIds === 'all' ? 'all' : [...new Set(userIds)]);
    });
  }

  /** Makes `userIds` the group's exact membership. */
  async replaceMembers(actor: Principal, id: number, userIds: readonly number[]): Promise<void> {
    await this.db.transaction(async () => {
      await this.lockGroup(actor.accountId, id);
      await this.repo.removeMembersExcept(actor.accountId, id, [...new Set(userIds)]);
      if (userIds.length > 0) await this.addMembers(actor, id, userIds);
    });
  }

  async memberIds(accountId: number, id: number): Promise<number[]> {
    return this.repo.memberIds(accountId, id);
  }

  async getPolicies(actor: Principal, id: number): Promise<PoliciesResponseDto> {
    await this.get(actor, id);
    const map = await this.policies.read(actor.accountId, [{ type: 'group', id }]);
    return { policies: map.get(`group:${id}`) ?? [] };
  }

  async replacePolicies(actor: Principal, id: number, dto: PoliciesInputDto): Promise<PoliciesResponseDto> {
    await this.policies.validate(actor, dto.policies);
    return this.db.transaction(async () => {
      // An exclusive lock: parallel replacements of the group's grants run one after the other.
      await this.lockGroup(actor.accountId, id, 'FOR NO KEY UPDATE');
      await this.policies.replace(actor.accountId, { type: 'group', id }, dto.policies);
      const map = await this.policies.read(actor.accountId, [{ type: 'group', id }]);
      return { policies: map.get(`group:${id}`) ?? [] };
    });
  }

  /**
   * The ids of the named groups of the account; a 400 naming every missing group when any is
   * unknown. Call it inside the unit of work that writes from it: the rows stay share-locked
   * until it ends, so a group cannot be deleted between this check and those writes.
   */
  async resolve(accountId: number, names: readonly string[]): Promise<number[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const rows = await this.repo.byNames(accountId, unique);
    const byName = new Map(rows.map((r) => [r.name, r.id]));
    const missing = unique.filter((n) => !byName.has(n));
    if (missing.length > 0) {
      throw usersError(
        'unknown_groups',
        `These groups do not exist: ${missing.map((n) => JSON.stringify(n)).join(', ')}`,
      );
    }
    return [...byName.values()];
  }

  /** Locks the group (404 when it is not in the account), so it cannot vanish mid-change. */
  private async lockGroup(
    accountId: number,
    id: number,
    mode: 'FOR KEY SHARE' | 'FOR NO KEY UPDATE' = 'FOR KEY SHARE',
  ): Promise<void> {
    if (!(await this.repo.lock(accountId, id, mode))) throw notFound('Group', id);
  }

  private name(raw: string): string {
    const name = raw.trim();
    if (name === '') throw coreError('validation_failed', ['name must not be blank']);
    return name;
  }

  private nameTaken(err: unknown, name: string): unknown {
    if (uniqueViolation(err) !== null)
      return usersError('group_name_taken', `A group named "${name}" exists`);
    return err;
  }
}
