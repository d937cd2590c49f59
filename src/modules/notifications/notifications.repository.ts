import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { deploymentInAccountSql } from '../deployments/deployments.fragments.js';
import { userJoin } from '../users/users.fragments.js';
import { reportSnapshotsJsonSql } from '../reports/reports.fragments.js';
import { publishedDashboardSql } from '../workspace/workspace.fragments.js';
import type { ScheduleFields } from './notification-schedule.js';

/** A notification as stored. */
export interface NotificationRow extends ScheduleFields {
  id: number;
  accountId: number;
  deploymentId: number;
  dashboardId: number;
  cronExpression: string;
  isEnabled: boolean;
  notificationEnabled: boolean;
  notificationFormat: string;
  notificationAiSummary: boolean;
  filters: unknown[] | null;
  timeGrains: unknown[] | null;
  memberSwitchers: unknown[] | null;
  createdBy: number | null;
  /** When it was paused (ISO 8601), or null. */
  pausedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NotificationWrite = Omit<NotificationRow, 'id' | 'createdAt' | 'updatedAt' | 'pausedAt'>;

/** A published dashboard a notification runs. */
export interface DashboardRef {
  id: number;
  publicId: string;
  workbookId: number;
  title: string | null;
  config: unknown;
  /** The reports its last publish took (`reportSnapshots`), in the order taken. */
  snapshotReportIds: number[];
}

/** A recipient with what its list item shows. */
export interface RecipientRow {
  id: number;
  type: 'USER' | 'EMBED_USER';
  userId: number | null;
  username: string | null;
  /** USER: the user's email now; EMBED_USER: the address resolved when it was added. */
  email: string | null;
  embedUserId: number | null;
  embedTenantName: string | null;
  externalId: string | null;
  securityContext: Record<string, unknown> | null;
  userAttributes: unknown[] | null;
  groups: string[] | null;
  /** USER: the user is deactivated (not mailed). */
  deactivated: boolean;
}

/** A notification's overrides and embed recipients' tenants, as the content impact reads them. */
export interface NotificationOverridesRow {
  id: number;
  dashboardId: number;
  cronExpression: string;
  timezone: string;
  filters: unknown;
  timeGrains: unknown;
  memberSwitchers: unknown;
  /** The tenants of its embed-user recipients, sorted. */
  embedTenants: string[];
}

export interface EmbedRecipientWrite {
  embedUserId: number;
  embedTenantName: string;
  externalId: string;
  email: string;
  securityContext: Record<string, unknown> | null;
  userAttributes: unknown[] | null;
  groups: string[] | null;
}

export interface ListFilter {
  dashboardId: number | null;
  recipientUserId: number | null;
  recipientEmail: string | null;
  recipientEmbed: { tenant: string; externalId: string } | null;
}

const COLUMNS = `n.id, n.account_id AS "accountId", n.deployment_id AS "deploymentId", n.dashboard_id AS "dashboardId",
  n.schedule_type AS "scheduleType", n.minute, n.hour, n.day_of_week AS "dayOfWeek", n.day_of_month AS "dayOfMonth",
  n.custom_cron AS "customCron", n.cron_expression AS "cronExpression", n.timezone, n.is_enabled AS "isEnabled",
  n.notification_enabled AS "notificationEnabled", n.notification_format AS "notificationFormat",
  n.notification_ai_summary AS "notificationAiSummary", n.filters, n.time_grains AS "timeGrains",
  n.member_switchers AS "memberSwitchers", n.created_by AS "createdBy",
  CASE WHEN n.paused_at IS NULL THEN NULL ELSE ${isoSql('n.paused_at')} END AS "pausedAt",
  ${isoSql('n.created_at')} AS "createdAt", ${isoSql('n.updated_at')} AS "updatedAt"`;

const RECIPIENT_COLUMNS = `r.id, r.type, r.user_id AS "userId", u.username,
  CASE WHEN r.type = 'USER' THEN u.email ELSE r.email END AS email, r.embed_user_id AS "embedUserId",
  r.embed_tenant_name AS "embedTenantName", r.external_id AS "externalId", r.security_context AS "securityContext",
  r.user_attributes AS "userAttributes", r.groups, COALESCE(u.is_deactivated, false) AS deactivated`;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * All SQL on `notifications` and `notification_recipients`. Dashboards, deployments and users are
 * read through their owners' fragments. Every call joins the current unit of work.
 */
@Injectable()
export class NotificationsRepository {
  constructor(private readonly db: Database) {}

