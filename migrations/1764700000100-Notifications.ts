import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled notifications (issue 16):
 * - `notifications`: a recurring run of a published dashboard (its schedule as asked and as a
 *   cron, time zone, format, filters, time grains, field switchers); its firing is a
 *   `job_schedules` row owned by `notification:<id>`;
 * - `notification_recipients`: console users and embed users it is mailed to, one row per user;
 * - `notification_runs`: one per firing (`UNIQUE(notification_id, scheduled_for)`);
 * - `notification_renders`: the email and attachment of a run, one per distinct security context,
 *   kept so retried runs and deliveries reuse them;
 * - `notification_deliveries`: one per run and recipient (`UNIQUE(run_id, recipient_key)`), with
 *   its outcome: the row that keeps a recipient from being mailed twice.
 */
export class Notifications1764700000100 implements MigrationInterface {
  name = 'Notifications1764700000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "notifications" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "dashboard_id" integer NOT NULL,
        "schedule_type" character varying(16) NOT NULL, "minute" smallint, "hour" smallint,
        "day_of_week" smallint, "day_of_month" smallint, "custom_cron" character varying(255),
        "cron_expression" character varying(255) NOT NULL,
        "timezone" character varying(64) NOT NULL DEFAULT 'UTC',
        "is_enabled" boolean NOT NULL DEFAULT true, "notification_enabled" boolean NOT NULL DEFAULT true,
        "notification_format" character varying(8) NOT NULL DEFAULT 'pdf',
        "notification_ai_summary" boolean NOT NULL DEFAULT false,
        "filters" jsonb, "time_grains" jsonb, "member_switchers" jsonb, "created_by" integer,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_notifications" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_deployment" ON "notifications" ("deployment_id", "id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_notifications_dashboard" ON "notifications" ("dashboard_id")`);
    await queryRunner.query(
      `ALTER TABLE "notifications" ADD CONSTRAINT "fk_notifications_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notifications" ADD CONSTRAINT "fk_notifications_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notifications" ADD CONSTRAINT "fk_notifications_dashboard" FOREIGN KEY ("dashboard_id") REFERENCES "dashboards"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "notification_recipients" ("id" SERIAL NOT NULL, "notification_id" integer NOT NULL,
        "type" character varying(16) NOT NULL, "user_id" integer, "embed_user_id" integer,
        "embed_tenant_name" character varying(36), "external_id" character varying(255), "email" character varying(320),
        "security_context" jsonb, "user_attributes" jsonb, "groups" jsonb,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_notification_recipients" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_notification_recipients_user" ON "notification_recipients" ("notification_id", "user_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_notification_recipients_embed_user" ON "notification_recipients" ("notification_id", "embed_user_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notification_recipients_user" ON "notification_recipients" ("user_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notification_recipients_embed_user" ON "notification_recipients" ("embed_user_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_recipients" ADD CONSTRAINT "fk_notification_recipients_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_recipients" ADD CONSTRAINT "fk_notification_recipients_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_recipients" ADD CONSTRAINT "fk_notification_recipients_embed_user" FOREIGN KEY ("embed_user_id") REFERENCES "embed_users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "notification_runs" ("id" BIGSERIAL NOT NULL, "notification_id" integer NOT NULL,
        "scheduled_for" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "job_run_id" bigint,
        "status" character varying(16) NOT NULL DEFAULT 'rendering', "error" text,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_notification_runs" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_notification_runs_occurrence" ON "notification_runs" ("notification_id", "scheduled_for")`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_runs" ADD CONSTRAINT "fk_notification_runs_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_runs" ADD CONSTRAINT "fk_notification_runs_job_run" FOREIGN KEY ("job_run_id") REFERENCES "job_runs"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "notification_renders" ("run_id" bigint NOT NULL, "context_hash" character varying(64) NOT NULL,
        "subject" text NOT NULL, "html" text NOT NULL, "text" text NOT NULL,
        "filename" character varying(255) NOT NULL, "content_type" character varying(64) NOT NULL,
        "content" bytea NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_notification_renders" PRIMARY KEY ("run_id", "context_hash"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_renders" ADD CONSTRAINT "fk_notification_renders_run" FOREIGN KEY ("run_id") REFERENCES "notification_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "notification_deliveries" ("id" BIGSERIAL NOT NULL, "run_id" bigint NOT NULL,
        "notification_id" integer NOT NULL, "recipient_key" character varying(64) NOT NULL,
        "recipient_type" character varying(16) NOT NULL, "user_id" integer, "embed_user_id" integer,
        "email" character varying(320) NOT NULL, "context_hash" character varying(64) NOT NULL,
        "status" character varying(16) NOT NULL DEFAULT 'queued', "attempts" integer NOT NULL DEFAULT '0',
        "last_error" text, "smtp_response" text, "message_id" character varying(255),
        "ai_summary" character varying(16), "sent_at" TIMESTAMP(3) WITH TIME ZONE,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_notification_deliveries" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_notification_deliveries_recipient" ON "notification_deliveries" ("run_id", "recipient_key")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notification_deliveries_notification" ON "notification_deliveries" ("notification_id", "id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_deliveries" ADD CONSTRAINT "fk_notification_deliveries_run" FOREIGN KEY ("run_id") REFERENCES "notification_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_deliveries" ADD CONSTRAINT "fk_notification_deliveries_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "job_schedules" WHERE "owner" LIKE 'notification:%'`);
    await queryRunner.query(`DROP TABLE "notification_deliveries"`);
    await queryRunner.query(`DROP TABLE "notification_renders"`);
    await queryRunner.query(`DROP TABLE "notification_runs"`);
    await queryRunner.query(`DROP TABLE "notification_recipients"`);
    await queryRunner.query(`DROP TABLE "notifications"`);
  }
}
