import { Injectable } from '@nestjs/common';

/** A deployment just created, as the modules that hang from it need to know it. */
export interface CreatedDeployment {
  id: number;
  accountId: number;
  creationMethod: string | null;
  deployBranchName: string;
  /**
   * True for `POST /build/api/v1/deployments`: the model starts with the starter project and its
   * first build. False for `POST /api/v1/deployments`: no files and no build until code arrives.
   */
  scaffold: boolean;
}

/**
 * What a module does when a deployment is created, changed or deleted. Each runs inside the unit
 * of work of the change, so it shares its fate; effects outside the database go to
 * `Database.afterCommit`. A module implements the ones it needs.
 */
export interface DeploymentHooks {
  created?(deployment: CreatedDeployment): Promise<void>;
  /**
   * Something the deployment runs with changed: its settings or version (a `PUT`, a release its
   * channel moved it to), its env vars, its deploy branch, a successful build of a branch it
   * serves, a staging environment turned on or off. Called by whichever module made the change.
   */
  changed?(accountId: number, deploymentId: number): Promise<void>;
  deleted?(accountId: number, deploymentId: number): Promise<void>;
}

/**
 * The modules that hang from a deployment (the data model, the runtime) plug in here at start-up, so the
 * deployments module calls them without depending on them (they depend on it).
 */
@Injectable()
export class DeploymentLifecycle {
  private readonly hooks: DeploymentHooks[] = [];

  register(hooks: DeploymentHooks): void {
    this.hooks.push(hooks);
  }

  async created(deployment: CreatedDeployment): Promise<void> {
    for (const h of this.hooks) await h.created?.(deployment);
  }

  /** See {@link DeploymentHooks.changed}; call inside the unit of work of the change. */
  async changed(accountId: number, deploymentId: number): Promise<void> {
    for (const h of this.hooks) await h.changed?.(accountId, deploymentId);
  }

  async deleted(accountId: number, deploymentId: number): Promise<void> {
    for (const h of this.hooks) await h.deleted?.(accountId, deploymentId);
  }
}
