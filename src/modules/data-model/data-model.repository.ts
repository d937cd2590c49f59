import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { userJoin } from '../users/users.fragments.js';

export type BranchKind = 'deploy' | 'shared' | 'dev';

export interface BranchRow {
  id: number;
  name: string;
  parentName: string | null;
  kind: BranchKind;
  ownerUserId: number | null;
  stagingEnabled: boolean;
}

export interface RemoteRow {
  deploymentId: number;
  provider: string;
  installationId: string;
  repository: string;
  url: string;
}

export interface UploadRow {
  id: string;
  userId: number;
  branchName: string;
  prefix: string;
  /** Bytes its parts stored (every part, a replaced one too). */
  bytes: number;
}

/** What an account's uploads hold: bytes not yet committed nor pruned, and the earliest expiry among them. */
export interface PendingUploads {
  bytes: number;
  earliestExpiry: Date | null;
}

export interface BuildRow {
  id: number;
  branch: string;
  trigger: string;
  commitSha: string | null;
  filesHash: string | null;
  outcome: string | null;
  errorText: string | null;
  runId: string;
  createdAt: Date;
}

export interface NewBuild {
  id: number;
  accountId: number;
  deploymentId: number;
  branch: string;
  trigger: string;
  /** Null: the branch's head when the build runs (a new deployment's first build). */
  commitSha: string | null;
  runId: string;
}

const BRANCH_COLUMNS = `id, name, parent_name AS "parentName", kind, owner_user_id AS "ownerUserId",
  staging_enabled AS "stagingEnabled"`;

/**
 * All SQL on this module's tables: `model_branches`, `model_dev_sessions`, `model_remotes`,
 * `model_uploads`, `model_upload_files` and `deployment_builds`.
 */
@Injectable()
export class DataModelRepository {
  constructor(private readonly db: Database) {}

