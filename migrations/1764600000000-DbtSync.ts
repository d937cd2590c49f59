import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * dbt sync (issue 15):
 * - `dbt_integrations`: each deployment's dbt repository (URL, branch, project directory) and its
 *   sealed credentials;
 * - `dbt_syncs`: one row per sync, pointing at its run (`job_runs`), with the branch it writes,
 *   a posted manifest until the run ends, and the outcome (stats, phase timings, commit, build);
 * - `dbt_sync_files`: the paths a sync generated, with their content for `output: files`;
 * - `job_run_logs` lines record the run's phase and, for a line closing a step, its duration.
 */
export class DbtSync1764600000000 implements MigrationInterface {
  name = 'DbtSync1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "job_run_logs" ADD "phase" character varying(64), ADD "duration_ms" integer`,
    );

    await queryRunner.query(
      `CREATE TABLE "dbt_integrations" ("deployment_id" integer NOT NULL, "account_id" integer NOT NULL,
        "repository_url" text NOT NULL, "branch" character varying(255) NOT NULL,
        "project_root" character varying(1024) NOT NULL DEFAULT '/', "credentials_sealed" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_dbt_integrations" PRIMARY KEY ("deployment_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "dbt_integrations" ADD CONSTRAINT "fk_dbt_integrations_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "dbt_syncs" ("id" uuid NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL,
        "run_id" bigint NOT NULL, "user_id" integer, "author_email" character varying(320) NOT NULL,
        "trigger" character varying(16) NOT NULL, "source" character varying(16) NOT NULL,
        "output" character varying(16) NOT NULL, "git_ref" character varying(255), "repository_url" text,
        "project_root" character varying(1024), "base_branch" character varying(255) NOT NULL,
        "branch_name" character varying(255) NOT NULL, "manifest_gz" bytea, "stats" jsonb, "phases" jsonb,
        "commit_sha" character varying(40), "build_id" integer, "done_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_dbt_syncs" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "ux_dbt_syncs_run" ON "dbt_syncs" ("run_id")`);
    await queryRunner.query(
      `CREATE INDEX "ix_dbt_syncs_deployment" ON "dbt_syncs" ("deployment_id", "run_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_dbt_syncs_branch" ON "dbt_syncs" ("deployment_id", "branch_name")`,
    );
    await queryRunner.query(
      `ALTER TABLE "dbt_syncs" ADD CONSTRAINT "fk_dbt_syncs_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "dbt_syncs" ADD CONSTRAINT "fk_dbt_syncs_run" FOREIGN KEY ("run_id") REFERENCES "job_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "dbt_sync_files" ("sync_id" uuid NOT NULL, "path" character varying(1024) NOT NULL,
        "content" text, CONSTRAINT "PK_dbt_sync_files" PRIMARY KEY ("sync_id", "path"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "dbt_sync_files" ADD CONSTRAINT "fk_dbt_sync_files_sync" FOREIGN KEY ("sync_id") REFERENCES "dbt_syncs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "dbt_sync_files"`);
    await queryRunner.query(`DROP TABLE "dbt_syncs"`);
    await queryRunner.query(`DROP TABLE "dbt_integrations"`);
    await queryRunner.query(`ALTER TABLE "job_run_logs" DROP COLUMN "duration_ms", DROP COLUMN "phase"`);
  }
}
