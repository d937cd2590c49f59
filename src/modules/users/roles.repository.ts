import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { PrincipalCache } from '../../core/auth/principal-cache.js';

export interface RoleRow {
  id: number;
  name: string;
}

/**
 * All SQL on `roles` and on their assignments (`user_roles`, `group_roles`). Runs on the caller's
 * unit of work when one is open.
 */
@Injectable()
export class RolesRepository {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  /** A page of the account's roles by id, after `afterId`. */
  page(accountId: number, afterId: number | null, limit: number): Promise<RoleRow[]> {
    return this.db.query<RoleRow>(
      `SELECT id, name FROM roles WHERE account_id = :accountId AND ${afterId === null ? 'TRUE' : 'id > :afterId'}
       ORDER BY id LIMIT :limit`,
      { accountId, ...(afterId === null ? {} : { afterId }), limit },
    );
  }

  /** A role of the account, locked `FOR UPDATE` until the unit of work ends when `lock`. */
  find(accountId: number, id: number, lock = false): Promise<RoleRow | undefined> {
    return this.db.one<RoleRow>(
      `SELECT id, name FROM roles WHERE account_id = :accountId AND id = :id${lock ? ' FOR UPDATE' : ''}`,
      { accountId, id },
    );
  }

  async insert(accountId: number, name: string): Promise<number> {
    const row = await this.db.one<RoleRow>(
      `INSERT INTO roles (account_id, name) VALUES (:accountId, :name) RETURNING id, name`,
      { accountId, name },
    );
    return row!.id;
  }

  async rename(accountId: number, id: number, name: string): Promise<void> {
    await this.db.query(
      `UPDATE roles SET name = :name, updated_at = now() WHERE account_id = :accountId AND id = :id`,
      { accountId, id, name },
    );
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(`DELETE FROM roles WHERE account_id = :accountId AND id = :id`, { accountId, id }),
    );
  }

  async assignToUser(accountId: number, roleId: number, userId: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `INSERT INTO user_roles (user_id, role_id, account_id) VALUES (:userId, :roleId, :accountId) ON CONFLICT DO NOTHING`,
        { accountId, roleId, userId },
      ),
    );
  }

  async unassignFromUser(accountId: number, roleId: number, userId: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM user_roles WHERE user_id = :userId AND role_id = :roleId AND account_id = :accountId`,
        { accountId, roleId, userId },
      ),
    );
  }

  async assignToGroup(accountId: number, roleId: number, groupId: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `INSERT INTO group_roles (group_id, role_id, account_id) VALUES (:groupId, :roleId, :accountId) ON CONFLICT DO NOTHING`,
        { accountId, roleId, groupId },
      ),
    );
  }

  async unassignFromGroup(accountId: number, roleId: number, groupId: number): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM group_roles WHERE group_id = :groupId AND role_id = :roleId AND account_id = :accountId`,
        { accountId, roleId, groupId },
      ),
    );
  }
}
