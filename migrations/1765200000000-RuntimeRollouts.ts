import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deployments run on Kubernetes (issue 30). `runtime_targets` counts the changes of a deployment
 * that its cluster objects must follow (`generation`) and the last count a reconcile applied;
 * `runtime_rollouts` is the deploy state of each environment run on the cluster.
 */
export class RuntimeRollouts1765200000000 implements MigrationInterface {
  name = 'RuntimeRollouts1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "runtime_targets" ("deployment_id" integer NOT NULL, "account_id" integer NOT NULL,
        "generation" bigint NOT NULL DEFAULT 0, "applied_generation" bigint NOT NULL DEFAULT 0,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_runtime_targets" PRIMARY KEY ("deployment_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "runtime_targets" ADD CONSTRAINT "fk_runtime_targets_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "runtime_rollouts" ("environment_id" integer NOT NULL, "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "object_name" character varying(63) NOT NULL,
        "status" character varying(16) NOT NULL, "reason" text, "commit_sha" character varying(64),
        "version" character varying(32), "object_generation" bigint,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "ck_runtime_rollouts_status" CHECK ("status" IN ('deploying', 'deployed', 'failed')),
        CONSTRAINT "PK_runtime_rollouts" PRIMARY KEY ("environment_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_runtime_rollouts_deployment" ON "runtime_rollouts" ("deployment_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "runtime_rollouts" ADD CONSTRAINT "fk_runtime_rollouts_environment" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "runtime_rollouts" ADD CONSTRAINT "fk_runtime_rollouts_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "runtime_rollouts"`);
    await queryRunner.query(`DROP TABLE "runtime_targets"`);
  }
}
