import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { ReleaseVersion } from './release-version.js';

/** A version a deployment may switch to, with the sort key of the versions list. */
export interface OfferedVersionRow {
  releaseChannel: string;
  releaseChannelVersion: string;
  major: number;
  minor: number;
  patch: number;
  /** It is the head of its channel. */
  isHead: boolean;
}

/** Where a page of the versions list continues: after this channel and version (newest first). */
export interface VersionsCursor {
  channel: string;
  major: number;
  minor: number;
  patch: number;
}

/** The heads of the channels: the highest version of each in semantic-version order. */
const HEADS = `SELECT DISTINCT ON (channel) channel, version FROM release_catalogue
  ORDER BY channel, major DESC, minor DESC, patch DESC`;

/**
 * All SQL on the release catalogue (`release_catalogue`) and the deployments' version history
 * (`deployment_versions`). Every call joins the current unit of work.
 */
@Injectable()
export class ReleasesRepository {
  constructor(private readonly db: Database) {}

  /**
   * Holds the catalogue for the rest of the unit of work: `shared` by a write that reads a head
   * to record what a deployment runs (create, `PUT`), `exclusive` by a new release, which records
   * the new head for every deployment following its channel. So a deployment never misses a head
   * released while its own version was being changed.
   */
  async lockCatalogue(mode: 'shared' | 'exclusive'): Promise<void> {
    const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    // The one-bigint form: its lock space is apart from the two-integer locks other modules take.
    await this.db.query(`SELECT ${fn}(hashtextextended('release-catalogue', 0))`);
  }

  /** The head of each channel that has a release: channel → version. */
  async heads(): Promise<Map<string, string>> {
    const rows = await this.db.query<{ channel: string; version: string }>(HEADS);
    return new Map(rows.map((r) => [r.channel, r.version]));
  }

  /** The versions the deployment ran on `channel` (its history there), oldest first, once each. */
  async ranOn(deploymentId: number, channel: string): Promise<string[]> {
    const rows = await this.db.query<{ version: string }>(
      `SELECT h.version FROM deployment_versions h
       JOIN release_catalogue c ON c.channel = h.release_channel AND c.version = h.version
       WHERE h.deployment_id = :deploymentId AND h.release_channel = :channel
       GROUP BY h.version, c.major, c.minor, c.patch ORDER BY c.major, c.minor, c.patch`,
      { deploymentId, channel },
    );
    return rows.map((r) => r.version);
  }

  /** Adds a release; false when the channel has it already (nothing changes then). */
  async insertRelease(channel: string, release: ReleaseVersion): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO release_catalogue (channel, version, major, minor, patch)
       VALUES (:channel, :version, :major, :minor, :patch)
       ON CONFLICT (channel, version) DO NOTHING RETURNING version`,
      { channel, ...release },
    );
    return rows.length > 0;
  }

  /** Records that the deployment runs `version` of `channel` from now on. */
  async record(entry: {
    deploymentId: number;
    accountId: number;
    releaseChannel: string;
    version: string;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO deployment_versions (deployment_id, account_id, release_channel, version)
       VALUES (:deploymentId, :accountId, :releaseChannel, :version)`,
      entry,
    );
  }

  /**
   * Records `version` for every deployment following `channel` (holding no version): what they
   * run once it is the channel's head. Answers how many.
   */
  recordForFollowers(
    channel: string,
    version: string,
  ): Promise<Array<{ deploymentId: number; accountId: number }>> {
    return this.db.query(
      `INSERT INTO deployment_versions (deployment_id, account_id, release_channel, version)
       SELECT d.id, d.account_id, d.release_channel, :version FROM deployments d
       WHERE d.release_channel = :channel AND NOT d.release_channel_version_hold
       ORDER BY d.id
       RETURNING deployment_id AS "deploymentId", account_id AS "accountId"`,
      { channel, version },
    );
  }

  /**
   * One page of the versions the deployment may switch to: the head of every channel and the
   * versions it ran (on the channel it ran them on), once each; by channel, newest first.
   */
  offeredPage(
    deploymentId: number,
    after: VersionsCursor | null,
    limit: number,
  ): Promise<OfferedVersionRow[]> {
    return this.db.query<OfferedVersionRow>(
      `WITH heads AS (${HEADS}),
       offered AS (
         SELECT channel, version FROM heads
         UNION
         SELECT release_channel, version FROM deployment_versions WHERE deployment_id = :deploymentId)
       SELECT c.channel AS "releaseChannel", c.version AS "releaseChannelVersion", c.major, c.minor, c.patch,
              EXISTS (SELECT 1 FROM heads h WHERE h.channel = c.channel AND h.version = c.version) AS "isHead"
       FROM offered o JOIN release_catalogue c ON c.channel = o.channel AND c.version = o.version
       WHERE :afterChannel::text IS NULL OR c.channel > :afterChannel
          OR (c.channel = :afterChannel
              AND (c.major, c.minor, c.patch) < (:afterMajor::int, :afterMinor::int, :afterPatch::int))
       ORDER BY c.channel, c.major DESC, c.minor DESC, c.patch DESC
       LIMIT :limit`,
      {
        deploymentId,
        afterChannel: after?.channel ?? null,
        afterMajor: after?.major ?? null,
        afterMinor: after?.minor ?? null,
        afterPatch: after?.patch ?? null,
        limit,
      },
    );
  }
}
