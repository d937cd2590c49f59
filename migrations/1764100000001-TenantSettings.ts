import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant settings and app config (one row per account, absent until first saved; the audit log
 * reads `audit_log_enabled`), user attributes, and the users' attribute values.
 */
export class TenantSettings1764100000001 implements MigrationInterface {
  name = 'TenantSettings1764100000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "tenant_settings" ("account_id" integer NOT NULL, "audit_log_enabled" boolean NOT NULL DEFAULT false, "audit_log_enabled_at" TIMESTAMP WITH TIME ZONE, "has_support_access" boolean NOT NULL DEFAULT false, "use_aibi_user_interface" boolean NOT NULL DEFAULT false, "maintenance_window_enabled" boolean NOT NULL DEFAULT false, "maintenance_window_day" character varying(9) NOT NULL DEFAULT 'sunday', "maintenance_window_time" character varying(5) NOT NULL DEFAULT '02:00', "oidc_enabled" boolean NOT NULL DEFAULT false, "app_theme" jsonb, "apply_theme_globally" boolean NOT NULL DEFAULT false, "creator_mode" jsonb, "embedding" jsonb, "restrict_data_download" boolean NOT NULL DEFAULT false, "sheets_agent_chat_enabled" boolean NOT NULL DEFAULT false, "sheets_ui" jsonb, "timezone_settings" jsonb, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_tenant_settings_maintenance_time" CHECK (maintenance_window_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'), CONSTRAINT "ck_tenant_settings_maintenance_day" CHECK (maintenance_window_day IN ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')), CONSTRAINT "pk_tenant_settings" PRIMARY KEY ("account_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "user_attributes" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL, "name" character varying(64) NOT NULL, "type" character varying(16) NOT NULL, "display_name" character varying(255), "description" character varying(1000), "default_value" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_user_attributes_type" CHECK (type IN ('string', 'number', 'boolean', 'string_array', 'number_array')), CONSTRAINT "ck_user_attributes_name" CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'), CONSTRAINT "pk_user_attributes" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_user_attributes_created" ON "user_attributes"("account_id", "created_at", "id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_user_attributes_name" ON "user_attributes"("account_id", "name")`,
    );
    await queryRunner.query(
      `CREATE TABLE "user_attribute_values" ("user_id" integer NOT NULL, "user_attribute_id" integer NOT NULL, "account_id" integer NOT NULL, "value" jsonb NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_user_attribute_values" PRIMARY KEY ("user_id", "user_attribute_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_user_attribute_values_attribute" ON "user_attribute_values"("user_attribute_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "tenant_settings" ADD CONSTRAINT "fk_tenant_settings_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_attributes" ADD CONSTRAINT "fk_user_attributes_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_attribute_values" ADD CONSTRAINT "fk_user_attribute_values_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_attribute_values" ADD CONSTRAINT "fk_user_attribute_values_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_attribute_values" ADD CONSTRAINT "fk_user_attribute_values_attribute" FOREIGN KEY ("user_attribute_id") REFERENCES "user_attributes"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "user_attribute_values"`);
    await queryRunner.query(`DROP TABLE "user_attributes"`);
    await queryRunner.query(`DROP TABLE "tenant_settings"`);
  }
}
