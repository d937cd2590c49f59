import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { foreignKeyViolation } from '../../core/database/sql.js';
import { JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { isNoEmail } from '../users/no-email.js';
import { Mailer } from '../notifications/delivery/mailer.js';
import { renderDisabledNotice } from './webhook-disabled-notice.js';
import { eventBodyText } from './webhook-event-publisher.service.js';
import { backoffSeconds, WEBHOOK_DELIVER_JOB, type WebhookDeliverPayload } from './webhook-jobs.js';
import {
  WebhookDeliveriesRepository,
  type AttemptOutcome,
  type ClaimedDelivery,
} from './webhook-deliveries.repository.js';
import { WebhookMaintenance } from './webhook-maintenance.job.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSender } from './webhook-sender.js';
import { signatureHeaders } from './webhook-signature.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { NOT_SENT_DISABLED } from './webhooks.service.js';

/** What a send lease adds to the request timeout (the time to record the outcome). */
const LEASE_MARGIN_MS = 30_000;

/**
 * `webhook.deliver`: one attempt of one delivery, safe to run any number of times.
 *
 * 1. Claim: one statement leases the delivery (`locked_until`: the timeout and a margin) if it is
 *    pending, due, not leased by a live attempt, of an enabled endpoint, and no older delivery of
 *    the same endpoint and resource is pending (deliveries of a resource go out in order). A
 *    delivery that cannot be claimed is left alone: finished ones stay finished; one not due is
 *    queued again by the retry sweep when it is due; one waiting in line is queued by the attempt
 *    that ends the delivery before it (and by the sweep).
 * 2. Send: signed with the endpoint's secret (and the previous one during a rotation), POSTed
 *    under the outbound rule.
 * 3. Record: the attempt and its outcome by compare-and-set on the attempt count, before the job
 *    ends: a 2xx ends it `succeeded`, and no later run sends it again. A failure schedules a retry
 *    (30 s, doubled, at most 1 h) until `WEBHOOK_RETRY_HOURS` after the first attempt, then ends it
 *    `failed`, which counts against the endpoint (disabled after `WEBHOOK_DISABLE_AFTER_FAILURES`
 *    in a row; its creator is mailed).
 *
 * A worker that dies between 1 and 3 leaves the lease, which runs out: the job (run again by the
 * queue) or the retry sweep then sends the delivery again (at least once; receivers deduplicate on
 * `webhook-id`).
 */
@Injectable()
export class WebhookDeliverJob {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly db: Database,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly endpoints: WebhooksRepository,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly jobs: JobQueue,
    private readonly maintenance: WebhookMaintenance,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
  ) {}

  @JobHandler(WEBHOOK_DELIVER_JOB)
  async deliver(payload: WebhookDeliverPayload): Promise<void> {
    const claimed = await this.deliveries.claim(
      payload.deliveryId,
      this.config.webhooks.timeoutMs + LEASE_MARGIN_MS,
    );
    if (!claimed) return;
    const outcome = await this.send(claimed);
    await this.record(claimed, outcome);
  }

  private async send(claimed: ClaimedDelivery): Promise<AttemptOutcome> {
    const current = this.secrets.open(claimed.accountId, claimed.endpointId, claimed.secretSealed);
    if (current === null) {
      this.logger.error({ endpointId: claimed.endpointId }, 'a webhook secret does not open');
      return {
        ok: false,
        statusCode: null,
        durationMs: 0,
        error: 'The endpoint’s signing secret could not be read; rotate it (POST .../rotate-secret)',
      };
    }
    const previous =
      claimed.previousSecretSealed === null
        ? null
        : this.secrets.open(claimed.accountId, claimed.endpointId, claimed.previousSecretSealed);
    const body = eventBodyText(claimed.payload);
    const headers = signatureHeaders(previous === null ? [current] : [current, previous], {
      id: claimed.eventPublicId,
      timestamp: Math.floor(Date.now() / 1000),
      body,
    });
    return this.sender.post(claimed.url, body, headers);
  }

  private async record(claimed: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    let disabled: boolean;
    try {
      disabled = await this.recordOutcome(claimed, outcome);
    } catch (err) {
      // The endpoint (and so the delivery) was deleted while it was being sent: nothing to record.
      if (foreignKeyViolation(err)) return;
      throw err;
    }
    if (disabled) await this.tellDisabled(claimed.endpointId);
  }

  /** Records the attempt and what follows from it, in one unit of work; true when it disabled the endpoint. */
  private recordOutcome(claimed: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
    const { retryHours, disableAfterFailures } = this.config.webhooks;
    return this.db.transaction(async () => {
      const recorded = await this.deliveries.recordAttempt(
        claimed,
        outcome,
        backoffSeconds(claimed.attempts + 1),
        retryHours,
      );
      // Another attempt recorded this one first: it decided.
      if (!recorded) return false;
      if (recorded.after === 'pending') {
        this.db.afterCommit(() => this.maintenance.ensureScheduled());
        return false;
      }
      let disabledNow = false;
      if (recorded.after === 'succeeded') {
        await this.endpoints.noteSuccess(claimed.endpointId);
      } else if (recorded.before === 'pending') {
        const reason =
          `${disableAfterFailures} deliveries in a row failed (each retried for ${retryHours} h); ` +
          `the last: ${outcome.error ?? 'failed'}`;
        const noted = await this.endpoints.noteFailure(
          claimed.endpointId,
          disableAfterFailures,
          reason.slice(0, 500),
        );
        disabledNow = noted?.disabledNow ?? false;
        if (disabledNow) {
          await this.deliveries.failPending(claimed.endpointId, NOT_SENT_DISABLED);
        }
      }
      if (!disabledNow) {
        // The delivery is finished: the next one about the same resource may go.
        const next = await this.deliveries.nextInLine(
          claimed.endpointId,
          claimed.resourceType,
          claimed.resourceId,
        );
        if (next) {
          await this.jobs.enqueue(
            WEBHOOK_DELIVER_JOB,
            { deliveryId: next.id },
            { accountId: next.accountId },
          );
        }
      }
      return disabledNow;
    });
  }

  /** Logs the disabling and mails the endpoint's creator; a mail that cannot be sent is logged. */
  private async tellDisabled(endpointId: number): Promise<void> {
    const owner = await this.endpoints.owner(endpointId);
    if (!owner) return;
    this.logger.warn(
      { accountId: owner.accountId, endpointId: owner.id, reason: owner.disabledReason },
      'webhook endpoint disabled after repeated failures',
    );
    if (owner.creatorEmail === null || isNoEmail(owner.creatorEmail) || !this.mailer.configured) return;
    const notice = renderDisabledNotice({
      endpointId: owner.id,
      url: owner.url,
      reason: owner.disabledReason ?? 'repeated failures',
    });
    try {
      const sent = await this.mailer.send({ to: owner.creatorEmail, ...notice, attachments: [] });
      if (sent.status !== 'sent') {
        this.logger.warn(
          { endpointId: owner.id, response: sent.response },
          'could not mail the creator of a disabled webhook endpoint',
        );
      }
    } catch (err) {
      this.logger.warn(
        { endpointId: owner.id, err },
        'could not mail the creator of a disabled webhook endpoint',
      );
    }
  }
}
