import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identity: console users as members of account-wide groups, roles given to groups, the SCIM
 * name fields of users and groups, and the audit log.
 */
export class Identity1764100000000 implements MigrationInterface {
  name = 'Identity1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" ADD "last_name" character varying(255)`);
    await queryRunner.query(`ALTER TABLE "users" ADD "display_name" character varying(255)`);
    await queryRunner.query(`ALTER TABLE "groups" ADD "external_id" character varying(255)`);
    await queryRunner.query(
      `ALTER TABLE "groups" ADD "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(
      `CREATE TABLE "group_members" ("group_id" integer NOT NULL, "user_id" integer NOT NULL, "account_id" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_f5939ee0ad233ad35e03f5c65c1" PRIMARY KEY ("group_id", "user_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_group_members_user" ON "group_members" ("user_id")`);
    await queryRunner.query(
      `CREATE TABLE "group_roles" ("group_id" integer NOT NULL, "role_id" integer NOT NULL, "account_id" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_31cb33278c5d3f7aed58766840a" PRIMARY KEY ("group_id", "role_id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_group_roles_role" ON "group_roles" ("role_id")`);
    await queryRunner.query(
      `CREATE TABLE "audit_events" ("id" BIGSERIAL NOT NULL, "account_id" integer NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "actor_type" character varying(16) NOT NULL, "actor_id" integer NOT NULL, "actor_email" character varying(320), "action" character varying(100) NOT NULL, "method" character varying(10) NOT NULL, "path" character varying(2048) NOT NULL, "target_type" character varying(64), "target_id" character varying(255), "request_id" character varying(128) NOT NULL, "outcome" character varying(16) NOT NULL, "status_code" smallint NOT NULL, CONSTRAINT "PK_910f64d901a5c3e9878f0d4a407" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_audit_events_time" ON "audit_events" ("account_id", "occurred_at", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_audit_events_actor" ON "audit_events" ("account_id", "actor_id", "occurred_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_audit_events_action" ON "audit_events" ("account_id", "action", "occurred_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_audit_events_target" ON "audit_events" ("account_id", "target_type", "target_id", "occurred_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "group_members" ADD CONSTRAINT "fk_group_members_group" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "group_members" ADD CONSTRAINT "fk_group_members_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "group_roles" ADD CONSTRAINT "fk_group_roles_group" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "group_roles" ADD CONSTRAINT "fk_group_roles_role" FOREIGN KEY ("role_id") REFERENCES "roles"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "audit_events" ADD CONSTRAINT "fk_audit_events_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "audit_events"`);
    await queryRunner.query(`DROP TABLE "group_roles"`);
    await queryRunner.query(`DROP TABLE "group_members"`);
    await queryRunner.query(`ALTER TABLE "groups" DROP COLUMN "updated_at"`);
    await queryRunner.query(`ALTER TABLE "groups" DROP COLUMN "external_id"`);
    await queryRunner.query(`ALTER TABLE "users" DROP COLUMN "display_name"`);
    await queryRunner.query(`ALTER TABLE "users" DROP COLUMN "last_name"`);
  }
}
