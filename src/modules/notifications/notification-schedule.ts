import cronstrue from 'cronstrue';
import { coreError } from '../../core/errors/api-error.js';
import { assertTimezone, InvalidCron, nextOccurrence } from '../../core/queue/cron.js';

/*
 * A notification's schedule: from the fields of the API (`scheduleType` and its time fields, or
 * a custom cron) to the cron its `job_schedules` row fires, and back to words. Pure functions.
 */

export const SCHEDULE_TYPES = ['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'CUSTOM'] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

/** The schedule as stored: only the fields its type uses are kept, the others are null. */
export interface ScheduleFields {
  scheduleType: ScheduleType;
  minute: number | null;
  hour: number | null;
  dayOfWeek: number | null;
  dayOfMonth: number | null;
  customCron: string | null;
  timezone: string;
}

/** What a request may send; `undefined` keeps the stored value, `null` clears it. */
export type ScheduleInput = Partial<{
  [K in keyof ScheduleFields]: ScheduleFields[K] | null;
}>;

/**
 * The schedule a create (`current` undefined) or an update asks for, checked: the fields a type
 * needs (WEEKLY `dayOfWeek`, MONTHLY `dayOfMonth`, CUSTOM `customCron`), minute and hour
 * defaulting to 0, an IANA time zone (default UTC), and a cron that fires at all. Fields the type
 * does not use are dropped; a `customCron` sent without a type makes it CUSTOM. 400
 * `validation_failed` naming the field otherwise.
 */
export function resolveSchedule(
  input: ScheduleInput,
  current?: ScheduleFields,
): { fields: ScheduleFields; cron: string } {
  const pick = <K extends keyof ScheduleFields>(key: K): ScheduleFields[K] | null =>
    input[key] !== undefined ? input[key] : (current?.[key] ?? null);
  // A custom cron sent alone (an update) switches the schedule to CUSTOM.
  const type = input.scheduleType == null && input.customCron != null ? 'CUSTOM' : pick('scheduleType');
  if (!type)
    throw coreError('validation_failed', ['scheduleType must be one of: ' + SCHEDULE_TYPES.join(', ')]);
  const timezone = (pick('timezone') ?? 'UTC').trim() || 'UTC';
  try {
    assertTimezone(timezone);
  } catch {
    throw coreError('validation_failed', [
      `timezone ${timezone} is not an IANA time zone (e.g. Europe/Berlin)`,
    ]);
  }
  const minute = pick('minute') ?? 0;
  const hour = pick('hour') ?? 0;
  const fields: ScheduleFields = {
    scheduleType: type,
    minute: null,
    hour: null,
    dayOfWeek: null,
    dayOfMonth: null,
    customCron: null,
    timezone,
  };
  let cron: string;
  switch (type) {
    case 'HOURLY':
      fields.minute = minute;
      cron = `${minute} * * * *`;
      break;
    case 'DAILY':
      Object.assign(fields, { minute, hour });
      cron = `${minute} ${hour} * * *`;
      break;
    case 'WEEKLY': {
      const dayOfWeek = pick('dayOfWeek');
      if (dayOfWeek === null) {
        throw coreError('validation_failed', [
          'dayOfWeek (0-6, Sunday=0) is required when scheduleType is WEEKLY',
        ]);
      }
      Object.assign(fields, { minute, hour, dayOfWeek });
      cron = `${minute} ${hour} * * ${dayOfWeek}`;
      break;
    }
    case 'MONTHLY': {
      const dayOfMonth = pick('dayOfMonth');
      if (dayOfMonth === null) {
        throw coreError('validation_failed', ['dayOfMonth (1-31) is required when scheduleType is MONTHLY']);
      }
      Object.assign(fields, { minute, hour, dayOfMonth });
      cron = `${minute} ${hour} ${dayOfMonth} * *`;
      break;
    }
    case 'CUSTOM': {
      const custom = pick('customCron')?.trim().replace(/\s+/g, ' ');
      if (!custom)
        throw coreError('validation_failed', ['customCron is required when scheduleType is CUSTOM']);
      if (custom.split(' ').length !== 5) {
        throw coreError('validation_failed', [
          'customCron must have 5 fields: minute hour day-of-month month day-of-week',
        ]);
      }
      fields.customCron = custom;
      cron = custom;
      break;
    }
  }
  assertFires(cron, timezone);
  return { fields, cron };
}

/** 400 for a cron that cannot be read or never fires (`0 0 30 2 *`). */
export function assertFires(cron: string, timezone: string, now = new Date()): void {
  try {
    nextOccurrence(cron, timezone, now);
  } catch (err) {
    if (err instanceof InvalidCron) throw coreError('validation_failed', [`customCron: ${err.message}`]);
    throw err;
  }
}

/**
 * 400 when two consecutive firings of `cron`, read in `timezone`, come closer than `minMinutes`
 * (NOTIFICATION_MIN_INTERVAL_MINUTES). The firings are walked from `now` with the schedules' own
 * rules (`nextOccurrence`, daylight-saving changes included) over a window long enough to hold a
 * whole day of firings (a cron's times of day are the same on every day it fires, and a schedule
 * that respects the minimum fires at most 1440 / minMinutes times a day) and a week of days (for
 * crons whose days come in runs, such as 23:55 on Mondays and 00:05 on Tuesdays).
 */
export function assertMinInterval(
  cron: string,
  timezone: string,
  minMinutes: number,
  now = new Date(),
): void {
  if (minMinutes <= 1) return; // five-field crons fire a minute apart at the closest
  const minMs = minMinutes * 60_000;
  const most = 2 * Math.ceil(1440 / minMinutes) + 2;
  const first = nextOccurrence(cron, timezone, now);
  let previous = first;
  for (let i = 1; i < most; i += 1) {
    const next = nextOccurrence(cron, timezone, previous);
    const gap = next.getTime() - previous.getTime();
    if (gap < minMs) {
      throw coreError('validation_failed', [
        `The schedule (${cron}, ${timezone}) fires ${Math.round(gap / 60_000)} minute(s) apart ` +
          `(${previous.toISOString()} and ${next.toISOString()}); a notification fires at most once every ` +
          `${minMinutes} minutes`,
      ]);
    }
    if (next.getTime() - first.getTime() > WINDOW_MS) return;
    previous = next;
  }
}

/** How far past its first firing {@link assertMinInterval} walks a schedule: eight days. */
const WINDOW_MS = 8 * 24 * 3_600_000;

/**
 * True when the occurrence `scheduledFor` is followed by the next firing of `cron` sooner than
 * `minMinutes`: a schedule stored before the minimum was set (or raised), or a daylight-saving
 * change bringing two firings together. Such an occurrence is skipped, so a schedule never mails
 * more often than the minimum allows.
 */
export function firesTooSoonAfter(
  cron: string,
  timezone: string,
  scheduledFor: Date,
  minMinutes: number,
): boolean {
  if (minMinutes <= 1) return false;
  try {
    return (
      nextOccurrence(cron, timezone, scheduledFor).getTime() - scheduledFor.getTime() < minMinutes * 60_000
    );
  } catch (err) {
    if (err instanceof InvalidCron) return false;
    throw err;
  }
}

/** The schedule in words, with its time zone: `At 09:00 (Europe/Berlin)`. */
export function humanReadableSchedule(cron: string, timezone: string): string {
  let words: string;
  try {
    words = cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
  } catch {
    words = cron;
  }
  return `${words} (${timezone})`;
}
