import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { isoSql, queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  type Page,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type { EmbedTenantDto, EmbedTenantsQueryDto } from './dto/embed-tenant.dto.js';
import { canonicalTenantName } from './embed-identity.js';
import { embeddingError } from './embedding.errors.js';

/** A located tenant. */
export interface TenantRef {
  id: number;
  name: string;
}

/** Attempts to find or create a tenant that concurrent deletions keep taking away. */
const ENSURE_ATTEMPTS = 3;

/**
 * Embed tenants: made on demand (by provisioning, group creation and sessions), listed, and
 * deleted with everything in them.
 */
@Injectable()
export class EmbedTenantsService {
  constructor(private readonly dataSource: DataSource) {}

  async list(actor: Principal, query: EmbedTenantsQueryDto): Promise<Page<EmbedTenantDto>> {
    const paging = resolvePaging(query, ['string']);
    const params: unknown[] = [actor.accountId];
    let filter = 't.account_id = $1';
    if (query.search) {
      params.push(likePattern(query.search.trim().toLowerCase()));
      filter += ` AND t.name LIKE $${params.length}`;
    }
    const keyset = keysetPredicate(
      ['t.name COLLATE "C"'],
      'ASC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const rows = await queryRows<EmbedTenantDto>(
      this.dataSource,
      `SELECT t.id, t.name, t.display_name AS "displayName", ${isoSql('t.created_at')} AS "createdAt",
              (SELECT count(*) FROM embed_users u WHERE u.tenant_id = t.id)::int AS "userCount"
       FROM embed_tenants t WHERE ${filter} AND ${keyset.sql}
       ORDER BY t.name COLLATE "C" LIMIT ${fetchLimit(paging)}`,
      [...params, ...keyset.params],
    );
    return buildPage(rows, paging, (r) => [r.name]);
  }

  /** Deletes the tenant and, through the foreign keys, everything in it. Idempotent. */
  async remove(actor: Principal, rawName: string): Promise<void> {
    const name = canonicalTenantName(rawName);
    await this.dataSource.query(`DELETE FROM embed_tenants WHERE account_id = $1 AND name = $2`, [
      actor.accountId,
      name,
    ]);
  }

  /** The tenant, or 404. */
  async find(manager: EntityManager, accountId: number, name: string): Promise<TenantRef> {
    const [row] = await queryRows<TenantRef>(
      manager,
      `SELECT id, name FROM embed_tenants WHERE account_id = $1 AND name = $2`,
      [accountId, name],
    );
    if (!row) throw embeddingError('embed_tenant_not_found', `Embed tenant "${name}" was not found`);
    return row;
  }

  /**
   * The tenant, created when missing. Inside the caller's transaction the row is share-locked,
   * so a concurrent deletion waits until the caller is done instead of pulling it away.
   */
  async ensure(manager: EntityManager, accountId: number, name: string): Promise<TenantRef> {
    for (let attempt = 0; attempt < ENSURE_ATTEMPTS; attempt++) {
      await manager.query(
        `INSERT INTO embed_tenants (account_id, name) VALUES ($1, $2) ON CONFLICT (account_id, name) DO NOTHING`,
        [accountId, name],
      );
      const [row] = await queryRows<TenantRef>(
        manager,
        `SELECT id, name FROM embed_tenants WHERE account_id = $1 AND name = $2 FOR KEY SHARE`,
        [accountId, name],
      );
      if (row) return row;
    }
    throw coreError('conflict', `Embed tenant "${name}" was being deleted; retry the request`);
  }

  async setDisplayName(manager: EntityManager, tenantId: number, displayName: string | null): Promise<void> {
    await manager.query(`UPDATE embed_tenants SET display_name = $2 WHERE id = $1`, [tenantId, displayName]);
  }
}
