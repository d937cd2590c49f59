import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import type { JobContext } from '../../core/queue/job-context.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { isNoEmail } from '../users/no-email.js';
import {
  DashboardRendering,
  embedSecurityContext,
  isTransientFailure,
  RenderError,
  type DashboardFile,
  type PublishedDashboard,
  type RenderedTable,
  type ReportSource,
} from './dashboard-rendering.service.js';
import { renderFailureNotice } from './delivery/failure-notice.js';
import { MailNotConfiguredError, Mailer } from './delivery/mailer.js';
import { renderEmailHtml, renderEmailText, type DashboardDocument } from './delivery/dashboard-document.js';
import { NotificationEvents } from './notification-events.js';
import {
  NOTIFICATION_DELIVER_JOB,
  NOTIFICATION_RUN_JOB,
  scheduleOwner,
  type NotificationRunPayload,
} from './notification-jobs.js';
import { describeFilters, type QueryOverrides } from './notification-query.js';
import {
  NotificationRunsRepository,
  type DeliveryWrite,
  type RunRow,
} from './notification-runs.repository.js';
import { HOURLY_LIMIT_REACHED, NotificationRunEnding, OWNER_NOTICE } from './notification-run-ending.js';
import { firesTooSoonAfter } from './notification-schedule.js';
import {
  NotificationsRepository,
  type NotificationRow,
  type RecipientRow,
} from './notifications.repository.js';

export { HOURLY_LIMIT_REACHED, OWNER_NOTICE };

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
  return embedSecurityContext({
    securityContext: recipient.securityContext,
    userAttributes: recipient.userAttributes as Array<{ name: string; value?: unknown }> | null,
    groups: recipient.groups,
  });
}

export function contextHash(context: Record<string, unknown>): string {
  return createHash('sha256').update(canonical(context)).digest('hex');
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
 * A run asked for by hand (run now) is the same job on a run row its request wrote (`queued`).
 * Deliveries recorded `failed` publish `notification.delivery_failed` with them; a run whose
 * deliveries have all ended is ended (`NotificationRunEnding`) before the job ends.
 */
@Injectable()
export class NotificationRunJob {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsRepository,
    private readonly runs: NotificationRunsRepository,
    private readonly schedules: JobSchedules,
    private readonly jobs: JobQueue,
    private readonly rendering: DashboardRendering,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
    private readonly ending: NotificationRunEnding,
    private readonly events: NotificationEvents,
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
    if (run.status === 'queued') await this.runs.startRun(run.id);
    else if (run.status !== 'rendering') {
      // Done before (a run executed again): at most its end is left, if a crash came between.
      await this.ending.finish(run.id);
      return;
    }
    const limits = this.config.notifications;
    if (
      payload.scheduledFor &&
      !payload.manual &&
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
      await this.ending.finish(run.id);
      await ctx.log(reason);
      return;
    }

    // Deactivated users, and users provisioned without an address, are not mailed.
    const recipients = (await this.notifications.recipients(notification.id, null, null)).filter(
      (r) => !r.deactivated && r.email && !isNoEmail(r.email),
    );
    if (recipients.length === 0) {
      await this.runs.setRunStatus(run.id, 'delivering');
      await this.ending.finish(run.id);
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
        const failed = await this.runs.addDeliveries(
          run.id,
          notification.id,
          aiSummaryOf(notification),
          deliveries,
          reason,
          'failed',
        );
        await this.runs.setRunStatus(run.id, 'failed', reason);
        await this.events.deliveryFailed(await this.runs.deliveryDetails(failed));
      });
      await this.ending.finish(run.id);
      ctx.fail(reason);
    }

    if ((await this.runs.deliveriesThisHour(notification.accountId)) >= limits.maxDeliveriesPerHour) {
      // Nothing can be sent this hour: nothing is rendered (nor counted) either.
      await this.db.transaction(async () => {
        const notes: string[] = [];
        await this.recordDeliveries(run.id, notification, deliveries, 0, notes);
        await this.runs.setRunStatus(run.id, 'delivering', notes.join('. ') || null);
      });
      await this.ending.finish(run.id);
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
      const dashboard = await this.rendering.published(notification.accountId, notification.deploymentId, {
        id: notification.dashboardId,
      });
      if (!dashboard) {
        await this.runs.setRunStatus(run.id, 'failed', 'The dashboard is no longer published');
        await this.ending.finish(run.id);
        ctx.fail('The dashboard is no longer published');
      }
      shown.title = this.rendering.title(dashboard);
      shown.link = this.rendering.link(notification.deploymentId, dashboard);
      const sources = await this.sources(notification, dashboard);
      for (const [hash, context] of missing) {
        await ctx.throwIfCancelled();
        const tables = await this.tables(notification, sources, context);
        const failures = tables.flatMap((t) =>
          t.error === undefined ? [] : [{ title: t.title, code: t.code ?? null, error: t.error }],
        );
        if (tables.length > 0 && failures.length === tables.length) {
          // Every report failed: an email of errors only is sent to nobody.
          const reason = everyReportFailed(failures);
          const transient = failures.some((f) => isTransientFailure(f.code));
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
        let attachment: DashboardFile;
        try {
          attachment = await this.rendering.file(
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
    const owner = unsent.length > 0 ? await this.ending.ownerOf(notification) : null;
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
          const failed = await this.runs.addDeliveries(
            run.id,
            notification.id,
            aiSummaryOf(notification),
            unsent.filter((d) => d.contextHash === hash),
            `Not sent: ${why.reason}`,
            'failed',
          );
          await this.events.deliveryFailed(await this.runs.deliveryDetails(failed));
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
    await this.ending.finish(run.id);
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

  /** The reports of the dashboard, read as they are now. */
  private sources(notification: NotificationRow, dashboard: PublishedDashboard): Promise<ReportSource[]> {
    return this.rendering.sources(
      { accountId: notification.accountId, deploymentId: notification.deploymentId },
      dashboard,
    );
  }

  /** Each report's data under `context`; a failure is shown in its table (with its code, if any). */
  private tables(
    notification: NotificationRow,
    sources: ReportSource[],
    context: Record<string, unknown>,
  ): Promise<RenderedTable[]> {
    return this.rendering.tables(
      { accountId: notification.accountId, deploymentId: notification.deploymentId },
      sources,
      overridesOf(notification),
      context,
    );
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
