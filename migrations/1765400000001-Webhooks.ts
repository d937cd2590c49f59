import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signed outbound webhooks (issue 32): `webhook_endpoints` (an account's receivers, each with its
 * signing secret sealed, the previous one during a rotation, and its failure count),
 * `webhook_events` (every event the modules publish, the exact body sent as `payload`),
 * `webhook_deliveries` (one per event and subscribed endpoint, or per redelivery: its state and
 * retry schedule) and `webhook_delivery_attempts` (each POST made: when, status, duration, error).
 * Rows go with their account; deliveries with their endpoint or event.
 */
export class Webhooks1765400000001 implements MigrationInterface {
  name = 'Webhooks1765400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhook_endpoints" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL,
        "url" character varying(2048) NOT NULL, "description" character varying(500),
        "events" text array NOT NULL, "secret_sealed" text NOT NULL, "previous_secret_sealed" text,
        "previous_secret_expires_at" TIMESTAMP(3) WITH TIME ZONE, "enabled" boolean NOT NULL DEFAULT true,
        "disabled_reason" character varying(500), "disabled_at" TIMESTAMP(3) WITH TIME ZONE,
        "consecutive_failures" integer NOT NULL DEFAULT '0', "created_by" integer,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_webhook_endpoints" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_endpoints_account" ON "webhook_endpoints" ("account_id", "id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_events" ("id" BIGSERIAL NOT NULL, "public_id" character varying(40) NOT NULL,
        "account_id" integer NOT NULL, "type" character varying(64) NOT NULL,
        "resource_type" character varying(64) NOT NULL, "resource_id" text NOT NULL,
        "payload" jsonb NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_webhook_events" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_webhook_events_public_id" ON "webhook_events" ("public_id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_webhook_events_occurred" ON "webhook_events" ("occurred_at")`);
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" BIGSERIAL NOT NULL, "account_id" integer NOT NULL,
        "endpoint_id" integer NOT NULL, "event_id" bigint NOT NULL,
        "event_type" character varying(64) NOT NULL, "resource_type" character varying(64) NOT NULL,
        "resource_id" text NOT NULL,
        "status" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0',
        "last_status_code" smallint, "last_duration_ms" integer, "last_error" text,
        "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "locked_until" TIMESTAMP(3) WITH TIME ZONE,
        "first_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "delivered_at" TIMESTAMP(3) WITH TIME ZONE,
        "redelivery_of" bigint,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "ck_webhook_deliveries_status" CHECK (status IN ('pending', 'succeeded', 'failed')),
        CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_endpoint" ON "webhook_deliveries" ("endpoint_id", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_event" ON "webhook_deliveries" ("event_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_created" ON "webhook_deliveries" ("created_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_due" ON "webhook_deliveries" ("next_attempt_at") WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_pending_resource" ON "webhook_deliveries" ("endpoint_id", "resource_type", "resource_id", "id") WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_delivery_attempts" ("delivery_id" bigint NOT NULL, "attempt" integer NOT NULL,
        "at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "status_code" smallint, "duration_ms" integer NOT NULL,
        "error" text, CONSTRAINT "PK_webhook_delivery_attempts" PRIMARY KEY ("delivery_id", "attempt"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "fk_webhook_endpoints_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "fk_webhook_endpoints_created_by" FOREIGN KEY ("created_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_events" ADD CONSTRAINT "fk_webhook_events_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_endpoint" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_event" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_redelivery_of" FOREIGN KEY ("redelivery_of") REFERENCES "webhook_deliveries"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "fk_webhook_delivery_attempts_delivery" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhook_delivery_attempts"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP TABLE "webhook_events"`);
    await queryRunner.query(`DROP TABLE "webhook_endpoints"`);
  }
}
