import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Integrations: OAuth client registrations (sealed client secret; names unique per account
 * ignoring case), each user's OAuth tokens (sealed), pending authorizations of the
 * authorization-code flow (state hash, sealed PKCE verifier), and OIDC token configs.
 */
export class Integrations1764100000002 implements MigrationInterface {
  name = 'Integrations1764100000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "oauth_integrations" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(255) NOT NULL, "type" character varying(64) NOT NULL, "auth_url" character varying(2048) NOT NULL, "token_url" character varying(2048) NOT NULL, "client_id" character varying(1024) NOT NULL, "client_secret" text NOT NULL, "redirect_uri" character varying(2048) NOT NULL, "scopes" text array NOT NULL DEFAULT '{}', "config" jsonb, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_oauth_integrations_type" CHECK (type ~ '^[a-z][a-z0-9_-]{0,63}$'), CONSTRAINT "PK_6d5fa0d6e06603deb2a84aa6bf2" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_oauth_integrations_name" ON "oauth_integrations"("account_id", lower("name"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "user_oauth_tokens" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "user_id" integer NOT NULL, "integration_id" integer NOT NULL, "access_token" text, "refresh_token" text, "token_type" character varying(64), "scope" text, "access_token_expires_at" TIMESTAMP(3) WITH TIME ZONE, "refresh_token_expires_at" TIMESTAMP(3) WITH TIME ZONE, "status" character varying(16) NOT NULL, "last_error" jsonb, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_user_oauth_tokens_status" CHECK (status IN ('active', 'error')), CONSTRAINT "PK_2c09f64b7476d473725a071d90d" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_user_oauth_tokens_account" ON "user_oauth_tokens"("account_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_user_oauth_tokens_integration" ON "user_oauth_tokens"("integration_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_user_oauth_tokens_user_integration" ON "user_oauth_tokens"("user_id", "integration_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "oauth_states" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "user_id" integer NOT NULL, "integration_id" integer NOT NULL, "state_hash" character(64) NOT NULL, "code_verifier" text NOT NULL, "redirect_uri" character varying(2048) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_c9df6e4203e8ca042bfe5bd00ec" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_oauth_states_account" ON "oauth_states"("account_id")`);
    await queryRunner.query(`CREATE INDEX "ix_oauth_states_integration" ON "oauth_states"("integration_id")`);
    await queryRunner.query(`CREATE INDEX "ix_oauth_states_user" ON "oauth_states"("user_id", "expires_at")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_oauth_states_hash" ON "oauth_states"("state_hash")`);
    await queryRunner.query(
      `CREATE TABLE "oidc_token_configs" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(64) NOT NULL, "audience_type" character varying(16) NOT NULL, "audience" character varying(1024) NOT NULL, "sub_format" character varying(200), "target_env_var" character varying(128), "custom_claims" jsonb, "is_enabled" boolean NOT NULL DEFAULT true, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_oidc_token_configs_audience_type" CHECK (audience_type IN ('aws', 'gcp', 'azure', 'custom')), CONSTRAINT "PK_f5bbe5ff3e676e201912736d736" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_oidc_token_configs_name" ON "oidc_token_configs"("account_id", "name")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_oidc_token_configs_audience_type" ON "oidc_token_configs"("account_id", "audience_type") WHERE audience_type <> 'custom'`,
    );
    await queryRunner.query(
      `ALTER TABLE "oauth_integrations" ADD CONSTRAINT "fk_oauth_integrations_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_oauth_tokens" ADD CONSTRAINT "fk_user_oauth_tokens_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_oauth_tokens" ADD CONSTRAINT "fk_user_oauth_tokens_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_oauth_tokens" ADD CONSTRAINT "fk_user_oauth_tokens_integration" FOREIGN KEY ("integration_id") REFERENCES "oauth_integrations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "oauth_states" ADD CONSTRAINT "fk_oauth_states_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "oauth_states" ADD CONSTRAINT "fk_oauth_states_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "oauth_states" ADD CONSTRAINT "fk_oauth_states_integration" FOREIGN KEY ("integration_id") REFERENCES "oauth_integrations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "oidc_token_configs" ADD CONSTRAINT "fk_oidc_token_configs_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "oidc_token_configs"`);
    await queryRunner.query(`DROP TABLE "oauth_states"`);
    await queryRunner.query(`DROP TABLE "user_oauth_tokens"`);
    await queryRunner.query(`DROP TABLE "oauth_integrations"`);
  }
}
