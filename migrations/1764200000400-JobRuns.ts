import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The job framework's tables: `job_runs` (run records of work users watch: status, phase,
 * progress, lease, cancellation, error), `job_run_logs`, `job_schedules` (recurring jobs fired by
 * the relay's tick). The outbox gets a dedupe key and the run it works on. Builds keep their
 * domain columns and point at their run: their status, lease and timestamps move to `job_runs`
 * (existing builds are copied over, so history and in-flight builds survive the upgrade).
 */
export class JobRuns1764200000400 implements MigrationInterface {
  name = 'JobRuns1764200000400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "job_runs" ("id" BIGSERIAL NOT NULL, "account_id" integer, "job" character varying(64) NOT NULL, "owner" character varying(128), "dedupe_key" character varying(255), "payload" jsonb NOT NULL, "status" character varying(16) NOT NULL DEFAULT 'queued', "phase" character varying(64), "progress_current" integer, "progress_total" integer, "attempts" integer NOT NULL DEFAULT '0', "max_attempts" integer NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "cancel_requested_at" TIMESTAMP WITH TIME ZONE, "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "started_at" TIMESTAMP WITH TIME ZONE, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_4d0012c04fcfc287550b76be7e9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_job_runs_dedupe" ON "job_runs"("dedupe_key") WHERE status IN ('queued', 'running')`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_job_runs_running" ON "job_runs"("lease_until") WHERE status = 'running'`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_runs_owner" ON "job_runs"("owner", "id")`);
    await queryRunner.query(`CREATE INDEX "ix_job_runs_account" ON "job_runs"("account_id")`);
    await queryRunner.query(
      `ALTER TABLE "job_runs" ADD CONSTRAINT "fk_job_runs_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "job_run_logs" ("id" BIGSERIAL NOT NULL, "run_id" bigint NOT NULL, "attempt" integer NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "level" character varying(8) NOT NULL DEFAULT 'info', "message" text NOT NULL, CONSTRAINT "PK_46dc8413d1d4eb4e0d4f0fa3c50" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_run_logs_run" ON "job_run_logs"("run_id", "id")`);
    await queryRunner.query(
      `ALTER TABLE "job_run_logs" ADD CONSTRAINT "fk_job_run_logs_run" FOREIGN KEY ("run_id") REFERENCES "job_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "job_schedules" ("id" BIGSERIAL NOT NULL, "account_id" integer, "owner" character varying(128) NOT NULL, "job" character varying(64) NOT NULL, "cron" character varying(128) NOT NULL, "timezone" character varying(64) NOT NULL DEFAULT 'UTC', "payload" jsonb NOT NULL DEFAULT '{}', "enabled" boolean NOT NULL DEFAULT true, "next_run_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_run_at" TIMESTAMP WITH TIME ZONE, "last_run_id" bigint, "last_error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_deb87318b4f4541af685570f2a8" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_job_schedules_due" ON "job_schedules"("next_run_at") WHERE enabled`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_schedules_owner" ON "job_schedules"("owner", "id")`);
    await queryRunner.query(`CREATE INDEX "ix_job_schedules_account" ON "job_schedules"("account_id")`);
    await queryRunner.query(
      `ALTER TABLE "job_schedules" ADD CONSTRAINT "fk_job_schedules_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "job_schedules" ADD CONSTRAINT "fk_job_schedules_last_run" FOREIGN KEY ("last_run_id") REFERENCES "job_runs"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `ALTER TABLE "job_outbox" ADD "run_id" bigint, ADD "dedupe_key" character varying(255)`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_job_outbox_dedupe" ON "job_outbox"("dedupe_key") WHERE status IN ('pending', 'dispatched')`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_outbox_run" ON "job_outbox"("run_id")`);
    await queryRunner.query(
      `ALTER TABLE "job_outbox" ADD CONSTRAINT "fk_job_outbox_run" FOREIGN KEY ("run_id") REFERENCES "job_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    // Builds: one run each, carrying the build's status, lease and timestamps.
    await queryRunner.query(`ALTER TABLE "deployment_builds" ADD "run_id" bigint`);
    await queryRunner.query(
      `WITH runs AS (
         INSERT INTO job_runs (account_id, job, owner, payload, status, attempts, max_attempts, lease_until,
           error, created_at, started_at, finished_at)
         SELECT account_id, 'deployment.build', 'deployment:' || deployment_id, jsonb_build_object('buildId', id),
           status, attempts, 3, lease_until, error, created_at, started_at, finished_at
         FROM deployment_builds ORDER BY id
         RETURNING id, (payload->>'buildId')::int AS build_id)
       UPDATE deployment_builds b SET run_id = runs.id FROM runs WHERE b.id = runs.build_id`,
    );
    await queryRunner.query(
      `UPDATE job_outbox o SET run_id = b.run_id FROM deployment_builds b
       WHERE o.name = 'deployment.build' AND o.payload->>'buildId' = b.id::text`,
    );
    await queryRunner.query(`ALTER TABLE "deployment_builds" ALTER COLUMN "run_id" SET NOT NULL`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_deployment_builds_run" ON "deployment_builds"("run_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" ADD CONSTRAINT "fk_deployment_builds_run" FOREIGN KEY ("run_id") REFERENCES "job_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`DROP INDEX "ix_deployment_builds_running"`);
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" DROP COLUMN "status", DROP COLUMN "error", DROP COLUMN "started_at",
         DROP COLUMN "finished_at", DROP COLUMN "lease_until", DROP COLUMN "attempts"`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" ADD "status" character varying(16), ADD "error" text,
         ADD "started_at" TIMESTAMP WITH TIME ZONE, ADD "finished_at" TIMESTAMP WITH TIME ZONE,
         ADD "lease_until" TIMESTAMP WITH TIME ZONE, ADD "attempts" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `UPDATE deployment_builds b SET status = CASE WHEN r.status = 'cancelled' THEN 'failed' ELSE r.status END,
         error = r.error, started_at = r.started_at, finished_at = r.finished_at, lease_until = r.lease_until,
         attempts = r.attempts
       FROM job_runs r WHERE r.id = b.run_id`,
    );
    await queryRunner.query(`ALTER TABLE "deployment_builds" ALTER COLUMN "status" SET NOT NULL`);
    await queryRunner.query(
      `CREATE INDEX "ix_deployment_builds_running" ON "deployment_builds"("lease_until") WHERE status = 'running'`,
    );
    await queryRunner.query(`ALTER TABLE "deployment_builds" DROP CONSTRAINT "fk_deployment_builds_run"`);
    await queryRunner.query(`DROP INDEX "ux_deployment_builds_run"`);
    await queryRunner.query(`ALTER TABLE "deployment_builds" DROP COLUMN "run_id"`);

    await queryRunner.query(`ALTER TABLE "job_outbox" DROP CONSTRAINT "fk_job_outbox_run"`);
    await queryRunner.query(`DROP INDEX "ix_job_outbox_run"`);
    await queryRunner.query(`DROP INDEX "ux_job_outbox_dedupe"`);
    await queryRunner.query(`ALTER TABLE "job_outbox" DROP COLUMN "dedupe_key", DROP COLUMN "run_id"`);

    await queryRunner.query(`DROP TABLE "job_schedules"`);
    await queryRunner.query(`DROP TABLE "job_run_logs"`);
    await queryRunner.query(`DROP TABLE "job_runs"`);
  }
}
