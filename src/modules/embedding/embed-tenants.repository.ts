import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import type { CursorValue } from '../../core/http/pagination.js';
import type { EmbedTenantDto } from './dto/embed-tenant.dto.js';
import { keysetPredicate } from '../../core/http/pagination.js';

/** A located tenant. */
export interface TenantRef {
  id: number;
  name: string;
}

/** SQL over `embed_tenants`. */
@Injectable()
export class EmbedTenantsRepository {
  constructor(private readonly db: Database) {}

  /** By name (byte order), after the cursor `after` (name); `pattern` is a LIKE pattern on the name. */
  list(
    accountId: number,
    pattern: string | null,
    after: CursorValue[] | null,
    limit: number,
  ): Promise<EmbedTenantDto[]> {
    const keyset = keysetPredicate(['t.name COLLATE "C"'], 'ASC', after);
    return this.db.query<EmbedTenantDto>(
      `SELECT t.id, t.name, t.display_name AS "displayName", ${isoSql('t.created_at')} AS "createdAt",
              (SELECT count(*) FROM embed_users u WHERE u.tenant_id = t.id)::int AS "userCount"
       FROM embed_tenants t
       WHERE t.account_id = :accountId ${pattern === null ? '' : 'AND t.name LIKE :pattern'} AND ${keyset.sql}
       ORDER BY t.name COLLATE "C" LIMIT :limit`,
      { accountId, ...(pattern === null ? {} : { pattern }), ...keyset.params, limit },
    );
  }

  /** Deletes the tenant and, through the foreign keys, everything in it. */
  async delete(accountId: number, name: string): Promise<void> {
    await this.db.query(`DELETE FROM embed_tenants WHERE account_id = :accountId AND name = :name`, {
      accountId,
      name,
    });
  }

  /** The tenant; share-locked (against deletion until the unit of work ends) with `keyShare`. */
  find(accountId: number, name: string, keyShare = false): Promise<TenantRef | undefined> {
    return this.db.one<TenantRef>(
      `SELECT id, name FROM embed_tenants WHERE account_id = :accountId AND name = :name
       ${keyShare ? 'FOR KEY SHARE' : ''}`,
      { accountId, name },
    );
  }

  async insertIfMissing(accountId: number, name: string): Promise<void> {
    await this.db.query(
      `INSERT INTO embed_tenants (account_id, name) VALUES (:accountId, :name)
       ON CONFLICT (account_id, name) DO NOTHING`,
      { accountId, name },
    );
  }

  async setDisplayName(tenantId: number, displayName: string | null): Promise<void> {
    await this.db.query(`UPDATE embed_tenants SET display_name = :displayName WHERE id = :tenantId`, {
      tenantId,
      displayName,
    });
  }
}