  async deploymentExists(accountId: number, deploymentId: number): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(
      `SELECT ${deploymentInAccountSql(':deploymentId', ':accountId')} AS ok`,
      { deploymentId, accountId },
    );
    return row!.ok;
  }

  /** The published dashboard of the deployment with this id or public id (workspace's fragment). */
  dashboard(
    accountId: number,
    deploymentId: number,
    by: { id: number } | { publicId: string },
  ): Promise<DashboardRef | undefined> {
    const byId = 'id' in by;
    return this.db.one<DashboardRef>(
      `SELECT (x.dashboard->>'id')::int AS id, x.dashboard->>'publicId' AS "publicId", x.workbook_id AS "workbookId",
         x.dashboard->>'title' AS title, x.dashboard->'config' AS config,
         ARRAY(SELECT (s->>'reportId')::int FROM json_array_elements(COALESCE(x.dashboard->'reportSnapshots', '[]'::json)) s)
           AS "snapshotReportIds"
       FROM ${publishedDashboardSql(
         'x',
         {
           ...(byId ? { id: ':dashboardId' } : { publicId: ':publicId' }),
           accountId: ':accountId',
           deploymentId: ':deploymentId',
         },
         reportSnapshotsJsonSql,
       )}`,
      byId
        ? { accountId, deploymentId, dashboardId: by.id }
        : { accountId, deploymentId, publicId: by.publicId },
    );
  }

  /** Every notification of the account's deployment with its overrides and recipients' tenants (one query). */
  overrides(accountId: number, deploymentId: number): Promise<NotificationOverridesRow[]> {
    return this.db.query<NotificationOverridesRow>(
      `SELECT n.id, n.dashboard_id AS "dashboardId", n.cron_expression AS "cronExpression", n.timezone,
         n.filters, n.time_grains AS "timeGrains", n.member_switchers AS "memberSwitchers",
         ARRAY(SELECT DISTINCT r.embed_tenant_name FROM notification_recipients r
               WHERE r.notification_id = n.id AND r.type = 'EMBED_USER' AND r.embed_tenant_name IS NOT NULL
               ORDER BY 1) AS "embedTenants"
       FROM notifications n
       WHERE n.account_id = :accountId AND n.deployment_id = :deploymentId`,
      { accountId, deploymentId },
    );
  }

  async insert(row: NotificationWrite): Promise<number> {
    const out = await this.db.one<{ id: number }>(
      `INSERT INTO notifications (account_id, deployment_id, dashboard_id, schedule_type, minute, hour, day_of_week,
         day_of_month, custom_cron, cron_expression, timezone, is_enabled, notification_enabled, notification_format,
         notification_ai_summary, filters, time_grains, member_switchers, created_by)
       VALUES (:accountId, :deploymentId, :dashboardId, :scheduleType, :minute, :hour, :dayOfWeek, :dayOfMonth,
         :customCron, :cronExpression, :timezone, :isEnabled, :notificationEnabled, :notificationFormat,
         :notificationAiSummary, :filters::jsonb, :timeGrains::jsonb, :memberSwitchers::jsonb, :createdBy)
       RETURNING id`,
      {
        ...row,
        filters: json(row.filters),
        timeGrains: json(row.timeGrains),
        memberSwitchers: json(row.memberSwitchers),
      },
    );
    return out!.id;
  }

  /** The notification of the deployment, locked for the unit of work when `lock`. */
  get(
    accountId: number,
    deploymentId: number,
    id: number,
    lock = false,
  ): Promise<NotificationRow | undefined> {
    return this.db.one<NotificationRow>(
      `SELECT ${COLUMNS} FROM notifications n
       WHERE n.id = :id AND n.account_id = :accountId AND n.deployment_id = :deploymentId${lock ? ' FOR UPDATE' : ''}`,
      { id, accountId, deploymentId },
    );
  }

  /** By id alone (jobs). */
  byId(id: number): Promise<NotificationRow | undefined> {
    return this.db.one<NotificationRow>(`SELECT ${COLUMNS} FROM notifications n WHERE n.id = :id`, { id });
  }

