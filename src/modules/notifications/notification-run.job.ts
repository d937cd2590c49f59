import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { RunLost, type JobContext } from '../../core/queue/job-context.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { ApiError } from '../../core/errors/api-error.js';
import { DataApiClient } from '../data-api-client/data-api.client.js';
import { ReportsService } from '../reports/reports.service.js';
import { isNoEmail } from '../users/no-email.js';
import { DashboardRenderer, RenderError, type Attachment } from './delivery/dashboard-renderer.js';
import { renderFailureNotice } from './delivery/failure-notice.js';
import { MailNotConfiguredError, Mailer } from './delivery/mailer.js';
import { isMailbox } from './mailbox.js';
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
import {
  NotificationRunsRepository,
  type DeliveryWrite,
  type RunRow,
} from './notification-runs.repository.js';
import { firesTooSoonAfter } from './notification-schedule.js';
import {
  NotificationsRepository,
  type NotificationRow,
  type RecipientRow,
} from './notifications.repository.js';
import { scheduleOwner } from './notifications.service.js';

/** Most rows of one report shown in the email and the attachment. */
export const MAX_TABLE_ROWS = 200;

/** Why a delivery past NOTIFICATION_MAX_DELIVERIES_PER_HOUR is not sent (its `lastError`). */
export const HOURLY_LIMIT_REACHED = 'Not sent: the account’s hourly delivery limit was reached';

/** The `context_hash` of the run's notice to the notification's owner (its render has no attachment). */
export const OWNER_NOTICE = 'owner-notice';

/** Codes after which a later attempt of the run may read the reports: it is retried, not failed. */
const TRANSIENT = new Set<string>(['data_api_unavailable', 'data_api_timeout']);

/** Longest reason kept on a run and its deliveries. */
const REASON_MAX = 2_000;

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

/** A report that could not be read: its title, the API error's code (when it was one) and message. */
interface ReportFailure {
  title: string;
  code: string | null;
  error: string;
}

/** What the run shows of the dashboard: its title and link (the owner's notice repeats them). */
interface Shown {
  title: string;
  link: string;
}

