import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import type { CursorValue } from '../../core/http/pagination.js';
import { groupNamesSql } from '../users/users.fragments.js';
import type { EmbedUserDto } from './dto/embed-user.dto.js';
import { keysetPredicate } from '../../core/http/pagination.js';

/** Every field of the EmbedUser shape, from `embed_users u`. */
export const EMBED_USER_COLUMNS = `u.id, u.external_id AS username, ${isoSql('u.created_at')} AS "createdAt",
  u.email, u.external_id AS "externalId", u.display_name AS "firstName", ${isoSql('u.last_login_at')} AS "lastLogin"`;

/** Namespace of the advisory lock that serialises the creation of embed users in one account. */
const EMBED_USER_CAP_LOCK = 0x656d62;

/** An embed user as provisioning writes it; `undefined` profile fields keep the stored value. */
export interface EmbedUserWrite {
  accountId: number;
  tenantId: number;
  externalId: string;
  /** The address to store; null keeps the stored one (or, for a new user, takes `syntheticEmail`). */
  email: string | null;
  syntheticEmail: string;
  displayName?: string;
  picture?: string;
}

/** The two membership tables of an embed user: account-wide groups and tenant groups. */
export type MembershipTable = 'embed_user_groups' | 'embed_group_members';

/** SQL over `embed_users` and their memberships (`embed_user_groups`, `embed_group_members`). */
@Injectable()
export class EmbedUsersRepository {
  constructor(private readonly db: Database) {}

  /** By email (byte order) then id, after the cursor `after`; `pattern` is an ILIKE pattern. */
  list(
    tenantId: number,
    pattern: string | null,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<EmbedUserDto[]> {
    const keyset = keysetPredicate(['u.email COLLATE "C"', 'u.id'], 'ASC', after);
    const search = pattern === null ? '' : 'AND (u.email ILIKE :pattern OR u.external_id ILIKE :pattern)';
    return this.db.query<EmbedUserDto>(
      `SELECT ${EMBED_USER_COLUMNS} FROM embed_users u
       WHERE u.tenant_id = :tenantId ${search} AND ${keyset.sql}
       ORDER BY u.email COLLATE "C", u.id LIMIT :limit`,
      { tenantId, ...(pattern === null ? {} : { pattern }), ...keyset.params, limit },
    );
  }

  get(id: number): Promise<EmbedUserDto | undefined> {
    return this.db.one<EmbedUserDto>(`SELECT ${EMBED_USER_COLUMNS} FROM embed_users u WHERE u.id = :id`, {
      id,
    });
  }

  getMany(ids: readonly number[]): Promise<EmbedUserDto[]> {
    return this.db.query<EmbedUserDto>(
      `SELECT ${EMBED_USER_COLUMNS} FROM embed_users u WHERE u.id = ANY(:ids::int[])`,
      { ids },
    );
  }

  async exists(tenantId: number, externalId: string): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM embed_users WHERE tenant_id = :tenantId AND external_id = :externalId`,
      { tenantId, externalId },
    );
    return rows.length > 0;
  }

  /** Ids of the tenant's users by external id, for those that exist. */
  async idsByExternalId(tenantId: number, externalIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.db.query<{ id: number; externalId: string }>(
      `SELECT id, external_id AS "externalId" FROM embed_users
       WHERE tenant_id = :tenantId AND external_id = ANY(:externalIds::varchar[])`,
      { tenantId, externalIds },
    );
    return new Map(rows.map((r) => [r.externalId, r.id]));
  }

  /** Which of `ids` are users of the tenant. */
  async existingIds(tenantId: number, ids: readonly number[]): Promise<Set<number>> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT id FROM embed_users WHERE tenant_id = :tenantId AND id = ANY(:ids::int[])`,
      { tenantId, ids },
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Queues the creations of embed users in the account until the unit of work ends. */
  async lockCreations(accountId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(:namespace, :accountId)`, {
      namespace: EMBED_USER_CAP_LOCK,
      accountId,
    });
  }

  async countInAccount(accountId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM embed_users WHERE account_id = :accountId`,
      { accountId },
    );
    return row!.n;
  }

  /** Creates or updates the user (unique on tenant and external id) and returns its id. */
  async upsert(u: EmbedUserWrite): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO embed_users AS u (account_id, tenant_id, external_id, email, display_name, picture)
       VALUES (:accountId, :tenantId, :externalId, COALESCE(:email, :syntheticEmail), :displayName, :picture)
       ON CONFLICT (tenant_id, external_id) DO UPDATE SET
         email = COALESCE(:email, u.email),
         display_name = CASE WHEN :setDisplayName THEN EXCLUDED.display_name ELSE u.display_name END,
         picture = CASE WHEN :setPicture THEN EXCLUDED.picture ELSE u.picture END,
         updated_at = now()
       RETURNING u.id`,
      {
        accountId: u.accountId,
        tenantId: u.tenantId,
        externalId: u.externalId,
        email: u.email,
        syntheticEmail: u.syntheticEmail,
        displayName: u.displayName ?? null,
        picture: u.picture ?? null,
        setDisplayName: u.displayName !== undefined,
        setPicture: u.picture !== undefined,
      },
    );
    return row!.id;
  }

  /** Makes `userId` a member of exactly `groupIds` in a membership table, without a read-modify-write. */
  async replaceMemberships(
    table: MembershipTable,
    userId: number,
    groupIds: readonly number[],
  ): Promise<void> {
    await this.db.query(
      `DELETE FROM ${table} WHERE embed_user_id = :userId AND NOT (group_id = ANY(:groupIds::int[]))`,
      { userId, groupIds },
    );
    if (groupIds.length > 0) {
      await this.db.query(
        `INSERT INTO ${table} (embed_user_id, group_id) SELECT :userId, unnest(:groupIds::int[])
         ON CONFLICT DO NOTHING`,
        { userId, groupIds },
      );
    }
  }

  /**
   * Stamps the user's login and returns the names of its groups: account-wide ones and the
   * tenant's, each sorted.
   */
  async recordLogin(userId: number): Promise<{ groups: string[]; tenantGroups: string[] }> {
    const row = await this.db.one<{ groups: string[]; tenantGroups: string[] }>(
      `UPDATE embed_users u SET last_login_at = now() WHERE u.id = :userId
       RETURNING
         ${groupNamesSql('ARRAY(SELECT ug.group_id FROM embed_user_groups ug WHERE ug.embed_user_id = u.id)')}
           AS groups,
         ARRAY(SELECT g.name FROM embed_group_members gm JOIN embed_groups g ON g.id = gm.group_id
               WHERE gm.embed_user_id = u.id ORDER BY g.name) AS "tenantGroups"`,
      { userId },
    );
    return row!;
  }
}
