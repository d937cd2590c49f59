import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import {
  BoolField,
  EmailField,
  EnumField,
  IntField,
  NestedField,
  StringField,
} from '../../../core/http/validation.js';
import { FILTER_OPERATORS, type FilterOperator } from '../notification-query.js';
import { SCHEDULE_TYPES, type ScheduleType } from '../notification-schedule.js';

export const NOTIFICATION_FORMATS = ['png', 'pdf'] as const;
export type NotificationFormat = (typeof NOTIFICATION_FORMATS)[number];

/** `Orders.status`: a cube or view, a dot, a member. */
const MEMBER = /.+\..+/;
const MEMBER_MESSAGE = '$property must be a member path such as Orders.status';

const FILTER_VALUE_SCHEMA = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', items: {}, maxItems: 1000 },
    { type: 'null' },
  ],
};

function isFilterValue(v: unknown): boolean {
  if (v === undefined || v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  return (
    Array.isArray(v) &&
    v.length <= 1000 &&
    v.every((x) => ['string', 'number', 'boolean'].includes(typeof x) && JSON.stringify(x).length <= 10_000)
  );
}

export class DashboardFilterInputDto {
  @StringField({
    maxLength: 255,
    pattern: MEMBER,
    patternMessage: MEMBER_MESSAGE,
    example: 'Orders.status',
    description: 'The member filtered',
  })
  member: string;

  @EnumField(FILTER_OPERATORS, {
    optional: true,
    nullable: true,
    enumName: 'DashboardFilterInputOperator',
    description: 'Default: `equals` with a value, `is_not_null` without',
  })
  operator?: FilterOperator | null;

  @ApiPropertyOptional({
    ...FILTER_VALUE_SCHEMA,
    description:
      'The value: none for is_null, is_not_null, is_empty, is_not_empty; two bounds `[start, end]` for between',
  })
  @ValidateBy({
    name: 'isFilterValue',
    validator: {
      validate: isFilterValue,
      defaultMessage: () => 'value must be a string, number, boolean, or an array of at most 1000 of them',
    },
  })
  value?: unknown;

  @BoolField({ optional: true, nullable: true, description: 'String operators: match case exactly' })
  caseSensitive?: boolean | null;

  @BoolField({
    optional: true,
    nullable: true,
    description: 'between: include the start bound (default true)',
  })
  startInclusive?: boolean | null;

  @BoolField({ optional: true, nullable: true, description: 'between: include the end bound (default true)' })
  endInclusive?: boolean | null;
}

export class DashboardTimeGrainInputDto {
  @StringField({
    maxLength: 255,
    pattern: MEMBER,
    patternMessage: MEMBER_MESSAGE,
    example: 'Orders.created_at',
    description: 'A time dimension',
  })
  member: string;

  @StringField({
    minLength: 1,
    maxLength: 32,
    example: 'week',
    description: 'Granularity: day, week, month...',
  })
  grain: string;
}

export class DashboardMemberSwitcherInputDto {
  @StringField({
    maxLength: 255,
    pattern: MEMBER,
    patternMessage: MEMBER_MESSAGE,
    example: 'Orders.status',
    description: 'The member the control replaces',
  })
  member: string;

  @StringField({
    minLength: 1,
    maxLength: 255,
    example: 'city',
    description: 'The member shown in its place, without the cube or view prefix',
  })
  selected: string;
}

/** Fields shared by create and update; every one may be left out. */
class NotificationFields {
  @IntField({
    optional: true,
    nullable: true,
    min: 0,
    max: 59,
    description: 'Minute of the hour (0-59); default 0',
  })
  minute?: number | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 0,
    max: 23,
    description: 'Hour of the day (0-23); default 0',
  })
  hour?: number | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 0,
    max: 6,
    description: 'Day of the week (0-6, Sunday=0); required for WEEKLY',
  })
  dayOfWeek?: number | null;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    max: 31,
    description: 'Day of the month (1-31; a month without that day is skipped); required for MONTHLY',
  })
  dayOfMonth?: number | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    example: '0 9 * * 1-5',
    description: 'Five-field cron (minute hour day-of-month month day-of-week); required for CUSTOM',
  })
  customCron?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 64,
    example: 'Europe/Berlin',
    description: 'IANA time zone the schedule is read in; default UTC',
  })
  timezone?: string | null;

  @EnumField(NOTIFICATION_FORMATS, {
    optional: true,
    nullable: true,
    enumName: 'NotificationFormat',
    description: 'The attachment: `pdf` (default) or `png`',
  })
  notificationFormat?: NotificationFormat | null;

  @BoolField({
    optional: true,
    nullable: true,
    description: 'Mail the recipients when it fires (default true)',
  })
  notificationEnabled?: boolean | null;

  @BoolField({
    optional: true,
    nullable: true,
    description:
      'Ask for an AI summary in the email (default false). Stored; this service has no AI provider, so each ' +
      'delivery records `aiSummary: not_produced` and no summary is ever written',
  })
  notificationAiSummary?: boolean | null;

  @NestedField(() => DashboardFilterInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  filters?: DashboardFilterInputDto[] | null;

  @NestedField(() => DashboardTimeGrainInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  timeGrains?: DashboardTimeGrainInputDto[] | null;

  @NestedField(() => DashboardMemberSwitcherInputDto, {
    optional: true,
    nullable: true,
    isArray: true,
    maxItems: 100,
  })
  memberSwitchers?: DashboardMemberSwitcherInputDto[] | null;
}

export class CreateNotificationDto extends NotificationFields {
  @EnumField(SCHEDULE_TYPES, { enumName: 'NotificationScheduleType', description: 'The cadence' })
  scheduleType: ScheduleType;

  @IntField({
    optional: true,
    nullable: true,
    min: 1,
    description: 'The dashboard (numeric id); give this or dashboardPublicId, exactly one',
  })
  dashboardId?: number | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 32,
    description: 'The dashboard (public id); give this or dashboardId, exactly one',
  })
  dashboardPublicId?: string | null;
}