/** Why recipients are mailed nothing: the reason, and each report's error when reports failed. */
interface NotMailed {
  reason: string;
  reports: ReportFailure[];
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
 * A report that fails shows its error in its table; the run goes on. When every report fails under
 * a context, its recipients are mailed nothing (an email of errors only helps nobody): their
 * deliveries are `failed` with the reason, and the notification's owner gets a notice saying why
 * (a delivery of its own). A run that mails nobody ends `failed`, and so does one on an
 * installation without SMTP (nothing rendered; the reason names SMTP_URL and SMTP_FROM).
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
    private readonly mailer: Mailer,
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
    const limits = this.config.notifications;
    if (
      payload.scheduledFor &&
      firesTooSoonAfter(
        notification.cronExpression,
        notification.timezone,
        scheduledFor,
        limits.minIntervalMinutes,
      )
    ) {
      // A schedule stored before the minimum was set or raised: refused here, every occurrence.
      const reason =
        `Skipped: the schedule fires again within ${limits.minIntervalMinutes} minutes; a notification ` +
        'fires at most that often (change its schedule)';
      await this.runs.setRunStatus(run.id, 'skipped', reason);
      await ctx.log(reason);
      return;
    }

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
    // Oldest recipients first: they are the ones served when the hourly limit cuts a run short.
    const deliveries: DeliveryWrite[] = [...recipients].reverse().map((r) => {
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

    if (!this.mailer.configured) {
      // Nothing can be mailed on this installation: nothing is rendered, and the run says which settings.
      const reason = new MailNotConfiguredError().message;
      await this.db.transaction(async () => {
        await this.runs.addDeliveries(
          run.id,
          notification.id,
          aiSummaryOf(notification),
          deliveries,
          reason,
          'failed',
        );
        await this.runs.setRunStatus(run.id, 'failed', reason);
      });
      ctx.fail(reason);
    }

    if ((await this.runs.deliveriesThisHour(notification.accountId)) >= limits.maxDeliveriesPerHour) {
      // Nothing can be sent this hour: nothing is rendered (nor counted) either.
      await this.db.transaction(async () => {
        const notes: string[] = [];
        await this.recordDeliveries(run.id, notification, deliveries, 0, notes);
        await this.runs.setRunStatus(run.id, 'delivering', notes.join('. ') || null);
      });
      await ctx.log(refusalNote(deliveries.length, deliveries.length, limits.maxDeliveriesPerHour));
      return;
    }

    const done = await this.runs.renderedContexts(run.id);
    const missing = [...contexts].filter(([hash]) => !done.has(hash));
    /** The contexts whose recipients are mailed nothing, and why. */
    const notMailed = new Map<string, NotMailed>();
    const shown: Shown = { title: '', link: '' };
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
      shown.title = dashboard.title?.trim() || `Dashboard ${dashboard.publicId}`;
      shown.link = this.link(notification, dashboard);
      const sources = await this.sources(notification, dashboard.config, dashboard.snapshotReportIds);
      for (const [hash, context] of missing) {
        await ctx.throwIfCancelled();
        const tables = await this.tables(notification, sources, context);
        const failures = tables.flatMap((t) =>
          t.error === undefined ? [] : [{ title: t.title, code: t.code ?? null, error: t.error }],
        );
        if (tables.length > 0 && failures.length === tables.length) {
          // Every report failed: an email of errors only is sent to nobody.
          const reason = everyReportFailed(failures);
          const transient = failures.some((f) => f.code !== null && TRANSIENT.has(f.code));
          if (transient && ctx.attempt < NOTIFICATION_RUN_JOB.attempts) {
            throw new Error(`${reason}; the run is tried again`);
          }
          notMailed.set(hash, { reason, reports: failures });
          continue;
        }
        const doc: DashboardDocument = {
          title: shown.title,
          link: shown.link,
          generatedAt: new Date(),
          timezone: notification.timezone,
          tables,
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
          const why = {
            reason: `Rendering the dashboard failed (${err.reason}): ${err.message}`,
            reports: [],
          };
          const everyone = new Map([...contexts.keys()].map((h) => [h, why]));
          return this.deliver(run, notification, shown, deliveries, everyone, ctx);
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
    await this.deliver(run, notification, shown, deliveries, notMailed, ctx);
  }

  /**
   * Records the run's deliveries and queues those to send, in one unit of work, counted against
   * the account's hourly limit (past it: `skipped`). Recipients in `notMailed` get a `failed`
   * delivery saying why, and the notification's owner a notice (a delivery of its own, counted
   * like the others and first in line). The run ends `delivering`, or `failed` when it mails none
   * of its recipients, with what happened in its `error`; a failed run fails its job too.
   */
  private async deliver(
    run: RunRow,
    notification: NotificationRow,
    shown: Shown,
    deliveries: DeliveryWrite[],
    notMailed: Map<string, NotMailed>,
    ctx: JobContext,
  ): Promise<void> {
    const max = this.config.notifications.maxDeliveriesPerHour;
    const sendable = deliveries.filter((d) => !notMailed.has(d.contextHash));
    const unsent = deliveries.filter((d) => notMailed.has(d.contextHash));
    const owner = unsent.length > 0 ? await this.owner(notification) : null;
    const { allowed, note } = await this.db.transaction(async () => {
      const notes: string[] = [];
      let granted = await this.runs.countDeliveries(
        notification.accountId,
        sendable.length + (owner?.delivery ? 1 : 0),
        max,
      );
      if (owner) {
        let told = owner.note;
        if (owner.delivery) {
          // The owner's notice first: when the hourly limit cuts the run short, it still says why.
          await this.saveOwnerNotice(run, notification, shown, deliveries.length, unsent, notMailed);
          await this.runs.addDeliveries(
            run.id,
            notification.id,
            null,
            [owner.delivery],
            granted > 0 ? null : HOURLY_LIMIT_REACHED,
          );
          if (granted > 0) granted -= 1;
          else
            told = `the notice to the notification’s owner (${owner.delivery.email}) was not sent: the account’s hourly delivery limit (${max}) was reached`;
        }
        for (const [hash, why] of notMailed) {
          await this.runs.addDeliveries(
            run.id,
            notification.id,
            aiSummaryOf(notification),
            unsent.filter((d) => d.contextHash === hash),
            `Not sent: ${why.reason}`,
            'failed',
          );
        }
        const [first] = notMailed.values();
        notes.push(
          sendable.length === 0
            ? `Nobody was mailed: ${first.reason}; ${told}`
            : `${unsent.length} of ${deliveries.length} recipients were not mailed, every report having failed ` +
                `under their security context: ${first.reason}; ${told}`,
        );
      }
      await this.recordDeliveries(run.id, notification, sendable, granted, notes);
      const note = notes.length > 0 ? clip(notes.join('. ')) : null;
      await this.runs.setRunStatus(run.id, sendable.length === 0 ? 'failed' : 'delivering', note);
      for (const deliveryId of await this.runs.queuedDeliveries(run.id)) {
        await this.jobs.enqueue(
          NOTIFICATION_DELIVER_JOB,
          { deliveryId },
          { accountId: notification.accountId, owner: scheduleOwner(notification.id) },
        );
      }
      return { allowed: granted, note };
    });
    await ctx.log(`Queued ${allowed} deliveries`);
    if (note) await ctx.log(note);
    if (sendable.length === 0) ctx.fail(note ?? 'Nobody was mailed');
  }

  /**
   * Records the deliveries to send, the first `allowed` of them queued and the rest `skipped` past
   * the account's hourly limit; adds to `notes` how many were refused, if any.
   */
  private async recordDeliveries(
    runId: string,
    notification: NotificationRow,
    deliveries: DeliveryWrite[],
    allowed: number,
    notes: string[],
  ): Promise<void> {
    const aiSummary = aiSummaryOf(notification);
    await this.runs.addDeliveries(runId, notification.id, aiSummary, deliveries.slice(0, allowed));
    const refused = deliveries.slice(allowed);
    await this.runs.addDeliveries(runId, notification.id, aiSummary, refused, HOURLY_LIMIT_REACHED);
    if (refused.length > 0) {
      notes.push(
        refusalNote(refused.length, deliveries.length, this.config.notifications.maxDeliveriesPerHour),
      );
    }
  }

  /**
   * The notification's owner (the user who made it) as a delivery of the owner's notice, or none,
   * with what the run's history says of it. A deactivated owner, or one without a single mailbox
   * (a user provisioned without an address), is told by the run's history alone.
   */
  private async owner(
    notification: NotificationRow,
  ): Promise<{ delivery: DeliveryWrite | null; note: string }> {
    const owner = await this.notifications.owner(notification.id);
    if (!owner) return { delivery: null, note: 'the notification has no owner to tell' };
    if (owner.deactivated || !owner.email || isNoEmail(owner.email) || !isMailbox(owner.email)) {
      return {
        delivery: null,
        note: 'the notification’s owner has no email address to be told at, so this record alone says it',
      };
    }
    return {
      delivery: {
        recipientKey: `owner:${owner.userId}`,
        recipientType: 'OWNER',
        userId: owner.userId,
        embedUserId: null,
        email: owner.email,
        contextHash: OWNER_NOTICE,
      },
      note: `the notification’s owner (${owner.email}) is told by email (the run’s OWNER delivery)`,
    };
  }

  /** Keeps the owner's notice as the run's render for {@link OWNER_NOTICE} (no attachment). */
  private async saveOwnerNotice(
    run: RunRow,
    notification: NotificationRow,
    shown: Shown,
    recipients: number,
    unsent: DeliveryWrite[],
    notMailed: Map<string, NotMailed>,
  ): Promise<void> {
    const first = notMailed.get(unsent[0].contextHash)!;
    const notice = renderFailureNotice({
      title: shown.title || `Dashboard ${notification.dashboardId}`,
      notificationId: notification.id,
      scheduledFor: new Date(run.scheduledFor),
      timezone: notification.timezone,
      notMailed: unsent.length,
      recipients,
      reason: first.reason,
      reports: first.reports.map((r) => ({ title: r.title, error: r.error })),
      link: shown.link,
    });
    await this.runs.saveRender(run.id, OWNER_NOTICE, {
      ...notice,
      filename: '',
      contentType: '',
      content: Buffer.alloc(0),
    });
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
    const out: ReportSource[] = [];
    const missing = (reportId: number): ReportSource => ({
      title: `Report ${reportId}`,
      jsonQuery: null,
      sqlQuery: null,
      error: 'The report was not found',
    });
    // The widgets' reports in layout order, then any other report the publish took.
    const ids = reportIdsOf(config);
    for (const id of published) if (!ids.includes(id)) ids.push(id);
    for (const reportId of ids) {
      try {
        const report = await this.reports.forRendering(
          notification.accountId,
          notification.deploymentId,
          reportId,
        );
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

  /** Each report's data under `context`; a failure is shown in its table (with its code, if any). */
  private async tables(
    notification: NotificationRow,
    sources: ReportSource[],
    context: Record<string, unknown>,
  ): Promise<Array<ReportTable & { code?: string | null }>> {
    const target = { accountId: notification.accountId, deploymentId: notification.deploymentId };
    const overrides = overridesOf(notification);
    const out: Array<ReportTable & { code?: string | null }> = [];
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
        out.push({
          title: source.title,
          columns: [],
          rows: [],
          error: message,
          code: err instanceof ApiError ? err.code : null,
        });
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

/**
 * Why a context's recipients are mailed nothing: every report failed. One message when they all
 * failed alike (a data API not configured, or out of reach), else the first and how many others.
 */
function everyReportFailed(failures: ReportFailure[]): string {
  const label = (f: ReportFailure) => (f.code ? `${f.code}: ${f.error}` : `${f.title}: ${f.error}`);
  const distinct = [...new Set(failures.map(label))];
  const what =
    failures.length === 1
      ? 'The one report of the dashboard failed'
      : `All ${failures.length} reports of the dashboard failed`;
  const others = distinct.length - 1;
  return clip(
    `${what}, so the email would hold only errors: ${distinct[0]}` +
      (others > 0 ? ` (and ${others} other error${others === 1 ? '' : 's'})` : ''),
  );
}

function clip(text: string): string {
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX - 1)}…` : text;
}

/** What a run's record says of the deliveries the hourly limit refused. */
function refusalNote(refused: number, total: number, max: number): string {
  return `${refused} of ${total} deliveries not sent: the account’s hourly delivery limit (${max}) was reached`;
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