  /**
   * Holds the write lock of a deployment's branch until the unit of work ends: writers of one
   * branch (in any API process or worker) take turns; git's compare-and-swap ref updates back
   * this up.
   */
  async lockBranch(deploymentId: number, branch: string): Promise<void> {
    // The one-bigint form: its lock space is apart from the two-integer locks other modules take.
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `model-branch:${deploymentId}:${branch}`,
    });
  }

  // --- Branches -----------------------------------------------------------------------------------

  /**
   * The deployments whose repository this database has set up (it records their deploy branch
   * once the repository exists), in id order.
   */
  async deploymentsWithRepositories(): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT DISTINCT deployment_id AS id FROM model_branches ORDER BY deployment_id`,
    );
    return rows.map((r) => r.id);
  }

  branches(deploymentId: number): Promise<BranchRow[]> {
    return this.db.query<BranchRow>(
      `SELECT ${BRANCH_COLUMNS} FROM model_branches WHERE deployment_id = :deploymentId ORDER BY id`,
      { deploymentId },
    );
  }

  branch(deploymentId: number, name: string): Promise<BranchRow | undefined> {
    return this.db.one<BranchRow>(
      `SELECT ${BRANCH_COLUMNS} FROM model_branches WHERE deployment_id = :deploymentId AND name = :name`,
      { deploymentId, name },
    );
  }

  branchById(deploymentId: number, id: number): Promise<BranchRow | undefined> {
    return this.db.one<BranchRow>(
      `SELECT ${BRANCH_COLUMNS} FROM model_branches WHERE deployment_id = :deploymentId AND id = :id`,
      { deploymentId, id },
    );
  }

  /** Records a branch; false when one of that name is recorded already. */
  async insertBranch(
    accountId: number,
    deploymentId: number,
    branch: Omit<BranchRow, 'id' | 'stagingEnabled'>,
  ): Promise<boolean> {
    // A personal dev branch is served in a development environment of its own from the start.
    const rows = await this.db.query(
      `WITH b AS (
         INSERT INTO model_branches (account_id, deployment_id, name, parent_name, kind, owner_user_id)
         VALUES (:accountId, :deploymentId, :name, :parentName, :kind, :ownerUserId)
         ON CONFLICT (deployment_id, name) DO NOTHING RETURNING id, kind
       ), e AS (
         INSERT INTO environments (account_id, deployment_id, type, branch_id)
         SELECT :accountId, :deploymentId, 'development', id FROM b WHERE kind = 'dev'
       )
       SELECT id FROM b`,
      { accountId, deploymentId, ...branch },
    );
    return rows.length > 0;
  }

  /** Removes a branch's row, hands its children to its parent, and returns its viewers to `fallback`. */
  async deleteBranch(deploymentId: number, branch: BranchRow, fallback: string): Promise<void> {
    await this.db.query(
      `UPDATE model_branches SET parent_name = :parent WHERE deployment_id = :deploymentId AND parent_name = :name`,
      { deploymentId, parent: branch.parentName, name: branch.name },
    );
    await this.db.query(
      `UPDATE model_dev_sessions SET branch_name = :fallback, updated_at = now()
       WHERE deployment_id = :deploymentId AND branch_name = :name`,
      { deploymentId, fallback, name: branch.name },
    );
    await this.db.query(`DELETE FROM model_branches WHERE deployment_id = :deploymentId AND id = :id`, {
      deploymentId,
      id: branch.id,
    });
  }

  /**
   * Turns a branch's staging environment on (a new environment, unless it is on already) or off
   * (its environment and that environment's tokens are deleted).
   */
  async setStaging(deploymentId: number, name: string, enabled: boolean): Promise<void> {
    await this.db.query(
      `WITH b AS (
         UPDATE model_branches SET staging_enabled = :enabled WHERE deployment_id = :deploymentId AND name = :name
         RETURNING id, account_id
       ), added AS (
         INSERT INTO environments (account_id, deployment_id, type, branch_id)
         SELECT account_id, :deploymentId, 'staging', id FROM b WHERE :enabled
         ON CONFLICT (branch_id) DO NOTHING
       )
       DELETE FROM environments e USING b WHERE NOT :enabled AND e.branch_id = b.id`,
      { deploymentId, name, enabled },
    );
  }

  /** The deployment's production environment (once, when the deployment is created). */
  async addProductionEnvironment(accountId: number, deploymentId: number): Promise<void> {
    await this.db.query(
      `INSERT INTO environments (account_id, deployment_id, type) VALUES (:accountId, :deploymentId, 'production')
       ON CONFLICT (deployment_id) WHERE type = 'production' DO NOTHING`,
      { accountId, deploymentId },
    );
  }

  // --- Dev mode -------------------------------------------------------------------------------------

  async activeBranch(deploymentId: number, userId: number): Promise<string | null> {
    const row = await this.db.one<{ branchName: string }>(
      `SELECT branch_name AS "branchName" FROM model_dev_sessions
       WHERE deployment_id = :deploymentId AND user_id = :userId`,
      { deploymentId, userId },
    );
    return row?.branchName ?? null;
  }

  async setActiveBranch(
    accountId: number,
    deploymentId: number,
    userId: number,
    branch: string,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO model_dev_sessions (account_id, deployment_id, user_id, branch_name)
       VALUES (:accountId, :deploymentId, :userId, :branch)
       ON CONFLICT (deployment_id, user_id) DO UPDATE SET branch_name = EXCLUDED.branch_name, updated_at = now()`,
      { accountId, deploymentId, userId, branch },
    );
  }

  async leaveDevMode(deploymentId: number, userId: number): Promise<void> {
    await this.db.query(
      `DELETE FROM model_dev_sessions WHERE deployment_id = :deploymentId AND user_id = :userId`,
      {
        deploymentId,
        userId,
      },
    );
  }

  // --- Remotes --------------------------------------------------------------------------------------

  remote(deploymentId: number): Promise<RemoteRow | undefined> {
    return this.db.one<RemoteRow>(
      `SELECT deployment_id AS "deploymentId", provider, installation_id::text AS "installationId", repository, url
       FROM model_remotes WHERE deployment_id = :deploymentId`,
      { deploymentId },
    );
  }

  async saveRemote(accountId: number, remote: RemoteRow): Promise<void> {
    await this.db.query(
      `INSERT INTO model_remotes (deployment_id, account_id, provider, installation_id, repository, url)
       VALUES (:deploymentId, :accountId, :provider, :installationId, :repository, :url)
       ON CONFLICT (deployment_id) DO UPDATE SET provider = EXCLUDED.provider,
         installation_id = EXCLUDED.installation_id, repository = EXCLUDED.repository, url = EXCLUDED.url,
         connected_at = now()`,
      { accountId, ...remote },
    );
  }

  // --- Uploads --------------------------------------------------------------------------------------

  async insertUpload(row: {
    accountId: number;
    deploymentId: number;
    userId: number;
    branchName: string;
    prefix: string;
    ttlSeconds: number;
  }): Promise<string> {
    const [{ id }] = await this.db.query<{ id: string }>(
      `INSERT INTO model_uploads (account_id, deployment_id, user_id, branch_name, prefix, expires_at)
       VALUES (:accountId, :deploymentId, :userId, :branchName, :prefix, now() + make_interval(secs => :ttlSeconds))
       RETURNING id`,
      row,
    );
    return id;
  }

  /** An open (unexpired) upload of the user; `lock` holds it for the unit of work. */
  upload(deploymentId: number, userId: number, id: string, lock = false): Promise<UploadRow | undefined> {
    return this.db.one<UploadRow>(
      `SELECT id, user_id AS "userId", branch_name AS "branchName", prefix, bytes::float8 AS bytes FROM model_uploads
       WHERE id = :id AND deployment_id = :deploymentId AND user_id = :userId AND expires_at > now()
       ${lock ? 'FOR UPDATE' : ''}`,
      { id, deploymentId, userId },
    );
  }

  /**
   * Holds the upload allowance of an account until the unit of work ends: parts of one account
   * (in any process) take turns between reading the account's sum and adding to it.
   */
  async lockAccountUploads(accountId: number): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: `model-uploads:${accountId}`,
    });
  }

  /** The bytes an account's uploads hold (open, closed with bytes left out of their commit, or expired). */
  async pendingUploads(accountId: number): Promise<PendingUploads> {
    const [row] = await this.db.query<PendingUploads>(
      `SELECT COALESCE(SUM(bytes), 0)::float8 AS bytes, MIN(expires_at) AS "earliestExpiry"
       FROM model_uploads WHERE account_id = :accountId`,
      { accountId },
    );
    return row;
  }

  /** Counts `bytes` more on an open upload; false when it is no longer open. */
  async addUploadBytes(id: string, bytes: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE model_uploads SET bytes = bytes + :bytes WHERE id = :id AND expires_at > now() RETURNING id`,
      { id, bytes },
    );
    return rows.length > 0;
  }

  async putUploadFile(
    uploadId: string,
    path: string,
    sha1: string,
    blobOid: string,
    size: number,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO model_upload_files (upload_id, path, sha1, blob_oid, size)
       VALUES (:uploadId, :path, :sha1, :blobOid, :size)
       ON CONFLICT (upload_id, path) DO UPDATE
       SET sha1 = EXCLUDED.sha1, blob_oid = EXCLUDED.blob_oid, size = EXCLUDED.size`,
      { uploadId, path, sha1, blobOid, size },
    );
  }

  uploadFiles(
    uploadId: string,
  ): Promise<Array<{ path: string; sha1: string; blobOid: string; size: number }>> {
    return this.db.query(
      `SELECT path, sha1, blob_oid AS "blobOid", size FROM model_upload_files WHERE upload_id = :uploadId`,
      { uploadId },
    );
  }

  /**
   * Closes a finished upload whose commit left `bytes` of its parts out: it takes no more parts
   * and its bytes count until the sweep prunes them.
   */
  async closeUpload(id: string, bytes: number): Promise<void> {
    await this.db.query(
      `UPDATE model_uploads SET expires_at = LEAST(expires_at, now()), bytes = :bytes WHERE id = :id`,
      { id, bytes },
    );
  }

  async deleteUpload(id: string): Promise<void> {
    await this.db.query(`DELETE FROM model_uploads WHERE id = :id`, { id });
  }

  /** Deployments with uploads that ended (expired or closed) at or before `before`: the sweep's work. */
  async sweptUploadDeployments(before: Date, limit: number): Promise<number[]> {
    const rows = await this.db.query<{ deploymentId: number }>(
      `SELECT DISTINCT deployment_id AS "deploymentId" FROM model_uploads WHERE expires_at <= :before
       ORDER BY 1 LIMIT :limit`,
      { before, limit },
    );
    return rows.map((r) => r.deploymentId);
  }

  /** Forgets a deployment's uploads that ended at or before `before` (the sweep pruned what they left). */
  async deleteSweptUploads(deploymentId: number, before: Date): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM model_uploads WHERE deployment_id = :deploymentId AND expires_at <= :before RETURNING id`,
      { deploymentId, before },
    );
    return rows.length;
  }

  /** Holds the lock under which a process makes sure the upload sweep is scheduled once. */
  async lockUploadSweepSchedule(): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      key: 'model-upload-sweep-schedule',
    });
  }

  // --- Builds ---------------------------------------------------------------------------------------

  /** An id for a build about to be inserted (its run's payload names it first). */
  async nextBuildId(): Promise<number> {
    const [row] = await this.db.query<{ id: number }>(
      `SELECT nextval(pg_get_serial_sequence('deployment_builds', 'id'))::int AS id`,
    );
    return row.id;
  }

  async insertBuild(build: NewBuild): Promise<void> {
    await this.db.query(
      `INSERT INTO deployment_builds (id, account_id, deployment_id, branch, trigger, commit_sha, run_id)
       VALUES (:id, :accountId, :deploymentId, :branch, :trigger, :commitSha, :runId)`,
      { ...build },
    );
  }

  findBuild(id: number): Promise<
    | {
        id: number;
        accountId: number;
        deploymentId: number;
        branch: string;
        trigger: string;
        commitSha: string | null;
      }
    | undefined
  > {
    return this.db.one(
      `SELECT id, account_id AS "accountId", deployment_id AS "deploymentId", branch, trigger,
         commit_sha AS "commitSha"
       FROM deployment_builds WHERE id = :id`,
      { id },
    );
  }

  /**
   * Records the verdict by compare-and-set: written only when the build's outcome is another
   * (a rerun reaching the same verdict writes nothing). True when written: the build reached
   * that final state now.
   */
  async recordBuildOutcome(
    id: number,
    outcome: {
      commitSha: string | null;
      filesHash: string | null;
      outcome: 'built' | 'failed';
      errorText: string | null;
    },
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE deployment_builds SET commit_sha = :commitSha, files_hash = :filesHash, outcome = :outcome,
         error_text = :errorText WHERE id = :id AND outcome IS DISTINCT FROM :outcome RETURNING id`,
      { id, ...outcome },
    );
    return rows.length > 0;
  }

  /** The latest build of a branch (its run's state is read through `JobRuns`). */
  latestBuild(deploymentId: number, branch: string): Promise<BuildRow | undefined> {
    return this.db.one<BuildRow>(
      `SELECT id, branch, trigger, commit_sha AS "commitSha", files_hash AS "filesHash", outcome,
              error_text AS "errorText", run_id::text AS "runId", created_at AS "createdAt"
       FROM deployment_builds WHERE deployment_id = :deploymentId AND branch = :branch
       ORDER BY id DESC LIMIT 1`,
      { deploymentId, branch },
    );
  }

  // --- Environments -------------------------------------------------------------------------------

  /**
   * A page of the deployment's environments in (rank, branch) order: production (rank 0, the
   * deploy branch), staging (rank 1, shared branches with the toggle on) and development (rank
   * 2, personal dev branches with their owner's email), each with its id, and the count of every
   * environment of the requested types before paging. An empty page is one row with a null rank.
   */
  environments(q: {
    deploymentId: number;
    deployBranch: string;
    ranks: number[];
    after: [number, string] | null;
    limit: number;
    offset: number;
  }): Promise<Array<EnvironmentRow | { rank: null; total: number }>> {
    return this.db.query(
      `WITH env AS (${ENVIRONMENTS_SQL}), wanted AS (SELECT * FROM env WHERE rank = ANY(:ranks))
       SELECT t.total, p.id, p.rank, p.branch, p.email, p."userId"
         FROM (SELECT count(*)::int AS total FROM wanted) t
         LEFT JOIN LATERAL (
           SELECT id, rank, branch, email, "userId" FROM wanted
            WHERE :noAfter OR (rank, branch COLLATE "C") > (:afterRank, :afterBranch COLLATE "C")
            ORDER BY rank, branch COLLATE "C"
            LIMIT :limit OFFSET :offset
         ) p ON TRUE`,
      {
        deploymentId: q.deploymentId,
        deployBranch: q.deployBranch,
        ranks: q.ranks,
        noAfter: q.after === null,
        afterRank: q.after?.[0] ?? 0,
        afterBranch: q.after?.[1] ?? '',
        limit: q.limit,
        offset: q.offset,
      },
    );
  }

  /**
   * One environment of the deployment as the list shows it, or undefined when there is none by
   * that id (another deployment's, or a staging environment whose branch became the deploy
   * branch). `lock`: the environment's row is locked until the unit of work ends, so that it
   * cannot be deleted meanwhile and writers for one environment take turns.
   */
  async environment(
    deploymentId: number,
    deployBranch: string,
    environmentId: number,
    options: { lock?: boolean } = {},
  ): Promise<EnvironmentRow | undefined> {
    if (options.lock) {
      await this.db.query(
        `SELECT id FROM environments WHERE id = :environmentId AND deployment_id = :deploymentId FOR UPDATE`,
        { environmentId, deploymentId },
      );
    }
    return this.db.one<EnvironmentRow>(
      `WITH env AS (${ENVIRONMENTS_SQL})
       SELECT env.id, env.rank, env.branch, env.email, env."userId" FROM env WHERE env.id = :environmentId`,
      { deploymentId, deployBranch, environmentId },
    );
  }
  /**
   * Production and the staging environments of the deployment, each with its branch's last
   * successful build's commit (null before its first).
   */
  runnableEnvironments(
    deploymentId: number,
    deployBranch: string,
  ): Promise<Array<{ id: number; rank: 0 | 1; branch: string; builtCommit: string | null }>> {
    return this.db.query(
      `WITH env AS (${ENVIRONMENTS_SQL})
       SELECT env.id, env.rank, env.branch,
              (SELECT b.commit_sha FROM deployment_builds b
                WHERE b.deployment_id = :deploymentId AND b.branch = env.branch AND b.outcome = 'built'
                ORDER BY b.id DESC LIMIT 1) AS "builtCommit"
         FROM env WHERE env.rank IN (0, 1) ORDER BY env.rank, env.branch COLLATE "C"`,
      { deploymentId, deployBranch },
    );
  }

  /** The id of the production or staging environment serving `branch`, or null. */
  async environmentServing(
    deploymentId: number,
    deployBranch: string,
    branch: string,
  ): Promise<number | null> {
    const row = await this.db.one<{ id: number }>(
      `WITH env AS (${ENVIRONMENTS_SQL}) SELECT env.id FROM env WHERE env.rank IN (0, 1) AND env.branch = :branch`,
      { deploymentId, deployBranch, branch },
    );
    return row?.id ?? null;
  }
}

