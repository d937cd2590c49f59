import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
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
import { folderChainSql } from '../workspace/content.sql.js';
import type { ReportDto, ReportsQueryDto } from './dto/report.dto.js';
import { reportSelectSql } from './report.sql.js';
import { toReport, type ReportRow } from './report.mapper.js';
import { reportsError } from './reports.errors.js';
import { ReportViews } from './report-views.js';
import { ReportsService } from './reports.service.js';

/** Sort columns of the report list; the id breaks ties so the keyset is total. */
const SORTS = {
  createdAt: { column: 'r.created_at', cursor: 'createdAt', kind: 'date' },
  updatedAt: { column: 'r.updated_at', cursor: 'updatedAt', kind: 'date' },
  name: { column: 'r.name', cursor: 'name', kind: 'string' },
} as const;

/**
 * The report list: filters, the caller's visibility as one SQL predicate, keyset pages on
 * every sort but the per-viewer `lastViewedAt`, and the legacy `limit`/`page`.
 */
@Injectable()
export class ReportListService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly reports: ReportsService,
    private readonly views: ReportViews,
  ) {}

  async list(actor: Principal, deploymentId: number, query: ReportsQueryDto): Promise<LegacyPage<ReportDto>> {
    const paging = this.paging(query);
    const sortBy = query.sortBy ?? 'createdAt';
    const direction = query.sortDirection ?? (sortBy === 'name' ? 'ASC' : 'DESC');
    const params: unknown[] = [actor.accountId, deploymentId];
    const add = (v: unknown) => `$${params.push(v)}`;
    // The count checks that the deployment is the caller's; its rows need no account filter, so a
    // count over the deployment stays an index-only scan.
    let filter = 'r.deployment_id = $2';
    if (query.folderId !== undefined) filter += ` AND r.folder_id = ${add(query.folderId)}`;
    if (query.workbookId !== undefined) filter += ` AND r.workbook_id = ${add(query.workbookId)}`;
    if (query.externalWorkbookId !== undefined) {
      filter += ` AND EXISTS (SELECT 1 FROM report_placements xp WHERE xp.report_id = r.id
        AND xp.external_workbook_id = ${add(query.externalWorkbookId)})`;
    }
    if (query.search) filter += ` AND r.name ILIKE ${add(likePattern(query.search))}`;
    const scope = this.access.contentScope(
      actor,
      'Report',
      Action.ReportRead,
      { id: 'r.id', owner: 'r.user_id', workbookId: 'r.workbook_id', folderChain: folderChainSql('f') },
      params.length + 1,
    );
    params.push(...scope.params);
    filter += ` AND ${scope.sql}`;

    const pageParams = [...params];
    let keyset = 'TRUE';
    let order: string;
    let cursorOf: (r: ReportRow) => CursorValue[];
    if (sortBy === 'lastViewedAt') {
      // The caller's own latest views count: write what this process still buffers first.
      await this.views.flush();
      const viewer = `$${pageParams.push(actor.userId)}`;
      order = `(SELECT v.last_viewed_at FROM report_views v WHERE v.report_id = r.id AND v.user_id = ${viewer})
        ${direction} NULLS LAST, r.id ${direction}`;
      cursorOf = () => [];
    } else {
      const sort = SORTS[sortBy];
      order = `${sort.column} ${direction}, r.id ${direction}`;
      if (paging.mode === 'cursor' && paging.after) {
        const [value, id] = paging.after;
        const op = direction === 'ASC' ? '>' : '<';
        const cast = sort.kind === 'date' ? '::timestamptz' : '';
        keyset = `(${sort.column}, r.id) ${op} ($${pageParams.push(value)}${cast}, $${pageParams.push(id)}::int)`;
      }
      cursorOf = (r) => [sort.kind === 'date' ? r[sort.cursor].toISOString() : r.name, r.id];
    }
    const offset = paging.mode === 'offset' ? ` OFFSET ${paging.offset}` : '';
    const [rows, [total]] = await Promise.all([
      queryRows<ReportRow>(
        this.dataSource,
        reportSelectSql(
          `r.account_id = $1 AND ${filter} AND ${keyset}`,
          `ORDER BY ${order} LIMIT ${fetchLimit(paging)}${offset}`,
        ),
        pageParams,
      ),
      queryRows<{ n: number; deploymentExists: boolean }>(
        this.dataSource,
        `SELECT count(*)::int AS n,
           EXISTS (SELECT 1 FROM deployments d WHERE d.id = $2 AND d.account_id = $1) AS "deploymentExists"
         FROM reports r ${scope.sql === 'TRUE' ? '' : 'LEFT JOIN folders f ON f.id = r.folder_id'} WHERE ${filter}`,
        params,
      ),
    ]);
    if (!total.deploymentExists)
      throw reportsError('deployment_not_found', `Deployment ${deploymentId} was not found`);
    const page = buildPage(rows, paging, cursorOf);
    if (sortBy === 'lastViewedAt') page.pageInfo.startCursor = page.pageInfo.endCursor = null;
    const access = await this.reports.accessFor(
      actor,
      page.items.map((r) => r.id),
    );
    return withLegacyFields(
      { ...page, items: page.items.map((r) => toReport(r, access(r.id))) },
      paging,
      total.n,
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
