import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Placeholder. */
export class Identity1764100000000 implements MigrationInterface {
  name = 'Identity1764100000000';

  async up(_queryRunner: QueryRunner): Promise<void> {}

  async down(_queryRunner: QueryRunner): Promise<void> {}
}
