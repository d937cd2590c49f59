import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reviews of a model change and the merge gate of the deploy branch (issue 33, docs/data-model.md
 * "Reviews and the merge gate"):
 * - `model_reviews`: one row per reviewer and branch head reviewed (`approve` or
 *   `request_changes`, with a comment of at most 10 000 characters); a review of an older head is
 *   kept, shown as dismissed. Rows go with their branch (and so their deployment), their reviewer
 *   and their account.
 * - `deployments.deploy_branch_required_approvals` (0 to 10) and
 *   `deployments.deploy_branch_block_new_broken_content`: the gate, settings of the deployment
 *   written by `PUT /api/v1/deployments/{id}`; both off for every deployment.
 * - `audit_events.details`: what an entry records beyond its request, such as a merge that
 *   overrode the gate and what the gate found missing (null for every other entry).
 */
export class ModelReviews1765500000000 implements MigrationInterface {
  name = 'ModelReviews1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "deployments" ADD "deploy_branch_required_approvals" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployments" ADD "deploy_branch_block_new_broken_content" boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployments" ADD CONSTRAINT "ck_deployments_required_approvals"
       CHECK (deploy_branch_required_approvals BETWEEN 0 AND 10)`,
    );
    await queryRunner.query(`ALTER TABLE "audit_events" ADD "details" jsonb`);

    await queryRunner.query(
      `CREATE TABLE "model_reviews" ("id" SERIAL NOT NULL, "account_id" integer NOT NULL,
        "deployment_id" integer NOT NULL, "branch_id" integer NOT NULL,
        "branch_name" character varying(255) NOT NULL, "head_commit" character varying(64) NOT NULL,
        "reviewer_user_id" integer NOT NULL, "verdict" character varying(16) NOT NULL, "comment" text,
        "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "ck_model_reviews_verdict" CHECK (verdict IN ('approve', 'request_changes')),
        CONSTRAINT "ck_model_reviews_comment" CHECK (char_length(comment) <= 10000),
        CONSTRAINT "pk_model_reviews" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "ux_model_reviews_current" ON "model_reviews" ("branch_id", "head_commit", "reviewer_user_id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_model_reviews_branch" ON "model_reviews" ("branch_id", "id")`);
    await queryRunner.query(
      `CREATE INDEX "ix_model_reviews_deployment" ON "model_reviews" ("deployment_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_model_reviews_reviewer" ON "model_reviews" ("reviewer_user_id")`,
    );
    await queryRunner.query(`CREATE INDEX "ix_model_reviews_account" ON "model_reviews" ("account_id")`);
    const fk = (name: string, column: string, target: string) =>
      queryRunner.query(
        `ALTER TABLE "model_reviews" ADD CONSTRAINT "fk_model_reviews_${name}" FOREIGN KEY ("${column}") REFERENCES "${target}"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
      );
    await fk('account', 'account_id', 'accounts');
    await fk('deployment', 'deployment_id', 'deployments');
    await fk('branch', 'branch_id', 'model_branches');
    await fk('reviewer', 'reviewer_user_id', 'users');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "model_reviews"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "details"`);
    await queryRunner.query(`ALTER TABLE "deployments" DROP CONSTRAINT "ck_deployments_required_approvals"`);
    await queryRunner.query(`ALTER TABLE "deployments" DROP COLUMN "deploy_branch_block_new_broken_content"`);
    await queryRunner.query(`ALTER TABLE "deployments" DROP COLUMN "deploy_branch_required_approvals"`);
  }
}
