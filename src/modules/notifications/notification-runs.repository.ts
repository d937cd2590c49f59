import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';

export interface RunRow {
  id: string;
  notificationId: number;
  scheduledFor: string;
  status: string;
}

export interface RenderRow {
  subject: string;
  html: string;
  text: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface DeliveryWrite {
  recipientKey: string;
  recipientType: string;
  userId: number | null;
  embedUserId: number | null;
  email: string;
  contextHash: string;
}

/** What the deliver job needs of a delivery. */
export interface DeliveryWork {
  id: string;
  runId: string;
  notificationId: number;
  email: string;
  contextHash: string;
  status: string;
  attempts: number;
  aiSummary: string | null;
}

export interface DeliveryListRow {
  id: string;
  runId: string;
  scheduledFor: string;
  recipientType: string;
  userId: number | null;
  embedUserId: number | null;
  email: string;
  status: string;
  attempts: number;
  lastError: string | null;
  smtpResponse: string | null;
  messageId: string | null;
  aiSummary: string | null;
  sentAt: string | null;
  createdAt: string;
}

/**
 * All SQL on `notification_runs`, `notification_renders`, `notification_deliveries` and
 * `notification_delivery_counts`. The unique keys (a run per occurrence, a render per run and
 * context, a delivery per run and recipient, a count per account and hour) make every write here
 * safe to repeat.
 */
@Injectable()
export class NotificationRunsRepository {
  constructor(private readonly db: Database) {}

  /** The run of this occurrence, created when missing. */
  async ensureRun(notificationId: number, scheduledFor: Date, jobRunId: string | null): Promise<RunRow> {
    await this.db.query(
      `INSERT INTO notification_runs (notification_id, scheduled_for, job_run_id)
       VALUES (:notificationId, :scheduledFor, :jobRunId)
       ON CONFLICT (notification_id, scheduled_for) DO NOTHING`,
      { notificationId, scheduledFor, jobRunId },
    );
    const row = await this.db.one<RunRow>(
      `SELECT id, notification_id AS "notificationId", ${isoSql('scheduled_for')} AS "scheduledFor", status
       FROM notification_runs WHERE notification_id = :notificationId AND scheduled_for = :scheduledFor`,
      { notificationId, scheduledFor },
    );
    return row!;
  }

  async setRunStatus(runId: string, status: string, error: string | null = null): Promise<void> {
    await this.db.query(
      `UPDATE notification_runs SET status = :status::varchar, error = :error::text, updated_at = now()
       WHERE id = :runId`,
      { runId, status, error },
    );
  }

  /** Runs of a notification, oldest first (tests and the docs' examples read them). */
  runs(notificationId: number): Promise<RunRow[]> {
    return this.db.query<RunRow>(
      `SELECT id, notification_id AS "notificationId", ${isoSql('scheduled_for')} AS "scheduledFor", status
       FROM notification_runs WHERE notification_id = :notificationId ORDER BY scheduled_for`,
      { notificationId },
    );
  }

  /** The context hashes of the run already rendered. */
  async renderedContexts(runId: string): Promise<Set<string>> {
    const rows = await this.db.query<{ contextHash: string }>(
      `SELECT context_hash AS "contextHash" FROM notification_renders WHERE run_id = :runId`,
      { runId },
    );
    return new Set(rows.map((r) => r.contextHash));
  }

  /** Keeps a render; a render already kept for the context wins (the same dashboard, rendered twice). */
  async saveRender(runId: string, contextHash: string, render: RenderRow): Promise<void> {
    await this.db.query(
      `INSERT INTO notification_renders (run_id, context_hash, subject, html, text, filename, content_type, content)
       VALUES (:runId, :contextHash, :subject, :html, :text, :filename, :contentType, :content)
       ON CONFLICT (run_id, context_hash) DO NOTHING`,
      { runId, contextHash, ...render },
    );
  }

  render(runId: string, contextHash: string): Promise<RenderRow | undefined> {
    return this.db.one<RenderRow>(
      `SELECT subject, html, text, filename, content_type AS "contentType", content
       FROM notification_renders WHERE run_id = :runId AND context_hash = :contextHash`,
      { runId, contextHash },
    );
  }

