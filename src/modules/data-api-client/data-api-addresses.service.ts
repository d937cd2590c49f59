import { Injectable } from '@nestjs/common';

/** Where a deployment's data API answers by default, and the setting that put it there. */
export interface DefaultDataApiAddress {
  /** The base address of deployment `deploymentId`'s data API (the client appends `/cubejs-api/v1/...`). */
  baseUrl(deploymentId: number): string;
  /** Named in errors about the address: what to change. */
  setting: string;
}

/**
 * The address of a deployment's data API when the operator names none (neither
 * `DATA_API_URL_TEMPLATE` nor `DEPLOYMENT_DOMAIN`): a runtime that runs deployments plugs in where
 * they answer (the Kubernetes runtime: each production Service's in-cluster address). The runtime
 * module depends on this one, so it registers at start-up.
 */
@Injectable()
export class DataApiAddresses {
  private fallback: DefaultDataApiAddress | null = null;

  register(address: DefaultDataApiAddress): void {
    this.fallback = address;
  }

  get registered(): DefaultDataApiAddress | null {
    return this.fallback;
  }
}
