import { CronExpressionParser } from 'cron-parser';

/**
 * Cron expressions (five fields, or six with seconds first) read in an IANA time zone, through
 * `cron-parser` (maintained, Luxon-based time zones and daylight-saving transitions; the same
 * parser Bull uses for its repeat option). Throws `InvalidCron` for an expression or zone that
 * cannot be read.
 */
export class InvalidCron extends Error {}

export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new InvalidCron(`timezone ${timezone} is not an IANA time zone`);
  }
}

/** The first time strictly after `after` that `cron` fires, read in `timezone`. */
export function nextOccurrence(cron: string, timezone: string, after: Date): Date {
  assertTimezone(timezone);
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new InvalidCron(`cron ${cron} must have 5 fields (minute hour day month weekday) or 6`);
  }
  try {
    return CronExpressionParser.parse(cron, { currentDate: after, tz: timezone }).next().toDate();
  } catch (err) {
    throw new InvalidCron(`cron ${cron} is invalid: ${(err as Error).message}`);
  }
}
