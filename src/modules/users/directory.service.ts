import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import { noEmailSql } from './no-email.js';
import { DEFAULT_ROLES_FOR_NEW_USERS } from './users.service.js';
import { usersError } from './users.errors.js';

/** A console user as identity providers see it (the SCIM-mapped columns). */
export interface DirectoryUser {
  id: number;
  username: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  displayName: string | null;
  title: string | null;
  externalId: string | null;
  isDeactivated: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The columns an identity provider writes; the email lowercased by the caller or here. */
export interface DirectoryUserInput {
  username: string;
  /** Null: the user has no address; they get the placeholder of `no-email.ts`. */
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  displayName: string | null;
  title: string | null;
  externalId: string | null;
  isDeactivated: boolean;
}

export interface DirectoryGroup {
  id: number;
  name: string;
  externalId: string | null;
  createdAt: string;
  updatedAt: string;
  /**
   * md5 of the member ids in order: changes whenever the membership does. (Not with a member's
   * display name: that would read every member's user row, 4 times slower on a 50 000-member group.)
   */
  membersDigest: string;
}

export interface DirectoryMembership {
  groupId: number;
  userId: number;
  groupName: string;
  /** The member's display name, else their username. */
  userDisplay: string;
}

/**
 * A SQL condition over `users u` or `groups g`, whose parameters are numbered from `$2` (`$1`
 * is the account id).
 */
export interface DirectoryCondition {
  sql: string;
  params: unknown[];
}

export interface DirectoryPage<T> {
  total: number;
  rows: T[];
}

const USER_COLUMNS = `u.id, u.username, u.email, u.first_name AS "firstName", u.last_name AS "lastName",
  u.display_name AS "displayName", u.title, u.external_id AS "externalId", u.is_deactivated AS "isDeactivated",
  ${isoSql('u.created_at')} AS "createdAt", ${isoSql('u.updated_at')} AS "updatedAt"`;

const GROUP_COLUMNS = `g.id, g.name, g.external_id AS "externalId",
  ${isoSql('g.created_at')} AS "createdAt", ${isoSql('g.updated_at')} AS "updatedAt",
  (SELECT md5(COALESCE(string_agg(m.user_id::text, ',' ORDER BY m.user_id), '')) FROM group_members m
    WHERE m.group_id = g.id) AS "membersDigest"`;

/**
 * Reads and writes of console users and groups on behalf of identity providers (SCIM). Group
 * writes and user deletion stay with `GroupsService` and `UsersService`.
 */
@Injectable()
export class DirectoryService {
  constructor(private readonly dataSource: DataSource) {}

