import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { dataModelError } from './data-model.errors.js';
import { DataModelRepository } from './data-model.repository.js';
import { branchRef, GitStore, pendingRef, type RefState } from './git/git-store.js';

/** Which ref of a branch: its head (`refs/heads/<b>`) or its pending changes (`refs/pending/<b>`). */
export type RefKind = 'head' | 'pending';

const refOf = (branch: string, kind: RefKind): string =>
  kind === 'head' ? branchRef(branch) : pendingRef(branch);

const MAX_CAS_ATTEMPTS = 5;
/** Branches whose refs this process remembers (see {@link ModelRefs.lastKnown}). */
const MAX_KNOWN_BRANCHES = 2_000;

/** What a ref move decided: the next commit (null: delete the ref) and the caller's result. */
export interface MoveDecision<T> {
  next: string | null;
  result: T;
  /** The new commit with its tree and parents, when the change knows them. */
  state?: RefState | null;
}

/** Both refs of a branch as they are now (null: absent). */
export interface BranchRefs {
  head: RefState | null;
  pending: RefState | null;
}

/**
 * The one module that changes refs: creates, moves and deletes a branch's refs, each under the
 * branch's PostgreSQL advisory lock (held for the unit of work, so writers of one branch take
 * turns in every process) and with a compare-and-swap of the ref (`update-ref <ref> <new> <old>`),
 * so a writer outside the API is never overwritten. Refs are named in full and read exactly.
 * The only caller of `GitStore.updateRef` (a unit test checks it).
 */
@Injectable()
export class ModelRefs {
  /** `<deployment>:<branch>` -> its refs as this process last read or moved them. */
  private readonly known = new Map<string, BranchRefs>();

  constructor(
    private readonly db: Database,
    private readonly repository: DataModelRepository,
    private readonly git: GitStore,
  ) {}

  /** The head and pending commits of a branch with their trees and parents, in one read. */
  async states(deploymentId: number, branch: string): Promise<BranchRefs> {
    const refs = await this.git.refStates(deploymentId, [branchRef(branch), pendingRef(branch)]);
    const states = {
      head: refs.get(branchRef(branch)) ?? null,
      pending: refs.get(pendingRef(branch)) ?? null,
    };
    this.remember(deploymentId, branch, states);
    return states;
  }

  /**
   * A branch's refs as this process last read or moved them, if it did: unverified (another
   * process may have moved them since), so only for {@link move}'s `read`, which verifies them.
   */
  lastKnown(deploymentId: number, branch: string): BranchRefs | undefined {
    return this.known.get(`${deploymentId}:${branch}`);
  }

  private remember(deploymentId: number, branch: string, refs: BranchRefs | null): void {
    const key = `${deploymentId}:${branch}`;
    this.known.delete(key);
    if (!refs) return;
    this.known.set(key, refs);
    // A Map iterates in insertion order: the first entries are the least recently used.
    for (const [oldest] of this.known) {
      if (this.known.size <= MAX_KNOWN_BRANCHES) break;
      this.known.delete(oldest);
    }
  }

  /** The head commit of a branch, or null when it does not exist. */
  head(deploymentId: number, branch: string): Promise<string | null> {
    return this.git.resolve(deploymentId, branchRef(branch));
  }

  /**
   * Creates a branch at `commit`, if no branch of that name (or of a clashing path: git cannot
   * hold both `a` and `a/b`) exists; false otherwise. `record` runs first, under the lock and in
   * the same unit of work (the branch's row), and may throw to create nothing.
   */
  async create(
    deploymentId: number,
    branch: string,
    commit: string,
    record?: () => Promise<void>,
  ): Promise<boolean> {
    return this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, branch);
      await record?.();
      this.remember(deploymentId, branch, null);
      return this.git.updateRef(deploymentId, branchRef(branch), commit, null);
    });
  }

  /**
   * Moves a ref of a branch: `change` reads the current commit (and both refs of the branch, with
   * their trees and parents) and answers the next one (null deletes the ref) with a result, or
   * null to leave it. A lost compare-and-swap (a writer outside the API) runs `change` again on
   * what won. Anything that must happen before the ref moves (a push) belongs in `change`, so its
   * failure changes nothing.
   *
   * `read`: refs the caller read before (not under the lock), for the first attempt of a hot path
   * (one git command less). Only a compare-and-swap that succeeds confirms them: any other
   * outcome of that attempt (an error, no change) is decided again on refs read afresh, so
   * `change` must have no side effect when `read` is given. `state`, when the change knows it,
   * is the ref's new commit with its tree and parents, for the next write's `read`.
   */
  async move<T>(
    deploymentId: number,
    branch: string,
    kind: RefKind,
    change: (current: string | null, refs: BranchRefs) => Promise<MoveDecision<T> | null>,
    read?: BranchRefs,
  ): Promise<T | null> {
    const ref = refOf(branch, kind);
    return this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, branch);
      for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
        const verified = !(attempt === 0 && read);
        const refs = verified ? await this.states(deploymentId, branch) : read;
        const current = refs[kind]?.commit ?? null;
        let decided: MoveDecision<T> | null;
        try {
          decided = await change(current, refs);
        } catch (error) {
          if (verified) throw error;
          continue;
        }
        if (!decided || decided.next === current) {
          if (verified) return decided ? decided.result : null;
          continue;
        }
        // The branch's other ref is part of what was read: it must not have moved either.
        const other: RefKind = kind === 'head' ? 'pending' : 'head';
        const unchanged = [{ ref: refOf(branch, other), at: refs[other]?.commit ?? null }];
        if (await this.git.updateRef(deploymentId, ref, decided.next, current, unchanged)) {
          this.remember(
            deploymentId,
            branch,
            decided.state === undefined ? null : { ...refs, [kind]: decided.state },
          );
          return decided.result;
        }
        this.remember(deploymentId, branch, null);
      }
      throw dataModelError('conflict', `Branch ${branch} kept changing under this request; retry`);
    });
  }

  /** Drops a branch's pending changes if they are still `expected` (a commit recorded them). */
  async dropPending(deploymentId: number, branch: string, expected: string): Promise<void> {
    await this.move(deploymentId, branch, 'pending', (current) =>
      Promise.resolve(current === expected ? { next: null, result: true } : null),
    );
  }

  /**
   * Deletes a branch: its pending changes, then its head. `before` runs first under the lock (a
   * delete on the connected repository) and may throw to delete nothing.
   */
  async remove(deploymentId: number, branch: string, before?: () => Promise<void>): Promise<void> {
    this.remember(deploymentId, branch, null);
    await this.db.transaction(async () => {
      await this.repository.lockBranch(deploymentId, branch);
      await before?.();
      for (const kind of ['pending', 'head'] as const) {
        await this.move(deploymentId, branch, kind, (current) =>
          Promise.resolve(current ? { next: null, result: true } : null),
        );
      }
    });
  }
}
