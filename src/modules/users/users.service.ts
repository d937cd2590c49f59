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
import { ALL_RESOURCES, type PoliciesInputDto, type PoliciesResponseDto } from './dto/policy.dto.js';
import type {
  BulkUserActionDto,
  BulkUserActionResultDto,
  UserCreateDto,
  UserDto,
  UserSettingsDto,
  UserUpdateDto,
  UsersQueryDto,
} from './dto/user.dto.js';
import { clientFailure } from '../../core/http/bulk.js';
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

export const DEFAULT_ROLES_FOR_NEW_USERS = ['AIBIViewer'];

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
      ...actor.groupIds.map((id) => ({ type: 'group' as const, id })),
    ];
    const policies = [...(await this.policies.read(actor.accountId, principals)).values()].flat();
    const builtIn = builtInRoleActions(user.defaultRoles ?? []);
    if (builtIn.length > 0)
      policies.unshift({
        resourceType: 'Global',
        actions: [...new Set(builtIn)],
        resources: [ALL_RESOURCES],
      });
    return { ...user, userPolicies: policies };
  }

  async create(actor: Principal, dto: UserCreateDto): Promise<UserDto> {
    const roles = withAdmin(dto.defaultRoles ?? DEFAULT_ROLES_FOR_NEW_USERS, dto.isAdmin);
    const settings = await this.mergeSettings(this.dataSource.manager, actor.accountId, {}, dto.settings);
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
          JSON.stringify(settings),
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
      const current = await this.row(actor.accountId, id, manager, true);
      const roles = withAdmin(dto.defaultRoles ?? current.defaultRoles, dto.isAdmin);
      const deactivated = dto.isDeactivated ?? current.isDeactivated;
      const losesAdmin =
        current.defaultRoles.includes('Admin') &&
        !current.isDeactivated &&
        (!roles.includes('Admin') || deactivated);
      const dropsOwnAdmin = current.defaultRoles.includes('Admin') && !roles.includes('Admin');
      if (id === actor.userId && (deactivated || dropsOwnAdmin) && actor.isAdmin) {
        throw usersError(
          'cannot_deactivate_self',
          'You cannot deactivate yourself or remove your own admin role',
        );
      }
      if (losesAdmin) await this.assertAnotherAdmin(manager, actor.accountId, id);
      const settings = await this.mergeSettings(manager, actor.accountId, current.settings, dto.settings);
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

  /** Merges a partial patch into the caller's own settings (`sheets` field by field). */
  async updateMySettings(actor: Principal, dto: UserSettingsDto): Promise<UserDto> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.row(actor.accountId, actor.userId, manager, true);
      const settings = await this.mergeSettings(manager, actor.accountId, current.settings, dto);
      const rows = await queryRows<UserRow>(
        manager,
        `UPDATE users u SET settings = $3, updated_at = now() WHERE u.account_id = $1 AND u.id = $2
         RETURNING ${USER_COLUMNS}`,
        [actor.accountId, actor.userId, JSON.stringify(settings)],
      );
      return toUserDto(rows[0]);
    });
  }

  /**
   * Applies one action to up to 100 users, each in its own transaction, in the order given, with
   * the guards of the single-user endpoints; failures are reported per user.
   */
  async bulk(actor: Principal, dto: BulkUserActionDto): Promise<BulkUserActionResultDto> {
    const succeeded: number[] = [];
    const failed: BulkUserActionResultDto['failed'] = [];
    for (const userId of new Set(dto.userIds)) {
      try {
        if (dto.action === 'DELETE') await this.remove(actor, userId);
        else await this.setDeactivated(actor, userId, dto.action === 'DEACTIVATE');
        succeeded.push(userId);
      } catch (e) {
        const error = clientFailure(e);
        if (!error) throw e;
        failed.push({ userId, error });
      }
    }
    return { action: dto.action, succeeded, failed };
  }

  /**
   * Deactivates (the user's tokens stop working at once) or reactivates one user. Deactivating
   * yourself or the last active admin is refused (403); repeating the current state is a no-op.
   */
  async setDeactivated(actor: Principal, id: number, deactivated: boolean): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (deactivated) await this.guardDeactivation(manager, actor, id);
      const current = await this.row(actor.accountId, id, manager);
      if (current.isDeactivated === deactivated) return;
      await manager.query(
        `UPDATE users SET is_deactivated = $3, updated_at = now() WHERE account_id = $1 AND id = $2`,
        [actor.accountId, id, deactivated],
      );
    });
  }

  /**
   * The checks before deactivating user `id`, for use inside the caller's transaction: not
   * yourself (403), not the last active admin (403). Locks the account row until the transaction
   * ends, so two parallel deactivations cannot both pass. 404 for an unknown user.
   */
  async guardDeactivation(manager: EntityManager, actor: Principal, id: number): Promise<void> {
    if (id === actor.userId) throw usersError('cannot_deactivate_self', 'You cannot deactivate yourself');
    await this.lockAccount(manager, actor.accountId);
    const current = await this.row(actor.accountId, id, manager);
    if (!current.isDeactivated && current.defaultRoles.includes('Admin')) {
      await this.assertAnotherAdmin(manager, actor.accountId, id);
    }
  }

  /** Deletes a user; inside the caller's transaction when `manager` is given. */
  async remove(actor: Principal, id: number, manager?: EntityManager): Promise<void> {
    if (id === actor.userId) throw usersError('cannot_act_on_self', 'You cannot delete yourself');
    if (!manager) return this.dataSource.transaction((m) => this.remove(actor, id, m));
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

  /**
   * Settings merge key by key; `sheets` merges field by field and `null` clears it. The default
   * deployment must be one of the account's; the deprecated `lastSeenChangelogId` is dropped.
   */
  private async mergeSettings(
    manager: EntityManager,
    accountId: number,
    current: Record<string, unknown>,
    patch: UserSettingsDto | null | undefined,
  ): Promise<Record<string, unknown>> {
    if (patch === undefined || patch === null) return current;
    const { sheets, lastSeenChangelogId: _ignored, ...rest } = patch;
    if (typeof rest.defaultDeploymentId === 'number') {
      const found = await queryRows<{ id: number }>(
        manager,
        `SELECT id FROM deployments WHERE account_id = $1 AND id = $2`,
        [accountId, rest.defaultDeploymentId],
      );
      if (found.length === 0) {
        throw usersError(
          'unknown_deployment',
          `settings.defaultDeploymentId: deployment ${rest.defaultDeploymentId} was not found`,
        );
      }
    }
    const merged: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(rest)) if (value !== undefined) merged[key] = value;
    if (sheets === null) delete merged.sheets;
    else if (sheets !== undefined) {
      const before = (current.sheets as Record<string, unknown> | undefined) ?? {};
      const after: Record<string, unknown> = { ...before };
      for (const [key, value] of Object.entries(sheets)) if (value !== undefined) after[key] = value;
      merged.sheets = after;
    }
    return merged;
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