  /** A page of the account's users matching `where`, ordered by id, and the number matching. */
  findUsers(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryUser>> {
    return this.page<DirectoryUser>('users u', USER_COLUMNS, 'u', accountId, where, offset, limit);
  }

  async getUser(
    accountId: number,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DirectoryUser | null> {
    const [row] = await queryRows<DirectoryUser>(
      manager,
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = $1 AND u.id = $2`,
      [accountId, id],
    );
    return row ?? null;
  }

  /**
   * Locks a user for a read-modify-write, inside the caller's transaction. The account row is
   * locked first, in the order the Platform API's user updates take them, so the two cannot
   * deadlock (and `UsersService.guardDeactivation` finds the lock already held).
   */
  async lockUser(manager: EntityManager, accountId: number, id: number): Promise<DirectoryUser | null> {
    await manager.query(`SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
    const [row] = await queryRows<DirectoryUser>(
      manager,
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = $1 AND u.id = $2 FOR UPDATE`,
      [accountId, id],
    );
    return row ?? null;
  }

  /** Creates a console user with the default roles of new users. 409 when the username or email is taken. */
  async createUser(
    accountId: number,
    input: DirectoryUserInput,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DirectoryUser> {
    try {
      // The id is drawn first so that a user without an address gets the placeholder made from it.
      const [row] = await queryRows<DirectoryUser>(
        manager,
        `WITH next AS (SELECT nextval(pg_get_serial_sequence('users', 'id'))::int AS id)
         INSERT INTO users AS u (id, account_id, username, email, first_name, last_name, display_name, title,
           external_id, is_deactivated, default_roles)
         VALUES ((SELECT id FROM next), $1, $2, COALESCE($3, ${noEmailSql('(SELECT id FROM next)')}), $4, $5, $6,
           $7, $8, $9, $10) RETURNING ${USER_COLUMNS}`,
        [accountId, ...this.values(input), DEFAULT_ROLES_FOR_NEW_USERS],
      );
      return row;
    } catch (err) {
      throw this.taken(err);
    }
  }

  /** Writes every identity-provider column of a user. Deactivation guards are the caller's. */
  async updateUser(
    manager: EntityManager,
    accountId: number,
    id: number,
    input: DirectoryUserInput,
  ): Promise<DirectoryUser> {
    try {
      const [row] = await queryRows<DirectoryUser>(
        manager,
        `UPDATE users u SET username = $3, email = COALESCE($4, ${noEmailSql('u.id')}), first_name = $5, last_name = $6, display_name = $7,
           title = $8, external_id = $9, is_deactivated = $10, updated_at = now()
         WHERE u.account_id = $1 AND u.id = $2 RETURNING ${USER_COLUMNS}`,
        [accountId, id, ...this.values(input)],
      );
      if (!row) throw usersError('user_not_found', `User ${id} was not found`);
      return row;
    } catch (err) {
      throw this.taken(err);
    }
  }

  /** The direct group memberships of the given users, ordered by user and group id. */
  groupsOfUsers(
    accountId: number,
    userIds: readonly number[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DirectoryMembership[]> {
    return this.memberships(manager, accountId, 'user_id', userIds);
  }

  /** A page of the account's groups matching `where`, ordered by id, and the number matching. */
  findGroups(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryGroup>> {
    return this.page<DirectoryGroup>('groups g', GROUP_COLUMNS, 'g', accountId, where, offset, limit);
  }

  /** A group of the account, locked `FOR UPDATE` until the caller's transaction ends when `lock`. */
  async getGroup(
    accountId: number,
    id: number,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<DirectoryGroup | null> {
    if (lock) {
      await manager.query(`SELECT id FROM groups WHERE account_id = $1 AND id = $2 FOR UPDATE`, [
        accountId,
        id,
      ]);
    }
    const [row] = await queryRows<DirectoryGroup>(
      manager,
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.account_id = $1 AND g.id = $2`,
      [accountId, id],
    );
    return row ?? null;
  }

  /** The members of the given groups, ordered by group and user id. */
  membersOfGroups(
    accountId: number,
    groupIds: readonly number[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DirectoryMembership[]> {
    return this.memberships(manager, accountId, 'group_id', groupIds);
  }

  /** Memberships of the given users or groups, ordered by that column first. */
  private memberships(
    manager: EntityManager,
    accountId: number,
    by: 'user_id' | 'group_id',
    ids: readonly number[],
  ): Promise<DirectoryMembership[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const order = by === 'user_id' ? 'm.user_id, m.group_id' : 'm.group_id, m.user_id';
    return queryRows<DirectoryMembership>(
      manager,
      `SELECT m.group_id AS "groupId", m.user_id AS "userId", g.name AS "groupName",
         COALESCE(u.display_name, u.username) AS "userDisplay"
       FROM group_members m JOIN groups g ON g.id = m.group_id JOIN users u ON u.id = m.user_id
       WHERE m.account_id = $1 AND m.${by} = ANY($2::int[]) ORDER BY ${order}`,
      [accountId, [...ids]],
    );
  }

  /**
   * Which of `ids` are users of the account. They stay share-locked until the caller's
   * transaction ends, so they cannot be deleted before the memberships written from this.
   */
  async existingUserIds(
    manager: EntityManager,
    accountId: number,
    ids: readonly number[],
  ): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await queryRows<{ id: number }>(
      manager,
      `SELECT id FROM users WHERE account_id = $1 AND id = ANY($2::int[]) ORDER BY id FOR KEY SHARE`,
      [accountId, [...new Set(ids)]],
    );
    return rows.map((r) => r.id);
  }

  private async page<T>(
    from: string,
    columns: string,
    alias: string,
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<T>> {
    const condition = `${alias}.account_id = $1${where ? ` AND ${where.sql}` : ''}`;
    const params = [accountId, ...(where?.params ?? [])];
    const [count, rows] = await Promise.all([
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM ${from} WHERE ${condition}`,
        params,
      ),
      limit === 0
        ? Promise.resolve([] as T[])
        : queryRows<T>(
            this.dataSource,
            `SELECT ${columns} FROM ${from} WHERE ${condition} ORDER BY ${alias}.id
             LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`,
            params,
          ),
    ]);
    return { total: count[0].n, rows };
  }

  private values(input: DirectoryUserInput): unknown[] {
    return [
      input.username,
      input.email?.toLowerCase() ?? null,
      input.firstName,
      input.lastName,
      input.displayName,
      input.title,
      input.externalId,
      input.isDeactivated,
    ];
  }

  private taken(err: unknown): unknown {
    const constraint = uniqueViolation(err);
    if (constraint === null) return err;
    if (constraint.includes('username'))
      return usersError('username_taken', 'That userName is already in use');
    return usersError('email_taken', 'A user with that email address already exists');
  }
}
