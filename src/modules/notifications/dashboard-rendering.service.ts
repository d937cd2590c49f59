import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { ApiError } from '../../core/errors/api-error.js';
import { RunLost } from '../../core/queue/job-context.js';
import { DataApiClient } from '../data-api-client/data-api.client.js';
import { ReportsService } from '../reports/reports.service.js';
import type { DashboardDocument, ReportTable } from './delivery/dashboard-document.js';
import { DashboardRenderer, type AttachmentFormat } from './delivery/dashboard-renderer.js';
import { applyOverrides, reportIdsOf, type QueryOverrides } from './notification-query.js';
import { NotificationsRepository, type DashboardRef } from './notifications.repository.js';

export { RenderError, type RenderFailure } from './delivery/dashboard-renderer.js';
export { describeFilters, type QueryOverrides } from './notification-query.js';
export type { DashboardDocument } from './delivery/dashboard-document.js';

/** Most rows of one report shown in the email and the rendered file. */
export const MAX_TABLE_ROWS = 200;

/** Codes after which reading the reports again later may succeed: the work is retried, not failed. */
const TRANSIENT = new Set<string>(['data_api_unavailable', 'data_api_timeout']);

/** A published dashboard, as a rendering reads it. */
export type PublishedDashboard = DashboardRef;

export type DashboardFormat = AttachmentFormat;

/** Where the reports are read: the dashboard's account and deployment. */
export interface RenderTarget {
  accountId: number;
  deploymentId: number;
}

/** A report of the dashboard as stored now: its title and query, or why it cannot be read. */
export interface ReportSource {
  title: string;
  jsonQuery: Record<string, unknown> | null;
  sqlQuery: string | null;
  error?: string;
}

/** One report's table; a failed one carries the API error's code, when it was one. */
export type RenderedTable = ReportTable & { code?: string | null };

/** A rendered file: its name, MIME type and bytes. */
export interface DashboardFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** The identity of an embed user as a rendering sees it: what its session would carry. */
export interface EmbedSubjectContext {
  securityContext?: Record<string, unknown> | null;
  userAttributes?: ReadonlyArray<{ name: string; value?: unknown }> | null;
  groups?: readonly string[] | null;
}

/**
 * The security context an embed user's copy is rendered under: the `securityContext` given, with
 * its `userAttributes` and `groups` under `cubeCloud`, as an embed session carries them. Console
 * users render under an empty context (the data API's default for a trusted server-side caller).
 */
export function embedSecurityContext(subject: EmbedSubjectContext): Record<string, unknown> {
  const context: Record<string, unknown> = { ...(subject.securityContext ?? {}) };
  const attributes = subject.userAttributes ?? [];
  const groups = subject.groups ?? [];
  if (attributes.length > 0 || groups.length > 0) {
    context.cubeCloud = {
      userAttributes: Object.fromEntries(attributes.map((a) => [a.name, a.value ?? null])),
      groups: [...groups],
    };
  }
  return context;
}

/** Whether a report's failure (its API error code) may pass if the reports are read again later. */
export function isTransientFailure(code: string | null | undefined): boolean {
  return code != null && TRANSIENT.has(code);
}

/**
 * A published dashboard rendered for one security context, as scheduled notifications and
 * dashboard exports both need it: the dashboard looked up by id or public id, its reports read
 * as they are now (the widgets' reports in layout order, then those its last publish took), each
 * report's data from the deployment's data API under the context with the filters, time grains
 * and field switchers applied, and the document printed to PDF or PNG by the one
 * {@link DashboardRenderer} of the process. A report that fails shows its error in its table.
 */
