import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The installation's identity (issue 27): `installation` holds one row, a random id made here,
 * once per database. The repositories under `REPOS_DIR` are marked with it, so another database
 * never opens, builds or deletes them.
 */
export class Installation1764900000500 implements MigrationInterface {
  name = 'Installation1764900000500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "installation" ("id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_installation" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`INSERT INTO "installation" ("id") VALUES (gen_random_uuid())`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "installation"`);
  }
}
