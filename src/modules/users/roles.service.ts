import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { BUILT_IN_ROLE_NAMES, LEGACY_ROLE_NAMES } from '../../core/auth/action.js';
import { Database } from '../../core/database/database.js';
import { foreignKeyViolation, uniqueViolation } from '../../core/database/sql.js';
import type { Principal } from '../../core/auth/principal.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import type { RoleCreateDto, RoleDto, RolesQueryDto, RoleUpdateDto } from './dto/role.dto.js';
import { GroupsRepository } from './groups.repository.js';
import { PoliciesService } from './policies.service.js';
import { RolesRepository, type RoleRow } from './roles.repository.js';
import { UsersRepository } from './users.repository.js';
import { usersError } from './users.errors.js';

/** Custom roles: named sets of policies assigned to users. Built-in role names are reserved. */
@Injectable()
export class RolesService {
  constructor(
    private readonly db: Database,
    private readonly repo: RolesRepository,
    private readonly users: UsersRepository,
    private readonly groups: GroupsRepository,
    private readonly policies: PoliciesService,
    private readonly access: AccessService,
  ) {}

  async list(actor: Principal, query: RolesQueryDto): Promise<Page<RoleDto>> {
    const paging = resolvePaging(query, ['number']);
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const rows = await this.repo.page(actor.accountId, afterId, fetchLimit(paging));
    const page = buildPage(rows, paging, (r) => [r.id]);
    return { ...page, items: await this.withPolicies(actor.accountId, page.items) };
  }

  async get(actor: Principal, id: number): Promise<RoleDto> {
    const [role] = await this.withPolicies(actor.accountId, [await this.row(actor.accountId, id)]);
    return role;
  }

  async create(actor: Principal, dto: RoleCreateDto): Promise<RoleDto> {
    this.assertNameAllowed(dto.name);
    await this.policies.validate(actor, dto.policies);
    const id = await this.write(async () => {
      const roleId = await this.repo.insert(actor.accountId, dto.name.trim());
      await this.policies.replace(actor.accountId, { type: 'role', id: roleId }, dto.policies);
      return roleId;
    });
    return this.get(actor, id);
  }

  async update(actor: Principal, id: number, dto: RoleUpdateDto): Promise<RoleDto> {
    if (dto.name !== undefined) this.assertNameAllowed(dto.name);
    if (dto.policies) await this.policies.validate(actor, dto.policies);
    await this.write(async () => {
      await this.row(actor.accountId, id, true);
      if (dto.name !== undefined) await this.repo.rename(actor.accountId, id, dto.name.trim());
      if (dto.policies) await this.policies.replace(actor.accountId, { type: 'role', id }, dto.policies);
    });
    return this.get(actor, id);
  }

  async remove(actor: Principal, id: number): Promise<void> {
    await this.db.transaction(async () => {
      await this.row(actor.accountId, id, true);
      // Grants have no foreign key to their principal: the role's policies go with it.
      await this.access.forgetPrincipal(actor.accountId, { type: 'role', id });
      await this.repo.delete(actor.accountId, id);
    });
  }

  /** Idempotent: assigning an assigned role changes nothing. */
  async assign(actor: Principal, roleId: number, userId: number): Promise<void> {
    await this.assertPair(actor.accountId, roleId, userId);
    await this.repo.assignToUser(actor.accountId, roleId, userId);
  }

  /** Idempotent: unassigning an unassigned role changes nothing. */
  async unassign(actor: Principal, roleId: number, userId: number): Promise<void> {
    await this.assertPair(actor.accountId, roleId, userId);
    await this.repo.unassignFromUser(actor.accountId, roleId, userId);
  }

  /** Gives the role to every member of the group. Idempotent. */
  async assignToGroup(actor: Principal, roleId: number, groupId: number): Promise<void> {
    await this.assertGroupPair(actor.accountId, roleId, groupId);
    try {
      await this.repo.assignToGroup(actor.accountId, roleId, groupId);
    } catch (err) {
      // The role or the group was deleted between the check and the insert.
      if (foreignKeyViolation(err)) await this.assertGroupPair(actor.accountId, roleId, groupId);
      throw err;
    }
  }

  /** Idempotent. */
  async unassignFromGroup(actor: Principal, roleId: number, groupId: number): Promise<void> {
    await this.assertGroupPair(actor.accountId, roleId, groupId);
    await this.repo.unassignFromGroup(actor.accountId, roleId, groupId);
  }

  private async assertGroupPair(accountId: number, roleId: number, groupId: number): Promise<void> {
    await this.row(accountId, roleId);
    if (!(await this.groups.exists(accountId, groupId))) throw notFound('Group', groupId);
  }

  private async assertPair(accountId: number, roleId: number, userId: number): Promise<void> {
    await this.row(accountId, roleId);
    if (!(await this.users.exists(accountId, userId))) throw notFound('User', userId);
  }

  private async withPolicies(accountId: number, roles: RoleRow[]): Promise<RoleDto[]> {
    const map = await this.policies.read(
      accountId,
      roles.map((r) => ({ type: 'role' as const, id: r.id })),
    );
    return roles.map((r) => ({ id: r.id, name: r.name, policies: map.get(`role:${r.id}`) ?? [] }));
  }

  private async row(accountId: number, id: number, lock = false): Promise<RoleRow> {
    const row = await this.repo.find(accountId, id, lock);
    if (!row) throw notFound('Role', id);
    return row;
  }

  private assertNameAllowed(name: string): void {
    const reserved = [...BUILT_IN_ROLE_NAMES, ...Object.keys(LEGACY_ROLE_NAMES)];
    if (reserved.some((n) => n.toLowerCase() === name.trim().toLowerCase())) {
      throw usersError('role_name_reserved', `${name} is a built-in role`);
    }
  }

  private async write<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } catch (err) {
      if (uniqueViolation(err) !== null) {
        throw usersError('role_name_taken', 'A role with that name already exists');
      }
      throw err;
    }
  }
}
