import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, users, roles, policies and API keys; deployments, builds and regions; the job outbox. */
export class InitialSchema1763780000000 implements MigrationInterface {
  name = 'InitialSchema1763780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "job_outbox" ("id" BIGSERIAL NOT NULL, "queue" character varying(64) NOT NULL, "name" character varying(64) NOT NULL, "payload" jsonb NOT NULL, "status" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "last_error" text, "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "dispatched_at" TIMESTAMP WITH TIME ZONE, "completed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_c3ba45dab51e3016acef18d0433" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_outbox_pending" ON "job_outbox"("status", "available_at")`);
    await queryRunner.query(
      `CREATE TABLE "accounts" ("id" SERIAL NOT NULL, "slug" character varying(63) NOT NULL, "name" character varying(255) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_4effe647846f5cda6b5c90eefcd" UNIQUE ("slug"), CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "deployments" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(255) NOT NULL, "cloud_provider" character varying(16) NOT NULL, "region" character varying(64), "creation_method" character varying(16), "deploy_mode" character varying(16), "creation_step" character varying(16) NOT NULL, "is_managed" boolean NOT NULL DEFAULT true, "target_platform" character varying(64), "release_channel" character varying(16) NOT NULL DEFAULT 'latest', "release_channel_version" character varying(64), "release_channel_version_hold" boolean, "template" character varying(16) NOT NULL DEFAULT 'single', "template_variables" jsonb NOT NULL DEFAULT '{}', "default_launchpad_view_group" character varying(255), "launchpad_tabs" text array, "custom_domain" character varying(255), "deploy_branch_name" character varying(255) NOT NULL DEFAULT 'master', "deploy_branch_read_only" boolean NOT NULL DEFAULT false, "deploy_branch_merge_allowed" boolean NOT NULL DEFAULT true, "deploy_project_root" character varying(1024) NOT NULL DEFAULT '/', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_1e5627acb3c950deb83fe98fc48" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_deployments_account_id" ON "deployments"("account_id", "id")`);
    await queryRunner.query(
      `CREATE TABLE "deployment_builds" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "deployment_id" integer NOT NULL, "branch" character varying(255) NOT NULL, "status" character varying(16) NOT NULL, "trigger" character varying(32) NOT NULL, "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "started_at" TIMESTAMP WITH TIME ZONE, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_7458b1c9c1e1ba9635a40b5da76" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_deployment_builds_deployment" ON "deployment_builds"("deployment_id", "id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "regions" ("id" SERIAL NOT NULL, "name" character varying(64) NOT NULL, "title" character varying(255), "provider" character varying(16), "is_public" boolean NOT NULL DEFAULT true, "is_dedicated" boolean NOT NULL DEFAULT false, "is_hybrid" boolean NOT NULL DEFAULT false, "use_ai_engineer" boolean NOT NULL DEFAULT false, CONSTRAINT "UQ_1eb9a8899a7db89f6ba473fd847" UNIQUE ("name"), CONSTRAINT "PK_4fcd12ed6a046276e2deb08801c" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "users" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "email" character varying(320) NOT NULL, "username" character varying(255) NOT NULL, "first_name" character varying(255), "picture" character varying(2048), "title" character varying(255), "external_id" character varying(255), "is_deactivated" boolean NOT NULL DEFAULT false, "default_roles" text array NOT NULL DEFAULT '{}', "settings" jsonb NOT NULL DEFAULT '{}', "notifications" jsonb NOT NULL DEFAULT '{}', "last_login" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_users_account_id" ON "users"("account_id", "id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_users_account_email" ON "users"("account_id", "email")`);
    await queryRunner.query(
      `CREATE TABLE "api_keys" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "user_id" integer NOT NULL, "name" character varying(255) NOT NULL, "token_hash" character(64) NOT NULL, "token_prefix" character varying(16) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_api_keys_user" ON "api_keys"("user_id", "id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_api_keys_token_hash" ON "api_keys"("token_hash")`);
    await queryRunner.query(
      `CREATE TABLE "policies" ("id" BIGSERIAL NOT NULL, "account_id" integer NOT NULL, "principal_type" character varying(16) NOT NULL, "principal_id" integer NOT NULL, "resource_type" character varying(32) NOT NULL, "resource_id" character varying(64) NOT NULL, "action" character varying(64) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_603e09f183df0108d8695c57e28" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_policies_principal" ON "policies"("principal_type", "principal_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_policies_resource" ON "policies"("account_id", "resource_type", "resource_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_policies_grant" ON "policies"("account_id", "principal_type", "principal_id", "resource_type", "resource_id", "action")`,
    );
    await queryRunner.query(
      `CREATE TABLE "roles" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(255) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_c1433d71a4838793a49dcad46ab" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_roles_account_id" ON "roles"("account_id", "id")`);
    await queryRunner.query(
      `CREATE TABLE "user_roles" ("user_id" integer NOT NULL, "role_id" integer NOT NULL, "account_id" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_23ed6f04fe43066df08379fd034" PRIMARY KEY ("user_id", "role_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_user_roles_role" ON "user_roles"("role_id")`);
    await queryRunner.query(
      `ALTER TABLE "deployments" ADD CONSTRAINT "fk_deployments_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployment_builds" ADD CONSTRAINT "fk_deployment_builds_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "users" ADD CONSTRAINT "fk_users_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "fk_api_keys_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "policies" ADD CONSTRAINT "fk_policies_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "roles" ADD CONSTRAINT "fk_roles_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_roles" ADD CONSTRAINT "fk_user_roles_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_roles" ADD CONSTRAINT "fk_user_roles_role" FOREIGN KEY ("role_id") REFERENCES "roles"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_users_account_username_ci" ON "users" ("account_id", lower("username"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_roles_account_name_ci" ON "roles" ("account_id", lower("name"))`,
    );
    await queryRunner.query(`
      INSERT INTO "regions" ("name", "title", "provider", "is_public", "is_dedicated", "is_hybrid", "use_ai_engineer") VALUES
      ('aws-us-east-1', 'AWS US East (N. Virginia)', 'aws', true, false, false, true),
      ('aws-us-west-2', 'AWS US West (Oregon)', 'aws', true, false, false, false),
      ('aws-eu-central-1', 'AWS Europe (Frankfurt)', 'aws', true, false, false, true),
      ('aws-ap-southeast-1', 'AWS Asia Pacific (Singapore)', 'aws', true, false, false, false),
      ('gcp-us-central1', 'GCP US Central (Iowa)', 'gcp', true, false, false, false),
      ('gcp-europe-west3', 'GCP Europe West (Frankfurt)', 'gcp', true, false, false, false)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "user_roles"`);
    await queryRunner.query(`DROP TABLE "roles"`);
    await queryRunner.query(`DROP TABLE "policies"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP TABLE "users"`);
    await queryRunner.query(`DROP TABLE "regions"`);
    await queryRunner.query(`DROP TABLE "deployment_builds"`);
    await queryRunner.query(`DROP TABLE "deployments"`);
    await queryRunner.query(`DROP TABLE "accounts"`);
    await queryRunner.query(`DROP TABLE "job_outbox"`);
  }
}
