import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import {
  buildPage,
  fetchLimit,
  resolvePaging,
  type Page,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { RELEASE_CHANNELS, type ReleaseChannel } from './deployment.constants.js';
import { deploymentsError } from './deployments.errors.js';
import { DeploymentsRepository, type DeploymentRow } from './deployments.repository.js';
import type { DeploymentVersionDto } from './dto/deployment-version.dto.js';
import { imageTag, parseReleaseVersion } from './release-version.js';
import { ReleasesRepository, type VersionsCursor } from './releases.repository.js';
import { DeploymentLifecycle } from './deployment-lifecycle.js';
import { DeploymentEvents } from './deployment-events.js';
import { effectiveVersion } from './deployment-shapes.js';

/** The version fields of a deployment as stored. */
export interface VersionState {
  releaseChannel: string;
  /** The held version, or null while the deployment follows its channel. */
  releaseChannelVersion: string | null;
  releaseChannelVersionHold: boolean;
}

/** The version fields a `PUT` may send. */
export interface VersionChange {
  releaseChannel?: string;
  releaseChannelVersion?: string | null;
  releaseChannelVersionHold?: boolean | null;
}

/** What `add-release` did. */
export interface AddReleaseResult {
  channel: ReleaseChannel;
  version: string;
  /** False when the channel had the release already: nothing changed. */
  added: boolean;
  /** The head of the channel after the command. */
  head: string;
  /** Deployments following the channel that now run the new head (0 unless it became the head). */
  deploymentsMoved: number;
}

/** The version a deployment runs (kept here for the modules that import it from this file). */
export { effectiveVersion };

const CURSOR_INT = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 2_147_483_647;

/**
 * The release catalogue and what each deployment runs. A deployment either holds a version
 * (`releaseChannelVersionHold`) or follows the head of its channel, the highest release in
 * semantic-version order. It may switch to the head of a channel or to a version it ran on that
 * channel before; its history records each version it ran.
 */
@Injectable()
export class ReleasesService {
  constructor(
    private readonly db: Database,
    private readonly repository: ReleasesRepository,
    private readonly deployments: DeploymentsRepository,
    private readonly access: AccessService,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly events: DeploymentEvents,
  ) {}

  /** `GET /deployments/{id}/versions`: the heads of the channels and the versions it ran. */
  async versions(actor: Principal, id: number, query: PageQueryDto): Promise<Page<DeploymentVersionDto>> {
    await this.access.requireAccess(actor, 'Deployment', id, Action.DeploymentRead);
    const paging = resolvePaging(query, ['string', 'number', 'number', 'number']);
    let after: VersionsCursor | null = null;
    if (paging.mode === 'cursor' && paging.after) {
      const [channel, major, minor, patch] = paging.after;
      if (!RELEASE_CHANNELS.includes(channel as ReleaseChannel) || ![major, minor, patch].every(CURSOR_INT)) {
        throw coreError('invalid_cursor', 'after is not a cursor returned by this list');
      }
      after = {
        channel: channel as string,
        major: major as number,
        minor: minor as number,
        patch: patch as number,
      };
    }
    const row = await this.deployments.find(actor.accountId, id);
    if (!row) throw notFound('Deployment', id);
    const current = effectiveVersion(row);
    const rows = await this.repository.offeredPage(id, after, fetchLimit(paging));
    return buildPage(
      rows,
      paging,
      (r) => [r.releaseChannel, r.major, r.minor, r.patch],
      (r) => ({
        version: imageTag(r.releaseChannelVersion),
        releaseChannel: r.releaseChannel,
        releaseChannelVersion: r.releaseChannelVersion,
        isCurrent: r.releaseChannel === row.releaseChannel && r.releaseChannelVersion === current,
        isLatestInChannel: r.isHead,
      }),
    );
  }

  /**
   * Takes the catalogue (shared) for a unit of work that changes what a deployment runs; call it
   * before locking the deployment's row (`add-release` takes the catalogue, then the rows).
   */
  lockForDeploymentWrite(): Promise<void> {
    return this.repository.lockCatalogue('shared');
  }

  /**
   * The version fields after a `PUT` (in a unit of work holding {@link lockForDeploymentWrite}):
   * - a `releaseChannelVersion` must be offered on the target channel (its head, or a version the
   *   deployment ran there), else `400 release_version_invalid`; choosing a version other than
   *   the head holds it, choosing the head follows the channel, unless `releaseChannelVersionHold`
   *   says otherwise (false with a version other than the head is contradictory: 400);
   * - `releaseChannelVersion: null` follows the channel (with the hold: holds its head);
   * - the hold alone: true holds what the deployment runs (on a new channel: its head), false
   *   follows the channel; a held version kept across a change of channel must be offered there.
   */
  async resolve(deploymentId: number, current: DeploymentRow, change: VersionChange): Promise<VersionState> {
    const channel = (change.releaseChannel ?? current.releaseChannel) as ReleaseChannel;
    const head = (await this.repository.heads()).get(channel) ?? null;
    const explicitHold =
      change.releaseChannelVersionHold === undefined ? undefined : change.releaseChannelVersionHold === true;
    let version: string | null;
    let hold: boolean;
    if (typeof change.releaseChannelVersion === 'string') {
      version = parseReleaseVersion(change.releaseChannelVersion)?.version ?? null;
      if (version === null || !(await this.offered(deploymentId, channel, version, head))) {
        throw await this.notOffered(deploymentId, channel, change.releaseChannelVersion, head);
      }
      hold = explicitHold ?? version !== head;
      if (!hold && version !== head) {
        throw coreError('validation_failed', [
          `releaseChannelVersionHold false follows the head of the ${channel} channel (${head ?? 'none'}): ` +
            `hold ${version} with releaseChannelVersionHold true, or leave releaseChannelVersionHold out`,
        ]);
      }
    } else if (change.releaseChannelVersion === null) {
      hold = explicitHold ?? false;
      version = head;
    } else {
      hold = explicitHold ?? current.releaseChannelVersionHold;
      version = hold && current.releaseChannelVersionHold ? current.releaseChannelVersion : head;
      if (hold && version !== null && !(await this.offered(deploymentId, channel, version, head))) {
        throw await this.notOffered(deploymentId, channel, version, head);
      }
    }
    if (hold && version === null) {
      throw deploymentsError('release_version_invalid', `The ${channel} channel has no release to hold`);
    }
    return {
      releaseChannel: channel,
      releaseChannelVersion: hold ? version : null,
      releaseChannelVersionHold: hold,
    };
  }

  /**
   * Records the version the deployment runs after a write, when it differs from the one before
   * (another version, or the same one on another channel).
   */
  async recordChange(accountId: number, before: DeploymentRow | null, after: DeploymentRow): Promise<void> {
    const version = effectiveVersion(after);
    if (version === null) return;
    if (before && before.releaseChannel === after.releaseChannel && effectiveVersion(before) === version)
      return;
    await this.repository.record({
      deploymentId: after.id,
      accountId,
      releaseChannel: after.releaseChannel,
      version,
    });
  }

  /**
   * Adds a release to a channel (`cli.js add-release`). When it is the channel's new head, every
   * deployment following the channel runs it from now on: its history records it in the same
   * unit of work, and each publishes `deployment.changed`. Adding a release the channel has
   * changes nothing.
   */
  async addRelease(channel: ReleaseChannel, text: string): Promise<AddReleaseResult> {
    const release = parseReleaseVersion(text);
    if (!release)
      throw new Error(`${text} is not a release version (MAJOR.MINOR.PATCH, optionally with a v)`);
    return this.db.transaction(async () => {
      await this.repository.lockCatalogue('exclusive');
      const previous = (await this.repository.heads()).get(channel) ?? null;
      const added = await this.repository.insertRelease(channel, release);
      const head = (await this.repository.heads()).get(channel)!;
      const moved =
        added && head === release.version && previous !== head
          ? await this.repository.recordForFollowers(channel, release.version)
          : [];
      for (const m of moved) {
        await this.lifecycle.changed(m.accountId, m.deploymentId);
        await this.events.changed(m.accountId, m.deploymentId);
      }
      return { channel, version: release.version, added, head, deploymentsMoved: moved.length };
    });
  }

  private async offered(
    deploymentId: number,
    channel: string,
    version: string,
    head: string | null,
  ): Promise<boolean> {
    return version === head || (await this.repository.ranOn(deploymentId, channel)).includes(version);
  }

  private async notOffered(
    deploymentId: number,
    channel: string,
    version: string,
    head: string | null,
  ): Promise<Error> {
    const ran = await this.repository.ranOn(deploymentId, channel);
    const offered = [...new Set([...(head ? [head] : []), ...ran.reverse()])];
    return deploymentsError(
      'release_version_invalid',
      `releaseChannelVersion ${version} is not offered on the ${channel} channel; choose one of ` +
        `${offered.join(', ') || 'none'} (GET /api/v1/deployments/${deploymentId}/versions)`,
    );
  }
}
