import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounds of the command-line uploads (issue 26, item 4):
 * - `model_uploads.bytes`: the bytes an upload's parts stored in the repository, every part (a
 *   replaced one too), counted against `MODEL_UPLOAD_MAX_PENDING_BYTES` of the account until
 *   `finish` commits them or the upload sweep prunes what is left;
 * - `model_upload_files.size`: each part's size, so `finish` knows how many bytes its commit took;
 * - `ix_model_uploads_account`: the sum of an account's uploads, read at every part.
 */
export class UploadBounds1764800000200 implements MigrationInterface {
  name = 'UploadBounds1764800000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "model_uploads" ADD "bytes" bigint NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE "model_upload_files" ADD "size" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`CREATE INDEX "ix_model_uploads_account" ON "model_uploads" ("account_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "ix_model_uploads_account"`);
    await queryRunner.query(`ALTER TABLE "model_upload_files" DROP COLUMN "size"`);
    await queryRunner.query(`ALTER TABLE "model_uploads" DROP COLUMN "bytes"`);
  }
}
