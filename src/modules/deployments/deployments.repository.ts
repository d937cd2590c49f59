import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { RegionDto } from './dto/deployment.dto.js';

/** A deployment as stored, with its columns named as the API names them, and its channel's head. */
export interface DeploymentRow {
  id: number;
  name: string;
  creationStep: string;
  cloudProvider: string;
  region: string | null;
  creationMethod: string | null;
  deployMode: string | null;
  isManaged: boolean;
  targetPlatform: string | null;
  releaseChannel: string;
  releaseChannelVersion: string | null;
  releaseChannelVersionHold: boolean;
  /** The head of `releaseChannel` in the catalogue (what the deployment runs unless it holds a version). */
  channelHead: string | null;
  template: string;
  templateVariables: Record<string, unknown>;
  defaultLaunchpadViewGroup: string | null;
  launchpadTabs: string[] | null;
  customDomain: string | null;
  deployBranchName: string;
  deployBranchReadOnly: boolean;
  deployBranchMergeAllowed: boolean;
  deployBranchRequiredApprovals: number;
  deployBranchBlockNewBrokenContent: boolean;
  deployProjectRoot: string;
}

export interface NewDeployment {
  accountId: number;
  name: string;
  cloudProvider: string;
  region: string;
  creationMethod: string | null;
  deployMode: string | null;
  creationStep: string;
  isManaged: boolean;
  targetPlatform: string | null;
}

const COLUMNS = `d.id, d.name, d.creation_step AS "creationStep", d.cloud_provider AS "cloudProvider", d.region,
  d.creation_method AS "creationMethod", d.deploy_mode AS "deployMode", d.is_managed AS "isManaged",
  d.target_platform AS "targetPlatform", d.release_channel AS "releaseChannel",
  d.release_channel_version AS "releaseChannelVersion", d.release_channel_version_hold AS "releaseChannelVersionHold",
  d.template, d.template_variables AS "templateVariables", d.default_launchpad_view_group AS "defaultLaunchpadViewGroup",
  d.launchpad_tabs AS "launchpadTabs", d.custom_domain AS "customDomain", d.deploy_branch_name AS "deployBranchName",
  d.deploy_branch_read_only AS "deployBranchReadOnly", d.deploy_branch_merge_allowed AS "deployBranchMergeAllowed",
  d.deploy_branch_required_approvals AS "deployBranchRequiredApprovals",
  d.deploy_branch_block_new_broken_content AS "deployBranchBlockNewBrokenContent",
  d.deploy_project_root AS "deployProjectRoot"`;

/** The head of the deployment `d`'s channel: its highest release in semantic-version order. */
const CHANNEL_HEAD = `(SELECT rc.version FROM release_catalogue rc WHERE rc.channel = d.release_channel
  ORDER BY rc.major DESC, rc.minor DESC, rc.patch DESC LIMIT 1) AS "channelHead"`;

/** Every column of {@link DeploymentRow}. */
const ROW = `${COLUMNS}, ${CHANNEL_HEAD}`;

/** A row of a list page: the list shows the `Deployment` shape only. */
export type DeploymentListRow = Omit<DeploymentRow, 'channelHead'>;

/**
 * All SQL on this module's `deployments` and `regions` tables. Every call
 * joins the current unit of work (`Database`).
 */
@Injectable()
export class DeploymentsRepository {
  constructor(private readonly db: Database) {}

