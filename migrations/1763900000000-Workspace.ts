import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace content: folders (with their materialised ancestor chain), workbooks, published
 * dashboards, reports, report placements (one row per spot in a spreadsheet) and report views.
 */
export class Workspace1763900000000 implements MigrationInterface {
  name = 'Workspace1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "folders" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL, "parent_id" integer, "ancestor_ids" integer array NOT NULL DEFAULT '{}', "name" character varying(255) NOT NULL, "position" integer NOT NULL DEFAULT '0', "user_id" integer NOT NULL, "created_by" integer NOT NULL, "updated_by" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_folders_depth" CHECK (cardinality(ancestor_ids) < 32), CONSTRAINT "PK_8578bd31b0e7f6d6c2480dbbca8" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_folders_ancestors" ON "folders" USING gin ("ancestor_ids")`);
    await queryRunner.query(
      `CREATE INDEX "ix_folders_parent" ON "folders" ("deployment_id", "parent_id", "position", "id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "workbooks" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL, "folder_id" integer, "name" character varying(255) NOT NULL, "slug" character varying(255), "meta" jsonb NOT NULL DEFAULT '{}', "calculated_fields" jsonb NOT NULL DEFAULT '{}', "dashboard_draft" jsonb, "user_id" integer NOT NULL, "created_by" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_984f720e2c516b1e34a2f2705b0" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_workbooks_slug" ON "workbooks" ("deployment_id", "slug") WHERE slug IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX "ix_workbooks_deployment" ON "workbooks" ("deployment_id", "id")`);
    await queryRunner.query(
      `CREATE INDEX "ix_workbooks_folder" ON "workbooks" ("deployment_id", "folder_id", "id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "reports" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL, "public_id" character varying(12), "folder_id" integer, "workbook_id" integer, "name" character varying(255) NOT NULL, "title" character varying(255), "description" text, "json_query" text, "sql_query" text, "meta" jsonb, "pivot_items" jsonb, "source" character varying(16), "version" integer NOT NULL DEFAULT '1', "user_id" integer NOT NULL, "created_by" integer NOT NULL, "refreshed_by" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_d9013193989303580053c0b5ef6" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_reports_public_id" ON "reports" ("account_id", "public_id") WHERE public_id IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX "ix_reports_workbook" ON "reports" ("workbook_id", "id")`);
    await queryRunner.query(`CREATE INDEX "ix_reports_folder" ON "reports" ("folder_id", "id")`);
    await queryRunner.query(
      `CREATE INDEX "ix_reports_deployment_name" ON "reports" ("deployment_id", "name", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_reports_deployment_updated" ON "reports" ("deployment_id", "updated_at", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_reports_deployment_created" ON "reports" ("deployment_id", "created_at", "id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_reports_deployment_id" ON "reports" ("deployment_id", "id")`);
    await queryRunner.query(
      `CREATE TABLE "report_placements" ("row_id" BIGSERIAL NOT NULL, "account_id" integer NOT NULL, "report_id" integer NOT NULL, "placement_id" character varying(64), "external_workbook_id" character varying(1024) NOT NULL, "result_location" character varying(1024) NOT NULL, "sheet_id" character varying(255), "sheet_name" character varying(255), "anchor_cell" character varying(32), "end_result_cell" character varying(32), "host" character varying(16), "workbook_name" character varying(1024), "placed_at" TIMESTAMP WITH TIME ZONE, "placed_by_user_id" integer, "refreshed_at" TIMESTAMP WITH TIME ZONE, "refreshed_by_user_id" integer, CONSTRAINT "PK_2ef978ad5835066b21331890611" PRIMARY KEY ("row_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_report_placements_workbook" ON "report_placements" ("account_id", "external_workbook_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_report_placements_id" ON "report_placements" ("report_id", "placement_id") WHERE placement_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_report_placements_report" ON "report_placements" ("report_id", "row_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "report_views" ("report_id" integer NOT NULL, "user_id" integer NOT NULL, "last_viewed_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_75ca7ac009abe66644b40edfd2b" PRIMARY KEY ("report_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_report_views_user" ON "report_views" ("user_id", "last_viewed_at")`,
    );
    await queryRunner.query(
      `CREATE TABLE "dashboards" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL, "workbook_id" integer NOT NULL, "public_id" character varying(32) NOT NULL, "title" character varying(255), "config" jsonb NOT NULL, "status" character varying(16) NOT NULL DEFAULT 'published', "allow_embed" boolean NOT NULL DEFAULT false, "version_number" integer NOT NULL DEFAULT '1', "created_by" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_1b4b4bc346118e0d335f16c5344" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_dashboards_public_id" ON "dashboards" ("public_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_dashboards_workbook" ON "dashboards" ("workbook_id")`);
    await queryRunner.query(
      `ALTER TABLE "folders" ADD CONSTRAINT "fk_folders_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "folders" ADD CONSTRAINT "fk_folders_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "folders" ADD CONSTRAINT "fk_folders_parent" FOREIGN KEY ("parent_id") REFERENCES "folders"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "folders" ADD CONSTRAINT "fk_folders_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbooks" ADD CONSTRAINT "fk_workbooks_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbooks" ADD CONSTRAINT "fk_workbooks_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbooks" ADD CONSTRAINT "fk_workbooks_folder" FOREIGN KEY ("folder_id") REFERENCES "folders"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbooks" ADD CONSTRAINT "fk_workbooks_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_folder" FOREIGN KEY ("folder_id") REFERENCES "folders"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_workbook" FOREIGN KEY ("workbook_id") REFERENCES "workbooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "reports" ADD CONSTRAINT "fk_reports_refreshed_by" FOREIGN KEY ("refreshed_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_placements" ADD CONSTRAINT "fk_report_placements_report" FOREIGN KEY ("report_id") REFERENCES "reports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_placements" ADD CONSTRAINT "fk_report_placements_placed_by" FOREIGN KEY ("placed_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_placements" ADD CONSTRAINT "fk_report_placements_refreshed_by" FOREIGN KEY ("refreshed_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_views" ADD CONSTRAINT "fk_report_views_report" FOREIGN KEY ("report_id") REFERENCES "reports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_views" ADD CONSTRAINT "fk_report_views_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "dashboards" ADD CONSTRAINT "fk_dashboards_workbook" FOREIGN KEY ("workbook_id") REFERENCES "workbooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "dashboards"`);
    await queryRunner.query(`DROP TABLE "report_views"`);
    await queryRunner.query(`DROP TABLE "report_placements"`);
    await queryRunner.query(`DROP TABLE "reports"`);
    await queryRunner.query(`DROP TABLE "workbooks"`);
    await queryRunner.query(`DROP TABLE "folders"`);
  }
}
