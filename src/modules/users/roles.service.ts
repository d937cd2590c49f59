import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { BUILT_IN_ROLE_NAMES, LEGACY_ROLE_NAMES } from '../../core/auth/action.js';
import { foreignKeyViolation, uniqueViolation } from '../../core/database/sql.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  type Page,
} from '../../core/http/pagination.js';
import type { RoleCreateDto, RoleDto, RolesQueryDto, RoleUpdateDto } from './dto/role.dto.js';
import { PoliciesService } from './policies.service.js';
import { usersError } from './users.errors.js';

interface RoleRow {
  id: number;
  name: string;
}

/** Custom roles: named sets of policies assigned to users. Built-in role names are reserved. */
@Injectable()
export class RolesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly policies: PoliciesService,
  ) {}

  async list(actor: Principal, query: RolesQueryDto): Promise<Page<RoleDto>> {
    const paging = resolvePaging(query, ['number']);
    const keyset = keysetPredicate(['id'], 'ASC', paging.mode === 'cursor' ? paging.after : null, 2);
    const rows: RoleRow[] = await this.dataSource.query(
      `SELECT id, name FROM roles WHERE account_id = $1 AND ${keyset.sql} ORDER BY id LIMIT ${fetchLimit(paging)}`,
      [actor.accountId, ...keyset.params],
    );
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
    const id = await this.write(async (manager) => {
      const rows: RoleRow[] = await manager.query(
        `INSERT INTO roles (account_id, name) VALUES ($1, $2) RETURNING id, name`,
        [actor.accountId, dto.name.trim()],
      );
      await this.policies.replace(manager, actor.accountId, 'role', rows[0].id, dto.policies);
      return rows[0].id;
    });
    return this.get(actor, id);
  }

  async update(actor: Principal, id: number, dto: RoleUpdateDto): Promise<RoleDto> {
    if (dto.name !== undefined) this.assertNameAllowed(dto.name);
    if (dto.policies) await this.policies.validate(actor, dto.policies);
    await this.write(async (manager) => {
      await this.row(actor.accountId, id, manager, true);
      if (dto.name !== undefined) {
        await manager.query(
          `UPDATE roles SET name = $3, updated_at = now() WHERE account_id = $1 AND id = $2`,
          [actor.accountId, id, dto.name.trim()],
        );
      }
      if (dto.policies) await this.policies.replace(manager, actor.accountId, 'role', id, dto.policies);
    });
    return this.get(actor, id);
  }

  async remove(actor: Principal, id: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.row(actor.accountId, id, manager, true);
      await manager.query(
        `DELETE FROM policies WHERE account_id = $1 AND principal_type = 'role' AND principal_id = $2`,
        [actor.accountId, id],
      );
      await manager.query(`DELETE FROM roles WHERE account_id = $1 AND id = $2`, [actor.accountId, id]);
    });
  }

  /** Idempotent: assigning an assigned role changes nothing. */
  async assign(actor: Principal, roleId: number, userId: number): Promise<void> {
    await this.assertPair(actor.accountId, roleId, userId);
    await this.dataSource.query(
      `INSERT INTO user_roles (user_id, role_id, account_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [userId, roleId, actor.accountId],
    );
  }

  /** Idempotent: unassigning an unassigned role changes nothing. */
  async unassign(actor: Principal, roleId: number, userId: number): Promise<void> {
    await this.assertPair(actor.accountId, roleId, userId);
    await this.dataSource.query(
      `DELETE FROM user_roles WHERE user_id = $1 AND role_id = $2 AND account_id = $3`,
      [userId, roleId, actor.accountId],
    );
  }

  /** Gives the role to every member of the group. Idempotent. */
  async assignToGroup(actor: Principal, roleId: number, groupId: number): Promise<void> {
    await this.assertGroupPair(actor.accountId, roleId, groupId);
    try {
      await this.dataSource.query(
        `INSERT INTO group_roles (group_id, role_id, account_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [groupId, roleId, actor.accountId],
      );
    } catch (err) {
      // The role or the group was deleted between the check and the insert.
      if (foreignKeyViolation(err)) await this.assertGroupPair(actor.accountId, roleId, groupId);
      throw err;
    }
  }

  /** Idempotent. */
  async unassignFromGroup(actor: Principal, roleId: number, groupId: number): Promise<void> {
    await this.assertGroupPair(actor.accountId, roleId, groupId);
    await this.dataSource.query(
      `DELETE FROM group_roles WHERE group_id = $1 AND role_id = $2 AND account_id = $3`,
      [groupId, roleId, actor.accountId],
    );
  }

  private async assertGroupPair(accountId: number, roleId: number, groupId: number): Promise<void> {
    await this.row(accountId, roleId);
    const groups: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM groups WHERE account_id = $1 AND id = $2`,
      [accountId, groupId],
    );
    if (groups.length === 0) throw usersError('group_not_found', `Group ${groupId} was not found`);
  }

  private async assertPair(accountId: number, roleId: number, userId: number): Promise<void> {
    await this.row(accountId, roleId);
    const users: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM users WHERE account_id = $1 AND id = $2`,
      [accountId, userId],
    );
    if (users.length === 0) throw usersError('user_not_found', `User ${userId} was not found`);
  }

  private async withPolicies(accountId: number, roles: RoleRow[]): Promise<RoleDto[]> {
    const map = await this.policies.read(
      accountId,
      roles.map((r) => ({ type: 'role' as const, id: r.id })),
    );
    return roles.map((r) => ({ id: r.id, name: r.name, policies: map.get(`role:${r.id}`) ?? [] }));
  }

  private async row(
    accountId: number,
    id: number,
    manager = this.dataSource.manager,
    lock = false,
  ): Promise<RoleRow> {
    const rows: RoleRow[] = await manager.query(
      `SELECT id, name FROM roles WHERE account_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [accountId, id],
    );
    if (!rows[0]) throw usersError('role_not_found', `Role ${id} was not found`);
    return rows[0];
  }

  private assertNameAllowed(name: string): void {
    const reserved = [...BUILT_IN_ROLE_NAMES, ...Object.keys(LEGACY_ROLE_NAMES)];
    if (reserved.some((n) => n.toLowerCase() === name.trim().toLowerCase())) {
      throw usersError('role_name_reserved', `${name} is a built-in role`);
    }
  }

  private async write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
    } catch (err) {
      if (uniqueViolation(err) !== null) {
        throw usersError('role_name_taken', 'A role with that name already exists');
      }
      throw err;
    }
  }
}
