import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Worker heartbeats (issue 27): `job_consumers` holds, per worker process and queue it consumes,
 * when the worker last said so, so the API can tell a queue whose jobs wait with no live worker
 * (readiness answers 503 naming it). Written by the database's clock, read across hosts.
 */
export class JobConsumers1764900000100 implements MigrationInterface {
  name = 'JobConsumers1764900000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "job_consumers" ("worker_id" character varying(64) NOT NULL, "queue" character varying(64) NOT NULL, "host" character varying(255) NOT NULL, "pid" integer NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_seen" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_job_consumers" PRIMARY KEY ("worker_id", "queue"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_job_consumers_queue" ON "job_consumers"("queue", "last_seen")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "job_consumers"`);
  }
}
