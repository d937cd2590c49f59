import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Embedding: embed tenants, embed users, account-wide groups and the embed users' memberships,
 * tenant groups and their members, embed sessions, workbook shares with embed audiences, and
 * each account's sealed embed signing key.
 */
export class Embedding1764000000000 implements MigrationInterface {
  name = 'Embedding1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "embed_tenants" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(36) NOT NULL, "display_name" character varying(255), "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_embed_tenants_name" CHECK (name ~ '^[a-z][a-z0-9-]{0,34}[a-z0-9]$'), CONSTRAINT "PK_542371c990049e1d8156044a732" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_embed_tenants_name" ON "embed_tenants"("account_id", "name")`,
    );
    await queryRunner.query(
      `CREATE TABLE "embed_groups" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "tenant_id" integer NOT NULL, "name" character varying(100) NOT NULL, "description" character varying(500), "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_embed_groups_name" CHECK (lower(name) NOT LIKE 'system:%'), CONSTRAINT "PK_14c1e1fa39ba23ea2f3b7f2dd74" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_groups_created" ON "embed_groups"("tenant_id", "created_at", "id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_embed_groups_name" ON "embed_groups"("tenant_id", "name")`,
    );
    await queryRunner.query(
      `CREATE TABLE "embed_users" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "tenant_id" integer NOT NULL, "external_id" character varying(255) NOT NULL, "email" character varying(320) NOT NULL, "display_name" character varying(255), "picture" character varying(2048), "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "last_login_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_c32a70ad7fac8c57a6c52120c8d" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_embed_users_account" ON "embed_users"("account_id")`);
    await queryRunner.query(
      `CREATE INDEX "ix_embed_users_email" ON "embed_users"("tenant_id", "email" COLLATE "C", "id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_embed_users_external_id" ON "embed_users"("tenant_id", "external_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "embed_group_members" ("group_id" integer NOT NULL, "embed_user_id" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_442b07567891546698455eecde4" PRIMARY KEY ("group_id", "embed_user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_group_members_user" ON "embed_group_members"("embed_user_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_embed_group_members_added" ON "embed_group_members"("group_id", "created_at", "embed_user_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "embed_sessions" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "tenant_id" integer NOT NULL, "embed_user_id" integer NOT NULL, "deployment_id" integer NOT NULL, "session_hash" character(64) NOT NULL, "context" jsonb NOT NULL, "created_by" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "exchanged_at" TIMESTAMP(3) WITH TIME ZONE, "token_expires_at" TIMESTAMP(3) WITH TIME ZONE, "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_ff58dd5ffc42510db7c5292afbb" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_embed_sessions_expiry" ON "embed_sessions"("expires_at")`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_embed_sessions_hash" ON "embed_sessions"("session_hash")`,
    );
    await queryRunner.query(
      `CREATE TABLE "groups" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(100) NOT NULL, "description" character varying(500), "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_659d1483316afb28afd3a90646e" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_groups_account_name" ON "groups"("account_id", "name")`);
    await queryRunner.query(
      `CREATE TABLE "embed_user_groups" ("embed_user_id" integer NOT NULL, "group_id" integer NOT NULL, CONSTRAINT "PK_4d14ec12db381ff1679f22d78e3" PRIMARY KEY ("embed_user_id", "group_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_embed_user_groups_group" ON "embed_user_groups"("group_id")`);
    await queryRunner.query(
      `CREATE TABLE "workbook_embed_access" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "workbook_id" integer NOT NULL, "tenant_id" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_df0931c161ce83b3961d0b229e1" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_workbook_embed_access_tenant" ON "workbook_embed_access"("tenant_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_workbook_embed_access_all" ON "workbook_embed_access"("workbook_id") WHERE tenant_id IS NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_workbook_embed_access_tenant" ON "workbook_embed_access"("workbook_id", "tenant_id") WHERE tenant_id IS NOT NULL`,
    );
    await queryRunner.query(`ALTER TABLE "accounts" ADD "embed_secret" text`);
    await queryRunner.query(
      `ALTER TABLE "embed_tenants" ADD CONSTRAINT "fk_embed_tenants_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_groups" ADD CONSTRAINT "fk_embed_groups_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_groups" ADD CONSTRAINT "fk_embed_groups_tenant" FOREIGN KEY ("tenant_id") REFERENCES "embed_tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_users" ADD CONSTRAINT "fk_embed_users_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_users" ADD CONSTRAINT "fk_embed_users_tenant" FOREIGN KEY ("tenant_id") REFERENCES "embed_tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_group_members" ADD CONSTRAINT "fk_embed_group_members_group" FOREIGN KEY ("group_id") REFERENCES "embed_groups"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_group_members" ADD CONSTRAINT "fk_embed_group_members_user" FOREIGN KEY ("embed_user_id") REFERENCES "embed_users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_sessions" ADD CONSTRAINT "fk_embed_sessions_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_sessions" ADD CONSTRAINT "fk_embed_sessions_tenant" FOREIGN KEY ("tenant_id") REFERENCES "embed_tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_sessions" ADD CONSTRAINT "fk_embed_sessions_user" FOREIGN KEY ("embed_user_id") REFERENCES "embed_users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_sessions" ADD CONSTRAINT "fk_embed_sessions_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "groups" ADD CONSTRAINT "fk_groups_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_user_groups" ADD CONSTRAINT "fk_embed_user_groups_user" FOREIGN KEY ("embed_user_id") REFERENCES "embed_users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "embed_user_groups" ADD CONSTRAINT "fk_embed_user_groups_group" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbook_embed_access" ADD CONSTRAINT "fk_workbook_embed_access_workbook" FOREIGN KEY ("workbook_id") REFERENCES "workbooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "workbook_embed_access" ADD CONSTRAINT "fk_workbook_embed_access_tenant" FOREIGN KEY ("tenant_id") REFERENCES "embed_tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "workbook_embed_access"`);
    await queryRunner.query(`DROP TABLE "embed_user_groups"`);
    await queryRunner.query(`DROP TABLE "groups"`);
    await queryRunner.query(`DROP TABLE "embed_sessions"`);
    await queryRunner.query(`DROP TABLE "embed_group_members"`);
    await queryRunner.query(`DROP TABLE "embed_users"`);
    await queryRunner.query(`DROP TABLE "embed_groups"`);
    await queryRunner.query(`DROP TABLE "embed_tenants"`);
    await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "embed_secret"`);
  }
}
