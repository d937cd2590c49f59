import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dashboard exports (issue 31): `dashboard_exports` holds each export of a published dashboard to
 * PNG or PDF (what was asked, the security context it renders under, its run in `job_runs`, and
 * the rendered file) until it expires.
 */
export class DashboardExports1765300000000 implements MigrationInterface {
  name = 'DashboardExports1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "dashboard_exports" ("id" uuid NOT NULL, "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "dashboard_id" integer NOT NULL, "user_id" integer NOT NULL,
        "run_id" bigint NOT NULL, "format" character varying(8) NOT NULL, "overrides" jsonb NOT NULL,
        "subject_type" character varying(16) NOT NULL, "subject_id" integer NOT NULL,
        "security_context" jsonb NOT NULL, "content" bytea, "content_type" character varying(64),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "completed_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "ck_dashboard_exports_format" CHECK (format IN ('png', 'pdf')),
        CONSTRAINT "ck_dashboard_exports_subject" CHECK (subject_type IN ('USER', 'EMBED_USER')),
        CONSTRAINT "PK_dashboard_exports" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_dashboard_exports_run" ON "dashboard_exports" ("run_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_dashboard_exports_account" ON "dashboard_exports" ("account_id", "expires_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_dashboard_exports_expires" ON "dashboard_exports" ("expires_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "dashboard_exports" ADD CONSTRAINT "fk_dashboard_exports_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "dashboard_exports" ADD CONSTRAINT "fk_dashboard_exports_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "dashboard_exports" ADD CONSTRAINT "fk_dashboard_exports_run" FOREIGN KEY ("run_id") REFERENCES "job_runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "dashboard_exports"`);
  }
}
