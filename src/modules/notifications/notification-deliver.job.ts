import { Injectable } from '@nestjs/common';
import type { JobContext } from '../../core/queue/job-context.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { MailNotConfiguredError, Mailer } from './delivery/mailer.js';
import { NOTIFICATION_DELIVER_JOB, type NotificationDeliverPayload } from './notification-jobs.js';
import { NotificationRunsRepository } from './notification-runs.repository.js';

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
 */
@Injectable()
export class NotificationDeliverJob {
  constructor(
    private readonly runs: NotificationRunsRepository,
    private readonly mailer: Mailer,
  ) {}

  @JobHandler(NOTIFICATION_DELIVER_JOB)
  async deliver(payload: NotificationDeliverPayload, ctx: JobContext): Promise<void> {
    const delivery = await this.runs.delivery(payload.deliveryId);
    if (!delivery) return;
    if (delivery.status === 'sending') {
      await this.runs.finish(delivery.id, delivery.attempts, {
        status: 'unknown',
        error:
          'The worker sending this email stopped before recording the outcome; it may have been delivered, ' +
          'so it is not sent again',
      });
      return;
    }
    if (delivery.status !== 'queued') return;
    const attempt = await this.runs.claim(delivery.id);
    if (attempt === undefined) return;
    const render = await this.runs.render(delivery.runId, delivery.contextHash);
    if (!render) {
      await this.runs.finish(delivery.id, attempt, {
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
        await this.runs.finish(delivery.id, attempt, { status: 'failed', error: err.message });
        return;
      }
      // Not an SMTP answer (the mailer answers those): the outcome is not known, retry is unsafe.
      await this.runs.finish(delivery.id, attempt, {
        status: 'unknown',
        error: `Sending failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`,
      });
      return;
    }
    if (outcome.status === 'sent') {
      await this.runs.finish(delivery.id, attempt, {
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
      await this.runs.finish(delivery.id, attempt, {
        status: 'failed',
        error: outcome.status === 'permanent' ? error : `${error} (gave up after ${ctx.attempt} attempts)`,
        response: outcome.response,
      });
      return;
    }
    await this.runs.finish(delivery.id, attempt, { status: 'queued', error, response: outcome.response });
    throw new TemporaryDeliveryFailure(error);
  }
}
