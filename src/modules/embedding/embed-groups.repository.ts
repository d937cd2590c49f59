import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import type { CursorValue } from '../../core/http/pagination.js';
import type { EmbedGroupDto } from './dto/embed-group.dto.js';
import type { EmbedUserDto } from './dto/embed-user.dto.js';
import { EMBED_USER_COLUMNS } from './embed-users.repository.js';
import { keysetPredicate } from '../../core/http/pagination.js';

const GROUP_COLUMNS = `g.id, g.name, g.description,
  (SELECT count(*) FROM embed_group_members gm WHERE gm.group_id = g.id)::int AS "userCount"`;

/** A row lock taken on a group for the rest of the unit of work. */
export type GroupLock = '' | 'FOR UPDATE' | 'FOR KEY SHARE';

/** SQL over `embed_groups` (the groups of embed tenants) and their members. */
@Injectable()
export class EmbedGroupsRepository {
  constructor(private readonly db: Database) {}

  /** Newest first, after the cursor `after` (id). */
  list(tenantId: number, after: CursorValue[] | null, limit: number): Promise<EmbedGroupDto[]> {
    const keyset = keysetPredicate(['g.id'], 'DESC', after);
    return this.db.query<EmbedGroupDto>(
      `SELECT ${GROUP_COLUMNS} FROM embed_groups g WHERE g.tenant_id = :tenantId AND ${keyset.sql}
       ORDER BY g.id DESC LIMIT :limit`,
      { tenantId, ...keyset.params, limit },
    );
  }

  get(id: number): Promise<EmbedGroupDto | undefined> {
    return this.db.one<EmbedGroupDto>(`SELECT ${GROUP_COLUMNS} FROM embed_groups g WHERE g.id = :id`, { id });
  }

  /** The id of the tenant's group `id`, row-locked with `lock`; undefined when it has none. */
  async findId(tenantId: number, id: number, lock: GroupLock = ''): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(
      `SELECT id FROM embed_groups WHERE id = :id AND tenant_id = :tenantId ${lock}`,
      { id, tenantId },
    );
    return row?.id;
  }

  /** The tenant's groups among `names` (share-locked against deletion). */
  idsByName(tenantId: number, names: readonly string[]): Promise<Array<{ id: number; name: string }>> {
    return this.db.query<{ id: number; name: string }>(
      `SELECT id, name FROM embed_groups WHERE tenant_id = :tenantId AND name = ANY(:names::varchar[])
       FOR KEY SHARE`,
      { tenantId, names },
    );
  }

  async insert(
    accountId: number,
    tenantId: number,
    name: string,
    description: string | null,
  ): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO embed_groups (account_id, tenant_id, name, description)
       VALUES (:accountId, :tenantId, :name, :description) RETURNING id`,
      { accountId, tenantId, name, description },
    );
    return row!.id;
  }

  /** Creates the group, or updates its description when one is given. */
  async define(accountId: number, tenantId: number, name: string, description: string | null): Promise<void> {
    await this.db.query(
      `INSERT INTO embed_groups (account_id, tenant_id, name, description)
       VALUES (:accountId, :tenantId, :name, :description)
       ON CONFLICT (tenant_id, name) DO UPDATE SET description = COALESCE(EXCLUDED.description, embed_groups.description)`,
      { accountId, tenantId, name, description },
    );
  }

  async setDescription(id: number, description: string | null): Promise<void> {
    await this.db.query(`UPDATE embed_groups SET description = :description WHERE id = :id`, {
      id,
      description,
    });
  }

  async hasMembers(id: number): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM embed_group_members WHERE group_id = :id LIMIT 1`, {
      id,
    });
    return rows.length > 0;
  }

  async delete(id: number): Promise<void> {
    await this.db.query(`DELETE FROM embed_groups WHERE id = :id`, { id });
  }

  /** Most recently added first, after the cursor `after` (addedAt, id); each with when it was added. */
  members(
    groupId: number,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<Array<EmbedUserDto & { addedAt: string }>> {
    const keyset = keysetPredicate(['gm.created_at', 'gm.embed_user_id'], 'DESC', after);
    return this.db.query<EmbedUserDto & { addedAt: string }>(
      `SELECT ${EMBED_USER_COLUMNS}, ${isoSql('gm.created_at')} AS "addedAt"
       FROM embed_group_members gm JOIN embed_users u ON u.id = gm.embed_user_id
       WHERE gm.group_id = :groupId AND ${keyset.sql}
       ORDER BY gm.created_at DESC, gm.embed_user_id DESC LIMIT :limit`,
      { groupId, ...keyset.params, limit },
    );
  }

  /** Adds the users that are not members yet; returns the ids it added. */
  async addMembers(groupId: number, userIds: readonly number[]): Promise<Set<number>> {
    const rows = await this.db.query<{ id: number }>(
      `INSERT INTO embed_group_members (group_id, embed_user_id) SELECT :groupId, unnest(:userIds::int[])
       ON CONFLICT DO NOTHING RETURNING embed_user_id AS id`,
      { groupId, userIds },
    );
    return new Set(rows.map((r) => r.id));
  }

  async removeMembers(groupId: number, userIds: readonly number[]): Promise<void> {
    await this.db.query(
      `DELETE FROM embed_group_members WHERE group_id = :groupId AND embed_user_id = ANY(:userIds::int[])`,
      { groupId, userIds },
    );
  }
}
