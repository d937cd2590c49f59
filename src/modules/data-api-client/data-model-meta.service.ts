import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { DataApiClient } from './data-api.client.js';
import type { MetaResponseDto, MetaSelectorsDto } from './dto/meta.dto.js';

/**
 * `POST /meta/` of the command-line tool (docs/command-line-tool.md): the `/v1/meta` of a
 * deployment's production data API, read with an empty security context (the claims of
 * `POST /deployments/{id}/token`), its cubes and views filtered by name.
 */
@Injectable()
export class DataModelMetaService {
  constructor(
    private readonly access: AccessService,
    private readonly client: DataApiClient,
  ) {}

  async meta(actor: Principal, selectors: MetaSelectorsDto): Promise<MetaResponseDto> {
    const { deploymentId } = selectors;
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SchemaRead);
    const answer = (await this.client.meta({ accountId: actor.accountId, deploymentId }, {})) as {
      cubes?: unknown;
    };
    const cubes = (Array.isArray(answer.cubes) ? answer.cubes : []).filter(
      (c): c is Record<string, unknown> => typeof c === 'object' && c !== null && !Array.isArray(c),
    );
    if (!selectors.cubes) return { cubes };
    const wanted = new Set(selectors.cubes);
    return { cubes: cubes.filter((c) => typeof c.name === 'string' && wanted.has(c.name)) };
  }
}
