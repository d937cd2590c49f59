import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { foreignKeyViolation, isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  keysetPredicate,
  resolvePaging,
  fetchLimit,
  type Page,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type {
  CreateGroupDto,
  GroupDto,
  GroupMemberDto,
  GroupsQueryDto,
  UpdateGroupDto,
} from './dto/group.dto.js';
import type { PoliciesInputDto, PoliciesResponseDto } from './dto/policy.dto.js';
import type { PageQueryDto } from '../../core/http/pagination.js';
import { PoliciesService } from './policies.service.js';
import { usersError } from './users.errors.js';

const GROUP_COLUMNS = `g.id, g.name, g.description, g.external_id AS "externalId",
  (SELECT count(*)::int FROM group_members m WHERE m.group_id = g.id) AS "memberCount",
  ${isoSql('g.created_at')} AS "createdAt", ${isoSql('g.updated_at')} AS "updatedAt"`;

/**
 * Account-wide groups. Console users are members and inherit the group's roles and grants;
 * embed users join them by name (`groups` of provisioning and sessions), where they gate
 * data-model access.
 */
@Injectable()
export class GroupsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly policies: PoliciesService,
  ) {}

  async list(actor: Principal, query: GroupsQueryDto): Promise<Page<GroupDto>> {
    const paging = resolvePaging(query, ['number']);
    const params: unknown[] = [actor.accountId];
    let filter = 'g.account_id = $1';
    if (query.search) {
      params.push(likePattern(query.search));
      filter += ` AND g.name ILIKE $${params.length}`;
    }
    const keyset = keysetPredicate(
      ['g.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const rows = await queryRows<GroupDto>(
      this.dataSource,
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE ${filter} AND ${keyset.sql} ORDER BY g.id LIMIT ${fetchLimit(paging)}`,
      [...params, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.id]);
  }

  async get(
    actor: Principal,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GroupDto> {
    const [row] = await queryRows<GroupDto>(
      manager,
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.account_id = $1 AND g.id = $2`,
      [actor.accountId, id],
    );
    if (!row) throw usersError('group_not_found', `Group ${id} was not found`);
    return row;
  }

  async create(
    actor: Principal,
    dto: CreateGroupDto,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GroupDto> {
    const name = this.name(dto.name);
    try {
      const [row] = await queryRows<{ id: number }>(
        manager,
        `INSERT INTO groups (account_id, name, description, external_id) VALUES ($1, $2, $3, $4) RETURNING id`,
        [actor.accountId, name, dto.description ?? null, dto.externalId ?? null],
      );
      return await this.get(actor, row.id, manager);
    } catch (err) {
      throw this.nameTaken(err, name);
    }
  }

  async update(
    actor: Principal,
    id: number,
    dto: UpdateGroupDto,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GroupDto> {
    const name = dto.name === undefined ? null : this.name(dto.name);
    try {
      const rows = await queryRows<{ id: number }>(
        manager,
        `UPDATE groups SET name = COALESCE($3, name),
           description = CASE WHEN $4::boolean THEN $5 ELSE description END,
           external_id = CASE WHEN $6::boolean THEN $7 ELSE external_id END,
           updated_at = now()
         WHERE account_id = $1 AND id = $2 RETURNING id`,
        [
          actor.accountId,
          id,
          name,
          dto.description !== undefined,
          dto.description ?? null,
          dto.externalId !== undefined,
          dto.externalId ?? null,
        ],
      );
      if (rows.length === 0) throw usersError('group_not_found', `Group ${id} was not found`);
    } catch (err) {
      throw this.nameTaken(err, name ?? '');
    }
    return this.get(actor, id, manager);
  }

  /** Deletes a group; inside the caller's transaction when `manager` is given. */
  async remove(actor: Principal, id: number, manager?: EntityManager): Promise<void> {
    if (!manager) return this.dataSource.transaction((m) => this.remove(actor, id, m));
    const rows = await queryRows<{ id: number }>(
      manager,
      `DELETE FROM groups WHERE id = $1 AND account_id = $2 RETURNING id`,
      [id, actor.accountId],
    );
    if (rows.length === 0) throw usersError('group_not_found', `Group ${id} was not found`);
    // policies.principal_id has no foreign key: the group's grants go with the group.
    await manager.query(
      `DELETE FROM policies WHERE account_id = $1 AND principal_type = 'group' AND principal_id = $2`,
      [actor.accountId, id],
    );
  }

  async listMembers(actor: Principal, id: number, query: PageQueryDto): Promise<Page<GroupMemberDto>> {
    await this.get(actor, id);
    const paging = resolvePaging(query, ['number']);
    const keyset = keysetPredicate(['u.id'], 'ASC', paging.mode === 'cursor' ? paging.after : null, 3);
    const rows = await queryRows<GroupMemberDto>(
      this.dataSource,
      `SELECT u.id, u.email, u.username, u.first_name AS "firstName", u.is_deactivated AS "isDeactivated"
       FROM group_members m JOIN users u ON u.id = m.user_id
       WHERE m.account_id = $1 AND m.group_id = $2 AND ${keyset.sql}
       ORDER BY u.id LIMIT ${fetchLimit(paging)}`,
      [actor.accountId, id, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.id]);
  }

  /** Adds users to a group; members already in it stay. 404 for an unknown group or user. */
  async addMembers(
    actor: Principal,
    id: number,
    userIds: readonly number[],
    manager?: EntityManager,
  ): Promise<void> {
    if (!manager) return this.dataSource.transaction((m) => this.addMembers(actor, id, userIds, m));
    const unique = [...new Set(userIds)];
    await this.lockGroup(manager, actor.accountId, id);
    const found = await queryRows<{ id: number }>(
      manager,
      `SELECT id FROM users WHERE account_id = $1 AND id = ANY($2::int[]) FOR KEY SHARE`,
      [actor.accountId, unique],
    );
    if (found.length !== unique.length) {
      const known = new Set(found.map((r) => r.id));
      const missing = unique.filter((u) => !known.has(u));
      throw usersError('user_not_found', `Users not found: ${missing.join(', ')}`);
    }
    try {
      await manager.query(
        `INSERT INTO group_members (group_id, user_id, account_id)
         SELECT $2, u, $1 FROM unnest($3::int[]) AS u
         ON CONFLICT DO NOTHING`,
        [actor.accountId, id, unique],
      );
    } catch (err) {
      // The rows are share-locked above, so this only guards against a change of that design.
      if (foreignKeyViolation(err)) {
        const constraint = (err as { driverError?: { constraint?: string } }).driverError?.constraint;
        throw constraint === 'fk_group_members_user'
          ? usersError('user_not_found', 'A user was deleted while being added')
          : usersError('group_not_found', `Group ${id} was not found`);
      }
      throw err;
    }
  }

  /** Removes users from a group; users who are not members are ignored. */
  async removeMembers(
    actor: Principal,
    id: number,
    userIds: readonly number[] | 'all',
    manager?: EntityManager,
  ): Promise<void> {
    if (!manager) return this.dataSource.transaction((m) => this.removeMembers(actor, id, userIds, m));
    await this.lockGroup(manager, actor.accountId, id);
    if (userIds === 'all') {
      await manager.query(`DELETE FROM group_members WHERE account_id = $1 AND group_id = $2`, [
        actor.accountId,
        id,
      ]);
      return;
    }
    await manager.query(
      `DELETE FROM group_members WHERE account_id = $1 AND group_id = $2 AND user_id = ANY($3::int[])`,
      [actor.accountId, id, [...new Set(userIds)]],
    );
  }

  /** Makes `userIds` the group's exact membership. Call inside a transaction. */
  async replaceMembers(
    actor: Principal,
    id: number,
    userIds: readonly number[],
    manager: EntityManager,
  ): Promise<void> {
    await this.lockGroup(manager, actor.accountId, id);
    await manager.query(
      `DELETE FROM group_members WHERE account_id = $1 AND group_id = $2 AND NOT (user_id = ANY($3::int[]))`,
      [actor.accountId, id, [...new Set(userIds)]],
    );
    if (userIds.length > 0) await this.addMembers(actor, id, userIds, manager);
  }

  async memberIds(
    accountId: number,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<number[]> {
    const rows = await queryRows<{ userId: number }>(
      manager,
      `SELECT user_id AS "userId" FROM group_members WHERE account_id = $1 AND group_id = $2 ORDER BY user_id`,
      [accountId, id],
    );
    return rows.map((r) => r.userId);
  }

  async getPolicies(actor: Principal, id: number): Promise<PoliciesResponseDto> {
    await this.get(actor, id);
    const map = await this.policies.read(actor.accountId, [{ type: 'group', id }]);
    return { policies: map.get(`group:${id}`) ?? [] };
  }

  async replacePolicies(actor: Principal, id: number, dto: PoliciesInputDto): Promise<PoliciesResponseDto> {
    await this.policies.validate(actor, dto.policies);
    return this.dataSource.transaction(async (manager) => {
      // An exclusive lock: parallel replacements of the group's grants run one after the other.
      await this.lockGroup(manager, actor.accountId, id, 'FOR NO KEY UPDATE');
      await this.policies.replace(manager, actor.accountId, 'group', id, dto.policies);
      const map = await this.policies.read(actor.accountId, [{ type: 'group', id }], manager);
      return { policies: map.get(`group:${id}`) ?? [] };
    });
  }

  /**
   * The ids of the named groups of the account; a 400 naming every missing group when any is
   * unknown. The rows stay share-locked until the caller's transaction ends, so a group cannot
   * be deleted between this check and the memberships written from it.
   */
  async resolve(manager: EntityManager, accountId: number, names: readonly string[]): Promise<number[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const rows = await queryRows<{ id: number; name: string }>(
      manager,
      `SELECT id, name FROM groups WHERE account_id = $1 AND name = ANY($2::varchar[]) FOR KEY SHARE`,
      [accountId, unique],
    );
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

  /** Share-locks the group (404 when it is not in the account), so it cannot vanish mid-change. */
  private async lockGroup(
    manager: EntityManager,
    accountId: number,
    id: number,
    mode: 'FOR KEY SHARE' | 'FOR NO KEY UPDATE' = 'FOR KEY SHARE',
  ): Promise<void> {
    const rows = await queryRows<{ id: number }>(
      manager,
      `SELECT id FROM groups WHERE account_id = $1 AND id = $2 ${mode}`,
      [accountId, id],
    );
    if (rows.length === 0) throw usersError('group_not_found', `Group ${id} was not found`);
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
