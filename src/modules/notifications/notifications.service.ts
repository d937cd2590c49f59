import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, fetchLimit, resolvePaging, type Page } from '../../core/http/pagination.js';
import { JobRuns } from '../../core/queue/job-runs.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import type {
  CreateNotificationDto,
  NotificationDto,
  NotificationsQueryDto,
  UpdateNotificationDto,
} from './dto/notification.dto.js';
import type { NotificationDeliveryDto, RecipientsQueryDto } from './dto/recipient.dto.js';
import { NOTIFICATION_RUN_JOB, scheduleOwner } from './notification-jobs.js';
import { NotificationRunsRepository } from './notification-runs.repository.js';
import {
  assertMinInterval,
  humanReadableSchedule,
  resolveSchedule,
  type ScheduleFields,
} from './notification-schedule.js';
import { NotificationsRepository, type NotificationRow } from './notifications.repository.js';

export { scheduleOwner };

/** A notification as the content impact reads it ({@link NotificationsService.overridesOfDeployment}). */
export interface NotificationOverrides {
  id: number;
  dashboardId: number;
  /** Its schedule in words: `At 09:00 (UTC)`. */
  schedule: string;
  /** As stored (JSON arrays, or null). */
  filters: unknown;
  timeGrains: unknown;
  memberSwitchers: unknown;
  /** The tenants of its embed-user recipients, sorted. */
  embedTenants: string[];
}

