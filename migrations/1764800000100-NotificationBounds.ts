import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounds of scheduled notifications (issue 26, item 3):
 * - `notification_delivery_counts`: per account and hour (UTC), the deliveries its runs asked to
 *   send, counted with `INSERT ... ON CONFLICT (account_id, hour) DO UPDATE` in the unit of work
 *   that records them, against `NOTIFICATION_MAX_DELIVERIES_PER_HOUR`.
 * Recipients per notification and the schedule's minimum interval need no schema.
 */
export class NotificationBounds1764800000100 implements MigrationInterface {
  name = 'NotificationBounds1764800000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "notification_delivery_counts" ("account_id" integer NOT NULL,
        "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "deliveries" integer NOT NULL,
        CONSTRAINT "PK_notification_delivery_counts" PRIMARY KEY ("account_id", "hour"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "notification_delivery_counts" ADD CONSTRAINT "fk_notification_delivery_counts_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "notification_delivery_counts"`);
  }
}
