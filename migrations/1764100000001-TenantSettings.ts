import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Placeholder. */
export class TenantSettings1764100000001 implements MigrationInterface {
  name = 'TenantSettings1764100000001';

  async up(_queryRunner: QueryRunner): Promise<void> {}

  async down(_queryRunner: QueryRunner): Promise<void> {}
}