export class UpdateNotificationDto extends NotificationFields {
  @EnumField(SCHEDULE_TYPES, { optional: true, nullable: true, enumName: 'NotificationScheduleType' })
  scheduleType?: ScheduleType | null;

  @BoolField({ optional: true, nullable: true, description: 'Turn the schedule on or off' })
  isEnabled?: boolean | null;
}

export class NotificationsQueryDto extends PageQueryDto {
  @IntField({
    optional: true,
    query: true,
    min: 1,
    description: 'Only this dashboard (or dashboardPublicId)',
  })
  dashboardId?: number;

  @StringField({ optional: true, maxLength: 32, description: 'Only this dashboard (or dashboardId)' })
  dashboardPublicId?: string;

  @IntField({ optional: true, query: true, min: 1, description: 'Only notifications mailed to this user' })
  recipientUserId?: number;

  @EmailField({ optional: true, description: 'Only notifications mailed to the user with this email' })
  recipientEmail?: string;

  @StringField({
    optional: true,
    maxLength: 36,
    description: 'With recipientExternalId: only notifications mailed to this embed user',
  })
  recipientEmbedTenantName?: string;

  @StringField({
    optional: true,
    maxLength: 255,
    description: 'With recipientEmbedTenantName: only notifications mailed to this embed user',
  })
  recipientExternalId?: string;
}

export class DashboardFilterDto {
  @ApiProperty() member: string;
  @ApiPropertyOptional({ enum: FILTER_OPERATORS, enumName: 'DashboardFilterOperator', nullable: true })
  operator?: FilterOperator | null;
  @ApiPropertyOptional(FILTER_VALUE_SCHEMA) value?: unknown;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) caseSensitive?: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) startInclusive?: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) endInclusive?: boolean | null;
}

