import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { isNoEmail } from '../users/no-email.js';
import { DashboardRendering } from './dashboard-rendering.service.js';
import { renderFailureNotice } from './delivery/failure-notice.js';
import { isMailbox } from './mailbox.js';
import { NotificationEvents } from './notification-events.js';
import { NOTIFICATION_DELIVER_JOB, scheduleOwner } from './notification-jobs.js';
import {
  NotificationRunsRepository,
  type DeliveryWrite,
  type RefusedDelivery,
  type RunCounts,
  type RunView,
} from './notification-runs.repository.js';
import { NotificationsRepository, type NotificationRow } from './notifications.repository.js';

/** Why a delivery past NOTIFICATION_MAX_DELIVERIES_PER_HOUR is not sent (its `lastError`). */
export const HOURLY_LIMIT_REACHED = 'Not sent: the account’s hourly delivery limit was reached';

/** The `context_hash` of the run's notice to the notification's owner (its render has no attachment). */
export const OWNER_NOTICE = 'owner-notice';

/** The notification's owner as a delivery of a notice, or none, with what the run's record says of it. */
export interface OwnerNotice {
  delivery: DeliveryWrite | null;
  note: string;
}

/**
 * The end of a run: once every delivery to its recipients has ended (`finishRun`, a
 * compare-and-set on `finished_at`, so it happens once however often it is asked), the run is
 * `finished`, `notification.run_finished` is published, and when the mail server refused some
 * recipients for good the notification's owner gets one notice saying which (unless the run told
 * the owner already: one notice per run). Asked after each delivery ends and after a run records
 * its deliveries, each time in a unit of work of its own, after the change that ended a delivery
 * has committed (two deliveries ending together then always leave one asker seeing both ended).
 */
@Injectable()
export class NotificationRunEnding {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsRepository,
    private readonly runs: NotificationRunsRepository,
    private readonly rendering: DashboardRendering,
    private readonly jobs: JobQueue,
    private readonly events: NotificationEvents,
    private readonly config: AppConfig,
  ) {}

  /** Ends the run when every delivery to its recipients has ended; nothing otherwise, or when it has ended. */
  async finish(runId: string): Promise<void> {
    await this.db.transaction(async () => {
      const ended = await this.runs.finishRun(runId);
      if (!ended) return;
      const notification = await this.notifications.byId(ended.notificationId);
      if (!notification) return;
      const { counts, refused } = await this.runs.runOutcome(ended.id);
      let run: RunView = ended;
      if (refused.length > 0 && !(await this.runs.hasOwnerDelivery(ended.id))) {
        await this.tellOwner(ended, notification, counts, refused);
        run = (await this.runs.runView(ended.id))!;
      }
      await this.events.runFinished(notification.accountId, run, counts);
    });
  }

  /**
   * The notification's owner (the user who made it) as a delivery of the owner's notice, or none,
   * with what the run's history says of it. A deactivated owner, or one without a single mailbox
   * (a user provisioned without an address), is told by the run's history alone.
   */
  async ownerOf(notification: NotificationRow): Promise<OwnerNotice> {
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

  /**
   * The owner's notice of recipients the mail server refused for good: kept as the run's
   * {@link OWNER_NOTICE} render, recorded as the run's OWNER delivery (counted against the hourly
   * limit) and queued; never to one of the refused addresses. The run's record says what was done.
   */
  private async tellOwner(
    run: RunView,
    notification: NotificationRow,
    counts: RunCounts,
    refused: RefusedDelivery[],
  ): Promise<void> {
    const owner = await this.ownerOf(notification);
    const what = `${refused.length} of ${counts.total} recipients were refused for good by the mail server`;
    const delivery = owner.delivery;
    if (!delivery) return this.runs.noteOnRun(run.id, `${what}; ${owner.note}`);
    const address = delivery.email.toLowerCase();
    if (refused.some((r) => r.email.toLowerCase() === address)) {
      return this.runs.noteOnRun(
        run.id,
        `${what}; the notification’s owner (${delivery.email}) is one of them, so this record alone says it`,
      );
    }
    const dashboard = await this.rendering.published(notification.accountId, notification.deploymentId, {
      id: notification.dashboardId,
    });
    const notice = renderFailureNotice({
      title: dashboard ? this.rendering.title(dashboard) : `Dashboard ${notification.dashboardId}`,
      notificationId: notification.id,
      scheduledFor: new Date(run.scheduledFor),
      timezone: notification.timezone,
      notMailed: refused.length,
      recipients: counts.total,
      reason: `The mail server refused ${refused.length} recipient${refused.length === 1 ? '' : 's'} for good`,
      reports: [],
      refused,
      link: dashboard ? this.rendering.link(notification.deploymentId, dashboard) : '',
    });
    await this.runs.saveRender(run.id, OWNER_NOTICE, {
      ...notice,
      filename: '',
      contentType: '',
      content: Buffer.alloc(0),
    });
    const max = this.config.notifications.maxDeliveriesPerHour;
    const granted = await this.runs.countDeliveries(notification.accountId, 1, max);
    const [id] = await this.runs.addDeliveries(
      run.id,
      notification.id,
      null,
      [delivery],
      granted > 0 ? null : HOURLY_LIMIT_REACHED,
    );
    if (granted > 0 && id) {
      await this.jobs.enqueue(
        NOTIFICATION_DELIVER_JOB,
        { deliveryId: id },
        { accountId: notification.accountId, owner: scheduleOwner(notification.id) },
      );
    }
    await this.runs.noteOnRun(
      run.id,
      granted > 0
        ? `${what}; ${owner.note}`
        : `${what}; the notice to the notification’s owner (${delivery.email}) was not sent: the account’s hourly delivery limit (${max}) was reached`,
    );
  }
}
