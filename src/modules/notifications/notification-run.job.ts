import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ALL_ACTIONS } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { RunLost, type JobContext } from '../../core/queue/job-context.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { DataApiClient } from '../data-api/data-api.client.js';
import { ReportsService } from '../reports/reports.service.js';
import { isNoEmail } from '../users/no-email.js';
import { DashboardRenderer, RenderError, type Attachment } from './delivery/dashboard-renderer.js';
import {
  renderEmailHtml,
  renderEmailText,
  type DashboardDocument,
  type ReportTable,
} from './delivery/dashboard-document.js';
import {
  NOTIFICATION_DELIVER_JOB,
  NOTIFICATION_RUN_JOB,
  type NotificationRunPayload,
} from './notification-jobs.js';
import { applyOverrides, describeFilters, reportIdsOf, type QueryOverrides } from './notification-query.js';
import { NotificationRunsRepository, type DeliveryWrite } from './notification-runs.repository.js';
import {
  NotificationsRepository,
  type NotificationRow,
  type RecipientRow,
} from './notifications.repository.js';
import { scheduleOwner } from './notifications.service.js';

/** Most rows of one report shown in the email and the attachment. */
export const MAX_TABLE_ROWS = 200;

/** JSON with object keys sorted: equal contexts hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The security context a recipient's copy is rendered under. Console users: an empty context
 * (the data API's default for a trusted server-side caller; every console recipient of a
 * notification gets the same copy). Embed users: the `securityContext` given when they were added,
 * with their `userAttributes` and `groups` under `cubeCloud`, as an embed session carries them.
 */
export function securityContextOf(recipient: RecipientRow): Record<string, unknown> {
  if (recipient.type === 'USER') return {};
  const context: Record<string, unknown> = { ...(recipient.securityContext ?? {}) };
  const attributes = (recipient.userAttributes ?? []) as Array<{ name: string; value?: unknown }>;
  if (attributes.length > 0 || (recipient.groups ?? []).length > 0) {
    context.cubeCloud = {
      userAttributes: Object.fromEntries(attributes.map((a) => [a.name, a.value ?? null])),
      groups: recipient.groups ?? [],
    };
  }
  return context;
}

export function contextHash(context: Record<string, unknown>): string {
  return createHash('sha256').update(canonical(context)).digest('hex');
}

interface ReportSource {
  title: string;
  jsonQuery: Record<string, unknown> | null;
  sqlQuery: string | null;
  error?: string;
}

/**
 * `notification.run`: one firing of a notification. Idempotent and resumable, keyed by the
 * occurrence (`notification_runs` is unique per notification and `scheduledFor`):
 * 1. the run row is created or found again;
 * 2. the dashboard is rendered once per distinct security context of the recipients (reports'
 *    data from the data API under that context, the filters, time grains and field switchers of
 *    the notification applied), kept in `notification_renders`; a context already rendered by an
 *    earlier attempt is not rendered again;
 * 3. one delivery per recipient is recorded and its `notification.deliver` job queued, in one
 *    unit of work; a run whose deliveries are recorded does nothing more when it runs again.
 * A report that fails shows its error in its table; the run goes on.
 */