@Injectable()
export class DashboardRendering {
  private readonly logger = new Logger(DashboardRendering.name);

  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly reports: ReportsService,
    private readonly dataApi: DataApiClient,
    private readonly renderer: DashboardRenderer,
    private readonly config: AppConfig,
  ) {}

  /** The published dashboard of the deployment with this id or public id, or undefined. */
  published(
    accountId: number,
    deploymentId: number,
    by: { id: number } | { publicId: string },
  ): Promise<PublishedDashboard | undefined> {
    return this.notifications.dashboard(accountId, deploymentId, by);
  }

  /** The title shown: the dashboard's, or `Dashboard <publicId>` when it has none. */
  title(dashboard: PublishedDashboard): string {
    return dashboard.title?.trim() || `Dashboard ${dashboard.publicId}`;
  }

  /** Where the dashboard opens in the product (DASHBOARD_URL_TEMPLATE), or nothing. */
  link(deploymentId: number, dashboard: Pick<PublishedDashboard, 'id' | 'publicId' | 'workbookId'>): string {
    const template = this.config.notifications.dashboardUrlTemplate;
    if (!template) return '';
    return template
      .replaceAll('{deploymentId}', String(deploymentId))
      .replaceAll('{dashboardId}', String(dashboard.id))
      .replaceAll('{publicId}', encodeURIComponent(dashboard.publicId))
      .replaceAll('{workbookId}', String(dashboard.workbookId));
  }

  /**
   * The reports of the dashboard, read as they are now (no view recorded): those its widgets
   * reference, in layout order, then those its last publish took.
   */
  async sources(target: RenderTarget, dashboard: PublishedDashboard): Promise<ReportSource[]> {
    const out: ReportSource[] = [];
    const missing = (reportId: number): ReportSource => ({
      title: `Report ${reportId}`,
      jsonQuery: null,
      sqlQuery: null,
      error: 'The report was not found',
    });
    const ids = reportIdsOf(dashboard.config);
    for (const id of dashboard.snapshotReportIds) if (!ids.includes(id)) ids.push(id);
    for (const reportId of ids) {
      try {
        const report = await this.reports.forRendering(target.accountId, target.deploymentId, reportId);
        if (!report) {
          out.push(missing(reportId));
          continue;
        }
        const title = report.title?.trim() || report.name;
        let jsonQuery: Record<string, unknown> | null = null;
        if (report.jsonQuery) {
          try {
            const parsed: unknown = JSON.parse(report.jsonQuery);
            if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
              jsonQuery = parsed as Record<string, unknown>;
            }
          } catch {
            out.push({
              title,
              jsonQuery: null,
              sqlQuery: null,
              error: 'The report’s JSON query is not valid JSON',
            });
            continue;
          }
        }
        out.push({ title, jsonQuery, sqlQuery: report.sqlQuery });
      } catch (err) {
        if (err instanceof RunLost) throw err;
        out.push(missing(reportId));
      }
    }
    return out;
  }

  /**
   * Each report's data under `context`, the overrides applied; a failure is shown in its table
   * (with its code, if any). `onReport(done, total)` is told after each report.
   */
  async tables(
    target: RenderTarget,
    sources: ReportSource[],
    overrides: QueryOverrides,
    context: Record<string, unknown>,
    onReport?: (done: number, total: number) => Promise<void>,
  ): Promise<RenderedTable[]> {
    const out: RenderedTable[] = [];
    for (const source of sources) {
      out.push(await this.table(target, source, overrides, context));
      await onReport?.(out.length, sources.length);
    }
    return out;
  }

  /** Prints the document to a PDF (A4 landscape) or a full-page PNG; a failure is a `RenderError`. */
  file(doc: DashboardDocument, format: DashboardFormat): Promise<DashboardFile> {
    return this.renderer.attachment(doc, format);
  }

  private async table(
    target: RenderTarget,
    source: ReportSource,
    overrides: QueryOverrides,
    context: Record<string, unknown>,
  ): Promise<RenderedTable> {
    if (source.error) return { title: source.title, columns: [], rows: [], error: source.error };
    try {
      if (source.jsonQuery) {
        const query = applyOverrides(source.jsonQuery, overrides);
        const { data } = await this.dataApi.load(target, query, context);
        return table(source.title, data, membersOf(query));
      }
      if (source.sqlQuery) {
        const { columns, rows } = await this.dataApi.sql(target, source.sqlQuery, context);
        return table(source.title, rows, columns);
      }
      return { title: source.title, columns: [], rows: [], error: 'The report has no query' };
    } catch (err) {
      if (err instanceof RunLost) throw err;
      const message = err instanceof Error ? err.message : String(err);
      this.logger.warn(
        { deploymentId: target.deploymentId, report: source.title, err: message },
        'report failed',
      );
      return {
        title: source.title,
        columns: [],
        rows: [],
        error: message,
        code: err instanceof ApiError ? err.code : null,
      };
    }
  }
}

/** The members a JSON query answers, in order: the columns of an empty answer. */
function membersOf(query: Record<string, unknown>): string[] {
  const out: string[] = [];
  const add = (m: unknown) => {
    if (typeof m === 'string' && !out.includes(m)) out.push(m);
  };
  if (Array.isArray(query.timeDimensions)) {
    for (const td of query.timeDimensions as Array<{ dimension?: unknown; granularity?: unknown }>) {
      if (typeof td?.dimension === 'string' && typeof td.granularity === 'string') {
        add(`${td.dimension}.${td.granularity}`);
      }
    }
  }
  for (const key of ['dimensions', 'measures'])
    if (Array.isArray(query[key])) (query[key] as unknown[]).forEach(add);
  return out;
}

function table(title: string, rows: Record<string, unknown>[], columns: string[]): ReportTable {
  const keys = [...columns];
  for (const row of rows.slice(0, MAX_TABLE_ROWS)) {
    for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
  }
  return {
    title,
    columns: keys,
    rows: rows.slice(0, MAX_TABLE_ROWS),
    truncated: rows.length > MAX_TABLE_ROWS,
  };
}
