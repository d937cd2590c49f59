import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The data model on git: the branch mirror (`model_branches`), who is in dev mode on which branch
 * (`model_dev_sessions`), the connected repository (`model_remotes`), open uploads
 * (`model_uploads`, `model_upload_files`), and the verdict of each build on `deployment_builds`
 * (the commit built, a hash of its files, `built`/`failed`, the compiler's errors). The git
 * repositories themselves live under `REPOS_DIR`; existing deployments get theirs, with the
 * starter project, on first use.
 */
export class DataModel1764400000000 implements MigrationInterface {
  name = 'DataModel1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "model_branches" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL,
        "name" character varying(255) NOT NULL, "parent_name" character varying(255), "kind" character varying(8) NOT NULL,
        "owner_user_id" integer, "staging_enabled" boolean NOT NULL DEFAULT false,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_model_branches" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_model_branches_name" ON "model_branches" ("deployment_id", "name")`,
    );
    await queryRunner.query(
      `ALTER TABLE "model_branches" ADD CONSTRAINT "fk_model_branches_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "model_dev_sessions" ("deployment_id" integer NOT NULL, "user_id" integer NOT NULL,
        "account_id" integer NOT NULL, "branch_name" character varying(255) NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_model_dev_sessions" PRIMARY KEY ("deployment_id", "user_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "model_dev_sessions" ADD CONSTRAINT "fk_model_dev_sessions_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "model_dev_sessions" ADD CONSTRAINT "fk_model_dev_sessions_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "model_remotes" ("deployment_id" integer NOT NULL, "account_id" integer NOT NULL,
        "provider" character varying(16) NOT NULL, "installation_id" bigint NOT NULL,
        "repository" character varying(255) NOT NULL, "url" text NOT NULL,
        "connected_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_model_remotes" PRIMARY KEY ("deployment_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "model_remotes" ADD CONSTRAINT "fk_model_remotes_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `CREATE TABLE "model_uploads" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "user_id" integer NOT NULL, "branch_name" character varying(255) NOT NULL,
        "prefix" character varying(1024) NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_model_uploads" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_model_uploads_expires" ON "model_uploads" ("expires_at")`);
    await queryRunner.query(
      `ALTER TABLE "model_uploads" ADD CONSTRAINT "fk_model_uploads_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "model_upload_files" ("upload_id" uuid NOT NULL, "path" character varying(1024) NOT NULL,
        "sha1" character(40) NOT NULL, "blob_oid" character(40) NOT NULL,
        CONSTRAINT "PK_model_upload_files" PRIMARY KEY ("upload_id", "path"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "model_upload_files" ADD CONSTRAINT "fk_model_upload_files_upload" FOREIGN KEY ("upload_id") REFERENCES "model_uploads"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    await queryRunner.query(
      `ALTER TABLE "deployment_builds" ADD "commit_sha" character varying(40), ADD "files_hash" character varying(40),
        ADD "outcome" character varying(16), ADD "error_text" text`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_deployment_builds_branch" ON "deployment_builds" ("deployment_id", "branch", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "ix_deployment_builds_branch"`);
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" DROP COLUMN "error_text", DROP COLUMN "outcome", DROP COLUMN "files_hash", DROP COLUMN "commit_sha"`,
    );
    await queryRunner.query(`DROP TABLE "model_upload_files"`);
    await queryRunner.query(`DROP TABLE "model_uploads"`);
    await queryRunner.query(`DROP TABLE "model_remotes"`);
    await queryRunner.query(`DROP TABLE "model_dev_sessions"`);
    await queryRunner.query(`DROP TABLE "model_branches"`);
  }
}
