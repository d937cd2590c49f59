import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';

export interface RunRow {
  id: string;
  notificationId: number;
  scheduledFor: string;
  status: string;
  /** `schedule` or `manual` (run now). */
  trigger: string;
}

/** A run as `POST .../run` answers it and `notification.run_finished` carries it. */
export interface RunView {
  id: string;
  notificationId: number;
  scheduledFor: string;
  trigger: string;
  status: string;
  error: string | null;
  jobRunId: string | null;
  requestedBy: number | null;
  createdAt: string;
  finishedAt: string | null;
}

/** How the deliveries to a run's recipients ended (the owner's notice not counted). */
export interface RunCounts {
  total: number;
  sent: number;
  failed: number;
  unknown: number;
  skipped: number;
}

/** A delivery refused for good by the mail server (failed after an attempt to send it). */
export interface RefusedDelivery {
  email: string;
  error: string | null;
}

/** A resend of a delivery, as `resends` keeps it: the failure it resent. */
export interface ResendEntry {
  at: string;
  byUserId: number | null;
  email: string;
  error: string | null;
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
  resends: ResendEntry[];
  createdAt: string;
}

/** A delivery with what a resend and an event need besides its list item. */
export interface DeliveryDetail extends DeliveryListRow {
  accountId: number;
  notificationId: number;
  recipientKey: string;
  contextHash: string;
}

/** The columns of a delivery's list item (`d`, joined to its run `r`). */
const DELIVERY_COLUMNS = `d.id, d.run_id AS "runId", ${isoSql('r.scheduled_for')} AS "scheduledFor",
  d.recipient_type AS "recipientType", d.user_id AS "userId", d.embed_user_id AS "embedUserId", d.email,
  d.status, d.attempts, d.last_error AS "lastError", d.smtp_response AS "smtpResponse",
  d.message_id AS "messageId", d.ai_summary AS "aiSummary",
  CASE WHEN d.sent_at IS NULL THEN NULL ELSE ${isoSql('d.sent_at')} END AS "sentAt", d.resends,
  ${isoSql('d.created_at')} AS "createdAt"`;

const RUN_VIEW = `r.id, r.notification_id AS "notificationId", ${isoSql('r.scheduled_for')} AS "scheduledFor",
  r.trigger, r.status, r.error, r.job_run_id AS "jobRunId", r.requested_by AS "requestedBy",
  ${isoSql('r.created_at')} AS "createdAt",
  CASE WHEN r.finished_at IS NULL THEN NULL ELSE ${isoSql('r.finished_at')} END AS "finishedAt"`;

/** Statuses of a delivery that has not ended (`held`: waiting for its paused notification). */
const OPEN = `('queued', 'sending', 'held')`;

/**
 * A delivery its notification's pause holds: one of a scheduled run (run now is asked for by
 * hand), never resent (a resend is too). `d` is the delivery.
 */
