import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries an admin can operate (issue 32, part 4):
 * - `notifications.paused_at`: set while the notification is paused (its schedule off, its
 *   scheduled deliveries held);
 * - `notification_runs.trigger` (`schedule` or `manual`: run now), `requested_by` (who ran it now)
 *   and `finished_at` (when every delivery of the run had ended; `notification.run_finished` is
 *   published on that compare-and-set);
 * - `notification_deliveries.resends`: each resend of a failed delivery, with the address and
 *   error of the failure it resent;
 * - `ix_notification_deliveries_open`: the deliveries not ended yet, which a run's end and a
 *   resume look for.
 * Runs whose deliveries had all ended before this migration are marked finished (no event).
 */
export class NotificationOperations1765400000002 implements MigrationInterface {
  name = 'NotificationOperations1765400000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "notifications" ADD "paused_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(
      `ALTER TABLE "notification_runs" ADD "trigger" character varying(16) NOT NULL DEFAULT 'schedule'`,
    );
    await queryRunner.query(`ALTER TABLE "notification_runs" ADD "requested_by" integer`);
    await queryRunner.query(`ALTER TABLE "notification_runs" ADD "finished_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(
      `ALTER TABLE "notification_deliveries" ADD "resends" jsonb NOT NULL DEFAULT '[]'`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notification_deliveries_open" ON "notification_deliveries" ("notification_id", "run_id")
       WHERE status IN ('queued', 'sending', 'held')`,
    );
    await queryRunner.query(
      `UPDATE "notification_runs" r SET "finished_at" = r."updated_at",
         "status" = CASE WHEN r."status" = 'delivering' THEN 'finished' ELSE r."status" END
       WHERE r."status" IN ('delivering', 'failed', 'skipped')
         AND NOT EXISTS (SELECT 1 FROM "notification_deliveries" d
           WHERE d."run_id" = r."id" AND d."status" IN ('queued', 'sending'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "notification_deliveries" SET "status" = 'queued' WHERE "status" = 'held'`,
    );
    await queryRunner.query(
      `UPDATE "notification_runs" SET "status" = 'delivering' WHERE "status" = 'finished'`,
    );
    await queryRunner.query(
      `UPDATE "notification_runs" SET "status" = 'rendering' WHERE "status" = 'queued'`,
    );
    await queryRunner.query(`DROP INDEX "ix_notification_deliveries_open"`);
    await queryRunner.query(`ALTER TABLE "notification_deliveries" DROP COLUMN "resends"`);
    await queryRunner.query(`ALTER TABLE "notification_runs" DROP COLUMN "finished_at"`);
    await queryRunner.query(`ALTER TABLE "notification_runs" DROP COLUMN "requested_by"`);
    await queryRunner.query(`ALTER TABLE "notification_runs" DROP COLUMN "trigger"`);
    await queryRunner.query(`ALTER TABLE "notifications" DROP COLUMN "paused_at"`);
  }
}
