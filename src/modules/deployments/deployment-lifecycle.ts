import { Injectable } from '@nestjs/common';

/** A deployment just created, as the modules that hang from it need to know it. */
export interface CreatedDeployment {
  id: number;
  accountId: number;
  creationMethod: string | null;
  deployBranchName: string;
}

/**
 * What a module does when a deployment is created or deleted. Both run inside the unit of work of
 * the create or delete, so they share its fate; effects outside the database go to
 * `Database.afterCommit`.
 */
export interface DeploymentHooks {
  created(deployment: CreatedDeployment): Promise<void>;
  deleted(accountId: number, deploymentId: number): Promise<void>;
}

/**
 * The modules that hang from a deployment (the data model) plug in here at start-up, so the
 * deployments module calls them without depending on them (they depend on it).
 */
@Injectable()
export class DeploymentLifecycle {
  private readonly hooks: DeploymentHooks[] = [];

  register(hooks: DeploymentHooks): void {
    this.hooks.push(hooks);
  }

  async created(deployment: CreatedDeployment): Promise<void> {
    for (const h of this.hooks) await h.created(deployment);
  }

  async deleted(accountId: number, deploymentId: number): Promise<void> {
    for (const h of this.hooks) await h.deleted(accountId, deploymentId);
  }
}
