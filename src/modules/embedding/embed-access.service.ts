import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import type { Principal } from '../../core/auth/principal.js';
import { DashboardsService } from '../workspace/dashboards.service.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import type { DashboardDto } from '../workspace/dto/dashboard.dto.js';
import { WorkbookLookup } from '../workspace/workbooks.shared.js';
import type {
  DashboardEmbeddingResponseDto,
  EmbedAccessResponseDto,
  UpdateDashboardEmbeddingDto,
  UpdateEmbedAccessDto,
} from './dto/embed-access.dto.js';
import { EmbedAccessRepository } from './embed-access.repository.js';
import { normalizeTenantName } from './embed-identity.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { embeddingError } from './embedding.errors.js';

/** Public ids of dashboards are short alphanumeric strings; anything else cannot exist. */
const PUBLIC_ID = /^[0-9A-Za-z]{1,32}$/;

/**
 * Who among embed users may open a workbook's published dashboard: shares with single embed
 * tenants or with every embed user, plus the dashboard's "allow signed embedding" flag.
 */
@Injectable()
export class EmbedAccessService {
  constructor(
    private readonly db: Database,
    private readonly access: EmbedAccessRepository,
    private readonly lookup: WorkbookLookup,
    private readonly tenants: EmbedTenantsService,
    private readonly dashboards: DashboardsService,
  ) {}

  /** Needs read access to the workbook. */
  async get(actor: Principal, deploymentId: number, workbookId: number): Promise<EmbedAccessResponseDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
    return this.view(workbookId);
  }

  /** Needs manage access to the workbook; one audience change and/or the allowEmbed flag. */
  async update(
    actor: Principal,
    deploymentId: number,
    workbookId: number,
    dto: UpdateEmbedAccessDto,
  ): Promise<EmbedAccessResponseDto> {
    const toTenant = dto.embedTenantName != null;
    const toAll = dto.allEmbedUsers === true;
    if (toTenant && toAll) {
      throw embeddingError(
        'ambiguous_embed_access_target',
        'Give either embedTenantName or allEmbedUsers: true, not both',
      );
    }
    if ((toTenant || toAll) !== (dto.action != null)) {
      throw embeddingError(
        'no_embed_access_change',
        dto.action != null
          ? 'action needs a target: embedTenantName or allEmbedUsers: true'
          : 'A target (embedTenantName or allEmbedUsers: true) needs an action: read or none',
      );
    }
    if (!toTenant && !toAll && dto.allowEmbed == null) {
      throw embeddingError(
        'no_embed_access_change',
        'Nothing to change: give a target with an action, or allowEmbed',
      );
    }
    const tenantName = toTenant ? normalizeTenantName(dto.embedTenantName!) : null;
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookManage);
    return this.db.transaction(async () => {
      if (dto.allowEmbed != null && !(await this.dashboards.setAllowEmbed(workbookId, dto.allowEmbed))) {
        throw embeddingError(
          'no_published_dashboard',
          `Workbook ${workbookId} has no published dashboard to embed`,
        );
      }
      if (toTenant || toAll) {
        const tenantId = tenantName ? (await this.tenants.find(actor.accountId, tenantName)).id : null;
        if (dto.action === 'read') await this.access.grant(actor.accountId, workbookId, tenantId);
        else await this.access.revoke(workbookId, tenantId);
      }
      return this.view(workbookId);
    });
  }

  /** Admin only; 404 for an unknown public id. */
  async setDashboardEmbedding(
    actor: Principal,
    publicId: string,
    dto: UpdateDashboardEmbeddingDto,
  ): Promise<DashboardEmbeddingResponseDto> {
    const row = PUBLIC_ID.test(publicId)
      ? await this.dashboards.setPublicAllowEmbed(actor.accountId, publicId, dto.allowEmbed)
      : undefined;
    if (!row) throw notFound('Dashboard', publicId);
    return row;
  }

  /**
   * The published dashboard `publicId` as the embed user may see it: shared with every embed
   * user, or with the user's tenant and allowed for signed embedding (403 when not allowed).
   * Anything the user cannot see is a 404, as is anything outside the session's deployment or
   * its one dashboard.
   */
  async embedDashboard(user: EmbedPrincipal, publicId: string): Promise<DashboardDto> {
    const missing = () => notFound('Dashboard', publicId);
    if (!PUBLIC_ID.test(publicId)) throw missing();
    if (user.publicDashboardId !== null && user.publicDashboardId !== publicId) throw missing();
    const row = await this.access.embeddable({
      publicId,
      accountId: user.accountId,
      deploymentId: user.deploymentId,
      tenantId: user.tenantId,
    });
    if (!row || (!row.sharedWithAll && !row.sharedWithTenant)) throw missing();
    if (!row.sharedWithAll && !row.allowEmbed && !user.creatorMode) {
      throw embeddingError(
        'embedding_not_allowed',
        `Signed embedding is not allowed for dashboard ${publicId}`,
      );
    }
    return row.dashboard;
  }

  /**
   * Whether the users of embed tenant `tenantName` (normalised) may see the workbook's published
   * dashboard: it is shared with every embed user, or with that tenant. A tenant that does not
   * exist is shared nothing (unless with everyone); nothing is created.
   */
  sharedWithTenant(accountId: number, workbookId: number, tenantName: string): Promise<boolean> {
    return this.access.sharedWith(accountId, workbookId, tenantName);
  }

  /**
   * The embed tenants (names, sorted) that see each of the account's workbooks `workbookIds`
   * through the shares above: the tenants it is shared with, or every tenant of the account when
   * it is shared with every embed user. A workbook shared with nobody maps to nothing. The content
   * impact of a model change (issue 33) reads it; no caller, no access check.
   */
  async tenantsByWorkbook(accountId: number, workbookIds: readonly number[]): Promise<Map<number, string[]>> {
    if (workbookIds.length === 0) return new Map();
    const rows = await this.access.tenantsByWorkbook(accountId, workbookIds);
    return new Map(rows.map((r) => [r.workbookId, r.tenants]));
  }

  private async view(workbookId: number): Promise<EmbedAccessResponseDto> {
    const row = await this.access.view(workbookId);
    return {
      allowEmbed: row.allowEmbed ?? false,
      allEmbedUsers: {
        enabled: row.allId !== null,
        action: row.allId !== null ? 'read' : 'none',
        groupId: row.allId,
      },
      tenants: row.tenants.map((t) => ({ ...t, action: 'read' as const })),
    };
  }
}