  /**
   * Records the deliveries of a run; those already there are kept as they are. With `refused`,
   * they are recorded never to be sent, with that reason: `skipped` (the hourly limit) or, with
   * `status`, `failed` (the run could make nothing to send them).
   */
  async addDeliveries(
    runId: string,
    notificationId: number,
    aiSummary: string | null,
    rows: readonly DeliveryWrite[],
    refused: string | null = null,
    status: 'skipped' | 'failed' = 'skipped',
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO notification_deliveries (run_id, notification_id, recipient_key, recipient_type, user_id,
         embed_user_id, email, context_hash, ai_summary, status, last_error)
       SELECT :runId, :notificationId, v.key, v.type, v.user_id, v.embed_user_id, v.email, v.hash, :aiSummary,
         CASE WHEN :refused::text IS NULL THEN 'queued' ELSE :status::varchar END, :refused::text
       FROM unnest(:keys::text[], :types::text[], :userIds::int[], :embedUserIds::int[], :emails::text[],
         :hashes::text[]) AS v(key, type, user_id, embed_user_id, email, hash)
       ON CONFLICT (run_id, recipient_key) DO NOTHING`,
      {
        runId,
        notificationId,
        aiSummary,
        refused,
        status,
        keys: rows.map((r) => r.recipientKey),
        types: rows.map((r) => r.recipientType),
        userIds: rows.map((r) => r.userId),
        embedUserIds: rows.map((r) => r.embedUserId),
        emails: rows.map((r) => r.email),
        hashes: rows.map((r) => r.contextHash),
      },
    );
  }

  /**
   * Counts `asked` deliveries of the account against this hour's (UTC) limit `max` and answers
   * how many of them it allows: `max` less what the hour held before, between 0 and `asked`. One
   * `INSERT ... ON CONFLICT DO UPDATE`: concurrent runs of the account (in any process) take the
   * hour's row in turn, each seeing the total the one before it left. Run it in the unit of work
   * that records the deliveries, so a rolled-back run gives its count back. Also removes the
   * account's rows older than a day.
   */
  async countDeliveries(accountId: number, asked: number, max: number): Promise<number> {
    if (asked === 0) return 0;
    await this.db.query(
      `DELETE FROM notification_delivery_counts WHERE account_id = :accountId AND hour < now() - interval '1 day'`,
      { accountId },
    );
    const row = await this.db.one<{ deliveries: number }>(
      `INSERT INTO notification_delivery_counts AS c (account_id, hour, deliveries)
       VALUES (:accountId, date_trunc('hour', now(), 'UTC'), :asked)
       ON CONFLICT (account_id, hour) DO UPDATE SET deliveries = c.deliveries + EXCLUDED.deliveries
       RETURNING c.deliveries`,
      { accountId, asked },
    );
    const before = row!.deliveries - asked;
    return Math.max(0, Math.min(asked, max - before));
  }

  /** The deliveries the account's runs asked for in this hour (UTC) so far. */
  async deliveriesThisHour(accountId: number): Promise<number> {
    const row = await this.db.one<{ deliveries: number }>(
      `SELECT deliveries FROM notification_delivery_counts
       WHERE account_id = :accountId AND hour = date_trunc('hour', now(), 'UTC')`,
      { accountId },
    );
    return row?.deliveries ?? 0;
  }

  /** Ids of the run's deliveries still to send. */
  async queuedDeliveries(runId: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM notification_deliveries WHERE run_id = :runId AND status = 'queued' ORDER BY id`,
      { runId },
    );
    return rows.map((r) => r.id);
  }

  delivery(id: string): Promise<DeliveryWork | undefined> {
    return this.db.one<DeliveryWork>(
      `SELECT id, run_id AS "runId", notification_id AS "notificationId", email, context_hash AS "contextHash",
         status, attempts, ai_summary AS "aiSummary"
       FROM notification_deliveries WHERE id = :id`,
      { id },
    );
  }

  /**
   * Takes a queued delivery for one send attempt (`queued` → `sending`, attempts + 1) and answers
   * the attempt number; undefined when it is not queued (sent, failed, or being sent).
   */
  async claim(id: string): Promise<number | undefined> {
    const row = await this.db.one<{ attempts: number }>(
      `UPDATE notification_deliveries SET status = 'sending', attempts = attempts + 1, updated_at = now()
       WHERE id = :id AND status = 'queued' RETURNING attempts`,
      { id },
    );
    return row?.attempts;
  }

  /** Records the outcome of attempt `attempt`, if it still holds the delivery. */
  async finish(
    id: string,
    attempt: number,
    outcome: {
      status: 'sent' | 'queued' | 'failed' | 'unknown';
      error?: string | null;
      response?: string | null;
      messageId?: string | null;
    },
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE notification_deliveries SET status = :status::varchar, last_error = :error::text,
         smtp_response = COALESCE(:response::text, smtp_response),
         message_id = COALESCE(:messageId::varchar, message_id),
         sent_at = CASE WHEN :status::varchar = 'sent' THEN now() ELSE sent_at END, updated_at = now()
       WHERE id = :id AND status = 'sending' AND attempts = :attempt RETURNING id`,
      {
        id,
        attempt,
        status: outcome.status,
        error: outcome.error ?? null,
        response: outcome.response ?? null,
        messageId: outcome.messageId ?? null,
      },
    );
    return rows.length > 0;
  }

  /** A page of a notification's deliveries, newest first, after the id `after`. */
  deliveries(notificationId: number, after: string | null, limit: number): Promise<DeliveryListRow[]> {
    return this.db.query<DeliveryListRow>(
      `SELECT d.id, d.run_id AS "runId", ${isoSql('r.scheduled_for')} AS "scheduledFor",
         d.recipient_type AS "recipientType", d.user_id AS "userId", d.embed_user_id AS "embedUserId", d.email,
         d.status, d.attempts, d.last_error AS "lastError", d.smtp_response AS "smtpResponse",
         d.message_id AS "messageId", d.ai_summary AS "aiSummary",
         CASE WHEN d.sent_at IS NULL THEN NULL ELSE ${isoSql('d.sent_at')} END AS "sentAt",
         ${isoSql('d.created_at')} AS "createdAt"
       FROM notification_deliveries d JOIN notification_runs r ON r.id = d.run_id
       WHERE d.notification_id = :notificationId AND (:after::bigint IS NULL OR d.id < :after::bigint)
       ORDER BY d.id DESC LIMIT :limit`,
      { notificationId, after, limit },
      { prepare: true },
    );
  }
}
