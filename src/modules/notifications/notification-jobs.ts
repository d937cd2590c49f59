import { defineJob } from '../../core/queue/job-definition.js';

/** The `job_schedules` owner of a notification's schedule (and of its runs). */
export const scheduleOwner = (id: number) => `notification:${id}`;

export interface NotificationRunPayload {
  notificationId: number;
  /** The occurrence fired (ISO 8601), added by `JobSchedules.fireDue`; the instant asked, for run now. */
  scheduledFor?: string;
  /**
   * A run asked for by hand (`POST .../run`): its run row is written by the request, and the
   * schedule's rules about its own firings (the minimum interval) do not apply.
   */
  manual?: boolean;
}

export interface NotificationDeliverPayload {
  deliveryId: string;
}

/**
 * One firing of a notification: renders the dashboard per security context and records one
 * delivery per recipient. A run record (owner `notification:<id>`) shows it among the jobs; a
 * worker dying mid-run is taken over, and everything it wrote is found again by its unique keys.
 * The dedupe key is the schedule's (`schedule:<id>:<occurrence>`) when the tick fires it, and
 * `notification.run:<id>:manual` for run now (one in flight per notification).
 */
export const NOTIFICATION_RUN_JOB = defineJob<NotificationRunPayload>('notification.run', {
  queue: 'default',
  attempts: 3,
  backoffMs: 5_000,
  timeoutMs: 10 * 60_000,
  concurrency: 2,
  run: { maxClaims: 3 },
  dedupeKey: (p) => `notification.run:${p.notificationId}:${p.scheduledFor ?? 'now'}`,
});

/**
 * One email to one recipient. Temporary SMTP failures (4xx) throw and are retried with back-off
 * (2 s, doubled each time: about 4 minutes over 8 attempts); permanent ones (5xx) end it.
 */
export const NOTIFICATION_DELIVER_JOB = defineJob<NotificationDeliverPayload>('notification.deliver', {
  queue: 'default',
  attempts: 8,
  backoffMs: 2_000,
  timeoutMs: 2 * 60_000,
  concurrency: 8,
  dedupeKey: (p) => `notification.deliver:${p.deliveryId}`,
});
