import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The heads of the release channels: the highest version of each in semantic-version order. */
const HEADS = `SELECT DISTINCT ON (channel) channel, version FROM release_catalogue
  ORDER BY channel, major DESC, minor DESC, patch DESC`;

/**
 * Versions and environment variables of deployments (issue 14):
 * - `release_catalogue`: the releases of each channel, kept by the operator (`cli.js add-release`),
 *   seeded with the versions the service offered until now (a constant in the code);
 * - `deployment_versions`: what each deployment ran; every existing deployment starts with the
 *   version it runs now;
 * - `deployment_env_vars`: environment variables, sealed at rest.
 *
 * `release_channel_version_hold` becomes a plain boolean (default false): a deployment holds a
 * version or follows the head of its channel. Existing rows keep the version they chose: a stored
 * version other than the head, or any version stored with the hold, is held; a hold without a
 * version holds the head; every other deployment follows its channel. Going down drops the new
 * tables; the hold stays as normalised.
 */
export class ReleasesAndEnvVars1764500000000 implements MigrationInterface {
  name = 'ReleasesAndEnvVars1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "release_catalogue" ("channel" character varying(16) NOT NULL, "version" character varying(32) NOT NULL,
        "major" integer NOT NULL, "minor" integer NOT NULL, "patch" integer NOT NULL,
        "released_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_release_catalogue" PRIMARY KEY ("channel", "version"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_release_catalogue_order" ON "release_catalogue" ("channel", "major", "minor", "patch")`,
    );
    await queryRunner.query(
      `INSERT INTO "release_catalogue" ("channel", "version", "major", "minor", "patch")
       SELECT r.channel, r.version, split_part(r.version, '.', 1)::int, split_part(r.version, '.', 2)::int,
              split_part(r.version, '.', 3)::int
       FROM (VALUES ('latest', '1.6.2'), ('latest', '1.6.1'), ('latest', '1.6.0'), ('latest', '1.5.9'),
                    ('release', '1.5.9'), ('release', '1.5.8'), ('release', '1.5.7')) AS r(channel, version)`,
    );

    await queryRunner.query(
      `WITH heads AS (${HEADS}),
       chosen AS (
         SELECT d.id, CASE
           WHEN c.version IS NOT NULL AND (d.release_channel_version_hold IS TRUE OR c.version <> h.version)
             THEN c.version
           WHEN d.release_channel_version_hold IS TRUE THEN h.version
         END AS version
         FROM deployments d
         LEFT JOIN heads h ON h.channel = d.release_channel
         LEFT JOIN release_catalogue c ON c.channel = d.release_channel AND c.version = d.release_channel_version)
       UPDATE deployments d SET release_channel_version = chosen.version,
         release_channel_version_hold = chosen.version IS NOT NULL
       FROM chosen WHERE chosen.id = d.id`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployments" ALTER COLUMN "release_channel_version_hold" SET DEFAULT false`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployments" ALTER COLUMN "release_channel_version_hold" SET NOT NULL`,
    );

    await queryRunner.query(
      `CREATE TABLE "deployment_versions" ("id" BIGSERIAL NOT NULL, "deployment_id" integer NOT NULL,
        "account_id" integer NOT NULL, "release_channel" character varying(16) NOT NULL,
        "version" character varying(32) NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_deployment_versions" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_deployment_versions_deployment" ON "deployment_versions" ("deployment_id", "id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployment_versions" ADD CONSTRAINT "fk_deployment_versions_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployment_versions" ADD CONSTRAINT "fk_deployment_versions_release" FOREIGN KEY ("release_channel", "version") REFERENCES "release_catalogue"("channel", "version") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `WITH heads AS (${HEADS})
       INSERT INTO deployment_versions (deployment_id, account_id, release_channel, version)
       SELECT d.id, d.account_id, d.release_channel, COALESCE(d.release_channel_version, h.version)
       FROM deployments d JOIN heads h ON h.channel = d.release_channel
       ORDER BY d.id`,
    );

    await queryRunner.query(
      `CREATE TABLE "deployment_env_vars" ("deployment_id" integer NOT NULL, "name" character varying(128) NOT NULL,
        "account_id" integer NOT NULL, "value_sealed" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_deployment_env_vars" PRIMARY KEY ("deployment_id", "name"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployment_env_vars" ADD CONSTRAINT "fk_deployment_env_vars_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "deployment_env_vars"`);
    await queryRunner.query(`DROP TABLE "deployment_versions"`);
    await queryRunner.query(`DROP TABLE "release_catalogue"`);
    await queryRunner.query(
      `ALTER TABLE "deployments" ALTER COLUMN "release_channel_version_hold" DROP NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "deployments" ALTER COLUMN "release_channel_version_hold" DROP DEFAULT`,
    );
  }
}
