import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Environments get stable numeric ids (issue 29): a row per production environment (one per
 * deployment), per staging branch while its toggle is on and per personal dev branch, each
 * backfilled from what is served today. Data API tokens issued for an environment are kept,
 * sealed, until they expire, and go with their environment.
 */
export class EnvironmentsAndTokens1765100000000 implements MigrationInterface {
  name = 'EnvironmentsAndTokens1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "environments" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL,
        "type" character varying(16) NOT NULL, "branch_id" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "ck_environments_branch" CHECK (("type" = 'production') = ("branch_id" IS NULL)),
        CONSTRAINT "PK_environments" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_environments_production" ON "environments" ("deployment_id") WHERE "type" = 'production'`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "ux_environments_branch" ON "environments" ("branch_id")`);
    await queryRunner.query(
      `ALTER TABLE "environments" ADD CONSTRAINT "fk_environments_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "environments" ADD CONSTRAINT "fk_environments_branch" FOREIGN KEY ("branch_id") REFERENCES "model_branches"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `INSERT INTO "environments" ("account_id", "deployment_id", "type")
       SELECT "account_id", "id", 'production' FROM "deployments" ORDER BY "id"`,
    );
    await queryRunner.query(
      `INSERT INTO "environments" ("account_id", "deployment_id", "type", "branch_id")
       SELECT "account_id", "deployment_id", CASE WHEN "kind" = 'dev' THEN 'development' ELSE 'staging' END, "id"
         FROM "model_branches" WHERE "kind" = 'dev' OR "staging_enabled" ORDER BY "id"`,
    );
    await queryRunner.query(
      `CREATE TABLE "environment_tokens" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "environment_id" integer NOT NULL,
        "token_sealed" text NOT NULL, "security_context" jsonb NOT NULL, "scopes" text array, "purpose" character varying(16) NOT NULL,
        "created_by" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_environment_tokens" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_environment_tokens_environment" ON "environment_tokens" ("environment_id", "id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "environment_tokens" ADD CONSTRAINT "fk_environment_tokens_environment" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "environment_tokens"`);
    await queryRunner.query(`DROP TABLE "environments"`);
  }
}