  async update(
    id: number,
    row: Omit<NotificationWrite, 'accountId' | 'deploymentId' | 'dashboardId' | 'createdBy'>,
  ) {
    await this.db.query(
      `UPDATE notifications SET schedule_type = :scheduleType, minute = :minute, hour = :hour,
         day_of_week = :dayOfWeek, day_of_month = :dayOfMonth, custom_cron = :customCron,
         cron_expression = :cronExpression, timezone = :timezone, is_enabled = :isEnabled,
         notification_enabled = :notificationEnabled, notification_format = :notificationFormat,
         notification_ai_summary = :notificationAiSummary, filters = :filters::jsonb,
         time_grains = :timeGrains::jsonb, member_switchers = :memberSwitchers::jsonb, updated_at = now()
       WHERE id = :id`,
      {
        ...row,
        id,
        filters: json(row.filters),
        timeGrains: json(row.timeGrains),
        memberSwitchers: json(row.memberSwitchers),
      },
    );
  }

  /** Pauses (`paused_at = now()`) or resumes (null) the notification; the caller holds its row lock. */
  async setPaused(id: number, paused: boolean): Promise<void> {
    await this.db.query(
      `UPDATE notifications SET paused_at = CASE WHEN :paused THEN now() ELSE NULL END, updated_at = now()
       WHERE id = :id`,
      { id, paused },
    );
  }

  async remove(id: number): Promise<void> {
    await this.db.query(`DELETE FROM notifications WHERE id = :id`, { id });
  }

  /** A page of the deployment's notifications, newest first, after the id `after`. */
  list(
    accountId: number,
    deploymentId: number,
    filter: ListFilter,
    after: number | null,
    limit: number,
  ): Promise<NotificationRow[]> {
    return this.db.query<NotificationRow>(
      `SELECT ${COLUMNS} FROM notifications n
       WHERE n.account_id = :accountId AND n.deployment_id = :deploymentId
         AND (:after::int IS NULL OR n.id < :after::int)
         AND (:dashboardId::int IS NULL OR n.dashboard_id = :dashboardId::int)
         AND (:userId::int IS NULL OR EXISTS (SELECT 1 FROM notification_recipients r
               WHERE r.notification_id = n.id AND r.user_id = :userId::int))
         AND (:email::text IS NULL OR EXISTS (SELECT 1 FROM notification_recipients r
               ${userJoin('r.user_id', 'u', 'INNER')}
               WHERE r.notification_id = n.id AND lower(u.email) = :email::text))
         AND (:tenant::text IS NULL OR EXISTS (SELECT 1 FROM notification_recipients r
               WHERE r.notification_id = n.id AND r.embed_tenant_name = :tenant::text
                 AND r.external_id = :externalId::text))
       ORDER BY n.id DESC LIMIT :limit`,
      {
        accountId,
        deploymentId,
        after,
        dashboardId: filter.dashboardId,
        userId: filter.recipientUserId,
        email: filter.recipientEmail,
        tenant: filter.recipientEmbed?.tenant ?? null,
        externalId: filter.recipientEmbed?.externalId ?? null,
        limit,
      },
      { prepare: true },
    );
  }

