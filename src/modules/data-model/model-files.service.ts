import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import { buildPage, resolvePaging, type Page } from '../../core/http/pagination.js';
import { JobQueue } from '../../core/queue/job-queue.service.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import type {
  CommitDto,
  FileNodeDto,
  ListFilesQueryDto,
  RemoveFilesDto,
  RenameFilesDto,
  UpdateFilesDto,
  ValidateQueryDto,
  ValidationResponseDto,
} from './dto/data-model.dto.js';
import type { TreeChanges, TreeFile } from './git/git-store.js';
import { ModelBuilds } from './model-builds.js';
import { fileTree, normalisePath } from './model-paths.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelReview } from './model-review.service.js';
import { ModelVerdicts } from './model-verdicts.js';
import { ModelWorkspace, type Branch, type BranchState, type ModelContext } from './model-workspace.js';

const sha1 = (content: Buffer): string => createHash('sha1').update(content).digest('hex');

/**
 * Files of a branch: reading the tree, pending writes on the caller's personal dev branch
 * (`refs/pending/<branch>`, a commit over the head they started from), committing them as one
 * commit, content hashes and validation.
 */
@Injectable()
export class ModelFiles {
  constructor(
    private readonly db: Database,
    private readonly ws: ModelWorkspace,
    private readonly refs: ModelRefs,
    private readonly repository: DataModelRepository,
    private readonly verdicts: ModelVerdicts,
    private readonly builds: ModelBuilds,
    private readonly remotes: ModelRemotes,
    private readonly jobs: JobQueue,
    private readonly review: ModelReview,
  ) {}

  /** The commit whose files a reader of `branch` sees: the owner sees their pending changes. */
  private readable(branch: Branch & BranchState): string | null {
    return branch.isOwnDev && branch.pending ? branch.pending : branch.head;
  }

