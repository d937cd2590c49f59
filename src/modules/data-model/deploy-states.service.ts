import { Injectable } from '@nestjs/common';

/** Where a served environment's rollout stands on the runtime. */
export interface DeployState {
  status: 'deploying' | 'deployed' | 'failed';
  /** Why it failed (the runtime's own words), or what it waits for; null when deployed. */
  reason: string | null;
  /** The commit the environment runs, or is being moved to. */
  commitSha: string | null;
  updatedAt: Date;
}

/** Reads the deploy states of environments of one deployment, by environment id. */
export type DeployStateReader = (
  deploymentId: number,
  environmentIds: readonly number[],
) => Promise<Map<number, DeployState>>;

/**
 * The deploy states of environments, as a runtime that runs deployments reports them. The runtime
 * module depends on this one, so it plugs its reader in here at start-up (`register`); without a
 * runtime that runs deployments nothing registers, and build-status and the environments list say
 * what they said before.
 */
@Injectable()
export class DeployStates {
  private reader: DeployStateReader | null = null;

  register(reader: DeployStateReader): void {
    this.reader = reader;
  }

  /** Whether a runtime reports deploy states (the fields are shown at all). */
  get reported(): boolean {
    return this.reader !== null;
  }

  /** The states of `environmentIds` that have one; empty without a runtime. */
  read(deploymentId: number, environmentIds: readonly number[]): Promise<Map<number, DeployState>> {
    if (!this.reader || environmentIds.length === 0) return Promise.resolve(new Map());
    return this.reader(deploymentId, environmentIds);
  }
}
