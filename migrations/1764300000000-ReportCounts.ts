import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `report_counts`: the number of reports of each deployment, kept by triggers on `reports` in
 * the transaction of every write, so the report list answers its deprecated exact total without
 * counting the deployment's rows. A deployment without a row has no reports.
 *
 * - INSERT and DELETE: statement-level triggers over the transition tables add and subtract
 *   one aggregate per deployment (a bulk copy or a cascaded delete changes each counter once),
 *   taking the counter rows in deployment order so two writers never wait on each other in a
 *   cycle. A decrement only updates an existing row: when a deployment is being deleted its
 *   counter may already be gone (cascade), and nothing may re-create it.
 * - UPDATE of `deployment_id` (no code moves a report between deployments; handled anyway): a
 *   row-level trigger, because PostgreSQL refuses transition tables on a trigger with a column
 *   list, and a statement trigger without one would capture every row of every report edit.
 *   It fires only when the column is set and changes, and takes its two counters in order.
 * - TRUNCATE of reports empties the counts.
 *
 * The table is locked against writers (reads go on) from before the backfill until the
 * triggers are in place and the migration commits, so the counts start exact.
 */
export class ReportCounts1764300000000 implements MigrationInterface {
  name = 'ReportCounts1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The lock CREATE TRIGGER takes anyway, taken first: writers wait from here to the commit.
    await queryRunner.query(`LOCK TABLE "reports" IN SHARE ROW EXCLUSIVE MODE`);
    await queryRunner.query(
      `CREATE TABLE "report_counts" ("deployment_id" integer NOT NULL, "n" integer NOT NULL, CONSTRAINT "pk_report_counts" PRIMARY KEY ("deployment_id"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "report_counts" ADD CONSTRAINT "fk_report_counts_deployment" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `INSERT INTO "report_counts" ("deployment_id", "n")
       SELECT deployment_id, count(*) FROM "reports" GROUP BY deployment_id`,
    );

    await queryRunner.query(`CREATE FUNCTION "report_counts_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO report_counts AS c (deployment_id, n)
  SELECT deployment_id, count(*) FROM report_counts_new GROUP BY deployment_id ORDER BY deployment_id
  ON CONFLICT (deployment_id) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$`);
    await queryRunner.query(`CREATE FUNCTION "report_counts_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM FROM report_counts
  WHERE deployment_id IN (SELECT deployment_id FROM report_counts_old)
  ORDER BY deployment_id FOR UPDATE;
  UPDATE report_counts c SET n = c.n - o.n
  FROM (SELECT deployment_id, count(*) AS n FROM report_counts_old GROUP BY deployment_id) o
  WHERE c.deployment_id = o.deployment_id;
  RETURN NULL;
END $$`);
    await queryRunner.query(`CREATE FUNCTION "report_counts_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.deployment_id < NEW.deployment_id THEN
    UPDATE report_counts SET n = n - 1 WHERE deployment_id = OLD.deployment_id;
  END IF;
  INSERT INTO report_counts AS c (deployment_id, n) VALUES (NEW.deployment_id, 1)
  ON CONFLICT (deployment_id) DO UPDATE SET n = c.n + 1;
  IF OLD.deployment_id > NEW.deployment_id THEN
    UPDATE report_counts SET n = n - 1 WHERE deployment_id = OLD.deployment_id;
  END IF;
  RETURN NULL;
END $$`);
    await queryRunner.query(`CREATE FUNCTION "report_counts_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM report_counts;
  RETURN NULL;
END $$`);

    await queryRunner.query(
      `CREATE TRIGGER "report_counts_inserted" AFTER INSERT ON "reports"
       REFERENCING NEW TABLE AS report_counts_new
       FOR EACH STATEMENT EXECUTE FUNCTION "report_counts_inserted"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "report_counts_deleted" AFTER DELETE ON "reports"
       REFERENCING OLD TABLE AS report_counts_old
       FOR EACH STATEMENT EXECUTE FUNCTION "report_counts_deleted"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "report_counts_moved" AFTER UPDATE OF "deployment_id" ON "reports"
       FOR EACH ROW WHEN (OLD.deployment_id IS DISTINCT FROM NEW.deployment_id)
       EXECUTE FUNCTION "report_counts_moved"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "report_counts_truncated" AFTER TRUNCATE ON "reports"
       FOR EACH STATEMENT EXECUTE FUNCTION "report_counts_truncated"()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "report_counts_truncated" ON "reports"`);
    await queryRunner.query(`DROP TRIGGER "report_counts_moved" ON "reports"`);
    await queryRunner.query(`DROP TRIGGER "report_counts_deleted" ON "reports"`);
    await queryRunner.query(`DROP TRIGGER "report_counts_inserted" ON "reports"`);
    await queryRunner.query(`DROP FUNCTION "report_counts_truncated"()`);
    await queryRunner.query(`DROP FUNCTION "report_counts_moved"()`);
    await queryRunner.query(`DROP FUNCTION "report_counts_deleted"()`);
    await queryRunner.query(`DROP FUNCTION "report_counts_inserted"()`);
    await queryRunner.query(`DROP TABLE "report_counts"`);
  }
}
