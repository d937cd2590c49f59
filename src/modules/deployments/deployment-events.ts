import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { DomainEvents } from '../../core/events/domain-events.js';
import { settingsShape } from './deployment-shapes.js';
import { DeploymentsRepository, type DeploymentRow } from './deployments.repository.js';

/**
 * `deployment.changed` (docs/webhooks.md, Event types): published inside the unit of work of a
 * change of the deployment's row (settings, versions, creation step, deploy branch), of its env
 * vars (their names and values are never in it), or of its deletion. The data is the settings
 * payload (`GET /build/api/v1/deployments/{id}/settings`); for a deletion, `{ id, name, deleted: true }`.
 */
@Injectable()
export class DeploymentEvents {
  constructor(
    private readonly events: DomainEvents,
    private readonly repository: DeploymentsRepository,
    private readonly config: AppConfig,
  ) {}

  /** The deployment changed; `row` when the caller holds it as written, else it is read. */
  async changed(accountId: number, id: number, row?: DeploymentRow): Promise<void> {
    const current = row ?? (await this.repository.find(accountId, id));
    if (!current) return;
    await this.events.publish({
      accountId,
      type: 'deployment.changed',
      resource: { type: 'deployment', id },
      data: { ...settingsShape(current, this.config.deploymentDomain) },
    });
  }

  /** The deployment is being deleted. */
  async deleted(accountId: number, deployment: { id: number; name: string }): Promise<void> {
    await this.events.publish({
      accountId,
      type: 'deployment.changed',
      resource: { type: 'deployment', id: deployment.id },
      data: { id: deployment.id, name: deployment.name, deleted: true },
    });
  }
}
