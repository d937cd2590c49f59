import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { isNoEmail } from '../users/no-email.js';
import type { NotificationDto, NotificationRunDto } from './dto/notification.dto.js';
import type { NotificationDeliveryDto } from './dto/recipient.dto.js';
import { isMailbox } from './mailbox.js';
import { deliveryDto } from './notification-events.js';
import { NOTIFICATION_DELIVER_JOB, NOTIFICATION_RUN_JOB, scheduleOwner } from './notification-jobs.js';
import { NotificationRunsRepository, type DeliveryDetail } from './notification-runs.repository.js';
import { notificationsError } from './notifications.errors.js';
import { NotificationsRepository, type NotificationRow } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';

/** An address a resend may use: one bare mailbox, not the placeholder of a user without one. */
const usable = (email: string | null | undefined): email is string =>
  !!email && !isNoEmail(email) && isMailbox(email);

/**
 * What an admin does with a notification's runs and deliveries (docs/notifications.md, Operating
 * deliveries): run it now, resend a failed delivery, pause and resume it. Each works in one unit
 * of work on the notification's row, locked, so parallel requests take turns.
 */
@Injectable()
export class NotificationOperationsService {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsService,
    private readonly repository: NotificationsRepository,
    private readonly runs: NotificationRunsRepository,
    private readonly schedules: JobSchedules,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
  ) {}

  /**
   * One run outside the schedule, now: a run row (`trigger: manual`, `queued`, `scheduledFor` the
   * instant asked) and its `notification.run` job, whose dedupe key allows one run now of a
   * notification queued or running at a time (another: `409 notification_run_in_progress`, and
   * nothing is written). The schedule's next occurrence is left as it is. Paused or disabled
   * notifications run too: the request is explicit.
   */
  async runNow(actor: Principal, deploymentId: number, id: number): Promise<NotificationRunDto> {
    this.jobs.assertAvailable();
    return this.db.transaction(async () => {
      await this.notifications.require(actor, deploymentId, id, true);
      const run = await this.runs.insertManualRun(id, new Date(), actor.userId);
      const { runId, created } = await this.jobs.enqueue(
        NOTIFICATION_RUN_JOB,
        { notificationId: id, scheduledFor: run.scheduledFor, manual: true },
        { accountId: actor.accountId, owner: scheduleOwner(id), dedupeKey: `notification.run:${id}:manual` },
      );
      if (!created) {
        throw notificationsError(
          'notification_run_in_progress',
          `Notification ${id} is already being run now (job run ${runId}); retry once that run has ended`,
        );
      }
      await this.runs.setRunJob(run.id, runId);
      return { ...run, jobRunId: runId };
    });
  }

  /**
   * Sends a failed delivery once more, to that recipient alone, at the recipient's address now
   * (compare-and-set `failed` → `queued`: of parallel resends one wins, the others answer `409
   * delivery_not_failed`). Counted against the account's hourly delivery limit.
   */
  async resend(
    actor: Principal,
    deploymentId: number,
    id: number,
    deliveryId: string,
  ): Promise<NotificationDeliveryDto> {
    this.jobs.assertAvailable();
    return this.db.transaction(async () => {
      const notification = await this.notifications.require(actor, deploymentId, id);
      const delivery = await this.runs.deliveryOf(id, deliveryId);
      if (!delivery) throw notFound('NotificationDelivery', deliveryId);
      if (delivery.status !== 'failed') throw notFailed(delivery);
      if (!(await this.runs.hasRender(delivery.runId, delivery.contextHash))) {
        throw notificationsError(
          'delivery_not_resendable',
          `Delivery ${deliveryId} failed before anything was made to send it (${delivery.lastError ?? 'no email was rendered'}); ` +
            `run the notification again instead (POST .../notifications/${id}/run)`,
        );
      }
      const email = await this.addressNow(notification, delivery);
      const resends = await this.runs.resend(id, deliveryId, email, actor.userId);
      // A parallel resend took it between the read and the compare-and-set.
      if (resends === undefined) throw notFailed((await this.runs.deliveryOf(id, deliveryId)) ?? delivery);
      const max = this.config.notifications.maxDeliveriesPerHour;
      if ((await this.runs.countDeliveries(notification.accountId, 1, max)) === 0) {
        throw notificationsError(
          'notification_delivery_limit_reached',
          `The account’s hourly delivery limit (${max}) is reached; resend after the hour (UTC)`,
        );
      }
      await this.jobs.enqueue(
        NOTIFICATION_DELIVER_JOB,
        { deliveryId },
        {
          accountId: notification.accountId,
          owner: scheduleOwner(id),
          dedupeKey: `notification.deliver:${deliveryId}:resend:${resends}`,
        },
      );
      const [row] = await this.runs.deliveryDetails([deliveryId]);
      return deliveryDto(row);
    });
  }

  /**
   * Pauses the notification: its schedule stops firing, and the deliveries of its scheduled runs
   * not sent yet wait (`held`). Idempotent: a paused notification keeps its `pausedAt`.
   */
  async pause(actor: Principal, deploymentId: number, id: number): Promise<NotificationDto> {
    await this.db.transaction(async () => {
      const notification = await this.notifications.require(actor, deploymentId, id, true);
      if (notification.pausedAt !== null) return;
      await this.repository.setPaused(id, true);
      const [schedule] = await this.schedules.listByOwner(scheduleOwner(id));
      if (schedule) await this.schedules.update(schedule.id, { enabled: false });
    });
    return this.notifications.get(actor, deploymentId, id);
  }

  /**
   * Resumes the notification: the held deliveries go (`held` → `queued`, each queued again), and
   * the schedule, when the notification is enabled, fires from its next occurrence after now (the
   * occurrences missed while paused are not made up). Idempotent.
   */
  async resume(actor: Principal, deploymentId: number, id: number): Promise<NotificationDto> {
    await this.db.transaction(async () => {
      const notification = await this.notifications.require(actor, deploymentId, id, true);
      if (notification.pausedAt === null) return;
      await this.repository.setPaused(id, false);
      const [schedule] = await this.schedules.listByOwner(scheduleOwner(id));
      if (schedule) {
        await this.schedules.update(schedule.id, {
          enabled: notification.isEnabled && notification.notificationEnabled,
        });
      }
      const pause = Date.parse(notification.pausedAt);
      for (const deliveryId of await this.runs.releaseHeld(id)) {
        await this.jobs.enqueue(
          NOTIFICATION_DELIVER_JOB,
          { deliveryId },
          {
            accountId: notification.accountId,
            owner: scheduleOwner(id),
            dedupeKey: `notification.deliver:${deliveryId}:resume:${pause}`,
          },
        );
      }
    });
    return this.notifications.get(actor, deploymentId, id);
  }

  /**
   * Where a resend goes: the recipient's address now where the recipient still exists (a user's
   * email as it is now, an embed recipient's address as now recorded, the owner's email), else
   * the delivery's own. A deactivated user is not mailed (409 delivery_not_resendable).
   */
  private async addressNow(notification: NotificationRow, delivery: DeliveryDetail): Promise<string> {
    if (delivery.recipientType === 'EMBED_USER' && delivery.embedUserId !== null) {
      const [recipient] = await this.repository.recipientsAmong(notification.id, [], [delivery.embedUserId]);
      return usable(recipient?.email) ? recipient.email : delivery.email;
    }
    if (delivery.userId === null) return delivery.email;
    const user = await this.repository.user(notification.accountId, delivery.userId);
    if (!user) return delivery.email;
    if (user.deactivated) {
      throw notificationsError(
        'delivery_not_resendable',
        `User ${delivery.userId} is deactivated: a deactivated user is not mailed`,
      );
    }
    return usable(user.email) ? user.email : delivery.email;
  }
}

function notFailed(delivery: Pick<DeliveryDetail, 'id' | 'status'>) {
  return notificationsError(
    'delivery_not_failed',
    `Delivery ${delivery.id} is ${delivery.status}: only a failed delivery is resent`,
  );
}