/**
 * Every environment of `:deploymentId` the list shows, as (id, rank, branch, email, userId):
 * production serves `:deployBranch`; a staging environment is shown while its branch is a shared
 * branch with the toggle on (and not the deploy branch); a development one with its dev branch.
 */
const ENVIRONMENTS_SQL = `
  SELECT e.id, 0 AS rank, :deployBranch::text AS branch, NULL::text AS email, NULL::int AS "userId"
    FROM environments e WHERE e.deployment_id = :deploymentId AND e.type = 'production'
  UNION ALL
  SELECT e.id, 1, b.name, NULL, NULL FROM environments e JOIN model_branches b ON b.id = e.branch_id
   WHERE e.deployment_id = :deploymentId AND e.type = 'staging' AND b.kind = 'shared' AND b.staging_enabled
     AND b.name <> :deployBranch
  UNION ALL
  SELECT e.id, 2, b.name, u.email, b.owner_user_id FROM environments e JOIN model_branches b ON b.id = e.branch_id
    ${userJoin('b.owner_user_id', 'u')}
   WHERE e.deployment_id = :deploymentId AND e.type = 'development' AND b.kind = 'dev'`;

export interface EnvironmentRow {
  id: number;
  rank: 0 | 1 | 2;
  /** The owner of a development environment's branch. */
  userId: number | null;
  branch: string;
  email: string | null;
  total: number;
}
