import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { TenantAccounts } from '../../core/tenancy/tenant-accounts.js';
import { uniqueViolation } from '../../core/database/sql.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  DirectoryRepository,
  type DirectoryCondition,
  type DirectoryGroup,
  type DirectoryMembership,
  type DirectoryPage,
  type DirectoryUser,
  type DirectoryUserColumns,
} from './directory.repository.js';
import { GroupsRepository } from './groups.repository.js';
import { UsersRepository } from './users.repository.js';
import { DEFAULT_ROLES_FOR_NEW_USERS } from './users.service.js';
import { usersError } from './users.errors.js';

export type {
  DirectoryCondition,
  DirectoryGroup,
  DirectoryMembership,
  DirectoryPage,
  DirectoryUser,
} from './directory.repository.js';

/** The columns an identity provider writes; the email lowercased here. */
export type DirectoryUserInput = DirectoryUserColumns;

/**
 * Reads and writes of console users and groups on behalf of identity providers (SCIM). Group
 * writes and user deletion stay with `GroupsService` and `UsersService`. Every call joins the
 * caller's unit of work when one is open.
 */
@Injectable()
export class DirectoryService {
  constructor(
    private readonly db: Database,
    private readonly accounts: TenantAccounts,
    private readonly repo: DirectoryRepository,
    private readonly users: UsersRepository,
    private readonly groups: GroupsRepository,
  ) {}

  /**
   * A page of the account's users matching `where` (a condition over `users u`, see
   * `DIRECTORY_USER_ATTRIBUTES` in users.fragments.ts), ordered by id, and the number matching.
   */
  findUsers(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryUser>> {
    return this.repo.findUsers(accountId, where, offset, limit);
  }

  async getUser(accountId: number, id: number): Promise<DirectoryUser | null> {
    return (await this.repo.getUser(accountId, id)) ?? null;
  }

  /**
   * Locks a user for a read-modify-write, inside the caller's unit of work. The account row is
   * locked first, in the order the Platform API's user updates take them, so the two cannot
   * deadlock (and `UsersService.guardDeactivation` finds the lock already held).
   */
  async lockUser(accountId: number, id: number): Promise<DirectoryUser | null> {
    return this.db.transaction(async () => {
      await this.accounts.lock(accountId);
      return (await this.repo.getUser(accountId, id, true)) ?? null;
    });
  }

  /** Creates a console user with the default roles of new users. 409 when the username or email is taken. */
  async createUser(accountId: number, input: DirectoryUserInput): Promise<DirectoryUser> {
    try {
      return await this.repo.createUser(accountId, this.columns(input), DEFAULT_ROLES_FOR_NEW_USERS);
    } catch (err) {
      throw this.taken(err);
    }
  }

  /** Writes every identity-provider column of a user. Deactivation guards are the caller's. */
  async updateUser(accountId: number, id: number, input: DirectoryUserInput): Promise<DirectoryUser> {
    let row: DirectoryUser | undefined;
    try {
      row = await this.repo.updateUser(accountId, id, this.columns(input));
    } catch (err) {
      throw this.taken(err);
    }
    if (!row) throw notFound('User', id);
    return row;
  }

  /** The direct group memberships of the given users, ordered by user and group id. */
  groupsOfUsers(accountId: number, userIds: readonly number[]): Promise<DirectoryMembership[]> {
    return this.repo.memberships(accountId, 'user_id', userIds);
  }

  /**
   * A page of the account's groups matching `where` (a condition over `groups g`, see
   * `DIRECTORY_GROUP_ATTRIBUTES` in users.fragments.ts), ordered by id, and the number matching.
   */
  findGroups(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryGroup>> {
    return this.repo.findGroups(accountId, where, offset, limit);
  }

  /** A group of the account. */
  async getGroup(accountId: number, id: number): Promise<DirectoryGroup | null> {
    return (await this.repo.getGroup(accountId, id)) ?? null;
  }

  /** A group of the account, locked `FOR UPDATE` until the caller's unit of work ends. */
  async lockGroup(accountId: number, id: number): Promise<DirectoryGroup | null> {
    return this.db.transaction(async () => {
      await this.groups.lock(accountId, id, 'FOR UPDATE');
      return (await this.repo.getGroup(accountId, id)) ?? null;
    });
  }

  /** The members of the given groups, ordered by group and user id. */
  membersOfGroups(accountId: number, groupIds: readonly number[]): Promise<DirectoryMembership[]> {
    return this.repo.memberships(accountId, 'group_id', groupIds);
  }

  /**
   * Which of `ids` are users of the account. They stay share-locked until the caller's unit of
   * work ends, so they cannot be deleted before the memberships written from this.
   */
  existingUserIds(accountId: number, ids: readonly number[]): Promise<number[]> {
    return this.users.existingIds(accountId, ids);
  }

  private columns(input: DirectoryUserInput): DirectoryUserColumns {
    return {
      username: input.username,
      email: input.email?.toLowerCase() ?? null,
      firstName: input.firstName,
      lastName: input.lastName,
      displayName: input.displayName,
      title: input.title,
      externalId: input.externalId,
      isDeactivated: input.isDeactivated,
    };
  }

  private taken(err: unknown): unknown {
    const constraint = uniqueViolation(err);
    if (constraint === null) return err;
    if (constraint.includes('username'))
      return usersError('username_taken', 'That userName is already in use');
    return usersError('email_taken', 'A user with that email address already exists');
  }
}