  async list(actor: Principal, deploymentId: number, query: ListFilesQueryDto): Promise<Page<FileNodeDto>> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const branch = await this.ws.target(ctx, { branchName: query.branchName }, 'active-or-deploy');
    const commit = this.readable(branch);
    let nodes: FileNodeDto[] = [];
    if (commit) {
      const files = (await this.ws.git.listFiles(deploymentId, commit)).filter((f) =>
        f.path.startsWith(ctx.prefix),
      );
      const blobs = query.withContent
        ? await this.ws.git.readBlobs(
            deploymentId,
            files.map((f) => f.oid),
          )
        : null;
      nodes = fileTree(
        files.map((f) => ({
          path: f.path.slice(ctx.prefix.length),
          content: blobs ? (blobs.get(f.oid)?.toString('utf8') ?? '') : undefined,
        })),
      );
    }
    // `first` pages the top-level nodes; without it the whole tree comes back.
    const paging = resolvePaging({ first: query.first ?? Math.max(nodes.length, 1), after: query.after }, [
      'string',
    ]);
    const after = paging.mode === 'cursor' && paging.after ? String(paging.after[0]) : null;
    // Directories come before files, so the cursor (a node's path) is found by position; a node
    // removed since the last page leaves the rest from the first node after it in path order.
    const at = after === null ? -1 : nodes.findIndex((n) => n.path === after);
    const rest = after === null ? nodes : at >= 0 ? nodes.slice(at + 1) : nodes.filter((n) => n.path > after);
    return buildPage(rest, paging, (n) => [n.path]);
  }

  async write(actor: Principal, deploymentId: number, dto: UpdateFilesDto): Promise<void> {
    const files = dto.files.map((f, i) => ({
      path: normalisePath(f.path, `files[${i}].path`),
      content: Buffer.from(f.content, 'utf8'),
    }));
    this.assertDistinct(files.map((f) => f.path));
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    this.ws.assertLimits(
      files.map((f) => ({ path: f.path, size: f.content.length })),
      0,
    );
    // The blobs are stored while the branch is looked up: unreferenced objects change nothing
    // when the branch then refuses the write.
    const [branch, oids] = await Promise.all([
      this.writable(ctx, dto),
      this.ws.git.writeBlobs(
        deploymentId,
        files.map((f) => f.content),
      ),
    ]);
    await this.changePending(ctx, branch, (existing) => {
      const changes: TreeChanges = new Map(files.map((f, i) => [ctx.prefix + f.path, oids[i]]));
      const added = files.filter((f) => !existing.has(ctx.prefix + f.path)).length;
      this.ws.assertLimits([], existing.size + added);
      return changes;
    });
  }

  async remove(actor: Principal, deploymentId: number, dto: RemoveFilesDto): Promise<void> {
    const paths = dto.files.map((f, i) => normalisePath(f.path, `files[${i}].path`));
    this.assertDistinct(paths);
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const branch = await this.writable(ctx, dto);
    await this.changePending(ctx, branch, (existing) => {
      const missing = paths.filter((p) => !existing.has(ctx.prefix + p));
      if (missing.length > 0) {
        throw dataModelError(
          'file_not_found',
          `No such file on ${branch.name}: ${missing.map((p) => `/${p}`).join(', ')}`,
        );
      }
      return new Map(paths.map((p) => [ctx.prefix + p, null]));
    });
  }

  async rename(actor: Principal, deploymentId: number, dto: RenameFilesDto): Promise<void> {
    const moves = dto.files.map((f, i) => ({
      from: normalisePath(f.path, `files[${i}].path`),
      to: normalisePath(f.newPath, `files[${i}].newPath`),
    }));
    this.assertDistinct(moves.map((m) => m.from));
    this.assertDistinct(moves.map((m) => m.to));
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const branch = await this.writable(ctx, dto);
    await this.changePending(ctx, branch, (existing) => {
      const changes: TreeChanges = new Map();
      const moving = new Set(moves.map((m) => ctx.prefix + m.from));
      for (const m of moves) {
        const oid = existing.get(ctx.prefix + m.from);
        if (!oid) throw dataModelError('file_not_found', `No such file on ${branch.name}: /${m.from}`);
        if (m.to !== m.from && existing.has(ctx.prefix + m.to) && !moving.has(ctx.prefix + m.to)) {
          throw dataModelError('file_exists', `/${m.to} exists already on ${branch.name}`);
        }
      }
      for (const m of moves) if (!changes.has(ctx.prefix + m.from)) changes.set(ctx.prefix + m.from, null);
      for (const m of moves) changes.set(ctx.prefix + m.to, existing.get(ctx.prefix + m.from)!);
      return changes;
    });
  }

  /**
   * Records the pending changes of the caller's dev branch as one commit (pushed first when a
   * repository is connected: a refused push changes nothing), then queues its build.
   */
  async commit(actor: Principal, deploymentId: number, dto: CommitDto): Promise<void> {
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaUpdateDevBranches);
    const branch = await this.writable(ctx, { branchName: dto.branchName });
    this.jobs.assertAvailable();
    await this.db.transaction(async () => {
      let pendingAt: string | null = null;
      // The move reads both refs with their trees and parents: no further command to learn them.
      const committed = await this.refs.move(deploymentId, branch.name, 'head', async (head, refs) => {
        const pending = refs.pending?.commit ?? null;
        pendingAt = pending;
        if (!pending) return null;
        const base = refs.pending!.parents[0] ?? null;
        let tree = refs.pending!.tree;
        if (head && base !== head) {
          // The branch moved under the pending changes (a pull): merge them onto its head.
          const merged = await this.ws.git.merge(deploymentId, head, pending);
          if (merged.clean) tree = merged.tree;
          else if (!dto.resolveMergeConflict) {
            throw dataModelError(
              'merge_conflict',
              `Your changes conflict with ${branch.name} in: ${merged.files.join(', ')}; ` +
                'send resolveMergeConflict: true to keep your version',
            );
          }
        }
        // Pending changes that undo themselves make no commit.
        if (head && tree === refs.head!.tree) return null;
        const next = await this.ws.git.commit(
          deploymentId,
          tree,
          head ? [head] : [],
          dto.message?.trim() || 'Update the data model',
          this.ws.author(ctx),
        );
        await this.remotes.push(ctx, branch.name, next);
        return { next, result: next };
      });
      if (pendingAt) await this.refs.dropPending(deploymentId, branch.name, pendingAt);
      if (committed) await this.builds.queue(ctx.accountId, deploymentId, branch.name, committed, 'commit');
      if (dto.exitDevMode) await this.repository.leaveDevMode(deploymentId, actor.userId);
    });
  }

  /** Content hashes (SHA-1 of each file) at a commit (none: no files), keyed by `prefix`-relative path. */
  async hashesAt(
    deploymentId: number,
    commit: string | null,
    prefix: string,
  ): Promise<Record<string, { hash: string }>> {
    const out: Record<string, { hash: string }> = {};
    if (!commit) return out;
    const files = (await this.ws.git.listFiles(deploymentId, commit)).filter((f) =>
      f.path.startsWith(prefix),
    );
    const hashes = await this.contentHashes(deploymentId, files);
    for (const f of files) out[f.path.slice(prefix.length)] = { hash: hashes.get(f.oid)! };
    return out;
  }

  /** The SHA-1 of each file's content (what clients hash), by blob id, in one read of the blobs. */
  async contentHashes(deploymentId: number, files: TreeFile[]): Promise<Map<string, string>> {
    const blobs = await this.ws.git.readBlobs(
      deploymentId,
      files.map((f) => f.oid),
    );
    return new Map(files.map((f) => [f.oid, sha1(blobs.get(f.oid) ?? Buffer.alloc(0))]));
  }

  async validate(
    actor: Principal,
    deploymentId: number,
    query: ValidateQueryDto,
  ): Promise<ValidationResponseDto> {
    if (query.branchName !== undefined && query.devMode) {
      throw coreError('validation_failed', ['branchName and devMode are mutually exclusive']);
    }
    const ctx = await this.ws.open(actor, deploymentId, Action.SchemaRead);
    const branch = query.devMode
      ? await this.ws.target(ctx, {})
      : await this.ws.branch(ctx, query.branchName ?? ctx.settings.deployBranchName);
    const result = await this.verdicts.of(ctx.accountId, deploymentId, this.readable(branch), ctx.prefix);
    return {
      deploymentId,
      branchName: branch.name,
      mode: branch.isDeploy ? 'production' : 'dev_mode',
      valid: result.valid,
      errors: result.errors,
      cubesCount: result.cubesCount,
      // What stored content this model would break, against the deploy branch's (issue 33).
      impact: await this.review.impactAgainstDeploy(ctx, branch, result),
    };
  }

  // ---------------------------------------------------------------------------------------------------

  /** The branch a file write goes to: only the caller's personal dev branch accepts one. */
  private async writable(
    ctx: ModelContext,
    ref: { branchName?: string | null; branchId?: number | null },
  ): Promise<Branch & BranchState> {
    // The refs this process last knew will do: the write verifies them when it moves the ref.
    const branch = await this.ws.target(ctx, ref, 'active', true);
    if (!branch.isOwnDev) {
      throw dataModelError(
        'branch_not_writable',
        `${branch.name} is not your personal dev branch; files are written in dev mode only (POST /dev-mode)`,
      );
    }
    return branch;
  }

  private assertDistinct(paths: string[]): void {
    const seen = new Set<string>();
    for (const p of paths) {
      if (seen.has(p)) throw dataModelError('invalid_path', `/${p} is listed twice`);
      seen.add(p);
    }
  }

  /**
   * Applies changes to the pending commit of a dev branch, under its lock: `plan` sees the files
   * as they are now (path -> blob) and answers the changes, or throws to change nothing.
   */
  private async changePending(
    ctx: ModelContext,
    branch: Branch & BranchState,
    plan: (existing: Map<string, string>) => TreeChanges,
  ): Promise<void> {
    const git = this.ws.git;
    // A hot path (every save of an editor): it starts from the refs the branch lookup had (with
    // their trees and parents; verified by the move), and one listing of the tree serves the plan
    // and the tree write.
    await this.refs.move(
      ctx.deploymentId,
      branch.name,
      'pending',
      async (_pending, refs) => {
        // Deleted meanwhile: no pending changes for a branch that is gone.
        if (!refs.head) throw notFound('Branch', branch.name);
        const current = refs.pending ?? refs.head;
        const listing = current ? await git.listing(ctx.deploymentId, current.tree) : [];
        const existing = new Map(
          listing.filter((e) => e.type === 'blob').map((e) => [e.path, e.oid] as const),
        );
        const changes = plan(existing);
        const baseTree = current?.tree ?? null;
        const tree = await git.writeTree(ctx.deploymentId, baseTree, changes, listing);
        if (tree === baseTree) return null;
        const base = refs.pending ? (refs.pending.parents[0] ?? null) : (refs.head?.commit ?? null);
        const parents = base ? [base] : [];
        const next = await git.commit(
          ctx.deploymentId,
          tree,
          parents,
          'Pending changes',
          this.ws.author(ctx),
        );
        return { next, result: next, state: { commit: next, tree, parents } };
      },
      branch.refs,
    );
  }
}