/**
 * Scheduled notifications of a deployment: the rows, and their schedules in `job_schedules`
 * (created, changed and removed in the same unit of work as the row; enabled only while the
 * notification is enabled, its mail is on and it is not paused). Routes are admin-only (the controller); this
 * service checks that the deployment, the dashboard and the notification are the caller's.
 */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly db: Database,
    private readonly notifications: NotificationsRepository,
    private readonly runs: NotificationRunsRepository,
    private readonly schedules: JobSchedules,
    private readonly jobRuns: JobRuns,
    private readonly config: AppConfig,
  ) {}

  async list(
    actor: Principal,
    deploymentId: number,
    query: NotificationsQueryDto,
  ): Promise<Page<NotificationDto>> {
    if (query.dashboardId !== undefined && query.dashboardPublicId !== undefined) {
      throw coreError('validation_failed', ['Give dashboardId or dashboardPublicId, not both']);
    }
    const user = query.recipientUserId !== undefined || query.recipientEmail !== undefined;
    const embed = query.recipientEmbedTenantName !== undefined || query.recipientExternalId !== undefined;
    if ((query.recipientUserId !== undefined && query.recipientEmail !== undefined) || (user && embed)) {
      throw coreError('validation_failed', [
        'Give at most one recipient: recipientUserId, recipientEmail, or recipientEmbedTenantName with recipientExternalId',
      ]);
    }
    if (embed && (query.recipientEmbedTenantName === undefined || query.recipientExternalId === undefined)) {
      throw coreError('validation_failed', ['recipientEmbedTenantName and recipientExternalId go together']);
    }
    await this.requireDeployment(actor, deploymentId);
    const paging = resolvePaging(query, ['number']);
    let dashboardId = query.dashboardId ?? null;
    if (query.dashboardPublicId !== undefined) {
      const dashboard = await this.notifications.dashboard(actor.accountId, deploymentId, {
        publicId: query.dashboardPublicId,
      });
      if (!dashboard) return buildPage([], paging, () => []);
      dashboardId = dashboard.id;
    }
    const rows = await this.notifications.list(
      actor.accountId,
      deploymentId,
      {
        dashboardId,
        recipientUserId: query.recipientUserId ?? null,
        recipientEmail: query.recipientEmail?.trim().toLowerCase() ?? null,
        recipientEmbed: embed
          ? {
              tenant: query.recipientEmbedTenantName!.trim().toLowerCase(),
              externalId: query.recipientExternalId!.trim().toLowerCase(),
            }
          : null,
      },
      paging.mode === 'cursor' && paging.after ? (paging.after[0] as number) : null,
      fetchLimit(paging),
    );
    return buildPage(rows, paging, (r) => [r.id], toDto);
  }

  async get(actor: Principal, deploymentId: number, id: number): Promise<NotificationDto> {
    return toDto(await this.require(actor, deploymentId, id));
  }

  /** Creates the notification (no recipients yet) and its schedule, in one unit of work. */
  async create(actor: Principal, deploymentId: number, dto: CreateNotificationDto): Promise<NotificationDto> {
    const byId = dto.dashboardId !== undefined && dto.dashboardId !== null;
    const byPublicId = dto.dashboardPublicId !== undefined && dto.dashboardPublicId !== null;
    if (byId === byPublicId) {
      throw coreError('validation_failed', ['Give exactly one of dashboardId and dashboardPublicId']);
    }
    const { fields, cron } = resolveSchedule(dto);
    assertFilters(dto.filters);
    assertMinInterval(cron, fields.timezone, this.config.notifications.minIntervalMinutes);
    await this.requireDeployment(actor, deploymentId);
    const dashboard = await this.notifications.dashboard(
      actor.accountId,
      deploymentId,
      byId ? { id: dto.dashboardId! } : { publicId: dto.dashboardPublicId! },
    );
    if (!dashboard) throw notFound('Dashboard', byId ? dto.dashboardId! : dto.dashboardPublicId!);
    const isEnabled = true;
    const notificationEnabled = dto.notificationEnabled ?? true;
    const id = await this.db.transaction(async () => {
      const created = await this.notifications.insert({
        accountId: actor.accountId,
        deploymentId,
        dashboardId: dashboard.id,
        ...fields,
        cronExpression: cron,
        isEnabled,
        notificationEnabled,
        notificationFormat: dto.notificationFormat ?? 'pdf',
        notificationAiSummary: dto.notificationAiSummary ?? false,
        filters: dto.filters ?? null,
        timeGrains: dto.timeGrains ?? null,
        memberSwitchers: dto.memberSwitchers ?? null,
        createdBy: actor.userId,
      });
      await this.schedules.create({
        owner: scheduleOwner(created),
        job: NOTIFICATION_RUN_JOB,
        cron,
        timezone: fields.timezone,
        payload: { notificationId: created },
        accountId: actor.accountId,
        enabled: isEnabled && notificationEnabled,
      });
      return created;
    });
    return this.get(actor, deploymentId, id);
  }

  /**
   * Applies the fields sent (omitted ones unchanged; recipients never touched). A changed cron or
   * time zone, or turning the schedule back on, computes the next firing from now.
   */
  async update(
    actor: Principal,
    deploymentId: number,
    id: number,
    dto: UpdateNotificationDto,
  ): Promise<NotificationDto> {
    await this.db.transaction(async () => {
      const current = await this.notifications.get(actor.accountId, deploymentId, id, true);
      if (!current) throw notFound('Notification', id);
      const { fields, cron } = resolveSchedule(dto, current);
      assertFilters(dto.filters);
      const next = {
        ...fields,
        cronExpression: cron,
        isEnabled: dto.isEnabled ?? current.isEnabled,
        notificationEnabled: dto.notificationEnabled ?? current.notificationEnabled,
        notificationFormat: dto.notificationFormat ?? current.notificationFormat,
        notificationAiSummary: dto.notificationAiSummary ?? current.notificationAiSummary,
        filters: dto.filters !== undefined ? dto.filters : current.filters,
        timeGrains: dto.timeGrains !== undefined ? dto.timeGrains : current.timeGrains,
        memberSwitchers: dto.memberSwitchers !== undefined ? dto.memberSwitchers : current.memberSwitchers,
      };
      const on = next.isEnabled && next.notificationEnabled;
      // A paused notification's schedule stays off until it is resumed.
      const enabled = on && current.pausedAt === null;
      // A schedule stored before the minimum (or a lower one) is left alone until it is changed or
      // turned back on; its occurrences closer than the minimum are skipped when they fire.
      const turnedOn = on && !(current.isEnabled && current.notificationEnabled);
      if (cron !== current.cronExpression || fields.timezone !== current.timezone || turnedOn) {
        assertMinInterval(cron, fields.timezone, this.config.notifications.minIntervalMinutes);
      }
      await this.notifications.update(id, next);
      const [schedule] = await this.schedules.listByOwner(scheduleOwner(id));
      if (schedule) {
        await this.schedules.update(schedule.id, { cron, timezone: fields.timezone, enabled });
      } else {
        await this.schedules.create({
          owner: scheduleOwner(id),
          job: NOTIFICATION_RUN_JOB,
          cron,
          timezone: fields.timezone,
          payload: { notificationId: id },
          accountId: actor.accountId,
          enabled,
        });
      }
    });
    return this.get(actor, deploymentId, id);
  }

  /** Deletes the notification with its recipients, runs, deliveries and schedule. */
  async remove(actor: Principal, deploymentId: number, id: number): Promise<void> {
    await this.db.transaction(async () => {
      await this.require(actor, deploymentId, id, true);
      await this.schedules.removeByOwner(scheduleOwner(id));
      await this.jobRuns.forgetOwner(scheduleOwner(id));
      await this.notifications.remove(id);
    });
  }

  /** `GET .../deliveries`: newest first. */
  async deliveries(
    actor: Principal,
    deploymentId: number,
    id: number,
    query: RecipientsQueryDto,
  ): Promise<Page<NotificationDeliveryDto>> {
    await this.require(actor, deploymentId, id);
    const paging = resolvePaging(query, ['string']);
    const after = paging.mode === 'cursor' && paging.after ? (paging.after[0] as string) : null;
    if (after !== null && !/^\d{1,18}$/.test(after))
      throw coreError('invalid_cursor', 'after is not a cursor of this list');
    const rows = await this.runs.deliveries(id, after, fetchLimit(paging));
    return buildPage(rows, paging, (r) => [r.id]);
  }

  /**
   * Every notification of the account's deployment: its dashboard, schedule in words, filters,
   * time grains and field switchers as stored, and the tenants of its embed-user recipients. No
   * caller and no access check: the content impact of a model change (issue 33) reads them for a
   * caller the data model has already checked.
   */
  async overridesOfDeployment(accountId: number, deploymentId: number): Promise<NotificationOverrides[]> {
    const rows = await this.notifications.overrides(accountId, deploymentId);
    return rows.map((r) => ({
      id: r.id,
      dashboardId: r.dashboardId,
      schedule: humanReadableSchedule(r.cronExpression, r.timezone),
      filters: r.filters,
      timeGrains: r.timeGrains,
      memberSwitchers: r.memberSwitchers,
      embedTenants: r.embedTenants,
    }));
  }

  /** The notification, or 404 (`deployment_not_found` when the deployment is not the caller's). */
  async require(actor: Principal, deploymentId: number, id: number, lock = false): Promise<NotificationRow> {
    const row = await this.notifications.get(actor.accountId, deploymentId, id, lock);
    if (!row) throw notFound('Notification', id);
    return row;
  }

  private async requireDeployment(actor: Principal, deploymentId: number): Promise<void> {
    if (!(await this.notifications.deploymentExists(actor.accountId, deploymentId))) {
      throw notFound('Deployment', deploymentId);
    }
  }
}