  /** Serialises writers of one notification's recipients (parallel adds meet on the unique keys anyway). */
  async lockRecipients(notificationId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `notification-recipients:${notificationId}`,
    });
  }

  /** How many recipients the notification has (console and embed users together). */
  async countRecipients(notificationId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM notification_recipients WHERE notification_id = :notificationId`,
      { notificationId },
    );
    return row!.n;
  }

  /** Adds console users; answers the ids added (the others were there already). */
  async addUsers(notificationId: number, userIds: readonly number[]): Promise<number[]> {
    if (userIds.length === 0) return [];
    const rows = await this.db.query<{ userId: number }>(
      `INSERT INTO notification_recipients (notification_id, type, user_id)
       SELECT :notificationId, 'USER', v.id FROM unnest(:ids::int[]) AS v(id)
       ON CONFLICT (notification_id, user_id) DO NOTHING
       RETURNING user_id AS "userId"`,
      { notificationId, ids: userIds },
    );
    return rows.map((r) => r.userId);
  }

  /**
   * Adds or updates embed users; answers, for each row written, whether it was new. A row whose
   * stored address, context, attributes and groups are the same is not written (unchanged).
   */
  async upsertEmbedUsers(
    notificationId: number,
    rows: readonly EmbedRecipientWrite[],
  ): Promise<Array<{ embedUserId: number; inserted: boolean }>> {
    if (rows.length === 0) return [];
    return this.db.query<{ embedUserId: number; inserted: boolean }>(
      `INSERT INTO notification_recipients AS r (notification_id, type, embed_user_id, embed_tenant_name, external_id,
         email, security_context, user_attributes, groups)
       SELECT :notificationId, 'EMBED_USER', v.id, v.tenant, v.external_id, v.email, v.ctx::jsonb, v.attrs::jsonb,
         v.groups::jsonb
       FROM unnest(:ids::int[], :tenants::text[], :externalIds::text[], :emails::text[], :contexts::text[],
         :attributes::text[], :groups::text[]) AS v(id, tenant, external_id, email, ctx, attrs, groups)
       ON CONFLICT (notification_id, embed_user_id) DO UPDATE SET email = EXCLUDED.email,
         security_context = EXCLUDED.security_context, user_attributes = EXCLUDED.user_attributes,
         groups = EXCLUDED.groups
       WHERE (r.email, r.security_context, r.user_attributes, r.groups)
         IS DISTINCT FROM (EXCLUDED.email, EXCLUDED.security_context, EXCLUDED.user_attributes, EXCLUDED.groups)
       RETURNING r.embed_user_id AS "embedUserId", (xmax = 0) AS inserted`,
      {
        notificationId,
        ids: rows.map((r) => r.embedUserId),
        tenants: rows.map((r) => r.embedTenantName),
        externalIds: rows.map((r) => r.externalId),
        emails: rows.map((r) => r.email),
        contexts: rows.map((r) => json(r.securityContext)),
        attributes: rows.map((r) => json(r.userAttributes)),
        groups: rows.map((r) => json(r.groups)),
      },
    );
  }

  /** Removes console users and embed users (each embed user with its tenant); answers how many. */
  async removeRecipients(
    notificationId: number,
    userIds: readonly number[],
    embed: ReadonlyArray<{ id: number; tenant: string }>,
  ): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM notification_recipients r WHERE r.notification_id = :notificationId
         AND (r.user_id = ANY(:userIds::int[])
           OR (r.embed_user_id, r.embed_tenant_name) IN (
             SELECT e.id, e.tenant FROM unnest(:embedIds::int[], :tenants::text[]) AS e(id, tenant)))
       RETURNING r.id`,
      {
        notificationId,
        userIds,
        embedIds: embed.map((e) => e.id),
        tenants: embed.map((e) => e.tenant),
      },
    );
    return rows.length;
  }

  /** Recipients, newest first, after the id `after` (every one when `limit` is null). */
  recipients(notificationId: number, after: number | null, limit: number | null): Promise<RecipientRow[]> {
    return this.db.query<RecipientRow>(
      `SELECT ${RECIPIENT_COLUMNS} FROM notification_recipients r ${userJoin('r.user_id', 'u')}
       WHERE r.notification_id = :notificationId AND (:after::int IS NULL OR r.id < :after::int)
       ORDER BY r.id DESC ${limit === null ? '' : 'LIMIT :limit'}`,
      limit === null ? { notificationId, after } : { notificationId, after, limit },
    );
  }

  /** Who made the notification (its owner), told when a run mails nobody; undefined when gone. */
  owner(
    notificationId: number,
  ): Promise<{ userId: number; email: string | null; deactivated: boolean } | undefined> {
    return this.db.one(
      `SELECT u.id AS "userId", u.email, COALESCE(u.is_deactivated, false) AS deactivated
       FROM notifications n ${userJoin('n.created_by', 'u', 'INNER')} WHERE n.id = :notificationId`,
      { notificationId },
    );
  }

  /** A user of the account as a resend to them reads it: their address now, and whether deactivated. */
  user(
    accountId: number,
    userId: number,
  ): Promise<{ email: string | null; deactivated: boolean } | undefined> {
    return this.db.one(
      `SELECT u.email, COALESCE(u.is_deactivated, false) AS deactivated
       FROM (SELECT :userId::int AS id) x ${userJoin('x.id', 'u', 'INNER')} WHERE u.account_id = :accountId`,
      { accountId, userId },
    );
  }

  /** The recipients among `users` and `embedUsers` (ids), as listed. */
  recipientsAmong(
    notificationId: number,
    users: readonly number[],
    embedUsers: readonly number[],
  ): Promise<RecipientRow[]> {
    return this.db.query<RecipientRow>(
      `SELECT ${RECIPIENT_COLUMNS} FROM notification_recipients r ${userJoin('r.user_id', 'u')}
       WHERE r.notification_id = :notificationId
         AND (r.user_id = ANY(:users::int[]) OR r.embed_user_id = ANY(:embedUsers::int[]))`,
      { notificationId, users, embedUsers },
    );
  }
}
