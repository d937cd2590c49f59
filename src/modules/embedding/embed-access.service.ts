import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import type { DashboardDto } from '../workspace/dto/dashboard.dto.js';
import { DASHBOARD_JSON, WorkbookLookup } from '../workspace/workbooks.shared.js';
import type {
  DashboardEmbeddingResponseDto,
  EmbedAccessResponseDto,
  UpdateDashboardEmbeddingDto,
  UpdateEmbedAccessDto,
} from './dto/embed-access.dto.js';
import { normalizeTenantName } from './embed-identity.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { embeddingError } from './embedding.errors.js';

/** Public ids of dashboards are short alphanumeric strings; anything else cannot exist. */
const PUBLIC_ID = /^[0-9A-Za-z]{1,32}$/;

interface EmbeddableRow {
  dashboard: DashboardDto;
  allowEmbed: boolean;
  sharedWithAll: boolean;
  sharedWithTenant: boolean;
}

/**
 * Who among embed users may open a workbook's published dashboard: shares with single embed
 * tenants or with every embed user, plus the dashboard's "allow signed embedding" flag.
 */
@Injectable()
export class EmbedAccessService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lookup: WorkbookLookup,
    private readonly tenants: EmbedTenantsService,
  ) {}

  /** Needs read access to the workbook. */
  async get(actor: Principal, deploymentId: number, workbookId: number): Promise<EmbedAccessResponseDto> {
    await this.lookup.locate(actor, deploymentId, workbookId, Action.WorkbookRead);
    return this.view(this.dataSource.manager, workbookId);
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
    return this.dataSource.transaction(async (m) => {
      if (dto.allowEmbed != null) {
        const rows = await queryRows(
          m,
          `UPDATE dashboards SET allow_embed = $2, updated_at = now() WHERE workbook_id = $1 RETURNING id`,
          [workbookId, dto.allowEmbed],
        );
        if (rows.length === 0) {
          throw embeddingError(
            'no_published_dashboard',
            `Workbook ${workbookId} has no published dashboard to embed`,
          );
        }
      }
      if (toTenant || toAll) {
        const tenantId = tenantName ? (await this.tenants.find(m, actor.accountId, tenantName)).id : null;
        if (dto.action === 'read') {
          await m.query(
            tenantId === null
              ? `INSERT INTO workbook_embed_access (account_id, workbook_id, tenant_id) VALUES ($1, $2, NULL)
                 ON CONFLICT (workbook_id) WHERE tenant_id IS NULL DO NOTHING`
              : `INSERT INTO workbook_embed_access (account_id, workbook_id, tenant_id) VALUES ($1, $2, $3)
                 ON CONFLICT (workbook_id, tenant_id) WHERE tenant_id IS NOT NULL DO NOTHING`,
            tenantId === null ? [actor.accountId, workbookId] : [actor.accountId, workbookId, tenantId],
          );
        } else {
          await m.query(
            `DELETE FROM workbook_embed_access WHERE workbook_id = $1 AND tenant_id IS NOT DISTINCT FROM $2`,
            [workbookId, tenantId],
          );
        }
      }
      return this.view(m, workbookId);
    });
  }

  /** Admin only; 404 for an unknown public id. */
  async setDashboardEmbedding(
    actor: Principal,
    publicId: string,
    dto: UpdateDashboardEmbeddingDto,
  ): Promise<DashboardEmbeddingResponseDto> {
    const rows = PUBLIC_ID.test(publicId)
      ? await queryRows<DashboardEmbeddingResponseDto>(
          this.dataSource,
          `UPDATE dashboards SET allow_embed = $3, updated_at = now() WHERE public_id = $1 AND account_id = $2
           RETURNING public_id AS "publicId", allow_embed AS "allowEmbed"`,
          [publicId, actor.accountId, dto.allowEmbed],
        )
      : [];
    if (rows.length === 0) throw embeddingError('dashboard_not_found', `Dashboard ${publicId} was not found`);
    return rows[0];
  }

  /**
   * The published dashboard `publicId` as the embed user may see it: shared with every embed
   * user, or with the user's tenant and allowed for signed embedding (403 when not allowed).
   * Anything the user cannot see is a 404, as is anything outside the session's deployment or
   * its one dashboard.
   */
  async embedDashboard(user: EmbedPrincipal, publicId: string): Promise<DashboardDto> {
    const notFound = () => embeddingError('dashboard_not_found', `Dashboard ${publicId} was not found`);
    if (!PUBLIC_ID.test(publicId)) throw notFound();
    if (user.publicDashboardId !== null && user.publicDashboardId !== publicId) throw notFound();
    const [row] = await queryRows<EmbeddableRow>(
      this.dataSource,
      `SELECT ${DASHBOARD_JSON} AS dashboard, d.allow_embed AS "allowEmbed",
         EXISTS (SELECT 1 FROM workbook_embed_access a WHERE a.workbook_id = d.workbook_id AND a.tenant_id IS NULL)
           AS "sharedWithAll",
         EXISTS (SELECT 1 FROM workbook_embed_access a WHERE a.workbook_id = d.workbook_id AND a.tenant_id = $3)
           AS "sharedWithTenant"
       FROM dashboards d
       WHERE d.public_id = $1 AND d.account_id = $2 AND d.deployment_id = $4 AND d.status = 'published'`,
      [publicId, user.accountId, user.tenantId, user.deploymentId],
    );
    if (!row || (!row.sharedWithAll && !row.sharedWithTenant)) throw notFound();
    if (!row.sharedWithAll && !row.allowEmbed && !user.creatorMode) {
      throw embeddingError(
        'embedding_not_allowed',
        `Signed embedding is not allowed for dashboard ${publicId}`,
      );
    }
    return row.dashboard;
  }

  private async view(m: EntityManager, workbookId: number): Promise<EmbedAccessResponseDto> {
    const [row] = await queryRows<{
      allowEmbed: boolean | null;
      allId: number | null;
      tenants: Array<{ embedTenantName: string; groupId: number }>;
    }>(
      m,
      `SELECT (SELECT allow_embed FROM dashboards WHERE workbook_id = $1) AS "allowEmbed",
         (SELECT id FROM workbook_embed_access WHERE workbook_id = $1 AND tenant_id IS NULL) AS "allId",
         COALESCE((SELECT json_agg(json_build_object('embedTenantName', t.name, 'groupId', a.id) ORDER BY t.name)
                   FROM workbook_embed_access a JOIN embed_tenants t ON t.id = a.tenant_id
                   WHERE a.workbook_id = $1), '[]'::json) AS tenants`,
      [workbookId],
    );
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
