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

function parse(cron: string, timezone: string, after: Date) {
  assertTimezone(timezone);
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new InvalidCron(`cron ${cron} must have 5 fields (minute hour day month weekday) or 6`);
  }
  try {
    // A day of month that no month in the expression has (`0 0 30 2 *`: it would never fire) is
    // refused here by cron-parser, with the other expressions it cannot read.
    return CronExpressionParser.parse(cron, { currentDate: after, tz: timezone });
  } catch (err) {
    throw new InvalidCron(`cron ${cron} is invalid: ${(err as Error).message}`);
  }
}

/**
 * The first time strictly after `after` that `cron` fires, read in `timezone`. Across
 * daylight-saving changes: a local time that does not exist that day (02:30 on a spring-forward
 * day) fires once, at the first valid time after the gap (03:30); a local time that occurs twice
 * (02:30 on a fall-back day) fires once, at its first occurrence; an hourly cron fires in each of
 * the two real hours that read 02:00.
 */
export function nextOccurrence(cron: string, timezone: string, after: Date): Date {
  const it = parse(cron, timezone, after);
  try {
    return it.next().toDate();
  } catch (err) {
    throw new InvalidCron(`cron ${cron} never fires: ${(err as Error).message}`);
  }
}

/**
 * The latest time in `[from, to]` that `cron` fires, or undefined when it fires in none. Walks
 * forward with {@link nextOccurrence}'s rules (cron-parser's `prev()` skips a shifted firing
 * across a daylight-saving gap that `next()` makes), so both agree on which times are firings;
 * `limit` bounds the walk for a cron that fires every second over a long window.
 */
export function latestOccurrence(
  cron: string,
  timezone: string,
  from: Date,
  to: Date,
  limit = 100_000,
): Date | undefined {
  const it = parse(cron, timezone, new Date(from.getTime() - 1));
  let latest: Date | undefined;
  for (let i = 0; i < limit; i += 1) {
    const at = it.next().toDate();
    if (at > to) return latest;
    latest = at;
  }
  return latest;
}
