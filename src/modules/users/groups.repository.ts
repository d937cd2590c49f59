import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { PrincipalCache } from '../../core/auth/principal-cache.js';

/** A group as the Platform API shows it. */
export interface GroupRow {
  id: number;
  name: string;
  description: string | null;
  externalId: string | null;
  memberCount: number;
  createdAt: string;
  updatedAt: string;
}

/** A member as the Platform API lists them. */
export interface GroupMemberRow {
  id: number;
  email: string;
  username: string;
  firstName: string | null;
  isDeactivated: boolean;
}

/** A column of a group to change, or undefined to keep it. */
export interface GroupChanges {
  name: string | null;
  description: string | null | undefined;
  externalId: string | null | undefined;
}

const GROUP_COLUMNS = `g.id, g.name, g.description, g.external_id AS "externalId",
  (SELECT count(*)::int FROM group_members m WHERE m.group_id = g.id) AS "memberCount",
  ${isoSql('g.created_at')} AS "createdAt", ${isoSql('g.updated_at')} AS "updatedAt"`;

/** All SQL on `groups` and `group_members`. Runs on the caller's unit of work when one is open. */
@Injectable()
export class GroupsRepository {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  /** A page of the account's groups by id, after `afterId`; `search` is an ILIKE pattern. */
  page(accountId: number, search: string | null, afterId: number | null, limit: number): Promise<GroupRow[]> {
    return this.db.query<GroupRow>(
      `SELECT ${GROUP_COLUMNS} FROM groups g
       WHERE g.account_id = :accountId${search === null ? '' : ' AND g.name ILIKE :search'}
         AND ${afterId === null ? 'TRUE' : 'g.id > :afterId'}
       ORDER BY g.id LIMIT :limit`,
      {
        accountId,
        ...(search === null ? {} : { search }),
        ...(afterId === null ? {} : { afterId }),
        limit,
      },
    );
  }

  find(accountId: number, id: number): Promise<GroupRow | undefined> {
    return this.db.one<GroupRow>(
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.account_id = :accountId AND g.id = :id`,
      {
        accountId,
        id,
      },
    );
  }

  async exists(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM groups WHERE account_id = :accountId AND id = :id`, {
      accountId,
      id,
    });
    return rows.length > 0;
  }

  /**
   * Locks a group of the account until the unit of work ends; false when there is none.
   * `FOR KEY SHARE` keeps it from being deleted, `FOR NO KEY UPDATE` also serialises writers,
   * `FOR UPDATE` is the lock of a read-modify-write of the row.
   */
  async lock(
    accountId: number,
    id: number,
    mode: 'FOR KEY SHARE' | 'FOR NO KEY UPDATE' | 'FOR UPDATE',
  ): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT id FROM groups WHERE account_id = :accountId AND id = :id ${mode}`,
      {
        accountId,
        id,
      },
    );
    return rows.length > 0;
  }

  async insert(
    accountId: number,
    group: { name: string; description: string | null; externalId: string | null },
  ): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO groups (account_id, name, description, external_id)
       VALUES (:accountId, :name, :description, :externalId) RETURNING id`,
      { accountId, ...group },
    );
    return row!.id;
  }

  /** Changes the given columns and stamps `updated_at`; false when the group is not in the account. */
  async update(accountId: number, id: number, changes: GroupChanges): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE groups SET name = COALESCE(:name, name),
         description = CASE WHEN :setDescription::boolean THEN :description ELSE description END,
         external_id = CASE WHEN :setExternalId::boolean THEN :externalId ELSE external_id END,
         updated_at = now()
       WHERE account_id = :accountId AND id = :id RETURNING id`,
      {
        accountId,
        id,
        name: changes.name,
        setDescription: changes.description !== undefined,
        description: changes.description ?? null,
        setExternalId: changes.externalId !== undefined,
        externalId: changes.externalId ?? null,
      },
    );
    return rows.length > 0;
  }

  /** Deletes a group (its memberships and role assignments cascade); false when there is none. */
  async delete(accountId: number, id: number): Promise<boolean> {
    const rows = await this.principals.invalidatedBy(
      this.db.query(`DELETE FROM groups WHERE id = :id AND account_id = :accountId RETURNING id`, {
        accountId,
        id,
      }),
    );
    return rows.length > 0;
  }

  /** A page of a group's members by user id, after `afterId`. */
  members(accountId: number, id: number, afterId: number | null, limit: number): Promise<GroupMemberRow[]> {
    return this.db.query<GroupMemberRow>(
      `SELECT u.id, u.email, u.username, u.first_name AS "firstName", u.is_deactivated AS "isDeactivated"
       FROM group_members m JOIN users u ON u.id = m.user_id
       WHERE m.account_id = :accountId AND m.group_id = :id AND ${afterId === null ? 'TRUE' : 'u.id > :afterId'}
       ORDER BY u.id LIMIT :limit`,
      { accountId, id, ...(afterId === null ? {} : { afterId }), limit },
    );
  }

  /** The ids of a group's members, ascending. */
  async memberIds(accountId: number, id: number): Promise<number[]> {
    const rows = await this.db.query<{ userId: number }>(
      `SELECT user_id AS "userId" FROM group_members WHERE account_id = :accountId AND group_id = :id ORDER BY user_id`,
      { accountId, id },
    );
    return rows.map((r) => r.userId);
  }

  /** Adds memberships; existing ones stay. */
  async addMembers(accountId: number, id: number, userIds: readonly number[]): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `INSERT INTO group_members (group_id, user_id, account_id)
       SELECT :id, u, :accountId FROM unnest(:userIds::int[]) AS u
       ON CONFLICT DO NOTHING`,
        { accountId, id, userIds },
      ),
    );
  }

  /** Removes the memberships of the given users, or every membership (`'all'`). */
  async removeMembers(accountId: number, id: number, userIds: readonly number[] | 'all'): Promise<void> {
    if (userIds === 'all') {
      await this.principals.invalidatedBy(
        this.db.query(`DELETE FROM group_members WHERE account_id = :accountId AND group_id = :id`, {
          accountId,
          id,
        }),
      );
      return;
    }
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM group_members WHERE account_id = :accountId AND group_id = :id AND user_id = ANY(:userIds::int[])`,
        { accountId, id, userIds },
      ),
    );
  }

  /** Removes every membership except those of `keep`. */
  async removeMembersExcept(accountId: number, id: number, keep: readonly number[]): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM group_members WHERE account_id = :accountId AND group_id = :id AND NOT (user_id = ANY(:keep::int[]))`,
        { accountId, id, keep },
      ),
    );
  }

  /**
   * The ids of the named groups of the account. The rows stay share-locked until the unit of
   * work ends, so a group cannot be deleted before the rows written from this.
   */
  byNames(accountId: number, names: readonly string[]): Promise<Array<{ id: number; name: string }>> {
    return this.db.query(
      `SELECT id, name FROM groups WHERE account_id = :accountId AND name = ANY(:names::varchar[]) FOR KEY SHARE`,
      { accountId, names },
    );
  }
}
