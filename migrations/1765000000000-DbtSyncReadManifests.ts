import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A posted manifest is read once, when the sync is started, and stored as read (issue 28): the job
 * no longer parses it again. `manifest_read` tells the two forms apart; a row stored before this
 * migration holds the posted JSON (false), which the job still reads.
 */
export class DbtSyncReadManifests1765000000000 implements MigrationInterface {
  name = 'DbtSyncReadManifests1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "dbt_syncs" ADD "manifest_read" boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "dbt_syncs" DROP COLUMN "manifest_read"`);
  }
}