  /**
   * One page of the account's deployments in id order, with the total. `filter` is extra SQL
   * over alias `d` with its `:name` parameters (an access scope); `afterId` continues a cursor.
   */
  async page(query: {
    accountId: number;
    creationSteps: string[] | null;
    filter: { sql: string; params: Record<string, unknown> };
    afterId: number | null;
    limit: number;
    offset: number;
  }): Promise<{ rows: DeploymentListRow[]; total: number }> {
    const where = `d.account_id = :accountId
      AND (:creationSteps::text[] IS NULL OR d.creation_step = ANY(:creationSteps))
      AND ${query.filter.sql}`;
    const params = {
      accountId: query.accountId,
      creationSteps: query.creationSteps,
      ...query.filter.params,
    };
    const [rows, count] = await Promise.all([
      this.db.query<DeploymentListRow>(
        `SELECT ${COLUMNS} FROM deployments d
         WHERE ${where} AND (:afterId::int IS NULL OR d.id > :afterId)
         ORDER BY d.id LIMIT :limit OFFSET :offset`,
        { ...params, afterId: query.afterId, limit: query.limit, offset: query.offset },
      ),
      this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM deployments d WHERE ${where}`, params),
    ]);
    return { rows, total: count!.n };
  }

  /** The deployment of the account; `lock` takes its row for the rest of the unit of work. */
  find(accountId: number, id: number, lock = false): Promise<DeploymentRow | undefined> {
    return this.db.one<DeploymentRow>(
      `SELECT ${ROW} FROM deployments d WHERE d.account_id = :accountId AND d.id = :id${lock ? ' FOR UPDATE' : ''}`,
      { accountId, id },
    );
  }

  /** Which of `ids` are deployments of the account. */
  async existing(accountId: number, ids: readonly number[]): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT id FROM deployments WHERE account_id = :accountId AND id = ANY(:ids)`,
      { accountId, ids },
    );
    return rows.map((r) => r.id);
  }

  /** Every deployment of every account, by id: a page of at most `limit` after `afterId`. */
  allIds(afterId: number, limit: number): Promise<Array<{ id: number; accountId: number }>> {
    return this.db.query(
      `SELECT id, account_id AS "accountId" FROM deployments WHERE id > :afterId ORDER BY id LIMIT :limit`,
      { afterId, limit },
    );
  }

  async exists(accountId: number, id: number): Promise<boolean> {
    return (await this.existing(accountId, [id])).length > 0;
  }

  async insert(d: NewDeployment): Promise<DeploymentRow> {
    const row = await this.db.one<DeploymentRow>(
      `INSERT INTO deployments AS d (account_id, name, cloud_provider, region, creation_method, deploy_mode,
         creation_step, is_managed, target_platform)
       VALUES (:accountId, :name, :cloudProvider, :region, :creationMethod, :deployMode, :creationStep,
         :isManaged, :targetPlatform)
       RETURNING ${ROW}`,
      { ...d },
    );
    return row!;
  }

  /** Writes every setting of `next` (the row as it should be); undefined when it is gone. */
  update(accountId: number, next: DeploymentRow): Promise<DeploymentRow | undefined> {
    return this.db.one<DeploymentRow>(
      `UPDATE deployments d SET name = :name, cloud_provider = :cloudProvider, region = :region,
         release_channel = :releaseChannel, release_channel_version = :releaseChannelVersion,
         release_channel_version_hold = :releaseChannelVersionHold, template = :template,
         template_variables = :templateVariables, default_launchpad_view_group = :defaultLaunchpadViewGroup,
         launchpad_tabs = :launchpadTabs, creation_method = :creationMethod, deploy_mode = :deployMode,
         custom_domain = :customDomain, deploy_branch_name = :deployBranchName,
         deploy_branch_read_only = :deployBranchReadOnly, deploy_branch_merge_allowed = :deployBranchMergeAllowed,
         deploy_branch_required_approvals = :deployBranchRequiredApprovals,
         deploy_branch_block_new_broken_content = :deployBranchBlockNewBrokenContent,
         deploy_project_root = :deployProjectRoot, updated_at = now()
       WHERE d.account_id = :accountId AND d.id = :id RETURNING ${ROW}`,
      {
        accountId,
        id: next.id,
        name: next.name,
        cloudProvider: next.cloudProvider,
        region: next.region,
        releaseChannel: next.releaseChannel,
        releaseChannelVersion: next.releaseChannelVersion,
        releaseChannelVersionHold: next.releaseChannelVersionHold,
        template: next.template,
        templateVariables: JSON.stringify(next.templateVariables),
        defaultLaunchpadViewGroup: next.defaultLaunchpadViewGroup,
        launchpadTabs: next.launchpadTabs,
        creationMethod: next.creationMethod,
        deployMode: next.deployMode,
        customDomain: next.customDomain,
        deployBranchName: next.deployBranchName,
        deployBranchReadOnly: next.deployBranchReadOnly,
        deployBranchMergeAllowed: next.deployBranchMergeAllowed,
        deployBranchRequiredApprovals: next.deployBranchRequiredApprovals,
        deployBranchBlockNewBrokenContent: next.deployBranchBlockNewBrokenContent,
        deployProjectRoot: next.deployProjectRoot,
      },
    );
  }

  /** Moves the setup wizard to `step`; the row as it is after. */
  setCreationStep(accountId: number, id: number, step: string): Promise<DeploymentRow | undefined> {
    return this.db.one<DeploymentRow>(
      `UPDATE deployments d SET creation_step = :step, updated_at = now()
       WHERE d.account_id = :accountId AND d.id = :id RETURNING ${ROW}`,
      { accountId, id, step },
    );
  }

  /** Sets where the data model is served from (the deploy branch and project root). */
  async setGitSettings(
    accountId: number,
    id: number,
    settings: { deployBranchName: string; deployProjectRoot: string; creationMethod: string | null },
  ): Promise<void> {
    await this.db.query(
      `UPDATE deployments SET deploy_branch_name = :deployBranchName, deploy_project_root = :deployProjectRoot,
         creation_method = :creationMethod, updated_at = now()
       WHERE account_id = :accountId AND id = :id`,
      { accountId, id, ...settings },
    );
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.query(`DELETE FROM deployments WHERE account_id = :accountId AND id = :id`, {
      accountId,
      id,
    });
  }

  // --- Regions ------------------------------------------------------------------------------------

  async regionExists(name: string): Promise<boolean> {
    return (await this.db.query(`SELECT 1 FROM regions WHERE name = :name`, { name })).length > 0;
  }

  async regionsPage(afterId: number | null, limit: number): Promise<{ rows: RegionDto[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.query<RegionDto>(
        `SELECT id, name, title, provider, is_public AS "isPublic", is_dedicated AS "isDedicated",
                is_hybrid AS "isHybrid", use_ai_engineer AS "useAiEngineer"
         FROM regions WHERE (:afterId::int IS NULL OR id > :afterId) ORDER BY id LIMIT :limit`,
        { afterId, limit },
      ),
      this.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM regions`),
    ]);
    return { rows, total: count!.n };
  }
}
