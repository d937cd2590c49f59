import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { defineJob, JobHandler } from '../../core/queue/job-definition.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { JobSchedules } from '../../core/queue/job-schedules.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type {
  UploadFileResponseDto,
  UploadFinishDto,
  UploadFinishResponseDto,
  UploadQueryDto,
  UploadStartBodyDto,
  UploadStartDto,
} from './dto/data-model.dto.js';
import { agreeingBranchName } from './dto/branch-name.js';
import type { TreeChanges } from './git/git-store.js';
import { ModelBuilds } from './model-builds.js';
import { ModelFiles } from './model-files.service.js';
import { normalisePath } from './model-paths.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** How long an upload may stay open before it is forgotten. */
export const UPLOAD_TTL_SECONDS = 3600;

/**
 * Age past which the upload sweep prunes unreachable objects: the upload's lifetime (so an open
 * upload's blobs, all written since it started, are younger) and a quarter of an hour more for a
 * `finish` or a write under way when the sweep runs.
 */
export const UPLOAD_PRUNE_AGE_SECONDS = UPLOAD_TTL_SECONDS + 900;

/** The sweep's schedule (every quarter of an hour), kept in `job_schedules` under this owner. */
export const UPLOAD_SWEEP_CRON = '*/15 * * * *';
export const UPLOAD_SWEEP_OWNER = 'data-model:upload-sweep';

/** Deployments one sweep prunes at most; the next takes the rest. */
const SWEEP_BATCH = 500;

/**
 * Forgets uploads that ended (expired, or finished with parts left out of their commit) more
 * than {@link UPLOAD_PRUNE_AGE_SECONDS} ago, after pruning what they left in their repositories.
 */
export const UPLOAD_SWEEP_JOB = defineJob<{ scheduledFor?: string }>('data-model.upload-sweep', {
  queue: 'default',
  attempts: 3,
  backoffMs: 60_000,
  timeoutMs: 30 * 60_000,
  concurrency: 1,
});

const SHA1 = /^[0-9a-f]{40}$/;

/**
 * The upload protocol of the command-line client: `start` opens a transaction, `file` stores one
 * file's blob (the client sends only files whose hash differs), `finish` with the full
 * `path -> {hash}` map writes one commit (pruning files absent from it with `autoRemoveFiles`)
 * and queues one build.
 */
