import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { builtInRoleActions } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type { PoliciesInputDto, PoliciesResponseDto } from './dto/policy.dto.js';
import type { UserCreateDto, UserDto, UserUpdateDto, UsersQueryDto } from './dto/user.dto.js';
import { PoliciesService } from './policies.service.js';
import { usersError } from './users.errors.js';
import { queryRows, uniqueViolation } from '../../core/database/sql.js';

interface UserRow {
  id: number;
  email: string;
  username: string;
  firstName: string | null;
  picture: string | null;
  title: string | null;
  externalId: string | null;
  isDeactivated: boolean;
  defaultRoles: string[];
  settings: Record<string, unknown>;
  notifications: Record<string, unknown>;
  lastLogin: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const USER_COLUMNS = `u.id, u.email, u.username, u.first_name AS "firstName", u.picture, u.title,
  u.external_id AS "externalId", u.is_deactivated AS "isDeactivated", u.default_roles AS "defaultRoles",
  u.settings, u.notifications, u.last_login AS "lastLogin", u.created_at AS "createdAt", u.updated_at AS "updatedAt"`;

export const DEFAULT_ROLES_FOR_NEW_USERS = ['Viewer'];

export function toUserDto(row: UserRow): UserDto {
  return {
    id: row.id,
    email: row.email,
    username: row.username,
    firstName: row.firstName,
    picture: row.picture,
    title: row.title,
    externalId: row.externalId,
    isAdmin: row.defaultRoles.includes('Admin'),
    isDeactivated: row.isDeactivated,
    defaultRoles: row.defaultRoles,
    settings: row.settings,
    notifications: row.notifications,
    activeRoleId: null,
    lastLogin: row.lastLogin?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function withAdmin(roles: readonly string[], isAdmin: boolean | null | undefined): string[] {
  if (isAdmin === undefined || isAdmin === null) return [...roles];
  const rest = roles.filter((r) => r !== 'Admin');
  return isAdmin ? ['Admin', ...rest] : rest;
}

/** Console users of one account. */
@Injectable()
export class UsersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly policies: PoliciesService,
  ) {}

  async list(actor: Principal, query: UsersQueryDto): Promise<LegacyPage<UserDto>> {
    const paging = resolvePaging(query, ['number']);
    const params: unknown[] = [actor.accountId];
    let filter = 'u.account_id = $1';
    if (query.search) {
      params.push(likePattern(query.search));
      filter += ` AND (u.first_name ILIKE $2 OR u.username ILIKE $2 OR u.email ILIKE $2)`;
    }
    const keyset = keysetPredicate(
      ['u.id'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const pageParams = [...params, ...keyset.params];
    const offset = paging.mode === 'offset' ? ` OFFSET ${paging.offset}` : '';
    const [rows, countRows] = await Promise.all([
      queryRows<UserRow>(
        this.dataSource,
        `SELECT ${USER_COLUMNS} FROM users u WHERE ${filter} AND ${keyset.sql}
         ORDER BY u.id LIMIT ${fetchLimit(paging)}${offset}`,
        pageParams,
      ),
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM users u WHERE ${filter}`,
        params,
      ),
    ]);
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id], toUserDto),
      paging,
      countRows[0].n,
    );
  }

  async get(
    actor: Principal,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<UserDto> {
    return toUserDto(await this.row(actor.accountId, id, manager));
  }

  async me(actor: Principal): Promise<UserDto> {
    const user = await this.get(actor, actor.userId);
    const principals = [
      { type: 'user' as const, id: actor.userId },
      ...actor.roleIds.map((id) => ({ type: 'role' as const, id })),
    ];
    const policies = [...(await this.policies.read(actor.accountId, principals)).values()].flat();
    const builtIn = builtInRoleActions(user.defaultRoles ?? []);
    if (builtIn.length > 0)
      policies.unshift({ resourceType: 'Global', actions: [...new Set(builtIn)], resources: ['*'] });
    return { ...user, userPolicies: policies };
  }

  async create(actor: Principal, dto: UserCreateDto): Promise<UserDto> {
    const roles = withAdmin(dto.defaultRoles ?? DEFAULT_ROLES_FOR_NEW_USERS, dto.isAdmin);
    try {
      const rows: UserRow[] = await this.dataSource.query(
        `INSERT INTO users AS u (account_id, email, username, first_name, external_id, picture, title, default_roles, settings)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${USER_COLUMNS}`,
        [
          actor.accountId,
          dto.email.toLowerCase(),
          dto.username,
          dto.firstName ?? null,
          dto.externalId ?? null,
          dto.picture ?? null,
          dto.title ?? null,
          roles,
          JSON.stringify(dto.settings ?? {}),
        ],
      );
      return toUserDto(rows[0]);
    } catch (err) {
      throw this.uniqueViolation(err);
    }
  }

  async update(actor: Principal, id: number, dto: UserUpdateDto): Promise<UserDto> {
    return this.dataSource.transaction(async (manager) => {
      await this.lockAccount(manager, actor.accountId);
      const current = await this.row(actor.accountId, id, manager);
      const roles = withAdmin(dto.defaultRoles ?? current.defaultRoles, dto.isAdmin);
      const deactivated = dto.isDeactivated ?? current.isDeactivated;
      const losesAdmin =
        current.defaultRoles.includes('Admin') &&
        !current.isDeactivated &&
        (!roles.includes('Admin') || deactivated);
      const dropsOwnAdmin = current.defaultRoles.includes('Admin') && !roles.includes('Admin');
      if (id === actor.userId && (deactivated || dropsOwnAdmin) && actor.isAdmin) {
        throw usersError(
          'cannot_act_on_self',
          'You cannot deactivate yourself or remove your own admin role',
        );
      }
      if (losesAdmin) await this.assertAnotherAdmin(manager, actor.accountId, id);
      const settings =
        dto.settings === undefined ? current.settings : { ...current.settings, ...(dto.settings ?? {}) };
      const rows = await queryRows<UserRow>(
        manager,
        `UPDATE users u SET first_name = $3, picture = $4, title = $5, default_roles = $6, is_deactivated = $7,
           settings = $8, updated_at = now()
         WHERE u.account_id = $1 AND u.id = $2 RETURNING ${USER_COLUMNS}`,
        [
          actor.accountId,
          id,
          dto.firstName === undefined ? current.firstName : dto.firstName,
          dto.picture === undefined ? current.picture : dto.picture,
          dto.title === undefined ? current.title : dto.title,
          roles,
          deactivated,
          JSON.stringify(settings),
        ],
      );
      return toUserDto(rows[0]);
    });
  }

  async remove(actor: Principal, id: number): Promise<void> {
    if (id === actor.userId) throw usersError('cannot_act_on_self', 'You cannot delete yourself');
    await this.dataSource.transaction(async (manager) => {
      await this.lockAccount(manager, actor.accountId);
      const current = await this.row(actor.accountId, id, manager);
      if (current.defaultRoles.includes('Admin') && !current.isDeactivated) {
        await this.assertAnotherAdmin(manager, actor.accountId, id);
      }
      // policies.principal_id has no foreign key: a user's direct grants go with the user.
      await manager.query(
        `DELETE FROM policies WHERE account_id = $1 AND principal_type = 'user' AND principal_id = $2`,
        [actor.accountId, id],
      );
      // Workspace content outlives its owner: the admin who deletes the user takes it over.
      for (const table of ['folders', 'workbooks', 'reports']) {
        await manager.query(`UPDATE ${table} SET user_id = $3 WHERE account_id = $1 AND user_id = $2`, [
          actor.accountId,
          id,
          actor.userId,
        ]);
      }
      await manager.query(`DELETE FROM users WHERE account_id = $1 AND id = $2`, [actor.accountId, id]);
    });
  }

  async getPolicies(actor: Principal, userId: number): Promise<PoliciesResponseDto> {
    await this.row(actor.accountId, userId);
    const map = await this.policies.read(actor.accountId, [{ type: 'user', id: userId }]);
    return { policies: map.get(`user:${userId}`) ?? [] };
  }

  async replacePolicies(
    actor: Principal,
    userId: number,
    dto: PoliciesInputDto,
  ): Promise<PoliciesResponseDto> {
    await this.policies.validate(actor, dto.policies);
    return this.dataSource.transaction(async (manager) => {
      await this.row(actor.accountId, userId, manager, true);
      await this.policies.replace(manager, actor.accountId, 'user', userId, dto.policies);
      const map = await this.policies.read(actor.accountId, [{ type: 'user', id: userId }], manager);
      return { policies: map.get(`user:${userId}`) ?? [] };
    });
  }

  private async row(
    accountId: number,
    id: number,
    manager = this.dataSource.manager,
    lock = false,
  ): Promise<UserRow> {
    const rows: UserRow[] = await manager.query(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = $1 AND u.id = $2${lock ? ' FOR UPDATE' : ''}`,
      [accountId, id],
    );
    if (!rows[0]) throw usersError('user_not_found', `User ${id} was not found`);
    return rows[0];
  }

  /** Serialises changes that could remove the account's last admin. */
  private async lockAccount(manager: EntityManager, accountId: number): Promise<void> {
    await manager.query(`SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
  }

  private async assertAnotherAdmin(
    manager: EntityManager,
    accountId: number,
    exceptUserId: number,
  ): Promise<void> {
    const rows: Array<{ n: number }> = await manager.query(
      `SELECT count(*)::int AS n FROM users
       WHERE account_id = $1 AND id <> $2 AND is_deactivated = false AND 'Admin' = ANY(default_roles)`,
      [accountId, exceptUserId],
    );
    if (rows[0].n === 0)
      throw usersError('last_admin', 'The last active admin of the account cannot be removed');
  }

  private uniqueViolation(err: unknown): unknown {
    const constraint = uniqueViolation(err);
    if (constraint !== null) {
      if (constraint.includes('username'))
        return usersError('username_taken', 'That username is already in use');
      return usersError('email_taken', 'A user with that email already exists');
    }
    return err;
  }
}
