import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import type { EmbedTenantDto, EmbedTenantsQueryDto } from './dto/embed-tenant.dto.js';
import { canonicalTenantName } from './embed-identity.js';
import { EmbedTenantsRepository, type TenantRef } from './embed-tenants.repository.js';
import { embeddingError } from './embedding.errors.js';

export type { TenantRef } from './embed-tenants.repository.js';

/** Attempts to find or create a tenant that concurrent deletions keep taking away. */
const ENSURE_ATTEMPTS = 3;

/**
 * Embed tenants: made on demand (by provisioning, group creation and sessions), listed, and
 * deleted with everything in them.
 */
@Injectable()
export class EmbedTenantsService {
  constructor(private readonly tenants: EmbedTenantsRepository) {}

  async list(actor: Principal, query: EmbedTenantsQueryDto): Promise<Page<EmbedTenantDto>> {
    const paging = resolvePaging(query, ['string']);
    const rows = await this.tenants.list(
      actor.accountId,
      query.search ? likePattern(query.search.trim().toLowerCase()) : null,
      paging.mode === 'cursor' ? paging.after : null,
      fetchLimit(paging),
    );
    return buildPage(rows, paging, (r) => [r.name]);
  }

  /** Deletes the tenant and, through the foreign keys, everything in it. Idempotent. */
  async remove(actor: Principal, rawName: string): Promise<void> {
    await this.tenants.delete(actor.accountId, canonicalTenantName(rawName));
  }

  /** The tenant, or 404. */
  async find(accountId: number, name: string): Promise<TenantRef> {
    const row = await this.tenants.find(accountId, name);
    if (!row) throw embeddingError('embed_tenant_not_found', `Embed tenant "${name}" was not found`);
    return row;
  }

  /**
   * The tenant, created when missing, inside the caller's unit of work: the row is share-locked,
   * so a concurrent deletion waits until the caller is done instead of pulling it away.
   */
  async ensure(accountId: number, name: string): Promise<TenantRef> {
    for (let attempt = 0; attempt < ENSURE_ATTEMPTS; attempt++) {
      await this.tenants.insertIfMissing(accountId, name);
      const row = await this.tenants.find(accountId, name, true);
      if (row) return row;
    }
    throw coreError('conflict', `Embed tenant "${name}" was being deleted; retry the request`);
  }

  setDisplayName(tenantId: number, displayName: string | null): Promise<void> {
    return this.tenants.setDisplayName(tenantId, displayName);
  }
}