/** A `between` filter needs its two bounds. */
function assertFilters(filters: CreateNotificationDto['filters']): void {
  const errors = (filters ?? []).flatMap((f, i) =>
    f.operator === 'between' && !(Array.isArray(f.value) && f.value.length === 2)
      ? [`filters[${i}].value must be [start, end] for the between operator`]
      : [],
  );
  if (errors.length > 0) throw coreError('validation_failed', errors);
}

export function toDto(row: NotificationRow): NotificationDto {
  return {
    id: row.id,
    deploymentId: row.deploymentId,
    dashboardId: row.dashboardId,
    scheduleType: row.scheduleType,
    minute: row.minute,
    hour: row.hour,
    dayOfWeek: row.dayOfWeek,
    dayOfMonth: row.dayOfMonth,
    cronExpression: row.cronExpression,
    timezone: row.timezone,
    humanReadableSchedule: humanReadableSchedule(row.cronExpression, row.timezone),
    isEnabled: row.isEnabled,
    notificationEnabled: row.notificationEnabled,
    pausedAt: row.pausedAt,
    notificationFormat: row.notificationFormat,
    notificationAiSummary: row.notificationAiSummary,
    filters: row.filters as NotificationDto['filters'],
    timeGrains: row.timeGrains as NotificationDto['timeGrains'],
    memberSwitchers: row.memberSwitchers as NotificationDto['memberSwitchers'],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export type { ScheduleFields };
