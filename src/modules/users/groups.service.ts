import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  keysetPredicate,
  resolvePaging,
  fetchLimit,
  type Page,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type { CreateGroupDto, GroupDto, GroupsQueryDto } from './dto/group.dto.js';
import { usersError } from './users.errors.js';

const GROUP_COLUMNS = `g.id, g.name, g.description, ${isoSql('g.created_at')} AS "createdAt"`;

/**
 * Account-wide groups. Embed users join them by name (`groups` of provisioning and sessions),
 * where they gate data-model access.
 */
@Injectable()
export class GroupsService {
  constructor(private readonly dataSource: DataSource) {}

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

  async create(actor: Principal, dto: CreateGroupDto): Promise<GroupDto> {
    const name = dto.name.trim();
    if (name === '') throw coreError('validation_failed', ['name must not be blank']);
    try {
      const [row] = await queryRows<GroupDto>(
        this.dataSource,
        `INSERT INTO groups AS g (account_id, name, description) VALUES ($1, $2, $3) RETURNING ${GROUP_COLUMNS}`,
        [actor.accountId, name, dto.description ?? null],
      );
      return row;
    } catch (err) {
      if (uniqueViolation(err) !== null)
        throw usersError('group_name_taken', `A group named "${name}" exists`);
      throw err;
    }
  }

  async remove(actor: Principal, id: number): Promise<void> {
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `DELETE FROM groups WHERE id = $1 AND account_id = $2 RETURNING id`,
      [id, actor.accountId],
    );
    if (rows.length === 0) throw usersError('group_not_found', `Group ${id} was not found`);
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
}
