import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Leases for crash recovery: a started build holds `lease_until` (renewed while it runs) and
 * counts its `attempts`, so a run whose worker died is taken over or re-queued once the lease
 * expires; an outbox row handed to the queue holds a lease too, and `dispatches` numbers its
 * hand-overs, so a job lost by Redis is handed over again under a fresh queue job id.
 */
export class JobLeases1764200000020 implements MigrationInterface {
  name = 'JobLeases1764200000020';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" ADD "lease_until" TIMESTAMP WITH TIME ZONE, ADD "attempts" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_deployment_builds_running" ON "deployment_builds"("lease_until") WHERE status = 'running'`,
    );
    await queryRunner.query(
      `ALTER TABLE "job_outbox" ADD "lease_until" TIMESTAMP WITH TIME ZONE, ADD "dispatches" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_job_outbox_dispatched" ON "job_outbox"("lease_until") WHERE status = 'dispatched'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "ix_job_outbox_dispatched"`);
    await queryRunner.query(`ALTER TABLE "job_outbox" DROP COLUMN "dispatches", DROP COLUMN "lease_until"`);
    await queryRunner.query(`DROP INDEX "ix_deployment_builds_running"`);
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" DROP COLUMN "attempts", DROP COLUMN "lease_until"`,
    );
  }
}
