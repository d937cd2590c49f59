import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Python report runs (issue 16):
 * - `reports.python_code`: the Python a report runs over its rows;
 * - `report_snapshots`: the reports of a workbook as a publish of its dashboard took them (each
 *   publish replaces the dashboard's snapshots); a snapshot's id is the `reportVersionId` of
 *   `POST /embed/dashboard/{publicId}/python-run`, whose code comes from the snapshot;
 * - `tenant_settings.python_analysis_enabled`: the account's switch for Python runs (off).
 */
export class PythonRuns1764700000200 implements MigrationInterface {
  name = 'PythonRuns1764700000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "reports" ADD "python_code" text`);
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD "python_analysis_enabled" boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(
      `CREATE TABLE "report_snapshots" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL,
        "dashboard_id" integer NOT NULL, "report_id" integer NOT NULL, "version_number" integer NOT NULL,
        "name" character varying(255) NOT NULL, "title" character varying(255), "description" text,
        "sql_query" text, "json_query" text, "python_code" text, "meta" jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "pk_report_snapshots" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_report_snapshots_dashboard" ON "report_snapshots" ("dashboard_id", "id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_report_snapshots_report" ON "report_snapshots" ("report_id")`);
    await queryRunner.query(
      `ALTER TABLE "report_snapshots" ADD CONSTRAINT "fk_report_snapshots_dashboard" FOREIGN KEY ("dashboard_id") REFERENCES "dashboards"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_snapshots" ADD CONSTRAINT "fk_report_snapshots_report" FOREIGN KEY ("report_id") REFERENCES "reports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "report_snapshots"`);
    await queryRunner.query(`ALTER TABLE "tenant_settings" DROP COLUMN "python_analysis_enabled"`);
    await queryRunner.query(`ALTER TABLE "reports" DROP COLUMN "python_code"`);
  }
}
