import { Injectable, Logger } from '@nestjs/common';
import { DataModelRepository, type RemoteRow } from './data-model.repository.js';
import { dataModelError } from './data-model.errors.js';
import { GitError } from '../../core/git/git.js';
import { GitStore, type RemoteAuth } from './git/git-store.js';
import { GitHost } from './github/github.client.js';
import type { ModelContext } from './model-workspace.js';

/**
 * The connected git-host repository of a deployment: pushes after commits and merges, fetches
 * for `pull`, deletes for `removeOnUpstream`. Credentials are an installation token asked of the
 * git host on each use, sent as a header (never in a URL, a log or the database); `file://` and
 * local paths need none.
 */
@Injectable()
export class ModelRemotes {
  private readonly logger = new Logger('DataModel');

  constructor(
    private readonly repository: DataModelRepository,
    private readonly git: GitStore,
    private readonly host: GitHost,
  ) {}

  remote(ctx: ModelContext): Promise<RemoteRow | undefined> {
    return this.repository.remote(ctx.deploymentId);
  }

  async auth(remote: { url: string; installationId: string }): Promise<RemoteAuth | null> {
    if (!/^https?:\/\//.test(remote.url)) return null;
    const token = await this.host.accessToken(Number(remote.installationId));
    return { username: 'x-access-token', password: token };
  }

  /**
   * Pushes `commit` to `branch` of the connected repository (null deletes it), if one is
   * connected. The push is never forced: a remote branch that moved on refuses it. A refusal is
   * 502 `remote_failed` and the caller changes nothing.
   */
  async push(ctx: ModelContext, branch: string, commit: string | null): Promise<void> {
    const remote = await this.remote(ctx);
    if (!remote) return;
    try {
      await this.git.push(ctx.deploymentId, remote.url, branch, commit, await this.auth(remote));
    } catch (err) {
      if (commit === null && err instanceof GitError && /remote ref does not exist/.test(err.stderr)) return;
      throw this.failure(err, `push to ${remote.repository}`);
    }
  }

  /** Fetches `branch` of a remote; null when it has no such branch. */
  async fetch(ctx: ModelContext, remote: RemoteRow, branch: string): Promise<string | null> {
    try {
      return await this.git.fetch(ctx.deploymentId, remote.url, branch, await this.auth(remote));
    } catch (err) {
      throw this.failure(err, `fetch from ${remote.repository}`);
    }
  }

  failure(err: unknown, what: string): unknown {
    if (!(err instanceof GitError)) return err;
    this.logger.warn(`git ${what} failed: ${err.stderr.trim().slice(0, 300)}`);
    const reason = err.stderr.trim().split('\n').filter(Boolean).pop() ?? 'git failed';
    return dataModelError('remote_failed', `The ${what} failed: ${reason.slice(0, 300)}`);
  }
}
