import path from 'node:path';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../../core/config/app-config.js';
import { Installation, type InstallationIdentity } from '../../../core/installation/installation.js';
import {
  InstallationMismatchError,
  markDirectory,
  MARKER_FILE,
  readMarker,
} from '../../../core/installation/installation-marker.js';
import { DataModelRepository } from '../data-model.repository.js';
import { readStamp, repositoryIds, writeStamp } from './repo-stamp.js';

/** What {@link GitStore} needs to know: whose repositories it keeps. */
export interface RepositoryOwner {
  /** The installation the repositories belong to, once `REPOS_DIR` is known to be its own. */
  installationId(): Promise<string>;
}

/** `REPOS_DIR` cannot be this installation's: the process must not start. */
export class ReposDirRefusedError extends Error {
  override name = 'ReposDirRefusedError';
}

const SETTING = 'REPOS_DIR';

/** `1.git, 2.git, 3.git and 4 more`. */
function repoList(ids: number[]): string {
  const shown = ids.slice(0, 5).map((id) => `${id}.git`);
  return ids.length > 5 ? `${shown.join(', ')} and ${ids.length - 5} more` : shown.join(', ');
}

/**
 * Ties `REPOS_DIR` to this installation, so a database never opens, builds or deletes
 * repositories another database made. The directory carries a marker naming its installation
 * (`installation.json`); each repository carries a stamp (`repo-stamp.ts`) that {@link GitStore}
 * checks.
 *
 * - A marker of this installation: the directory is ours.
 * - Another installation's marker: refused, naming both.
 * - No marker (a new directory, or one from before markers): claimed when nothing says it is
 *   another's. Its repositories are adopted (stamped) only when this database has set up
 *   repositories and finds every one of them there (an installation upgrading). Refused when
 *   it holds repositories and this database has set up none (a new database beside another's
 *   directory), or when repositories this database set up are missing (the wrong directory,
 *   or one lost: starting would quietly give those deployments a starter project).
 *
 * API processes and workers claim at start (`onModuleInit`), so a refusal stops the start with
 * its message; the command line, which opens no repository, claims on first use.
 */
@Injectable()
export class ReposOwnership implements RepositoryOwner, OnModuleInit {
  private readonly logger = new Logger('DataModel');
  private claimed?: Promise<string>;

  constructor(
    private readonly config: AppConfig,
    private readonly installation: Installation,
    private readonly repository: DataModelRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.role !== 'cli') await this.installationId();
  }

  installationId(): Promise<string> {
    this.claimed ??= this.claim().catch((err: unknown) => {
      // A refusal stands; a failure to read (the database, the disk) is tried again.
      if (!(err instanceof InstallationMismatchError || err instanceof ReposDirRefusedError))
        this.claimed = undefined;
      throw err;
    });
    return this.claimed;
  }

  private async claim(): Promise<string> {
    const root = this.config.dataModel.reposDir;
    const me = await this.installation.current();
    const marker = await readMarker(root);
    if (marker) {
      if (marker.installation !== me.id) throw new InstallationMismatchError(root, marker, me, SETTING);
      return me.id;
    }
    const present = await repositoryIds(root);
    await this.mayClaim(root, me, present);
    const standing = await markDirectory(root, me);
    // Another process got there first: ours (a replica), or another installation's.
    if (standing.installation !== me.id) throw new InstallationMismatchError(root, standing, me, SETTING);
    if (present.length > 0) {
      let stamped = 0;
      for (const id of present) {
        const dir = path.join(root, `${id}.git`);
        if ((await readStamp(dir)) === null) {
          await writeStamp(dir, me.id);
          stamped += 1;
        }
      }
      this.logger.warn(
        `${SETTING} ${root} had no installation marker: adopted its ${present.length} repositories ` +
          `(${stamped} stamped) for installation ${me.id} (${me.database}), which set up every one of its own there`,
      );
    } else {
      this.logger.log(`${SETTING} ${root} marked as installation ${me.id}'s (${me.database})`);
    }
    return me.id;
  }

  /** Refuses an unmarked directory that is not this installation's to take. */
  private async mayClaim(root: string, me: InstallationIdentity, present: number[]): Promise<void> {
    const ours = await this.repository.deploymentsWithRepositories();
    const here = new Set(present);
    const missing = ours.filter((id) => !here.has(id));
    const who = `this database (${me.database}, installation ${me.id})`;
    if (ours.length === 0 && present.length > 0)
      throw new ReposDirRefusedError(
        `${SETTING} ${root} holds repositories (${repoList(present)}) but no installation marker, and ` +
          `${who} has set up no repository: they are another installation's. Set ${SETTING} to an ` +
          `empty directory of this installation's own, or set DATABASE_URL to the database they belong to.`,
      );
    if (missing.length > 0)
      throw new ReposDirRefusedError(
        `${SETTING} ${root} lacks ${missing.length} of the repositories ${who} set up ` +
          `(${repoList(missing)}): it is another directory than theirs, or they were lost. Set ${SETTING} ` +
          `to the directory that holds them (restored from the backup taken with the database). If they ` +
          `are lost for good, write ${path.join(root, MARKER_FILE)} holding {"installation":"${me.id}"} ` +
          `to start without them (those deployments then start again from a starter project).`,
      );
  }
}
