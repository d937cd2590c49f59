import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { DeployState } from '../data-model/deploy-states.service.js';

export type RolloutStatus = DeployState['status'];

/** One environment's rollout as a reconcile records it. */
export interface RolloutRecord {
  environmentId: number;
  objectName: string;
  status: RolloutStatus;
  reason: string | null;
  commitSha: string | null;
  version: string | null;
  objectGeneration: number | null;
}

/** The SQL of `runtime_targets` and `runtime_rollouts`. */
@Injectable()
export class RuntimeRolloutsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Counts one more change the deployment's cluster objects must follow (in the unit of work of
   * the change) and answers the new count, which the reconcile job it queues carries.
   */
  async bump(accountId: number, deploymentId: number): Promise<number> {
    const row = await this.db.one<{ generation: string }>(
      `INSERT INTO runtime_targets (deployment_id, account_id, generation) VALUES (:deploymentId, :accountId, 1)
       ON CONFLICT (deployment_id) DO UPDATE SET generation = runtime_targets.generation + 1, updated_at = now()
       RETURNING generation`,
      { accountId, deploymentId },
    );
    return Number(row!.generation);
  }

  /** Reconciles of one deployment take turns (every process) until the unit of work ends. */
  async lock(deploymentId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `runtime-reconcile:${deploymentId}`,
    });
  }

  /** The change count and the last one applied; null before the first change. */
  async target(deploymentId: number): Promise<{ generation: number; applied: number } | null> {
    const row = await this.db.one<{ generation: string; applied: string }>(
      `SELECT generation, applied_generation AS applied FROM runtime_targets WHERE deployment_id = :deploymentId`,
      { deploymentId },
    );
    return row ? { generation: Number(row.generation), applied: Number(row.applied) } : null;
  }

  /** Records that the cluster holds what change `generation` asked for (never goes back). */
  async applied(deploymentId: number, generation: number): Promise<void> {
    await this.db.query(
      `UPDATE runtime_targets SET applied_generation = GREATEST(applied_generation, :generation), updated_at = now()
        WHERE deployment_id = :deploymentId`,
      { deploymentId, generation },
    );
  }

  /**
   * Records an environment's rollout after an apply. An environment deleted meanwhile (its
   * staging toggle turned off) fails the statement, and the reconcile is retried.
   */
  async record(accountId: number, deploymentId: number, r: RolloutRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO runtime_rollouts (environment_id, account_id, deployment_id, object_name, status, reason,
         commit_sha, version, object_generation)
       VALUES (:environmentId, :accountId, :deploymentId, :objectName, :status, :reason, :commitSha, :version,
              :objectGeneration)
       ON CONFLICT (environment_id) DO UPDATE SET object_name = EXCLUDED.object_name, status = EXCLUDED.status,
         reason = EXCLUDED.reason, commit_sha = EXCLUDED.commit_sha, version = EXCLUDED.version,
         object_generation = EXCLUDED.object_generation, updated_at = now()`,
      { accountId, deploymentId, ...r },
    );
  }

  /**
   * Records what the cluster reports of an environment's Deployment at `objectGeneration`, unless
   * the last apply asked for a later generation (a late event of an older rollout).
   */
  async observe(
    deploymentId: number,
    objectName: string,
    objectGeneration: number,
    status: RolloutStatus,
    reason: string | null,
  ): Promise<void> {
    await this.db.query(
      `UPDATE runtime_rollouts SET status = :status, reason = :reason, object_generation = :objectGeneration,
              updated_at = now()
        WHERE deployment_id = :deploymentId AND object_name = :objectName
          AND (object_generation IS NULL OR object_generation <= :objectGeneration)
          AND (status, reason) IS DISTINCT FROM (:status, :reason)`,
      { deploymentId, objectName, objectGeneration, status, reason },
    );
  }

  /** The rollouts of the deployment still `deploying`, by object name. */
  async deploying(deploymentId: number): Promise<string[]> {
    const rows = await this.db.query<{ objectName: string }>(
      `SELECT object_name AS "objectName" FROM runtime_rollouts WHERE deployment_id = :deploymentId AND status = 'deploying'`,
      { deploymentId },
    );
    return rows.map((r) => r.objectName);
  }

  /** The deploy states of environments of the deployment. */
  states(
    deploymentId: number,
    environmentIds: readonly number[],
  ): Promise<Array<DeployState & { environmentId: number }>> {
    return this.db.query(
      `SELECT environment_id AS "environmentId", status, reason, commit_sha AS "commitSha", updated_at AS "updatedAt"
         FROM runtime_rollouts WHERE deployment_id = :deploymentId AND environment_id = ANY(:environmentIds)`,
      { deploymentId, environmentIds: [...environmentIds] },
    );
  }
}
