import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { PrincipalCache } from '../../core/auth/principal-cache.js';

/** A console user as the Platform API shows it. */
export interface UserRow {
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

/** The columns of a user the Platform API creates. */
export interface NewUser {
  email: string;
  username: string;
  firstName: string | null;
  externalId: string | null;
  picture: string | null;
  title: string | null;
  defaultRoles: string[];
  settings: Record<string, unknown>;
}

/** The columns of a user the Platform API changes. */
export interface UserChanges {
  firstName: string | null;
  picture: string | null;
  title: string | null;
  defaultRoles: string[];
  isDeactivated: boolean;
  settings: Record<string, unknown>;
}

const USER_COLUMNS = `u.id, u.email, u.username, u.first_name AS "firstName", u.picture, u.title,
  u.external_id AS "externalId", u.is_deactivated AS "isDeactivated", u.default_roles AS "defaultRoles",
  u.settings, u.notifications, u.last_login AS "lastLogin", u.created_at AS "createdAt", u.updated_at AS "updatedAt"`;

/** Keeps the users matching a search (name, username or email), or all when there is none. */
function searchFilter(search: string | null): { sql: string; params: Record<string, unknown> } {
  if (search === null) return { sql: 'TRUE', params: {} };
  return {
    sql: '(u.first_name ILIKE :search OR u.username ILIKE :search OR u.email ILIKE :search)',
    params: { search },
  };
}

/** All SQL on `users` and `accounts`. Runs on the caller's unit of work when one is open. */
@Injectable()
export class UsersRepository {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  /**
   * A page of the account's users ordered by id: after the id `afterId` (cursor paging) or
   * skipping `offset` rows, at most `limit`. `search` is an ILIKE pattern.
   */
  page(
    accountId: number,
    search: string | null,
    afterId: number | null,
    limit: number,
    offset: number,
  ): Promise<UserRow[]> {
    const filter = searchFilter(search);
    const after = afterId === null ? 'TRUE' : 'u.id > :afterId';
    return this.db.query<UserRow>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = :accountId AND ${filter.sql} AND ${after}
       ORDER BY u.id LIMIT :limit OFFSET :offset`,
      { accountId, ...filter.params, ...(afterId === null ? {} : { afterId }), limit, offset },
    );
  }

  /** The number of the account's users matching `search` (an ILIKE pattern). */
  async count(accountId: number, search: string | null): Promise<number> {
    const filter = searchFilter(search);
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM users u WHERE u.account_id = :accountId AND ${filter.sql}`,
      { accountId, ...filter.params },
    );
    return row!.n;
  }

  /** A user of the account, locked `FOR UPDATE` until the unit of work ends when `lock`. */
  find(accountId: number, id: number, lock = false): Promise<UserRow | undefined> {
    return this.db.one<UserRow>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.account_id = :accountId AND u.id = :id${lock ? ' FOR UPDATE' : ''}`,
      { accountId, id },
    );
  }

  async exists(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM users WHERE account_id = :accountId AND id = :id`, {
      accountId,
      id,
    });
    return rows.length > 0;
  }

  /**
   * Which of `ids` are users of the account, ordered by id. They stay share-locked until the unit
   * of work ends, so they cannot be deleted before the rows written from this.
   */
  async existingIds(accountId: number, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.principals.invalidatedBy(
      this.db.query<{ id: number }>(
        `SELECT id FROM users WHERE account_id = :accountId AND id = ANY(:ids::int[]) ORDER BY id FOR KEY SHARE`,
        { accountId, ids: [...new Set(ids)] },
      ),
    );
    return rows.map((r) => r.id);
  }

  insert(accountId: number, user: NewUser): Promise<UserRow> {
    return this.returning(
      `INSERT INTO users AS u (account_id, email, username, first_name, external_id, picture, title, default_roles, settings)
       VALUES (:accountId, :email, :username, :firstName, :externalId, :picture, :title, :defaultRoles, :settings)
       RETURNING ${USER_COLUMNS}`,
      { accountId, ...user, settings: JSON.stringify(user.settings) },
    );
  }

  /** Writes roles and status too, which tokens resolve to: this process's cache empties at commit. */
  update(accountId: number, id: number, changes: UserChanges): Promise<UserRow> {
    return this.principals.invalidatedBy(
      this.returning(
        `UPDATE users u SET first_name = :firstName, picture = :picture, title = :title,
         default_roles = :defaultRoles, is_deactivated = :isDeactivated, settings = :settings, updated_at = now()
       WHERE u.account_id = :accountId AND u.id = :id RETURNING ${USER_COLUMNS}`,
        { accountId, id, ...changes, settings: JSON.stringify(changes.settings) },
      ),
    );
  }

  updateSettings(accountId: number, id: number, settings: Record<string, unknown>): Promise<UserRow> {
    return this.returning(
      `UPDATE users u SET settings = :settings, updated_at = now() WHERE u.account_id = :accountId AND u.id = :id
       RETURNING ${USER_COLUMNS}`,
      { accountId, id, settings: JSON.stringify(settings) },
    );
  }

  async setDeactivated(accountId: number, id: number, deactivated: boolean): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `UPDATE users SET is_deactivated = :deactivated, updated_at = now() WHERE account_id = :accountId AND id = :id`,
        { accountId, id, deactivated },
      ),
    );
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(`DELETE FROM users WHERE account_id = :accountId AND id = :id`, { accountId, id }),
    );
  }

  /** The number of active admins of the account other than `exceptUserId`. */
  async countOtherActiveAdmins(accountId: number, exceptUserId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM users
       WHERE account_id = :accountId AND id <> :exceptUserId AND is_deactivated = false AND 'Admin' = ANY(default_roles)`,
      { accountId, exceptUserId },
    );
    return row!.n;
  }

  /** The user of `email` made an active admin, created when missing (safe to run concurrently). */
  async upsertAdmin(accountId: number, email: string): Promise<number> {
    const row = await this.principals.invalidatedBy(
      this.db.one<{ id: number }>(
        `INSERT INTO users (account_id, email, username, default_roles) VALUES (:accountId, :email, :email, '{Admin}')
       ON CONFLICT (account_id, email) DO UPDATE
         SET default_roles = CASE WHEN 'Admin' = ANY(users.default_roles) THEN users.default_roles
                                  ELSE array_prepend('Admin', users.default_roles) END,
             is_deactivated = false, updated_at = now()
       RETURNING id`,
        { accountId, email },
      ),
    );
    return row!.id;
  }

  /** The id of the account's user of `email`, or undefined. */
  async userIdByEmail(accountId: number, email: string): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(
      `SELECT id FROM users WHERE account_id = :accountId AND email = :email`,
      { accountId, email },
    );
    return row?.id;
  }

  private async returning(sql: string, params: Record<string, unknown>): Promise<UserRow> {
    const row = await this.db.one<UserRow>(sql, params);
    return row!;
  }
}
