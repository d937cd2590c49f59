import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { isoSql } from '../../core/database/sql.js';
import { noEmailSql } from './no-email.js';
import { PrincipalCache } from '../../core/auth/principal-cache.js';

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

/** The columns an identity provider writes; the email already lowercased. */
export interface DirectoryUserColumns {
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
 * A SQL condition over `users u` or `groups g` (see `users.fragments.ts` for what it may name),
 * with `:name` parameters; `accountId` is taken.
 */
export interface DirectoryCondition {
  sql: string;
  params: SqlParams;
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
 * The SQL of the directory view of users and groups (what identity providers read and write).
 * Runs on the caller's unit of work when one is open.
 */
@Injectable()
export class DirectoryRepository {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  findUsers(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryUser>> {
    return this.page<DirectoryUser>('users u', USER_COLUMNS, 'u', accountId, where, offset, limit);
  }

  findGroups(
    accountId: number,
    where: DirectoryCondition | null,
    offset: number,
    limit: number,
  ): Promise<DirectoryPage<DirectoryGroup>> {
    return this.page<DirectoryGroup>('groups g', GROUP_COLUMNS, 'g', accountId, where, offset, limit);
  }

  /** A user of the account, locked `FOR UPDATE` until the unit of work ends when `lock`. */
  getUser(accountId: number, id: number, lock = false): Promise<DirectoryUser | undefined> {
    return this.db.one<DirectoryUser>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = :accountId AND u.id = :id${lock ? ' FOR UPDATE' : ''}`,
      { accountId, id },
    );
  }

  /** Creates a user; the id is drawn first so that a user without an address gets its placeholder. */
  async createUser(
    accountId: number,
    user: DirectoryUserColumns,
    defaultRoles: string[],
  ): Promise<DirectoryUser> {
    const row = await this.db.one<DirectoryUser>(
      `WITH next AS (SELECT nextval(pg_get_serial_sequence('users', 'id'))::int AS id)
       INSERT INTO users AS u (id, account_id, username, email, first_name, last_name, display_name, title,
         external_id, is_deactivated, default_roles)
       VALUES ((SELECT id FROM next), :accountId, :username, COALESCE(:email, ${noEmailSql('(SELECT id FROM next)')}),
         :firstName, :lastName, :displayName, :title, :externalId, :isDeactivated, :defaultRoles)
       RETURNING ${USER_COLUMNS}`,
      { accountId, ...user, defaultRoles },
    );
    return row!;
  }

  /** Writes every identity-provider column of a user; undefined when it is not in the account. */
  updateUser(accountId: number, id: number, user: DirectoryUserColumns): Promise<DirectoryUser | undefined> {
    return this.principals.invalidatedBy(
      this.db.one<DirectoryUser>(
        `UPDATE users u SET username = :username, email = COALESCE(:email, ${noEmailSql('u.id')}),
         first_name = :firstName, last_name = :lastName, display_name = :displayName, title = :title,
         external_id = :externalId, is_deactivated = :isDeactivated, updated_at = now()
       WHERE u.account_id = :accountId AND u.id = :id RETURNING ${USER_COLUMNS}`,
        { accountId, id, ...user },
      ),
    );
  }

  getGroup(accountId: number, id: number): Promise<DirectoryGroup | undefined> {
    return this.db.one<DirectoryGroup>(
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.account_id = :accountId AND g.id = :id`,
      { accountId, id },
    );
  }

  /** Memberships of the given users or groups, ordered by that column first. */
  memberships(
    accountId: number,
    by: 'user_id' | 'group_id',
    ids: readonly number[],
  ): Promise<DirectoryMembership[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const order = by === 'user_id' ? 'm.user_id, m.group_id' : 'm.group_id, m.user_id';
    return this.db.query<DirectoryMembership>(
      `SELECT m.group_id AS "groupId", m.user_id AS "userId", g.name AS "groupName",
         COALESCE(u.display_name, u.username) AS "userDisplay"
       FROM group_members m JOIN groups g ON g.id = m.group_id JOIN users u ON u.id = m.user_id
       WHERE m.account_id = :accountId AND m.${by} = ANY(:ids::int[]) ORDER BY ${order}`,
      { accountId, ids: [...ids] },
    );
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
    if (where && Object.hasOwn(where.params, 'accountId')) {
      throw new Error('A directory condition may not name the parameter :accountId');
    }
    const condition = `${alias}.account_id = :accountId${where ? ` AND ${where.sql}` : ''}`;
    const params = { ...where?.params, accountId };
    const [count, rows] = await Promise.all([
      this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${from} WHERE ${condition}`, params),
      limit === 0
        ? Promise.resolve([] as T[])
        : this.db.query<T>(
            `SELECT ${columns} FROM ${from} WHERE ${condition} ORDER BY ${alias}.id
             LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`,
            params,
          ),
    ]);
    return { total: count!.n, rows };
  }
}
