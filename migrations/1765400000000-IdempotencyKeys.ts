import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `Idempotency-Key` on creates (issue 32): `idempotency_keys` holds, per account and key, the
 * fingerprint of the request that first used the key and, once answered, its answer (status, the
 * headers worth replaying, the body), kept 24 hours (`expires_at`, pruned hourly). A row still
 * `in_progress` is held by its request's process until `lease_until`. Rows go with their account.
 */
export class IdempotencyKeys1765400000000 implements MigrationInterface {
  name = 'IdempotencyKeys1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "idempotency_keys" ("account_id" integer NOT NULL, "key" character varying(255) NOT NULL,
        "fingerprint" character(64) NOT NULL, "state" character varying(16) NOT NULL, "claim" uuid NOT NULL,
        "response_status" smallint, "response_headers" jsonb, "response_body" text,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP(3) WITH TIME ZONE,
        CONSTRAINT "ck_idempotency_keys_state" CHECK (state IN ('in_progress', 'completed')),
        CONSTRAINT "pk_idempotency_keys" PRIMARY KEY ("account_id", "key"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_idempotency_keys_expires" ON "idempotency_keys" ("expires_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "idempotency_keys" ADD CONSTRAINT "fk_idempotency_keys_account" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
