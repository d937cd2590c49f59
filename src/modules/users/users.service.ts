import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AccessService } from '../../core/auth/access.service.js';
import { builtInRoleActions } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import {
  buildPage,
  fetchLimit,
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
import { Database } from '../../core/database/database.js';
import { TenantAccounts } from '../../core/tenancy/tenant-accounts.js';
import { uniqueViolation } from '../../core/database/sql.js';
import { notFound } from '../../core/errors/not-found.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import { OwnedContent } from './owned-content.js';
import { PoliciesService } from './policies.service.js';
import { UsersRepository, type UserRow } from './users.repository.js';
import { usersError } from './users.errors.js';

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
export class UsersService implements OnApplicationBootstrap {
  /** What other modules keep per owner, handed over when a user is deleted. */
  private ownedContent: readonly OwnedContent[] = [];

  constructor(
    private readonly db: Database,
    private readonly accounts: TenantAccounts,
    private readonly repo: UsersRepository,
    private readonly policies: PoliciesService,
    private readonly access: AccessService,
    private readonly deployments: DeploymentsService,
    private readonly moduleRef: ModuleRef,
  ) {}

  onApplicationBootstrap(): void {
    try {
      this.ownedContent = this.moduleRef.get(OwnedContent, { strict: false, each: true });
    } catch {
      this.ownedContent = []; // no module keeps content per owner
    }
  }

  async list(actor: Principal, query: UsersQueryDto): Promise<LegacyPage<UserDto>> {
    const paging = resolvePaging(query, ['number']);
    const search = query.search ? likePattern(query.search) : null;
    const afterId = paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null;
    const offset = paging.mode === 'offset' ? paging.offset : 0;
    const [rows, total] = await Promise.all([
      this.repo.page(actor.accountId, search, afterId, fetchLimit(paging), offset),
      this.repo.count(actor.accountId, search),
    ]);
    return withLegacyFields(
      buildPage(rows, paging, (r) => [r.id], toUserDto),
      paging,
      total,
    );
  }

  async get(actor: Principal, id: number): Promise<UserDto> {
    return toUserDto(await this.row(actor.accountId, id));
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
    const settings = await this.mergeSettings(actor.accountId, {}, dto.settings);
    try {
      const row = await this.repo.insert(actor.accountId, {
        email: dto.email.toLowerCase(),
        username: dto.username,
        firstName: dto.firstName ?? null,
        externalId: dto.externalId ?? null,
        picture: dto.picture ?? null,
        title: dto.title ?? null,
        defaultRoles: roles,
        settings,
      });
      return toUserDto(row);
    } catch (err) {
      throw this.uniqueViolation(err);
    }
  }

  async update(actor: Principal, id: number, dto: UserUpdateDto): Promise<UserDto> {
    return this.db.transaction(async () => {
      await this.accounts.lock(actor.accountId);
      const current = await this.row(actor.accountId, id, true);
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
      if (losesAdmin) await this.assertAnotherAdmin(actor.accountId, id);
      const settings = await this.mergeSettings(actor.accountId, current.settings, dto.settings);
      const row = await this.repo.update(actor.accountId, id, {
        firstName: dto.firstName === undefined ? current.firstName : dto.firstName,
        picture: dto.picture === undefined ? current.picture : dto.picture,
        title: dto.title === undefined ? current.title : dto.title,
        defaultRoles: roles,
        isDeactivated: deactivated,
        settings,
      });
      return toUserDto(row);
    });
  }

  /** Merges a partial patch into the caller's own settings (`sheets` field by field). */
  async updateMySettings(actor: Principal, dto: UserSettingsDto): Promise<UserDto> {
    return this.db.transaction(async () => {
      const current = await this.row(actor.accountId, actor.userId, true);
      const settings = await this.mergeSettings(actor.accountId, current.settings, dto);
      return toUserDto(await this.repo.updateSettings(actor.accountId, actor.userId, settings));
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
    await this.db.transaction(async () => {
      if (deactivated) await this.guardDeactivation(actor, id);
      const current = await this.row(actor.accountId, id);
      if (current.isDeactivated === deactivated) return;
      await this.repo.setDeactivated(actor.accountId, id, deactivated);
    });
  }

  /**
   * The checks before deactivating user `id`, inside the caller's unit of work: not yourself
   * (403), not the last active admin (403). Locks the account row until the unit of work ends, so
   * two parallel deactivations cannot both pass. 404 for an unknown user.
   */
  async guardDeactivation(actor: Principal, id: number): Promise<void> {
    if (id === actor.userId) throw usersError('cannot_deactivate_self', 'You cannot deactivate yourself');
    await this.db.transaction(async () => {
      await this.accounts.lock(actor.accountId);
      const current = await this.row(actor.accountId, id);
      if (!current.isDeactivated && current.defaultRoles.includes('Admin')) {
        await this.assertAnotherAdmin(actor.accountId, id);
      }
    });
  }

  /** Deletes a user; joins the caller's unit of work when one is open. */
  async remove(actor: Principal, id: number): Promise<void> {
    if (id === actor.userId) throw usersError('cannot_act_on_self', 'You cannot delete yourself');
    await this.db.transaction(async () => {
      await this.accounts.lock(actor.accountId);
      const current = await this.row(actor.accountId, id);
      if (current.defaultRoles.includes('Admin') && !current.isDeactivated) {
        await this.assertAnotherAdmin(actor.accountId, id);
      }
      // Grants have no foreign key to their principal: a user's direct grants go with the user.
      await this.access.forgetPrincipal(actor.accountId, { type: 'user', id });
      // Workspace content outlives its owner: the admin who deletes the user takes it over.
      for (const content of this.ownedContent) await content.handOver(actor.accountId, id, actor.userId);
      await this.repo.delete(actor.accountId, id);
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
    return this.db.transaction(async () => {
      await this.row(actor.accountId, userId, true);
      await this.policies.replace(actor.accountId, { type: 'user', id: userId }, dto.policies);
      const map = await this.policies.read(actor.accountId, [{ type: 'user', id: userId }]);
      return { policies: map.get(`user:${userId}`) ?? [] };
    });
  }

  private async row(accountId: number, id: number, lock = false): Promise<UserRow> {
    const row = await this.repo.find(accountId, id, lock);
    if (!row) throw notFound('User', id);
    return row;
  }

  private async assertAnotherAdmin(accountId: number, exceptUserId: number): Promise<void> {
    if ((await this.repo.countOtherActiveAdmins(accountId, exceptUserId)) === 0)
      throw usersError('last_admin', 'The last active admin of the account cannot be removed');
  }

  /**
   * Settings merge key by key; `sheets` merges field by field and `null` clears it. The default
   * deployment must be one of the account's; the deprecated `lastSeenChangelogId` is dropped.
   */
  private async mergeSettings(
    accountId: number,
    current: Record<string, unknown>,
    patch: UserSettingsDto | null | undefined,
  ): Promise<Record<string, unknown>> {
    if (patch === undefined || patch === null) return current;
    const { sheets, lastSeenChangelogId: _ignored, ...rest } = patch;
    if (typeof rest.defaultDeploymentId === 'number') {
      if (!(await this.deployments.existsInAccount(accountId, rest.defaultDeploymentId))) {
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
