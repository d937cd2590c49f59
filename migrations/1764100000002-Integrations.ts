import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Placeholder. */
export class Integrations1764100000002 implements MigrationInterface {
  name = 'Integrations1764100000002';

  async up(_queryRunner: QueryRunner): Promise<void> {}

  async down(_queryRunner: QueryRunner): Promise<void> {}
}