@Injectable()
export class ModelUploads {
  private readonly logger = new Logger('DataModelUploads');
  /** Whether this process has made sure the sweep is scheduled. */
  private sweepScheduled = false;

  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly files: ModelFiles,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
    private readonly schedules: JobSchedules,
    private readonly config: AppConfig,
  ) {}

  /**
   * The branch an upload addresses: `branchName`; else with `live=true` the caller's dev branch
   * (400 `not_in_dev_mode` outside dev mode), with `live=false` the deploy branch; else (neither)
   * the caller's active dev-mode branch, or the deploy branch outside dev mode (what the reference
   * command-line tool's `cube deploy` says it does without `--branch`).
   */
  private target(ctx: ModelContext, query: UploadQueryDto): Promise<Branch & BranchState> {
    if (query.branchName !== undefined) return this.ws.target(ctx, { branchName: query.branchName });
    if (query.live === true) return this.ws.target(ctx, {});
    if (query.live === false) return this.ws.branch(ctx, ctx.settings.deployBranchName);
    return this.ws.target(ctx, {}, 'active-or-deploy');
  }

  /**
   * Who may upload to a branch: the deploy branch and shared branches need `SchemaUpdate`, the
   * caller's own dev branch `SchemaUpdateDevBranches` (which opening the model checked); another
   * user's dev branch is refused.
   */
  private async authorize(ctx: ModelContext, branch: Branch): Promise<void> {
    if (!branch.isOwnDev) await this.ws.require(ctx, Action.SchemaUpdate);
    if (branch.kind === 'dev' && !branch.isOwnDev) {
      throw dataModelError('branch_not_writable', `${branch.name} is another user's personal dev branch`);
    }
  }

  private prefix(ctx: ModelContext, query: UploadQueryDto): string {
    return query.useDeployProjectRoot === false ? '' : ctx.prefix;
  }

  /**
   * Opens an upload. The branch is named by the query parameter `branchName` or by the body's
   * (where the reference command-line tool sends it); both given must agree.
   */
  async start(
    actor: Principal,
    deploymentId: number,
    query: UploadQueryDto,
    body: UploadStartBodyDto = {},
  ): Promise<UploadStartDto> {
    const branchName = agreeingBranchName(
      ['branchName (query)', query.branchName],
      ['branchName (body)', body.branchName],
    );
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const target = { ...query, branchName };
    const branch = await this.target(ctx, target);
    await this.authorize(ctx, branch);
    // Abandoned uploads are forgotten by the sweep, once it has pruned what they left.
    await this.scheduleSweep();
    const id = await this.repository.insertUpload({
      accountId: ctx.accountId,
      deploymentId,
      userId: actor.userId,
      branchName: branch.name,
      prefix: this.prefix(ctx, target),
      ttlSeconds: UPLOAD_TTL_SECONDS,
    });
    return { deploymentName: ctx.settings.name, transaction: { id } };
  }

  async file(
    actor: Principal,
    deploymentId: number,
    fields: { transaction: string; fileName: string },
    content: Buffer | undefined,
  ): Promise<UploadFileResponseDto> {
    const path = normalisePath(fields.fileName, 'fileName');
    if (!content) throw dataModelError('invalid_path', 'The multipart part `file` is missing');
    const id = transactionId(fields.transaction);
    // The upload was opened by this user for its branch, with the rights that branch needs
    // (`start`): a part needs only the upload, not the branch again.
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    this.ws.assertLimits([{ path, size: content.length }], 0);
    const upload = await this.repository.upload(deploymentId, actor.userId, id);
    if (!upload) throw notFound('UploadTransaction', id);
    const hash = createHash('sha1').update(content).digest('hex');
    await this.db.transaction(async () => {
      // The account's parts take turns from reading its sum to storing the blob, so parallel
      // parts cannot pass the bound together; a refused part stores nothing.
      await this.repository.lockAccountUploads(ctx.accountId);
      await this.assertAllowance(ctx.accountId, content.length);
      if (!(await this.repository.addUploadBytes(upload.id, content.length))) {
        throw notFound('UploadTransaction', id);
      }
      const [oid] = await this.ws.git.writeBlobs(deploymentId, [content]);
      await this.repository.putUploadFile(upload.id, path, hash, oid, content.length);
    });
    return { fileName: path, hash };
  }

  /** 429 `upload_limit_reached` when `size` more bytes would pass the account's allowance. */
  private async assertAllowance(accountId: number, size: number): Promise<void> {
    const limit = this.config.dataModel.uploadMaxPendingBytes;
    const pending = await this.repository.pendingUploads(accountId);
    if (pending.bytes + size <= limit) return;
    // Bytes free when an upload finishes, or when the sweep after its expiry has pruned them.
    const freedAt = (pending.earliestExpiry?.getTime() ?? Date.now()) + UPLOAD_PRUNE_AGE_SECONDS * 1000;
    const retryAfterSeconds = Math.max(60, (freedAt - Date.now()) / 1000 + 15 * 60);
    throw dataModelError(
      'upload_limit_reached',
      `The account's uploads hold ${pending.bytes} bytes not yet committed; ${size} more would pass ` +
        `MODEL_UPLOAD_MAX_PENDING_BYTES (${limit}). Finish open uploads; what expired ones hold is ` +
        `freed once they are pruned, about ${Math.ceil(UPLOAD_PRUNE_AGE_SECONDS / 60)} minutes after they expire.`,
      { retryAfterSeconds },
    );
  }

  async finish(
    actor: Principal,
    deploymentId: number,
    query: UploadQueryDto,
    dto: UploadFinishDto,
  ): Promise<UploadFinishResponseDto> {
    const wanted = new Map<string, string>();
    for (const [raw, value] of Object.entries(dto.files)) {
      const path = normalisePath(raw, `files key`);
      const hash = (value as { hash?: unknown } | null)?.hash;
      if (typeof hash !== 'string' || !SHA1.test(hash.toLowerCase())) {
        throw dataModelError(
          'upload_hash_mismatch',
          `files[${JSON.stringify(raw)}].hash must be a SHA-1 in hex`,
        );
      }
      if (wanted.has(path)) throw dataModelError('invalid_path', `/${path} is listed twice`);
      wanted.set(path, hash.toLowerCase());
    }
    // The upload was opened for its branch: a name given here (in the query, or in the body where
    // the reference command-line tool sends it) must be that branch, and the caller must still be
    // allowed to write it.
    const named = agreeingBranchName(
      ['branchName (query)', query.branchName],
      ['branchName (body)', dto.branchName],
    );
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const id = transactionId(dto.transaction.id);
    const opened = await this.repository.upload(deploymentId, actor.userId, id);
    if (!opened) throw notFound('UploadTransaction', id);
    if (named !== undefined && named !== opened.branchName) {
      throw coreError('validation_failed', [
        `branchName ${JSON.stringify(named)} is not the branch this upload was opened for ` +
          `(${JSON.stringify(opened.branchName)})`,
      ]);
    }
    await this.authorize(ctx, await this.ws.branch(ctx, opened.branchName));
    this.jobs.assertAvailable();
    return this.db.transaction(async () => {
      const upload = await this.repository.upload(deploymentId, actor.userId, id, true);
      if (!upload) throw notFound('UploadTransaction', id);
      const branch = await this.ws.branch(ctx, upload.branchName);
      const uploaded = new Map((await this.repository.uploadFiles(upload.id)).map((f) => [f.path, f]));
      const git = this.ws.git;
      /** The blobs of the branch's tree once the upload is in: the uploaded ones there are committed. */
      let inTree = new Set<string>();
      const next = await this.refs.move(deploymentId, branch.name, 'head', async (head) => {
        // Content already on the branch, by hash: a file the client did not send again.
        const current = head ? await git.listFiles(deploymentId, head) : [];
        const hashes = await this.files.contentHashes(deploymentId, current);
        const byHash = new Map<string, string>();
        for (const f of current) byHash.set(hashes.get(f.oid)!, f.oid);
        for (const f of uploaded.values()) byHash.set(f.sha1, f.blobOid);
        const changes: TreeChanges = new Map();
        const missing: string[] = [];
        for (const [path, hash] of wanted) {
          const up = uploaded.get(path);
          const oid = up && up.sha1 === hash ? up.blobOid : byHash.get(hash);
          if (!oid) missing.push(`/${path}`);
          else changes.set(upload.prefix + path, oid);
        }
        if (missing.length > 0) {
          throw dataModelError(
            'upload_hash_mismatch',
            `No uploaded or existing content matches the hash of: ${missing.slice(0, 20).join(', ')}`,
          );
        }
        if (dto.autoRemoveFiles ?? true) {
          for (const f of current) {
            if (f.path.startsWith(upload.prefix) && !changes.has(f.path)) changes.set(f.path, null);
          }
        }
        const kept = current.filter((f) => !changes.has(f.path)).map((f) => f.oid);
        const added = [...changes.values()].filter((v): v is string => v !== null);
        inTree = new Set([...kept, ...added]);
        this.ws.assertLimits([], kept.length + added.length);
        const baseTree = head ? await git.treeOf(deploymentId, head) : null;
        const tree = await git.writeTree(deploymentId, baseTree, changes);
        if (tree === baseTree) return null;
        const commit = await git.commit(
          deploymentId,
          tree,
          head ? [head] : [],
          dto.commitMessage?.trim() || 'Upload from the command line',
          this.ws.author(ctx),
        );
        await this.remotes.push(ctx, branch.name, commit);
        return { next: commit, result: commit };
      });
      // Parts the commit took are the branch's now; the rest (replaced or unlisted parts) keeps
      // counting against the account until the sweep prunes it.
      let committed = 0;
      for (const f of uploaded.values()) if (inTree.has(f.blobOid)) committed += f.size;
      const left = upload.bytes - committed;
      if (left > 0) await this.repository.closeUpload(upload.id, left);
      else await this.repository.deleteUpload(upload.id);
      if (next) {
        await this.builds.queue(ctx.accountId, deploymentId, branch.name, next, 'upload');
        return { lastHash: next };
      }
      const head = await this.refs.head(deploymentId, branch.name);
      return head ? { lastHash: head } : {};
    });
  }

  /**
   * Makes sure the sweep is scheduled (once, whichever process asks first): at the first upload,
   * since before it there is nothing to sweep.
   */
  private async scheduleSweep(): Promise<void> {
    if (this.sweepScheduled) return;
    await this.db.transaction(async () => {
      await this.repository.lockUploadSweepSchedule();
      if ((await this.schedules.listByOwner(UPLOAD_SWEEP_OWNER)).length > 0) return;
      await this.schedules.create({
        owner: UPLOAD_SWEEP_OWNER,
        job: UPLOAD_SWEEP_JOB,
        cron: UPLOAD_SWEEP_CRON,
        payload: {},
      });
    });
    this.sweepScheduled = true;
  }

  @JobHandler(UPLOAD_SWEEP_JOB)
  async runSweep(): Promise<void> {
    await this.sweep();
  }

  /**
   * Prunes what uploads that ended more than {@link UPLOAD_PRUNE_AGE_SECONDS} ago left in their
   * repositories (`git prune` of unreachable objects older than that: an open upload's blobs and
   * everything a ref or reflog reaches stay), then forgets those uploads. Safe to run twice and
   * alongside writes; a deployment whose prune fails keeps its rows for the next run. Answers
   * how many uploads it forgot.
   */
  async sweep(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - UPLOAD_PRUNE_AGE_SECONDS * 1000);
    const failed: number[] = [];
    let forgotten = 0;
    for (const deploymentId of await this.repository.sweptUploadDeployments(before, SWEEP_BATCH)) {
      try {
        await this.ws.git.prune(deploymentId, before);
        forgotten += await this.repository.deleteSweptUploads(deploymentId, before);
      } catch (err) {
        this.logger.warn({ err, deploymentId }, 'pruning what expired uploads left failed; retried later');
        failed.push(deploymentId);
      }
    }
    if (failed.length > 0) throw new Error(`The upload sweep failed for deployments ${failed.join(', ')}`);
    return forgotten;
  }

  /**
   * Hashes of the branch an upload would address, for the client to diff against: a read, so
   * `SchemaRead` suffices (the files themselves are readable with it).
   */
  async fileHashes(
    actor: Principal,
    deploymentId: number,
    query: UploadQueryDto,
  ): Promise<Record<string, { hash: string }>> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const branch = await this.target(ctx, query);
    // The committed files: an upload replaces the branch's head, not anyone's pending changes.
    return this.files.hashesAt(deploymentId, branch.head, this.prefix(ctx, query));
  }
}

/** The transaction field: the id itself, or the JSON `{"id": ...}` the command-line client sends. */
function transactionId(raw: string): string {
  let id: unknown = raw;
  if (raw.trim().startsWith('{')) {
    try {
      id = (JSON.parse(raw) as { id?: unknown }).id;
    } catch {
      id = undefined;
    }
  }
  if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw notFound('UploadTransaction', typeof id === 'string' ? id.slice(0, 64) : String(raw).slice(0, 64));
  }
  return id.toLowerCase();
}
