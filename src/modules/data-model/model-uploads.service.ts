import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/http/not-found.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type {
  UploadFileResponseDto,
  UploadFinishDto,
  UploadFinishResponseDto,
  UploadQueryDto,
  UploadStartDto,
} from './dto/data-model.dto.js';
import type { TreeChanges } from './git/git-store.js';
import { ModelBuilds } from './model-builds.js';
import { ModelFiles } from './model-files.service.js';
import { normalisePath } from './model-paths.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

/** How long an upload may stay open before it is forgotten. */
export const UPLOAD_TTL_SECONDS = 3600;

const SHA1 = /^[0-9a-f]{40}$/;

/**
 * The upload protocol of the command-line client: `start` opens a transaction, `file` stores one
 * file's blob (the client sends only files whose hash differs), `finish` with the full
 * `path -> {hash}` map writes one commit (pruning files absent from it with `autoRemoveFiles`)
 * and queues one build.
 */
@Injectable()
export class ModelUploads {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly files: ModelFiles,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
  ) {}

  /**
   * The branch an upload addresses: `branchName`, the caller's dev branch with `live`, else the
   * deploy branch. The deploy branch and shared branches need `SchemaUpdate`; the caller's own
   * dev branch `SchemaUpdateDevBranches`.
   */
  private async open(
    actor: Principal,
    deploymentId: number,
    query: UploadQueryDto,
  ): Promise<{ ctx: ModelContext; branch: Branch & BranchState; prefix: string }> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const branch = await this.target(ctx, query);
    if (!branch.isOwnDev) await this.ws.require(ctx, Action.SchemaUpdate);
    if (branch.kind === 'dev' && !branch.isOwnDev) {
      throw dataModelError('branch_not_writable', `${branch.name} is another user's personal dev branch`);
    }
    return { ctx, branch, prefix: this.prefix(ctx, query) };
  }

  private target(ctx: ModelContext, query: UploadQueryDto): Promise<Branch & BranchState> {
    return query.live
      ? this.ws.target(ctx, { branchName: query.branchName })
      : this.ws.target(ctx, { branchName: query.branchName ?? ctx.settings.deployBranchName });
  }

  private prefix(ctx: ModelContext, query: UploadQueryDto): string {
    return query.useDeployProjectRoot === false ? '' : ctx.prefix;
  }

  async start(actor: Principal, deploymentId: number, query: UploadQueryDto): Promise<UploadStartDto> {
    const { ctx, branch, prefix } = await this.open(actor, deploymentId, query);
    // Abandoned uploads are forgotten here; their blobs are unreferenced and git prunes them.
    await this.repository.deleteExpiredUploads();
    const id = await this.repository.insertUpload({
      accountId: ctx.accountId,
      deploymentId,
      userId: actor.userId,
      branchName: branch.name,
      prefix,
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
    await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    this.ws.assertLimits([{ path, size: content.length }], 0);
    const upload = await this.repository.upload(deploymentId, actor.userId, id);
    if (!upload) throw notFound('UploadTransaction', id);
    const [oid] = await this.ws.git.writeBlobs(deploymentId, [content]);
    const hash = createHash('sha1').update(content).digest('hex');
    await this.repository.putUploadFile(upload.id, path, hash, oid);
    return { fileName: path, hash };
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
    const { ctx } = await this.open(actor, deploymentId, query);
    const id = transactionId(dto.transaction.id);
    this.jobs.assertAvailable();
    return this.db.transaction(async () => {
      const upload = await this.repository.upload(deploymentId, actor.userId, id, true);
      if (!upload) throw notFound('UploadTransaction', id);
      const branch = await this.ws.branch(ctx, upload.branchName);
      const uploaded = new Map((await this.repository.uploadFiles(upload.id)).map((f) => [f.path, f]));
      const git = this.ws.git;
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
        const kept = current.filter((f) => !changes.has(f.path)).length;
        const total = kept + [...changes.values()].filter((v) => v !== null).length;
        this.ws.assertLimits([], total);
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
      await this.repository.deleteUpload(upload.id);
      if (next) {
        await this.builds.queue(ctx.accountId, deploymentId, branch.name, next, 'upload');
        return { lastHash: next };
      }
      const head = await this.refs.head(deploymentId, branch.name);
      return head ? { lastHash: head } : {};
    });
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
