import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The GitHub App installations each account has linked (`github_installations`): the discovery
 * routes and connect reach only these, so one tenant no longer sees or uses another's. Nothing
 * is carried over: every account links its installations again through the setup redirect.
 */
export class GitHubInstallations1764400000100 implements MigrationInterface {
  name = 'GitHubInstallations1764400000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "github_installations" ("account_id" integer NOT NULL, "installation_id" bigint NOT NULL,
        "linked_by_user_id" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "pk_github_installations" PRIMARY KEY ("account_id", "installation_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "github_installations" ADD CONSTRAINT "fk_github_installations_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "github_installations" ADD CONSTRAINT "fk_github_installations_user" FOREIGN KEY ("linked_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "github_installations"`);
  }
}
