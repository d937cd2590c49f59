import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Comments on embedded dashboards (issue 31):
 * - `embed_dashboard_comments`: threads (a first comment and its replies, one level deep) on a
 *   published dashboard, each inside one embed tenant's partition, written by embed users. A
 *   deleted comment keeps its row (`removed_at`, its text wiped) so its thread keeps its shape.
 *   Rows go with their dashboard (and so their workbook and deployment), their tenant and their
 *   account; a deleted author or resolver leaves the comment with no author or resolver.
 * - `embed_comment_write_windows`: each embed user's count of comment writes in the current
 *   minute (the `EMBED_COMMENT_WRITES_PER_MINUTE` bound), shared by every API process.
 */
export class EmbedDashboardComments1765300000001 implements MigrationInterface {
  name = 'EmbedDashboardComments1765300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "embed_dashboard_comments" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "dashboard_id" integer NOT NULL, "tenant_id" integer NOT NULL,
        "author_id" integer, "parent_id" integer, "body" text NOT NULL,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "edited_at" TIMESTAMP(3) WITH TIME ZONE, "removed_at" TIMESTAMP(3) WITH TIME ZONE,
        "resolved_at" TIMESTAMP(3) WITH TIME ZONE, "resolved_by" integer,
        CONSTRAINT "ck_embed_dashboard_comments_body" CHECK (char_length(body) <= 10000),
        CONSTRAINT "ck_embed_dashboard_comments_resolved" CHECK (parent_id IS NULL OR resolved_at IS NULL),
        CONSTRAINT "pk_embed_dashboard_comments" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_dashboard_comments_threads" ON "embed_dashboard_comments" ("dashboard_id", "tenant_id", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_dashboard_comments_parent" ON "embed_dashboard_comments" ("parent_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_dashboard_comments_tenant" ON "embed_dashboard_comments" ("tenant_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_dashboard_comments_author" ON "embed_dashboard_comments" ("author_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_dashboard_comments_resolver" ON "embed_dashboard_comments" ("resolved_by")`,
    );
    const fk = (name: string, column: string, target: string, onDelete: string) =>
      queryRunner.query(
        `ALTER TABLE "embed_dashboard_comments" ADD CONSTRAINT "fk_embed_dashboard_comments_${name}" FOREIGN KEY ("${column}") REFERENCES "${target}"("id") ON DELETE ${onDelete} ON UPDATE NO ACTION`,
      );
    await fk('account', 'account_id', 'accounts', 'CASCADE');
    await fk('deployment', 'deployment_id', 'deployments', 'CASCADE');
    await fk('dashboard', 'dashboard_id', 'dashboards', 'CASCADE');
    await fk('tenant', 'tenant_id', 'embed_tenants', 'CASCADE');
    await fk('author', 'author_id', 'embed_users', 'SET NULL');
    await fk('parent', 'parent_id', 'embed_dashboard_comments', 'CASCADE');
    await fk('resolver', 'resolved_by', 'embed_users', 'SET NULL');

    await queryRunner.query(
      `CREATE TABLE "embed_comment_write_windows" ("embed_user_id" integer NOT NULL,
        "window_started_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "writes" integer NOT NULL,
        CONSTRAINT "pk_embed_comment_write_windows" PRIMARY KEY ("embed_user_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_comment_write_windows" ADD CONSTRAINT "fk_embed_comment_write_windows_user" FOREIGN KEY ("embed_user_id") REFERENCES "embed_users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "embed_comment_write_windows"`);
    await queryRunner.query(`DROP TABLE "embed_dashboard_comments"`);
  }
}
