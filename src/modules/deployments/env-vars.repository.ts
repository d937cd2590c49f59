import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';

/** A variable as stored: its value sealed. */
export interface EnvVarRow {
  name: string;
  valueSealed: string;
}

/**
 * All SQL on `deployment_env_vars`. Names sort byte-wise (`COLLATE "C"`), the same in every
 * database locale, so the cursor of a page is a name. Every call joins the current unit of work.
 */
@Injectable()
export class EnvVarsRepository {
  constructor(private readonly db: Database) {}

  /** Holds the deployment's variables for the unit of work: writers of one deployment take turns. */
  async lock(deploymentId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `deployment-env-vars:${deploymentId}`,
    });
  }

  /** Variables in name order after `afterName`, at most `limit`. */
  page(deploymentId: number, afterName: string | null, limit: number): Promise<EnvVarRow[]> {
    return this.db.query<EnvVarRow>(
      `SELECT name, value_sealed AS "valueSealed" FROM deployment_env_vars
       WHERE deployment_id = :deploymentId AND (:afterName::text IS NULL OR name COLLATE "C" > :afterName)
       ORDER BY name COLLATE "C" LIMIT :limit`,
      { deploymentId, afterName, limit },
    );
  }

  /** Which of `names` the deployment has. */
  async existing(deploymentId: number, names: readonly string[]): Promise<string[]> {
    const rows = await this.db.query<{ name: string }>(
      `SELECT name FROM deployment_env_vars WHERE deployment_id = :deploymentId AND name = ANY(:names::text[])`,
      { deploymentId, names },
    );
    return rows.map((r) => r.name);
  }

  /** Inserts or replaces the variables by name, in one statement. */
  async upsert(accountId: number, deploymentId: number, rows: readonly EnvVarRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO deployment_env_vars (deployment_id, account_id, name, value_sealed)
       SELECT :deploymentId, :accountId, v.name, v.sealed
       FROM unnest(:names::text[], :sealed::text[]) AS v(name, sealed)
       ON CONFLICT (deployment_id, name)
       DO UPDATE SET value_sealed = EXCLUDED.value_sealed, updated_at = now()`,
      {
        accountId,
        deploymentId,
        names: rows.map((r) => r.name),
        sealed: rows.map((r) => r.valueSealed),
      },
    );
  }

  async remove(deploymentId: number, names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    await this.db.query(
      `DELETE FROM deployment_env_vars WHERE deployment_id = :deploymentId AND name = ANY(:names::text[])`,
      { deploymentId, names },
    );
  }

  async count(deploymentId: number): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM deployment_env_vars WHERE deployment_id = :deploymentId`,
      { deploymentId },
    );
    return row!.n;
  }
}