export class DashboardTimeGrainDto {
  @ApiProperty() member: string;
  @ApiProperty() grain: string;
}

export class DashboardMemberSwitcherDto {
  @ApiProperty() member: string;
  @ApiProperty() selected: string;
}

export class NotificationDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: 'integer' }) deploymentId: number;
  @ApiProperty({ type: 'integer' }) dashboardId: number;
  @ApiProperty({ enum: SCHEDULE_TYPES, enumName: 'NotificationScheduleType' }) scheduleType: ScheduleType;
  @ApiProperty({ type: 'integer', nullable: true }) minute: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) hour: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) dayOfWeek: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) dayOfMonth: number | null;
  @ApiProperty({ example: '0 9 * * *' }) cronExpression: string;
  @ApiProperty({ example: 'Europe/Berlin' }) timezone: string;
  @ApiProperty({ example: 'At 09:00 (Europe/Berlin)' }) humanReadableSchedule: string;
  @ApiProperty() isEnabled: boolean;
  @ApiProperty() notificationEnabled: boolean;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When it was paused (`POST .../pause`), or null. While paused its schedule does not fire and the ' +
      'deliveries of its scheduled runs wait (`held`); `POST .../resume` lets them go and the schedule fire ' +
      'from its next occurrence. Independent of `isEnabled`; a paused notification can still be run now.',
  })
  pausedAt: string | null;
  @ApiProperty({ enum: NOTIFICATION_FORMATS, enumName: 'NotificationFormat' }) notificationFormat: string;
  @ApiProperty() notificationAiSummary: boolean;
  @ApiProperty({ type: DashboardFilterDto, isArray: true, nullable: true }) filters:
    DashboardFilterDto[] | null;
  @ApiProperty({ type: DashboardTimeGrainDto, isArray: true, nullable: true }) timeGrains:
    DashboardTimeGrainDto[] | null;
  @ApiProperty({ type: DashboardMemberSwitcherDto, isArray: true, nullable: true })
  memberSwitchers: DashboardMemberSwitcherDto[] | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class NotificationsListDto extends PageOf(NotificationDto) {}

/** Run now, resend, pause and resume take no fields: an empty object or no body. */
export class NoFieldsBodyDto {}

export const RUN_STATUSES = ['queued', 'rendering', 'delivering', 'finished', 'failed', 'skipped'] as const;

/** How the deliveries of a run to its recipients ended (`notification.run_finished`). */
export class NotificationRunCountsDto {
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) sent: number;
  @ApiProperty({ type: 'integer' }) failed: number;
  @ApiProperty({ type: 'integer' }) unknown: number;
  @ApiProperty({ type: 'integer' }) skipped: number;
}

/** One run of a notification: an occurrence of its schedule, or a run now. */
export class NotificationRunDto {
  @ApiProperty({ description: 'The run’s id (a decimal string), as `runId` of its deliveries' }) id: string;
  @ApiProperty({ type: 'integer' }) notificationId: number;
  @ApiProperty({
    format: 'date-time',
    description: 'The occurrence it runs for; for a run now, the instant it was asked for',
  })
  scheduledFor: string;
  @ApiProperty({
    enum: ['schedule', 'manual'],
    enumName: 'NotificationRunTrigger',
    description: '`schedule`: fired by its schedule; `manual`: run now',
  })
  trigger: string;
  @ApiProperty({
    enum: RUN_STATUSES,
    enumName: 'NotificationRunStatus',
    description:
      '`queued` (a run now not started yet), `rendering`, `delivering` (its deliveries are recorded), ' +
      '`finished` (every delivery to a recipient has ended), `failed` (it could mail none of its recipients; ' +
      '`error` says why), `skipped` (the schedule fires too often)',
  })
  status: string;
  @ApiProperty({ type: String, nullable: true, description: 'What happened, when not everything went well' })
  error: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Its job run (a decimal string)' })
  jobRunId: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Who ran it now; null for a scheduled run' })
  requestedBy: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finishedAt: string | null;
}
