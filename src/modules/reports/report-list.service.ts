import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  buildPage,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  fetchLimit,
  withLegacyFields,
  type CursorValue,
  type LegacyPage,
  type Paging,
} from '../../core/http/pagination.js';
import { likePattern } from '../../core/http/sql.js';
import { folderChainSql } from '../workspace/workspace.fragments.js';
import type { ReportDto, ReportsQueryDto } from './dto/report.dto.js';
import { toReport, type ReportRow } from './report.mapper.js';
import { reportsError } from './reports.errors.js';
import { REPORT_SORTS, ReportsRepository } from './reports.repository.js';
import { ReportViews } from './report-views.js';
import { ReportsService } from './reports.service.js';

/**
 * The report list: filters, the caller's visibility as one SQL predicate, keyset pages on
 * every sort but the per-viewer `lastViewedAt`, and the legacy `limit`/`page`.
 */
@Injectable()
export class ReportListService {
  constructor(
    private readonly repository: ReportsRepository,
    private readonly access: AccessService,
    private readonly reports: ReportsService,
    private readonly views: ReportViews,
  ) {}

  async list(actor: Principal, deploymentId: number, query: ReportsQueryDto): Promise<LegacyPage<ReportDto>> {
    const paging = this.paging(query);
    const sortBy = query.sortBy ?? 'createdAt';
    const direction = query.sortDirection ?? (sortBy === 'name' ? 'ASC' : 'DESC');
    const scope = this.access.contentScopeSql(actor, 'Report', Action.ReportRead, {
      id: 'r.id',
      owner: 'r.user_id',
      workbookId: 'r.workbook_id',
      folderChain: folderChainSql('f'),
    });
    let cursorOf: (r: ReportRow) => CursorValue[];
    if (sortBy === 'lastViewedAt') {
      // The caller's own latest views count: write what this process still buffers first.
      await this.views.flush();
      cursorOf = () => [];
    } else {
      const sort = REPORT_SORTS[sortBy];
      cursorOf = (r) => [sort.kind === 'date' ? r[sort.cursor].toISOString() : r.name, r.id];
    }
    const after =
      paging.mode === 'cursor' && paging.after ? ([paging.after[0], paging.after[1]] as const) : null;
    const { rows, total, deploymentExists } = await this.repository.list({
      accountId: actor.accountId,
      deploymentId,
      folderId: query.folderId,
      workbookId: query.workbookId,
      externalWorkbookId: query.externalWorkbookId,
      search: query.search ? likePattern(query.search) : undefined,
      scope,
      sort: sortBy === 'lastViewedAt' ? { viewerId: actor.userId } : { by: sortBy, after },
      direction,
      limit: fetchLimit(paging),
      offset: paging.mode === 'offset' ? paging.offset : 0,
    });
    if (!deploymentExists) throw notFound('Deployment', deploymentId);
    const page = buildPage(rows, paging, cursorOf);
    if (sortBy === 'lastViewedAt') page.pageInfo.startCursor = page.pageInfo.endCursor = null;
    const access = await this.reports.accessFor(
      actor,
      page.items.map((r) => r.id),
    );
    return withLegacyFields(
      { ...page, items: page.items.map((r) => toReport(r, access(r.id))) },
      paging,
      total,
    );
  }

  /** Cursor or legacy page-number paging; mixing them, or a cursor on lastViewedAt, is a 400. */
  private paging(query: ReportsQueryDto): Paging {
    const legacy = query.limit !== undefined || query.page !== undefined;
    const cursor = query.first !== undefined || query.after !== undefined;
    if (legacy && cursor) {
      throw coreError('pagination_conflict', 'Use either first/after or limit/page, not both');
    }
    if (legacy) {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      return { mode: 'offset', limit, offset: ((query.page ?? 1) - 1) * limit };
    }
    const sortBy = query.sortBy ?? 'createdAt';
    if (sortBy === 'lastViewedAt' && query.after !== undefined) {
      throw reportsError(
        'cursor_unavailable_for_sort',
        'Cursor pagination is unavailable with sortBy=lastViewedAt: the order is per viewer and has no ' +
          'stable cursor column. Use limit and page, or another sortBy.',
      );
    }
    const kinds = sortBy === 'name' ? (['string', 'number'] as const) : (['date', 'number'] as const);
    return {
      mode: 'cursor',
      first: query.first ?? DEFAULT_PAGE_SIZE,
      after: query.after !== undefined ? decodeCursor(query.after, kinds) : null,
    };
  }
}
