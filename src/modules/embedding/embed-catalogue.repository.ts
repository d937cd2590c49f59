import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { reportSnapshotsJsonSql } from '../reports/reports.fragments.js';
import type { WorkbookDto } from '../workspace/dto/workbook.dto.js';
import {
  audienceFeedSql,
  audienceFolderSql,
  dashboardJsonSql,
  WORKBOOK_SHAPE_FROM,
  workbookShapeSql,
  type FeedKey,
  type AudienceFeedQuery,
  type AudienceSees,
} from '../workspace/workspace.fragments.js';
import type { EmbedAccessSource, SharedWorkspaceItemDto } from './dto/embed-catalogue.dto.js';

/** The deployment looked at, in its account. */
export interface CatalogueScope {
  accountId: number;
  deploymentId: number;
}

/**
 * Who looks at the shared workspace: the users of an embed tenant (the workbooks shared with it or
 * with every embed user), or a console user (the workbooks shared with every embed user, within
 * `readable`, the caller's read scope over a workbook and its folder).
 */
export type SharedAudience =
  { tenantId: number } | { readable: (w: string, folder: string) => { sql: string; params: SqlParams } };

/**
 * A boolean over the workbook aliased `w`: the tenant `:tenantId` reaches it through `source`
 * (through any source when null). Embed access is granted on workbooks only (the rows of
 * `workbook_embed_access`); no folder can be shared with embed users, so none is reached through
 * a folder.
 */
function reachedSql(w: string, source: EmbedAccessSource | null): string {
  switch (source) {
    case 'tenant':
      return `EXISTS (SELECT 1 FROM workbook_embed_access ea WHERE ea.workbook_id = ${w}.id AND ea.tenant_id = :tenantId)`;
    case 'allEmbedUsers':
      return `EXISTS (SELECT 1 FROM workbook_embed_access ea WHERE ea.workbook_id = ${w}.id AND ea.tenant_id IS NULL)`;
    case 'folder':
      return 'FALSE';
    case null:
      return `EXISTS (SELECT 1 FROM workbook_embed_access ea
        WHERE ea.workbook_id = ${w}.id AND (ea.tenant_id IS NULL OR ea.tenant_id = :tenantId))`;
  }
}

/** What the audience sees of the workspace, as the workspace fragments take it. */
function seesOf(audience: SharedAudience): AudienceSees {
  if ('tenantId' in audience) {
    return (w) => ({ sql: reachedSql(w, null), params: { tenantId: audience.tenantId } });
  }
  return (w, folder) => {
    const readable = audience.readable(w, folder);
    return { sql: `${reachedSql(w, 'allEmbedUsers')} AND ${readable.sql}`, params: readable.params };
  };
}

/**
 * What embed tenants reach of the workspace, read through the workspace module's fragments and
 * this module's shares (`workbook_embed_access`): a tenant's workbooks, and the shared workspace.
 */
@Injectable()
export class EmbedCatalogueRepository {
  private workbookColumns: string | null = null;

  constructor(private readonly db: Database) {}

  /** The Workbook shape's columns, with the published dashboard and its report snapshots. */
  private get columnsSql(): string {
    return (this.workbookColumns ??= workbookShapeSql(dashboardJsonSql('d', reportSnapshotsJsonSql)));
  }

  /** The workbooks of the deployment the tenant reaches through `source` (any when null), by id. */
  tenantWorkbooks(
    at: CatalogueScope & { tenantId: number },
    source: EmbedAccessSource | null,
    afterId: number | null,
    limit: number,
  ): Promise<WorkbookDto[]> {
    const { tenantId, ...where } = at;
    return this.db.query<WorkbookDto>(
      `SELECT ${this.columnsSql} FROM ${WORKBOOK_SHAPE_FROM}
       WHERE w.account_id = :accountId AND w.deployment_id = :deploymentId AND ${reachedSql('w', source)}
         AND ${afterId === null ? 'TRUE' : 'w.id > :afterId'}
       ORDER BY w.id LIMIT :limit`,
      {
        ...where,
        ...(source === null || source === 'tenant' ? { tenantId } : {}),
        ...(afterId === null ? {} : { afterId }),
        limit,
      },
      { prepare: true },
    );
  }

  /** Whether the folder holds, at any depth, a workbook of the deployment the audience sees. */
  async sharedFolder(at: CatalogueScope, audience: SharedAudience, folderId: number): Promise<boolean> {
    const held = audienceFolderSql(seesOf(audience));
    const row = await this.db.one<{ shared: boolean }>(`SELECT ${held.sql} AS shared`, {
      ...at,
      ...held.params,
      folderId,
    });
    return row?.shared === true;
  }

  /** A page of the shared workspace (see `audienceFeedSql`); `search` is a LIKE pattern. */
  sharedWorkspace(
    at: CatalogueScope,
    audience: SharedAudience,
    q: Pick<AudienceFeedQuery, 'folders' | 'workbooks' | 'field' | 'dir' | 'after' | 'limit'> & {
      folderId: number | null;
      search: string | null;
    },
  ): Promise<Array<FeedKey & { item: SharedWorkspaceItemDto }>> {
    const page = audienceFeedSql({
      sees: seesOf(audience),
      folders: q.folders,
      workbooks: q.workbooks,
      inFolder: q.folderId !== null,
      search: q.search !== null,
      field: q.field,
      dir: q.dir,
      after: q.after,
      limit: q.limit,
    });
    return this.db.query(page.sql, {
      ...at,
      ...(q.folderId !== null ? { folderId: q.folderId } : {}),
      ...(q.search !== null ? { search: q.search } : {}),
      ...page.params,
    });
  }
}
