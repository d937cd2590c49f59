import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every recorded job knows its account (issue 26): `job_outbox.account_id`, null for platform
 * work, so a worker can bound how many jobs of one account it runs at once. The jobs still to run
 * (pending or dispatched) take their run's account; finished rows are left null (only live rows
 * are scheduled by it, and rewriting the whole history would bloat the table).
 * `job_outbox.deferrals`: the hand-overs that were deferrals (the job came back later because its
 * account held its share), which do not count as losses towards the row's `failed`.
 */
export class JobAccounts1764800000300 implements MigrationInterface {
  name = 'JobAccounts1764800000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "job_outbox" ADD "account_id" integer, ADD "deferrals" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `UPDATE "job_outbox" o SET "account_id" = r."account_id" FROM "job_runs" r
       WHERE r."id" = o."run_id" AND r."account_id" IS NOT NULL AND o."status" IN ('pending', 'dispatched')`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_outbox_account" ON "job_outbox"("account_id")`);
    await queryRunner.query(
      `ALTER TABLE "job_outbox" ADD CONSTRAINT "fk_job_outbox_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "job_outbox" DROP CONSTRAINT "fk_job_outbox_account"`);
    await queryRunner.query(`DROP INDEX "ix_job_outbox_account"`);
    await queryRunner.query(`ALTER TABLE "job_outbox" DROP COLUMN "deferrals", DROP COLUMN "account_id"`);
  }
}
