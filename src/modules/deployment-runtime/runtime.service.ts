import { Injectable } from '@nestjs/common';
import { AccessService } from '../../core/auth/access.service.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import {
  DEFAULT_PAGE_SIZE,
  buildPage,
  decodeCursor,
  encodeCursor,
  type Page,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { DEFAULT_LOG_CONTAINER, DeploymentRuntime, type LogPosition } from './deployment-runtime.js';
import type { DeploymentLogLineDto, DeploymentLogsQueryDto, DeploymentPodDto } from './dto/runtime.dto.js';

/** The instant of a log position: UTC, micro- or nanoseconds (see {@link LogPosition}). */
const POSITION_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6,9}Z$/;

/**
 * `GET /deployments/{id}/pods` and `.../logs`: the caller needs `DeploymentRead` on the
 * deployment; the configured {@link DeploymentRuntime} answers.
 *
 * Pods are paged by name. Logs are a tail: without `after`, the last `first` lines, oldest
 * first; `endCursor` is the position (instant, pod, order within the instant) of the last line,
 * and `after` it returns the lines written since, up to `first` (`hasNextPage` when more are
 * there already). A page with no new lines keeps the `after` it was given as its `endCursor`, so
 * a client follows a log by asking again with it.
 */
@Injectable()
export class RuntimeService {
  constructor(
    private readonly access: AccessService,
    private readonly runtime: DeploymentRuntime,
  ) {}

  async pods(actor: Principal, deploymentId: number, query: PageQueryDto): Promise<Page<DeploymentPodDto>> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const first = query.first ?? DEFAULT_PAGE_SIZE;
    const after = query.after !== undefined ? decodeCursor(query.after, ['string']) : null;
    const pods = (await this.runtime.pods(deploymentId))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .filter((p) => after === null || p.name > (after[0] as string));
    return buildPage(pods.slice(0, first + 1), { mode: 'cursor', first, after }, (p) => [p.name]);
  }

  async logs(
    actor: Principal,
    deploymentId: number,
    query: DeploymentLogsQueryDto,
  ): Promise<Page<DeploymentLogLineDto>> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const after = query.after !== undefined ? decodeLogCursor(query.after) : null;
    const page = await this.runtime.logs(deploymentId, {
      source: query.source ?? null,
      pod: query.pod ?? null,
      container: query.container ?? DEFAULT_LOG_CONTAINER,
      first: query.first ?? DEFAULT_PAGE_SIZE,
      after,
    });
    const { lines } = page;
    return {
      items: lines.map(({ date, pod, message }) => ({ date, pod, message })),
      pageInfo: {
        hasNextPage: page.hasMore,
        hasPreviousPage: page.hasEarlier,
        startCursor: lines.length > 0 ? encodeLogCursor(lines[0].position) : null,
        endCursor:
          lines.length > 0 ? encodeLogCursor(lines[lines.length - 1].position) : (query.after ?? null),
      },
    };
  }
}

function encodeLogCursor(p: LogPosition): string {
  return encodeCursor([p.at, p.pod, p.seq]);
}

function decodeLogCursor(after: string): LogPosition {
  const [at, pod, seq] = decodeCursor(after, ['string', 'string', 'number']) as [string, string, number];
  if (!POSITION_INSTANT.test(at) || Number.isNaN(Date.parse(at)) || seq < 0) {
    throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
  }
  return { at, pod, seq };
}
