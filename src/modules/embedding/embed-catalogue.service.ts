import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import type { Principal } from '../../core/auth/principal.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  buildPage,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  invalidCursor,
  type Page,
  type Paging,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { DeploymentsService } from '../deployments/deployments.service.js';
import type { WorkbookDto } from '../workspace/dto/workbook.dto.js';
import type { WorkspaceQueryDto } from '../workspace/dto/workspace.dto.js';
import { feedCursor, parseFeedCursor, folderChainSql } from '../workspace/workspace.fragments.js';
import type { EmbedTenantWorkbooksQueryDto, SharedWorkspaceItemDto } from './dto/embed-catalogue.dto.js';
import { EmbedCatalogueRepository, type SharedAudience } from './embed-catalogue.repository.js';
import { normalizeTenantName } from './embed-identity.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { embeddingError } from './embedding.errors.js';

/** A workbook id a cursor may carry (`workbooks.id` is an int). */
const isWorkbookId = (v: unknown): boolean =>
  Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 2_147_483_647;

/**
 * What embed tenants reach of a deployment's workspace, from the shares that exist
 * (`PUT .../workbooks/{id}/embed-access`): the workbooks an admin sees a tenant reach, and the
 * shared workspace embed users browse (and console users look at). Both read the same shares, so
 * a tenant's users browse exactly the workbooks its listing shows.
 */
@Injectable()
export class EmbedCatalogueService {
  constructor(
    private readonly catalogue: EmbedCatalogueRepository,
    private readonly tenants: EmbedTenantsService,
    private readonly deployments: DeploymentsService,
    private readonly access: AccessService,
  ) {}

  /**
   * The workbooks of the deployment the tenant reaches, by id, filtered by how (admin only; the
   * guard checked). 404 for a deployment outside the account or an unknown tenant.
   */
  async tenantWorkbooks(
    actor: Principal,
    deploymentId: number,
    rawTenantName: string,
    query: EmbedTenantWorkbooksQueryDto,
  ): Promise<Page<WorkbookDto>> {
    const name = normalizeTenantName(rawTenantName);
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after = query.after !== undefined ? decodeCursor(query.after, ['number']) : null;
    if (after && !isWorkbookId(after[0])) invalidCursor();
    await this.deployments.requireInAccount(actor.accountId, deploymentId);
    const tenant = await this.tenants.find(actor.accountId, name);
    const rows = await this.catalogue.tenantWorkbooks(
      { accountId: actor.accountId, deploymentId, tenantId: tenant.id },
      query.accessSource ?? null,
      after ? (after[0] as number) : null,
      first + 1,
    );
    return buildPage(rows, { mode: 'cursor', first, after }, (r) => [r.id]);
  }

  /**
   * The shared workspace of the deployment, in the order and with the filters of the workspace
   * feed, owners left out. For an embed user (`embedUser`): the workbooks shared with the user's
   * tenant or with every embed user, and the folders leading to them; 404 outside the session's
   * deployment, 403 for a session limited to one dashboard. For a console user (`actor`): the
   * workbooks shared with every embed user that the caller can read, and the folders leading to
   * them; 404 for a deployment outside the account. A folder leading to none is a 404.
   */
  async sharedWorkspace(
    caller: { embedUser: EmbedPrincipal } | { actor: Principal },
    deploymentId: number,
    query: WorkspaceQueryDto,
  ): Promise<Page<SharedWorkspaceItemDto>> {
    let audience: SharedAudience;
    let accountId: number;
    if ('embedUser' in caller) {
      const user = caller.embedUser;
      if (deploymentId !== user.deploymentId) throw notFound('Deployment', deploymentId);
      if (user.publicDashboardId !== null) {
        throw embeddingError(
          'shared_workspace_unavailable',
          'This embed session is limited to one dashboard: it has no shared workspace',
        );
      }
      audience = { tenantId: user.tenantId };
      accountId = user.accountId;
    } else {
      const { actor } = caller;
      await this.deployments.requireInAccount(actor.accountId, deploymentId);
      audience = {
        readable: (w, folder) =>
          this.access.contentScopeSql(
            actor,
            'Workbook',
            Action.WorkbookRead,
            { id: `${w}.id`, owner: `${w}.user_id`, folderChain: folderChainSql(folder) },
            'sharedScope',
          ),
      };
      accountId = actor.accountId;
    }
    const field = query.orderByField ?? 'updated_at';
    const dir = query.orderByDirection ?? (field === 'name' ? 'ASC' : 'DESC');
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after =
      query.after !== undefined ? (parseFeedCursor(query.after, field, dir, 1) ?? invalidCursor()) : null;
    const types = new Set(query.types?.length ? query.types : ['FOLDER', 'WORKBOOK']);
    const at = { accountId, deploymentId };
    const folderId = query.folderId || null;
    if (folderId !== null && !(await this.catalogue.sharedFolder(at, audience, folderId))) {
      throw notFound('Folder', folderId);
    }
    const paging: Paging = { mode: 'cursor', first, after: after ? [after.id] : null };
    // Reports are shared with embed users only as part of a workbook's dashboard: none is an item.
    if (!types.has('FOLDER') && !types.has('WORKBOOK')) return buildPage([], paging, () => []);
    const rows = await this.catalogue.sharedWorkspace(at, audience, {
      folderId,
      search: query.search?.trim() ? likePattern(query.search) : null,
      folders: types.has('FOLDER'),
      workbooks: types.has('WORKBOOK'),
      field,
      dir,
      after,
      limit: first + 1,
    });
    return buildPage(
      rows,
      paging,
      (r) => feedCursor(field, dir, r),
      (r) => r.item,
    );
  }
}