@Injectable()
export class NotificationRunJob {
  private readonly logger = new Logger(NotificationRunJob.name);

  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsRepository,
    private readonly runs: NotificationRunsRepository,
    private readonly schedules: JobSchedules,
    private readonly jobs: JobQueue,
    private readonly dataApi: DataApiClient,
    private readonly reports: ReportsService,
    private readonly renderer: DashboardRenderer,
    private readonly config: AppConfig,
  ) {}

  @JobHandler(NOTIFICATION_RUN_JOB)
  async run(payload: NotificationRunPayload, ctx: JobContext): Promise<void> {
    const notification = await this.notifications.byId(payload.notificationId);
    if (!notification) {
      // Gone (deleted, or with its dashboard): its schedule must not fire again.
      await this.schedules.removeByOwner(scheduleOwner(payload.notificationId));
      return;
    }
    const scheduledFor = payload.scheduledFor ? new Date(payload.scheduledFor) : new Date();
    if (Number.isNaN(scheduledFor.getTime())) ctx.fail(`scheduledFor ${payload.scheduledFor} is not a date`);
    const run = await this.runs.ensureRun(notification.id, scheduledFor, ctx.run?.id ?? null);
    if (run.status !== 'rendering') return;

    // Deactivated users, and users provisioned without an address, are not mailed.
    const recipients = (await this.notifications.recipients(notification.id, null, null)).filter(
      (r) => !r.deactivated && r.email && !isNoEmail(r.email),
    );
    if (recipients.length === 0) {
      await this.runs.setRunStatus(run.id, 'delivering');
      await ctx.log('No recipients: nothing to mail');
      return;
    }
    const contexts = new Map<string, Record<string, unknown>>();
    const deliveries: DeliveryWrite[] = recipients.map((r) => {
      const context = securityContextOf(r);
      const hash = contextHash(context);
      contexts.set(hash, context);
      return {
        recipientKey: r.type === 'USER' ? `user:${r.userId}` : `embed:${r.embedUserId}`,
        recipientType: r.type,
        userId: r.userId,
        embedUserId: r.embedUserId,
        email: r.email!,
        contextHash: hash,
      };
    });

    const done = await this.runs.renderedContexts(run.id);
    const missing = [...contexts].filter(([hash]) => !done.has(hash));
    if (missing.length > 0) {
      await ctx.phase('render');
      const dashboard = await this.notifications.dashboard(
        notification.accountId,
        notification.deploymentId,
        {
          id: notification.dashboardId,
        },
      );
      if (!dashboard) {
        await this.runs.setRunStatus(run.id, 'failed', 'The dashboard is no longer published');
        ctx.fail('The dashboard is no longer published');
      }
      const sources = await this.sources(notification, dashboard.config, dashboard.snapshotReportIds);
      for (const [hash, context] of missing) {
        await ctx.throwIfCancelled();
        const doc: DashboardDocument = {
          title: dashboard.title?.trim() || `Dashboard ${dashboard.publicId}`,
          link: this.link(notification, dashboard),
          generatedAt: new Date(),
          timezone: notification.timezone,
          tables: await this.tables(notification, sources, context),
          filters: describeFilters(overridesOf(notification)),
        };
        let attachment: Attachment;
        try {
          attachment = await this.renderer.attachment(
            doc,
            notification.notificationFormat === 'png' ? 'png' : 'pdf',
          );
        } catch (err) {
          if (!(err instanceof RenderError) || ctx.attempt < NOTIFICATION_RUN_JOB.attempts) throw err;
          // The last attempt: every recipient's delivery is recorded as failed, saying why.
          const reason = `Rendering the dashboard failed (${err.reason}): ${err.message}`;
          await this.db.transaction(async () => {
            await this.runs.addDeliveries(run.id, notification.id, aiSummaryOf(notification), deliveries);
            await this.runs.failQueued(run.id, reason);
            await this.runs.setRunStatus(run.id, 'failed', reason);
          });
          ctx.fail(reason);
        }
        await this.runs.saveRender(run.id, hash, {
          subject: `${doc.title}: scheduled report`,
          html: renderEmailHtml(doc),
          text: renderEmailText(doc),
          filename: attachment.filename,
          contentType: attachment.contentType,
          content: attachment.content,
        });
      }
    }

    await ctx.phase('deliver');
    await this.db.transaction(async () => {
      await this.runs.addDeliveries(run.id, notification.id, aiSummaryOf(notification), deliveries);
      await this.runs.setRunStatus(run.id, 'delivering');
      for (const deliveryId of await this.runs.queuedDeliveries(run.id)) {
        await this.jobs.enqueue(
          NOTIFICATION_DELIVER_JOB,
          { deliveryId },
          { accountId: notification.accountId, owner: scheduleOwner(notification.id) },
        );
      }
    });
    await ctx.log(`Queued ${deliveries.length} deliveries from ${contexts.size} rendering(s)`);
  }

  /**
   * The reports of the dashboard, read as they are now (no view recorded): those its widgets
   * reference, in layout order, then those its last publish took.
   */
  private async sources(
    notification: NotificationRow,
    config: unknown,
    published: readonly number[],
  ): Promise<ReportSource[]> {
    const actor = systemPrincipal(notification);
    const out: ReportSource[] = [];
    // The widgets' reports in layout order, then any other report the publish took.
    const ids = reportIdsOf(config);
    for (const id of published) if (!ids.includes(id)) ids.push(id);
    for (const reportId of ids) {
      try {
        const report = await this.reports.read(actor, notification.deploymentId, reportId, {
          canEdit: false,
          canManage: false,
        });
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
        out.push({
          title: `Report ${reportId}`,
          jsonQuery: null,
          sqlQuery: null,
          error: 'The report was not found',
        });
      }
    }
    return out;
  }

  /** Each report's data under `context`; a failure is shown in its table. */
  private async tables(
    notification: NotificationRow,
    sources: ReportSource[],
    context: Record<string, unknown>,
  ): Promise<ReportTable[]> {
    const target = { accountId: notification.accountId, deploymentId: notification.deploymentId };
    const overrides = overridesOf(notification);
    const out: ReportTable[] = [];
    for (const source of sources) {
      if (source.error) {
        out.push({ title: source.title, columns: [], rows: [], error: source.error });
        continue;
      }
      try {
        if (source.jsonQuery) {
          const query = applyOverrides(source.jsonQuery, overrides);
          const { data } = await this.dataApi.load(target, query, context);
          out.push(table(source.title, data, membersOf(query)));
        } else if (source.sqlQuery) {
          const { columns, rows } = await this.dataApi.sql(target, source.sqlQuery, context);
          out.push(table(source.title, rows, columns));
        } else {
          out.push({ title: source.title, columns: [], rows: [], error: 'The report has no query' });
        }
      } catch (err) {
        if (err instanceof RunLost) throw err;
        const message = err instanceof Error ? err.message : String(err);
        this.logger.warn(
          { notificationId: notification.id, report: source.title, err: message },
          'report failed',
        );
        out.push({ title: source.title, columns: [], rows: [], error: message });
      }
    }
    return out;
  }

  /** Where the dashboard opens in the product (DASHBOARD_URL_TEMPLATE), or nothing. */
  private link(
    notification: NotificationRow,
    dashboard: { id: number; publicId: string; workbookId: number },
  ): string {
    const template = this.config.notifications.dashboardUrlTemplate;
    if (!template) return '';
    return template
      .replaceAll('{deploymentId}', String(notification.deploymentId))
      .replaceAll('{dashboardId}', String(dashboard.id))
      .replaceAll('{publicId}', encodeURIComponent(dashboard.publicId))
      .replaceAll('{workbookId}', String(dashboard.workbookId));
  }
}

/** No AI provider here: a notification asking for a summary records on each delivery that none was made. */
function aiSummaryOf(n: NotificationRow): string | null {
  return n.notificationAiSummary ? 'not_produced' : null;
}

function overridesOf(n: NotificationRow): QueryOverrides {
  return {
    filters: n.filters as QueryOverrides['filters'],
    timeGrains: n.timeGrains as QueryOverrides['timeGrains'],
    memberSwitchers: n.memberSwitchers as QueryOverrides['memberSwitchers'],
  };
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

/**
 * The caller a run reads the dashboard's reports as: the notification's account with every action
 * (an admin made the notification; the report rows are read, never changed, and no view is recorded).
 */
function systemPrincipal(n: NotificationRow): Principal {
  return {
    userId: n.createdBy ?? 0,
    accountId: n.accountId,
    email: '',
    apiKeyId: 0,
    roleIds: [],
    groupIds: [],
    actions: new Set(ALL_ACTIONS),
    objectActions: new Set(),
    typeActions: new Map(),
    isAdmin: true,
  };
}
