import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { JobContext } from '../../core/queue/job-context.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { MailNotConfiguredError, Mailer } from './delivery/mailer.js';
import { NotificationEvents } from './notification-events.js';
import { NOTIFICATION_DELIVER_JOB, type NotificationDeliverPayload } from './notification-jobs.js';
import { NotificationRunEnding } from './notification-run-ending.js';
import { NotificationRunsRepository } from './notification-runs.repository.js';

/** An outcome `finish` records. */
type Outcome = Parameters<NotificationRunsRepository['finish']>[2];

/** Thrown for a temporary SMTP failure: the job framework retries it with back-off. */
export class TemporaryDeliveryFailure extends Error {}

/**
 * `notification.deliver`: mails one recipient the render of its security context, at most once.
 *
 * Each attempt takes the delivery `queued` → `sending` (attempts + 1) in one statement before it
 * talks to the SMTP server, and records the outcome only if it still holds that attempt:
 * - accepted: `sent`, with the server's answer and the message id;
 * - refused for good (5xx, a bad address): `failed`, never retried;
 * - refused for now (4xx, a connection failure, a timeout): back to `queued` with the error, and
 *   the job throws so the framework retries it with back-off; after the last attempt, `failed`.
 * An attempt that finds the delivery still `sending` follows a worker that died between taking it
 * and recording the outcome: the server may have accepted the mail, and SMTP cannot be asked, so
 * the delivery ends `unknown` rather than risk mailing the recipient twice (at most once).
 *
 * While its notification is paused, a delivery of a scheduled run (not resent) is not sent: it is
 * `held` (`queued` → `held`) and left for the resume, which queues it again. A delivery that ends
 * `failed` publishes `notification.delivery_failed` in the unit of work of that compare-and-set;
 * after any ending the run is asked to end (`NotificationRunEnding`), which does so once.
 */
@Injectable()
export class NotificationDeliverJob {
  constructor(
    private readonly db: Database,
    private readonly runs: NotificationRunsRepository,
    private readonly mailer: Mailer,
    private readonly events: NotificationEvents,
    private readonly ending: NotificationRunEnding,
  ) {}

  @JobHandler(NOTIFICATION_DELIVER_JOB)
  async deliver(payload: NotificationDeliverPayload, ctx: JobContext): Promise<void> {
    const delivery = await this.runs.delivery(payload.deliveryId);
    if (!delivery) return;
    if (delivery.status === 'sending') {
      await this.record(delivery.id, delivery.runId, delivery.attempts, {
        status: 'unknown',
        error:
          'The worker sending this email stopped before recording the outcome; it may have been delivered, ' +
          'so it is not sent again',
      });
      return;
    }
    // Held: the resume queues it again. Ended: at most its run's end is left (a crash came between).
    if (delivery.status === 'held') return;
    if (delivery.status !== 'queued') return this.ending.finish(delivery.runId);
    const attempt = await this.take(delivery.id);
    if (attempt === undefined) return;
    const render = await this.runs.render(delivery.runId, delivery.contextHash);
    if (!render) {
      await this.record(delivery.id, delivery.runId, attempt, {
        status: 'failed',
        error: 'The rendered email is missing',
      });
      return;
    }
    let outcome;
    try {
      outcome = await this.mailer.send({
        to: delivery.email,
        subject: render.subject,
        html: render.html,
        text: render.text,
        // A render without content is a message of its own (the notice to the owner): no attachment.
        attachments:
          render.content.length === 0
            ? []
            : [{ filename: render.filename, contentType: render.contentType, content: render.content }],
        headers: {
          'X-Notification-Delivery': delivery.id,
          ...(delivery.aiSummary ? { 'X-AI-Summary': delivery.aiSummary } : {}),
        },
      });
    } catch (err) {
      if (err instanceof MailNotConfiguredError) {
        await this.record(delivery.id, delivery.runId, attempt, { status: 'failed', error: err.message });
        return;
      }
      // Not an SMTP answer (the mailer answers those): the outcome is not known, retry is unsafe.
      await this.record(delivery.id, delivery.runId, attempt, {
        status: 'unknown',
        error: `Sending failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`,
      });
      return;
    }
    if (outcome.status === 'sent') {
      await this.record(delivery.id, delivery.runId, attempt, {
        status: 'sent',
        response: outcome.response,
        messageId: outcome.messageId,
      });
      return;
    }
    const error = `${outcome.status === 'permanent' ? 'Refused' : 'Temporarily refused'}${
      outcome.code ? ` (${outcome.code})` : ''
    }: ${outcome.response}`;
    if (outcome.status === 'permanent' || ctx.attempt >= NOTIFICATION_DELIVER_JOB.attempts) {
      await this.record(delivery.id, delivery.runId, attempt, {
        status: 'failed',
        error: outcome.status === 'permanent' ? error : `${error} (gave up after ${ctx.attempt} attempts)`,
        response: outcome.response,
      });
      return;
    }
    await this.runs.finish(delivery.id, attempt, { status: 'queued', error, response: outcome.response });
    throw new TemporaryDeliveryFailure(error);
  }

  /**
   * Takes the delivery for an attempt, or holds it while its notification's pause holds it;
   * undefined when it is not to be sent now. A resume committing between the two statements
   * leaves it queued and unheld: it is taken again then.
   */
  private async take(id: string): Promise<number | undefined> {
    for (let tries = 0; tries < 3; tries++) {
      const attempt = await this.runs.claim(id);
      if (attempt !== undefined) return attempt;
      if (await this.runs.hold(id)) return undefined;
      if ((await this.runs.delivery(id))?.status !== 'queued') return undefined;
    }
    return undefined;
  }

  /**
   * Records the outcome of attempt `attempt` if it still holds the delivery; a `failed` one
   * publishes `notification.delivery_failed` in the same unit of work. Then asks the run to end.
   */
  private async record(id: string, runId: string, attempt: number, outcome: Outcome): Promise<void> {
    await this.db.transaction(async () => {
      const held = await this.runs.finish(id, attempt, outcome);
      if (held && outcome.status === 'failed') {
        await this.events.deliveryFailed(await this.runs.deliveryDetails([id]));
      }
    });
    await this.ending.finish(runId);
  }
}
