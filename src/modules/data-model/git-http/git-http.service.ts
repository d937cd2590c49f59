import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Action } from '../../../core/auth/action.js';
import type { Principal } from '../../../core/auth/principal.js';
import { AppConfig, type GitHttpConfig } from '../../../core/config/app-config.js';
import { git, text } from '../../../core/git/git.js';
import { FairShare, FairShareBusy } from '../../../core/limits/fair-share.js';
import { ModelWorkspace, type ModelContext } from '../model-workspace.js';
import { checkFetchRequest, fetchRequestBody } from './fetch-request.js';
import { gitHttpError } from './git-http.errors.js';
import { FLUSH_PKT, pktLine, type WantSection } from './pkt-line.js';
import { servedRefs, type GitConfigEntry } from './served-refs.js';
import { advertiseRefs, UploadPackRun } from './upload-pack.js';

export const UPLOAD_PACK = 'git-upload-pack';
export const RECEIVE_PACK = 'git-receive-pack';
export const ADVERTISEMENT = 'application/x-git-upload-pack-advertisement';

/**
 * A deployment's repository over git's smart HTTP protocol, for clones and fetches only: the
 * caller needs `SchemaRead` on the deployment, and is served the shared branches and their own
 * dev branches ({@link servedRefs}). Every request runs upload-pack in a fair share of the process
 * (GIT_HTTP_CONCURRENCY, GIT_HTTP_ACCOUNT_CONCURRENCY of them for one account, waiting up to
 * GIT_HTTP_QUEUE_MS), within GIT_HTTP_TIMEOUT_MS.
 */
@Injectable()
export class GitHttpService implements OnApplicationShutdown {
  private readonly logger = new Logger('GitHttp');
  private readonly limits: GitHttpConfig;
  private readonly shares: FairShare;
  private readonly runs = new Set<UploadPackRun>();

  constructor(
    private readonly workspace: ModelWorkspace,
    config: AppConfig,
  ) {
    this.limits = config.dataModel.gitHttp;
    this.shares = new FairShare({
      label: 'git requests',
      total: this.limits.concurrency,
      perAccount: this.limits.accountConcurrency,
      maxWaitMs: this.limits.queueMs,
    });
  }

  /** upload-pack runs in process groups of their own, which the service's exit would not end. */
  onApplicationShutdown(): void {
    for (const run of this.runs) run.stop(new Error('The service is shutting down'));
  }

  /** Git requests running and waiting in this process, by account (tests). */
  shareStats() {
    return this.shares.stats();
  }

  /** `GET .../git/info/refs?service=git-upload-pack`: the refs the caller is served. */
  async advertise(actor: Principal, deploymentId: number, service: unknown, res: Response): Promise<void> {
    const ctx = await this.workspace.open(actor, deploymentId, Action.SchemaRead);
    if (service === RECEIVE_PACK) throw pushRefused(deploymentId);
    if (service !== UPLOAD_PACK) {
      throw gitHttpError('validation_failed', [
        `service must be ${UPLOAD_PACK}: the repository is served over git's smart HTTP protocol, for clones and fetches`,
      ]);
    }
    const refs = await this.admitted(ctx.accountId, () =>
      this.gitRead(async () => advertiseRefs(this.dir(ctx), await this.served(ctx), this.limits.timeoutMs)),
    );
    res
      .writeHead(200, { 'Content-Type': ADVERTISEMENT, 'Cache-Control': 'no-cache' })
      .end(Buffer.concat([pktLine(`# service=${UPLOAD_PACK}\n`), FLUSH_PKT, refs]));
  }

  /** `POST .../git/git-upload-pack`: the objects a fetch wants, streamed as upload-pack makes them. */
  async uploadPack(actor: Principal, deploymentId: number, req: Request, res: Response): Promise<void> {
    checkFetchRequest(req);
    const ctx = await this.workspace.open(actor, deploymentId, Action.SchemaRead);
    await this.admitted(ctx.accountId, async () => {
      const dir = this.dir(ctx);
      const run = new UploadPackRun(
        {
          dir,
          served: await this.gitRead(() => this.served(ctx)),
          body: fetchRequestBody(req, this.limits.maxRequestBytes),
          res,
          timeoutMs: this.limits.timeoutMs,
          refusal: (section) => this.refusal(dir, section),
        },
        this.logger,
      );
      this.runs.add(run);
      try {
        await run.serve();
      } finally {
        this.runs.delete(run);
      }
    });
  }

  /** A push (`info/refs?service=git-receive-pack`, `POST .../git-receive-pack`): always 403. */
  async refusePush(actor: Principal, deploymentId: number, res: Response): Promise<never> {
    await this.workspace.open(actor, deploymentId, Action.SchemaRead);
    // The pack it carries is not read.
    res.setHeader('Connection', 'close');
    throw pushRefused(deploymentId);
  }

  private dir(ctx: ModelContext): string {
    return this.workspace.git.dir(ctx.deploymentId);
  }

  private async served(ctx: ModelContext): Promise<GitConfigEntry[]> {
    const branches = await this.workspace.git.refs(ctx.deploymentId, 'refs/heads/');
    return servedRefs(branches.keys(), ctx.actor.userId);
  }

  /**
   * Why upload-pack must not see a fetch's first section, in upload-pack's own words, or null.
   * - A want that is not a commit. In stateless RPC upload-pack takes a want that is not an
   *   advertised tip when no wanted *commit* is out of reach of the advertised refs; it checks no
   *   other object, so the tree or a file of a pending change would be served (git 2.39). A fetch
   *   wants commits (no tags are served), so anything else is refused as a hidden commit is.
   * - `deepen-not <ref>`: upload-pack looks the ref up among all refs, hidden ones included, and
   *   its answer would tell what they reach.
   */
  private async refusal(dir: string, section: WantSection): Promise<string | null> {
    if (section.deepenNot) {
      return 'upload-pack: deepen-not (git fetch --shallow-exclude) is not served; use --depth or --shallow-since';
    }
    if (section.wants.length === 0) return null;
    const found = await this.gitRead(() =>
      git(dir, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
        input: `${section.wants.join('\n')}\n`,
      }),
    );
    const lines = text(found).split('\n');
    const refused = section.wants.find((oid, i) => lines[i] !== `${oid} commit`);
    return refused === undefined ? null : `upload-pack: not our ref ${refused}`;
  }

  /** A read of the repository; git's failure is the data model's 503 (logged), as elsewhere. */
  private async gitRead<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      throw this.workspace.gitFailure(err);
    }
  }

  /** Runs `work` in a fair share of the account's; 429 past the account's share, 503 past the process's. */
  private async admitted<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      release = await this.shares.acquire(accountId);
    } catch (error) {
      if (!(error instanceof FairShareBusy)) throw error;
      const code = error.scope === 'account' ? 'git_fetch_limit_reached' : 'git_fetch_busy';
      throw gitHttpError(code, error.message, { retryAfterSeconds: error.retryAfterSeconds });
    }
    try {
      return await work();
    } finally {
      release();
    }
  }
}

function pushRefused(deploymentId: number) {
  return gitHttpError(
    'git_push_not_supported',
    `Pushing is not supported: this repository is served for clones and fetches only. Change the data model in dev mode ` +
      `(POST /build/api/v1/deployments/${deploymentId}/dev-mode, then write files, commit and merge) ` +
      `or upload it with the command-line client.`,
  );
}