const HOLDABLE = `jsonb_array_length(d.resends) = 0
  AND EXISTS (SELECT 1 FROM notification_runs hr WHERE hr.id = d.run_id AND hr.trigger = 'schedule')`;

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
      `SELECT id, notification_id AS "notificationId", ${isoSql('scheduled_for')} AS "scheduledFor", status,
         trigger
       FROM notification_runs WHERE notification_id = :notificationId AND scheduled_for = :scheduledFor`,
      { notificationId, scheduledFor },
    );
    return row!;
  }

  /**
   * The run of a run now, `queued`, at `at` or (when a run of the notification is already recorded
   * for that very millisecond) the next free millisecond after it; answers its view.
   */
  async insertManualRun(notificationId: number, at: Date, requestedBy: number | null): Promise<RunView> {
    for (let shift = 0; ; shift++) {
      const row = await this.db.one<{ id: string }>(
        `INSERT INTO notification_runs (notification_id, scheduled_for, status, trigger, requested_by)
         VALUES (:notificationId, :scheduledFor, 'queued', 'manual', :requestedBy)
         ON CONFLICT (notification_id, scheduled_for) DO NOTHING RETURNING id`,
        { notificationId, scheduledFor: new Date(at.getTime() + shift), requestedBy },
      );
      if (row) return (await this.runView(row.id))!;
    }
  }

  async setRunJob(runId: string, jobRunId: string | null): Promise<void> {
    await this.db.query(`UPDATE notification_runs SET job_run_id = :jobRunId WHERE id = :runId`, {
      runId,
      jobRunId,
    });
  }

  /** A run asked for by hand starts: `queued` → `rendering`. */
  async startRun(runId: string): Promise<void> {
    await this.db.query(
      `UPDATE notification_runs SET status = 'rendering', updated_at = now() WHERE id = :runId AND status = 'queued'`,
      { runId },
    );
  }

  runView(runId: string): Promise<RunView | undefined> {
    return this.db.one<RunView>(`SELECT ${RUN_VIEW} FROM notification_runs r WHERE r.id = :runId`, { runId });
  }

  /**
   * Ends the run once (compare-and-set on `finished_at`) when its deliveries are recorded and every
   * one to a recipient has ended (`sent`, `failed`, `unknown`, `skipped`); a `delivering` run
   * becomes `finished`. Answers the run's view when this call ended it, else undefined.
   */
  async finishRun(runId: string): Promise<RunView | undefined> {
    const row = await this.db.one<{ id: string }>(
      `UPDATE notification_runs r SET finished_at = now(), updated_at = now(),
         status = CASE WHEN r.status = 'delivering' THEN 'finished' ELSE r.status END
       WHERE r.id = :runId AND r.finished_at IS NULL AND r.status IN ('delivering', 'failed', 'skipped')
         AND NOT EXISTS (SELECT 1 FROM notification_deliveries d
           WHERE d.notification_id = r.notification_id AND d.run_id = r.id AND d.status IN ${OPEN}
             AND d.recipient_type <> 'OWNER')
       RETURNING r.id`,
      { runId },
    );
    return row ? this.runView(row.id) : undefined;
  }

  /** How the run's deliveries to recipients ended, and those the mail server refused for good. */
  async runOutcome(runId: string): Promise<{ counts: RunCounts; refused: RefusedDelivery[] }> {
    const rows = await this.db.query<{
      status: string;
      attempts: number;
      email: string;
      error: string | null;
    }>(
      `SELECT status, attempts, email, last_error AS error FROM notification_deliveries
       WHERE run_id = :runId AND recipient_type <> 'OWNER' ORDER BY id`,
      { runId },
    );
    const counts: RunCounts = { total: rows.length, sent: 0, failed: 0, unknown: 0, skipped: 0 };
    for (const r of rows) {
      if (r.status === 'sent' || r.status === 'failed' || r.status === 'unknown' || r.status === 'skipped') {
        counts[r.status] += 1;
      }
    }
    const refused = rows
      .filter((r) => r.status === 'failed' && r.attempts > 0)
      .map((r) => ({ email: r.email, error: r.error }));
    return { counts, refused };
  }

  /** Whether the run has a notice to the notification's owner already (one per run). */
  async hasOwnerDelivery(runId: string): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM notification_deliveries WHERE run_id = :runId AND recipient_type = 'OWNER') AS ok`,
      { runId },
    );
    return row!.ok;
  }

  /** Adds a sentence to what the run's record says. */
  async noteOnRun(runId: string, note: string): Promise<void> {
    await this.db.query(
      `UPDATE notification_runs SET error = CASE WHEN error IS NULL THEN :note::text ELSE error || '. ' || :note::text END,
         updated_at = now() WHERE id = :runId`,
      { runId, note },
    );
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
      `SELECT id, notification_id AS "notificationId", ${isoSql('scheduled_for')} AS "scheduledFor", status,
         trigger
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
   * `status`, `failed` (the run could make nothing to send them). Answers the ids of the rows this
   * call wrote (those already there are not).
   */
  async addDeliveries(
    runId: string,
    notificationId: number,
    aiSummary: string | null,
    rows: readonly DeliveryWrite[],
    refused: string | null = null,
    status: 'skipped' | 'failed' = 'skipped',
  ): Promise<string[]> {
    if (rows.length === 0) return [];
    const inserted = await this.db.query<{ id: string }>(
      `INSERT INTO notification_deliveries (run_id, notification_id, recipient_key, recipient_type, user_id,
         embed_user_id, email, context_hash, ai_summary, status, last_error)
       SELECT :runId, :notificationId, v.key, v.type, v.user_id, v.embed_user_id, v.email, v.hash, :aiSummary,
         CASE WHEN :refused::text IS NULL THEN 'queued' ELSE :status::varchar END, :refused::text
       FROM unnest(:keys::text[], :types::text[], :userIds::int[], :embedUserIds::int[], :emails::text[],
         :hashes::text[]) AS v(key, type, user_id, embed_user_id, email, hash)
       ON CONFLICT (run_id, recipient_key) DO NOTHING
       RETURNING id`,
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
    return inserted.map((r) => r.id);
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
   * the attempt number; undefined when it is not queued (sent, failed, or being sent), or when its
   * notification is paused and the pause holds it.
   */
  async claim(id: string): Promise<number | undefined> {
    const row = await this.db.one<{ attempts: number }>(
      `UPDATE notification_deliveries d SET status = 'sending', attempts = d.attempts + 1, updated_at = now()
       WHERE d.id = :id AND d.status = 'queued'
         AND NOT (EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.notification_id AND n.paused_at IS NOT NULL)
           AND ${HOLDABLE})
       RETURNING d.attempts`,
      { id },
    );
    return row?.attempts;
  }

  /**
   * Holds a queued delivery of a paused notification (`queued` → `held`) until it is resumed. The
   * notification's row is read with a share lock, so a resume committing meanwhile is seen (and
   * nothing is held after it let the held ones go). True when it held it.
   */
  async hold(id: string): Promise<boolean> {
    const row = await this.db.one<{ id: string }>(
      `UPDATE notification_deliveries d SET status = 'held', updated_at = now()
       WHERE d.id = :id AND d.status = 'queued' AND ${HOLDABLE}
         AND EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.notification_id AND n.paused_at IS NOT NULL
           FOR SHARE)
       RETURNING d.id`,
      { id },
    );
    return row !== undefined;
  }

  /** Lets the notification's held deliveries go (`held` → `queued`); answers their ids. */
  async releaseHeld(notificationId: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE notification_deliveries SET status = 'queued', updated_at = now()
       WHERE notification_id = :notificationId AND status = 'held' RETURNING id`,
      { notificationId },
    );
    return rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  }

  /**
   * Resends a failed delivery once (compare-and-set `failed` → `queued`) to `email`, noting the
   * failure it resends in `resends`; the last error goes with it. Answers the number of resends
   * made so far, or undefined when the delivery was not `failed` (a parallel resend took it).
   */
  async resend(
    notificationId: number,
    id: string,
    email: string,
    byUserId: number | null,
  ): Promise<number | undefined> {
    const row = await this.db.one<{ resends: number }>(
      `UPDATE notification_deliveries d SET status = 'queued', email = :email, last_error = NULL,
         resends = d.resends || jsonb_build_array(jsonb_build_object('at', ${isoSql('now()')},
           'byUserId', :byUserId::int, 'email', d.email, 'error', d.last_error)),
         updated_at = now()
       WHERE d.id = :id AND d.notification_id = :notificationId AND d.status = 'failed'
       RETURNING jsonb_array_length(d.resends) AS resends`,
      { id, notificationId, email, byUserId },
    );
    return row?.resends;
  }

  /** A delivery of the notification with its list item, or undefined. */
  deliveryOf(notificationId: number, id: string): Promise<DeliveryDetail | undefined> {
    return this.db.one<DeliveryDetail>(
      `SELECT ${DELIVERY_COLUMNS}, n.account_id AS "accountId", d.notification_id AS "notificationId",
         d.recipient_key AS "recipientKey", d.context_hash AS "contextHash"
       FROM notification_deliveries d JOIN notification_runs r ON r.id = d.run_id
         JOIN notifications n ON n.id = d.notification_id
       WHERE d.id = :id AND d.notification_id = :notificationId`,
      { id, notificationId },
    );
  }

  /** Deliveries with their list items, by id alone (jobs), in id order. */
  deliveryDetails(ids: readonly string[]): Promise<DeliveryDetail[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.query<DeliveryDetail>(
      `SELECT ${DELIVERY_COLUMNS}, n.account_id AS "accountId", d.notification_id AS "notificationId",
         d.recipient_key AS "recipientKey", d.context_hash AS "contextHash"
       FROM notification_deliveries d JOIN notification_runs r ON r.id = d.run_id
         JOIN notifications n ON n.id = d.notification_id
       WHERE d.id = ANY(:ids::bigint[]) ORDER BY d.id`,
      { ids },
    );
  }

  /** Whether the run kept a render for `contextHash` (what a delivery of it sends). */
  async hasRender(runId: string, contextHash: string): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM notification_renders WHERE run_id = :runId AND context_hash = :contextHash) AS ok`,
      { runId, contextHash },
    );
    return row!.ok;
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
      `SELECT ${DELIVERY_COLUMNS}
       FROM notification_deliveries d JOIN notification_runs r ON r.id = d.run_id
       WHERE d.notification_id = :notificationId AND (:after::bigint IS NULL OR d.id < :after::bigint)
       ORDER BY d.id DESC LIMIT :limit`,
      { notificationId, after, limit },
      { prepare: true },
    );
  }
}
