import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../../core/config/app-config.js';
import { dataModelError } from '../data-model.errors.js';
import { branchNameProblem } from './branch-names.js';
import { COMMITTER, git, GitError, text, ZERO_OID } from '../../../core/git/git.js';
import { GitSessions } from './git-sessions.js';
import { readStamp, writeStamp } from './repo-stamp.js';
import { ReposOwnership, type RepositoryOwner } from './repos-ownership.js';
import { EMPTY_TREE, planTrees, TreePathConflict, type TreeChanges, type TreeEntry } from './tree-plan.js';

/** What a ref points at: a commit, its tree and its parents. */
export interface RefState {
  commit: string;
  tree: string;
  parents: string[];
}

/** One file of a tree: its repository-relative path, blob id and size. */
export interface TreeFile {
  path: string;
  oid: string;
  size: number;
}

export type { TreeChanges, TreeEntry } from './tree-plan.js';

export interface CommitAuthor {
  name: string;
  email: string;
}

/** What `merge-tree` decided: the merged tree, or the files that conflict. */
export type MergeOutcome = { clean: true; tree: string } | { clean: false; files: string[] };

/** Credentials for a remote over HTTPS, sent as a header so they never land in a URL or a log. */
export interface RemoteAuth {
  username: string;
  password: string;
}

export const branchRef = (name: string): string => `refs/heads/${name}`;
/** Pending (uncommitted) changes of a branch: a commit whose parent is the head they started from. */
export const pendingRef = (name: string): string => `refs/pending/${name}`;

/**
 * The deployments' git repositories: one bare repository per deployment under `REPOS_DIR`,
 * changed only with plumbing (no working tree): blobs with `hash-object`, trees through a
 * temporary index, commits with `commit-tree`, and refs moved with a compare-and-swap
 * (`update-ref <ref> <new> <old>`), so two writers (two requests, two replicas sharing the
 * directory) never lose each other's change: the loser sees {@link updateRef} answer false.
 */
@Injectable()
export class GitStore implements OnApplicationShutdown {
  private readonly root: string;
  private readonly sessions = new GitSessions();
  /** Tree listings by `<deployment>:<tree id>` (see {@link listing}). */
  private readonly listings = new Map<string, TreeEntry[]>();
  private listedEntries = 0;

  private readonly logger = new Logger('DataModel');

  constructor(
    config: AppConfig,
    /** Whose repositories these are; every repository is stamped with it and checked against it. */
    @Inject(ReposOwnership) private readonly owner: RepositoryOwner,
  ) {
    this.root = config.dataModel.reposDir;
  }

  onApplicationShutdown(): void {
    this.sessions.closeAll();
  }

  dir(deploymentId: number): string {
    return path.join(this.root, `${deploymentId}.git`);
  }

  /**
   * Creates the deployment's bare repository unless it exists; safe to race. The repository is
   * stamped with this installation's id; one found stamped by another installation is refused
   * (`repository_of_another_installation`), one from before stamps is stamped now (`REPOS_DIR` is
   * this installation's: {@link ReposOwnership}).
   */
  async ensure(deploymentId: number): Promise<string> {
    const owner = await this.owner.installationId();
    const dir = this.dir(deploymentId);
    const stamp = await readStamp(dir);
    if (stamp !== undefined) {
      await this.own(deploymentId, stamp, owner);
      return dir;
    }
    await fs.mkdir(this.root, { recursive: true });
    // Initialised and stamped aside and renamed into place, so no reader ever sees half a repository.
    const tmp = `${dir}.init-${randomBytes(6).toString('hex')}`;
    await git(null, ['init', '--bare', '--quiet', tmp]);
    await git(tmp, ['config', 'core.logAllRefUpdates', 'true']);
    await git(tmp, ['config', 'gc.auto', '0']);
    await writeStamp(tmp, owner);
    try {
      await fs.rename(tmp, dir);
    } catch (err) {
      await fs.rm(tmp, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      // Another process made it first.
      await this.own(deploymentId, (await readStamp(dir)) ?? null, owner);
    }
    return dir;
  }

  /**
   * Checks that a repository found on disk is this installation's: refused when another
   * installation stamped it, stamped now when it has no stamp.
   */
  private async own(deploymentId: number, stamp: string | null, owner: string): Promise<void> {
    if (stamp === owner) return;
    const dir = this.dir(deploymentId);
    if (stamp === null) {
      await writeStamp(dir, owner);
      this.logger.warn(`${dir} had no installation stamp: stamped as installation ${owner}'s`);
      return;
    }
    this.logger.error(
      `${dir} belongs to installation ${stamp}, not to this one (${owner}): neither opened nor changed. ` +
        'Check REPOS_DIR.',
    );
    throw dataModelError(
      'repository_of_another_installation',
      `The data model repository of deployment ${deploymentId} belongs to another installation; ` +
        'nothing was read or changed. The operator must check REPOS_DIR.',
    );
  }

  /** Points the repository's HEAD at a branch, so a clone checks that branch out. */
  async setHead(deploymentId: number, branch: string): Promise<void> {
    await git(this.dir(deploymentId), ['symbolic-ref', 'HEAD', branchRef(branch)]);
  }

  /**
   * Deletes the deployment's repository (its deployment is gone), only when it carries this
   * installation's stamp: a repository another installation made, or one without a stamp, is
   * kept and logged. True when it was deleted.
   */
  async destroy(deploymentId: number): Promise<boolean> {
    const owner = await this.owner.installationId();
    const dir = this.dir(deploymentId);
    this.sessions.forget(dir);
    const stamp = await readStamp(dir);
    if (stamp === undefined) return false;
    if (stamp !== owner) {
      this.logger.error(
        `Deployment ${deploymentId} was deleted, but ${dir} was kept: ` +
          (stamp === null
            ? `it has no installation stamp, so nothing shows installation ${owner} made it`
            : `it belongs to installation ${stamp}, not to this one (${owner})`),
      );
      return false;
    }
    await fs.rm(dir, { recursive: true, force: true });
    return true;
  }

  /**
   * Deletes the loose objects that no ref, reflog or younger object reaches and that were last
   * written before `before` (`git prune --expire`): what abandoned uploads left. An object written
   * (or written again: git freshens an existing one) since then is kept, so an upload or a write
   * under way never loses its blobs; safe to run while others write, and twice. False when the
   * deployment has no repository.
   */
  async prune(deploymentId: number, before: Date): Promise<boolean> {
    const owner = await this.owner.installationId();
    const dir = this.dir(deploymentId);
    const stamp = await readStamp(dir);
    if (stamp === undefined) return false;
    await this.own(deploymentId, stamp, owner);
    await git(dir, ['prune', `--expire=@${Math.floor(before.getTime() / 1000)} +0000`], {
      timeoutMs: 600_000,
    });
    return true;
  }

  /**
   * The commit a ref points at, or null. The ref is named in full and matched exactly: git's
   * guessing (`rev-parse <name>` tries refs/<name>, refs/heads/<name>, ... and reflog syntax)
   * never reads a name.
   */
  async resolve(deploymentId: number, ref: string): Promise<string | null> {
    return (await this.resolveAll(deploymentId, [ref])).get(ref) ?? null;
  }

  /** The commits several refs point at (absent refs are left out), in one command. */
  async resolveAll(deploymentId: number, refs: string[]): Promise<Map<string, string>> {
    const states = await this.refStates(deploymentId, refs);
    return new Map([...states].map(([ref, state]) => [ref, state.commit]));
  }

  /**
   * The commit of each ref with its tree and parents (absent refs are left out), in one command,
   * so a writer needs no further command to learn them.
   */
  async refStates(deploymentId: number, refs: string[]): Promise<Map<string, RefState>> {
    for (const ref of refs) assertFullRef(ref);
    const r = await git(this.dir(deploymentId), [
      'for-each-ref',
      '--format=%(objectname)%00%(tree)%00%(parent)%00%(refname)',
      ...refs,
    ]);
    const wanted = new Set(refs);
    const out = new Map<string, RefState>();
    for (const line of r.stdout.toString('utf8').split('\n')) {
      const [commit, tree, parents, name] = line.split('\0');
      // A pattern also matches refs below it (`refs/heads/a` matches `refs/heads/a/b`): keep exact names.
      if (name === undefined || !wanted.has(name)) continue;
      out.set(name, { commit, tree, parents: parents ? parents.split(' ') : [] });
    }
    return out;
  }

  /** Every ref under `prefix` (`refs/heads/`) with the commit it points at. */
  async refs(deploymentId: number, prefix: string): Promise<Map<string, string>> {
    const r = await git(this.dir(deploymentId), [
      'for-each-ref',
      '--format=%(objectname) %(refname)',
      prefix,
    ]);
    const out = new Map<string, string>();
    for (const line of text(r).split('\n')) {
      if (!line) continue;
      const space = line.indexOf(' ');
      out.set(line.slice(space + 1 + prefix.length), line.slice(0, space));
    }
    return out;
  }

  /** The tree of a commit. */
  async treeOf(deploymentId: number, commit: string): Promise<string> {
    assertOid(commit);
    return text(await git(this.dir(deploymentId), ['rev-parse', `${commit}^{tree}`]));
  }

  /** The id of the tree at `dir` (repository-relative, no trailing slash) in a commit, or null. */
  async treeAt(deploymentId: number, commit: string, dir: string): Promise<string | null> {
    assertOid(commit);
    // ls-tree matches paths literally (no revision syntax, no globbing) and names the entry itself.
    const r = await git(this.dir(deploymentId), ['ls-tree', '-d', '-z', commit, '--', dir]);
    const entry = r.stdout.toString('utf8').split('\0')[0];
    const match = /^\d+ tree ([0-9a-f]{40,64})\t/.exec(entry);
    return match && entry.slice(entry.indexOf('\t') + 1) === dir ? match[1] : null;
  }

  /** The first parent of a commit. */
  async parentOf(deploymentId: number, commit: string): Promise<string | null> {
    assertOid(commit);
    const r = await git(this.dir(deploymentId), ['rev-parse', '--verify', '--quiet', `${commit}^1`], {
      okCodes: [1],
    });
    return r.code === 0 ? text(r) : null;
  }

  /** Every file (blob) of a tree-ish, recursively, with repository-relative paths. */
  async listFiles(deploymentId: number, treeish: string): Promise<TreeFile[]> {
    assertOid(treeish);
    const r = await git(this.dir(deploymentId), ['ls-tree', '-r', '-z', '-l', '--full-tree', treeish]);
    const files: TreeFile[] = [];
    for (const entry of r.stdout.toString('utf8').split('\0')) {
      if (!entry) continue;
      // `<mode> SP <type> SP <oid> SP+ <size> TAB <path>`
      const tab = entry.indexOf('\t');
      const [, type, oid, size] = entry.slice(0, tab).split(/ +/);
      if (type !== 'blob') continue;
      files.push({ path: entry.slice(tab + 1), oid, size: Number(size) });
    }
    return files;
  }

  /** The contents of blobs, by id, in one `cat-file --batch`. */
  async readBlobs(deploymentId: number, oids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const unique = [...new Set(oids)];
    if (unique.length === 0) return out;
    const r = await git(this.dir(deploymentId), ['cat-file', '--batch'], { input: unique.join('\n') + '\n' });
    const buf = r.stdout;
    let at = 0;
    while (at < buf.length) {
      const nl = buf.indexOf(10, at);
      const [oid, type, size] = buf.subarray(at, nl).toString('utf8').split(' ');
      if (type === 'missing' || size === undefined) {
        at = nl + 1;
        continue;
      }
      const length = Number(size);
      out.set(oid, buf.subarray(nl + 1, nl + 1 + length));
      at = nl + 1 + length + 1;
    }
    return out;
  }

  /**
   * Stores contents as blobs and answers their ids, in order: one `hash-object -w --stdin-paths`
   * over files written to a scratch directory, rather than one process per file.
   */
  async writeBlobs(deploymentId: number, contents: Buffer[]): Promise<string[]> {
    return this.hashFiles(deploymentId, 'blobs', contents);
  }

  /** Stores objects through the repository's kept `hash-object --stdin-paths` of that kind. */
  private async hashFiles(
    deploymentId: number,
    kind: 'blobs' | 'commits',
    contents: Buffer[],
  ): Promise<string[]> {
    if (contents.length === 0) return [];
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'blobs-'));
    try {
      const paths = await Promise.all(
        contents.map(async (content, i) => {
          const p = path.join(scratch, String(i));
          await fs.writeFile(p, content);
          return p;
        }),
      );
      return await this.sessions.request(this.dir(deploymentId), kind, paths.join('\n') + '\n', paths.length);
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * Every entry of a tree (or a commit's tree), recursively, directories included
   * (`ls-tree -r -t`). An object never changes, so its listing is kept (bounded; a tree this
   * process wrote is kept as planned): the next write of a branch starts from the tree the last
   * one made, without a command.
   */
  async listing(deploymentId: number, treeish: string): Promise<TreeEntry[]> {
    assertOid(treeish);
    const key = `${deploymentId}:${treeish}`;
    const known = this.listings.get(key);
    if (known) return known;
    const entries = await this.readListing(deploymentId, treeish);
    this.remember(key, entries);
    return entries;
  }

  private remember(key: string, entries: TreeEntry[]): void {
    const old = this.listings.get(key);
    if (old) {
      this.listings.delete(key);
      this.listedEntries -= old.length;
    }
    this.listings.set(key, entries);
    this.listedEntries += entries.length;
    // A Map iterates in insertion order: the first listings are the least recently stored.
    for (const [oldest, dropped] of this.listings) {
      if (this.listedEntries <= MAX_LISTED_ENTRIES) break;
      this.listings.delete(oldest);
      this.listedEntries -= dropped.length;
    }
  }

  private async readListing(deploymentId: number, treeish: string): Promise<TreeEntry[]> {
    const r = await git(this.dir(deploymentId), ['ls-tree', '-r', '-t', '-z', '--full-tree', treeish]);
    const entries: TreeEntry[] = [];
    for (const entry of r.stdout.toString('utf8').split('\0')) {
      if (!entry) continue;
      // `<mode> SP <type> SP <oid> TAB <path>`
      const tab = entry.indexOf('\t');
      const [mode, type, oid] = entry.slice(0, tab).split(' ');
      entries.push({ mode, type: type as TreeEntry['type'], oid, path: entry.slice(tab + 1) });
    }
    return entries;
  }

  /**
   * A tree: `base` (a tree id, or null for empty) with `changes` applied. Only the directories on a
   * changed path are written, all in one `mktree --batch`; `listing` (the base's, from
   * {@link listing}) saves reading it again. A file where a directory is (or the reverse) is 409
   * `file_exists`, before anything is written.
   */
  async writeTree(
    deploymentId: number,
    base: string | null,
    changes: TreeChanges,
    listing?: TreeEntry[],
  ): Promise<string> {
    if (base && changes.size === 0) return base;
    let plan: ReturnType<typeof planTrees>;
    try {
      plan = planTrees(listing ?? (base ? await this.listing(deploymentId, base) : null), changes);
    } catch (err) {
      if (!(err instanceof TreePathConflict)) throw err;
      throw dataModelError('file_exists', `/${err.path} is a ${err.existing} on this branch`);
    }
    if (plan.root === null) return base ?? EMPTY_TREE;
    if (plan.trees.length === 0) return plan.root;
    const input = plan.trees
      .map((t) => t.entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\0`).join('') + '\0')
      .join('');
    const written = await this.sessions.request(this.dir(deploymentId), 'trees', input, plan.trees.length);
    // git computed each id itself: a difference would mean a parent names a tree that was not written.
    if (written.length !== plan.trees.length || written.some((oid, i) => oid !== plan.trees[i].oid)) {
      throw new GitError(
        ['mktree'],
        null,
        `mktree wrote ${written.join(', ')} where ${plan.trees.map((t) => t.oid).join(', ')} was planned`,
      );
    }
    this.remember(`${deploymentId}:${plan.root}`, plan.listing());
    return plan.root;
  }

  /** A commit of `tree` with `parents`; the author is the person whose request made it. */
  async commit(
    deploymentId: number,
    tree: string,
    parents: string[],
    message: string,
    author: CommitAuthor,
    at = new Date(),
  ): Promise<string> {
    const [id] = await this.hashFiles(deploymentId, 'commits', [
      Buffer.from(commitText(tree, parents, message, author, at)),
    ]);
    return id;
  }

  /**
   * Moves `ref` from `expected` (null: it must not exist) to `next` (null: delete it), atomically,
   * and only if each ref of `unchanged` is still at its commit (null: absent). False when a ref
   * was not where expected: another writer got there first.
   */
  async updateRef(
    deploymentId: number,
    ref: string,
    next: string | null,
    expected: string | null,
    unchanged: Array<{ ref: string; at: string | null }> = [],
  ): Promise<boolean> {
    for (const r of [ref, ...unchanged.map((u) => u.ref)]) assertFullRef(r);
    const change = next
      ? `update ${ref} ${next} ${expected ?? ZERO_OID}`
      : `delete ${ref}${expected ? ` ${expected}` : ''}`;
    const checks = unchanged.map((u) => `verify ${u.ref} ${u.at ?? ZERO_OID}\n`).join('');
    try {
      // One transaction on the repository's kept `update-ref --stdin`: start, prepare and commit
      // each answer a line. A refused change ends that command, with its exit code.
      await this.sessions.request(
        this.dir(deploymentId),
        'refs',
        `start\n${checks}${change}\nprepare\ncommit\n`,
        3,
      );
      return true;
    } catch (err) {
      if (err instanceof GitError && err.code !== null) return false;
      throw err;
    }
  }

  /** Whether `ancestor` is reachable from `commit`. */
  async isAncestor(deploymentId: number, ancestor: string, commit: string): Promise<boolean> {
    assertOid(ancestor);
    assertOid(commit);
    const r = await git(this.dir(deploymentId), ['merge-base', '--is-ancestor', ancestor, commit], {
      okCodes: [1],
    });
    return r.code === 0;
  }

  /**
   * The author emails (lowercased, distinct, sorted) of the commits reachable from `head` and not
   * from `exclude` (`exclude..head`; null: every commit of `head`), merge commits included.
   */
  async authorEmails(deploymentId: number, exclude: string | null, head: string): Promise<string[]> {
    assertOid(head);
    if (exclude) assertOid(exclude);
    const r = await git(this.dir(deploymentId), [
      'log',
      '-z',
      '--format=%ae',
      head,
      ...(exclude ? ['--not', exclude] : []),
    ]);
    const emails = new Set<string>();
    for (const email of r.stdout.toString('utf8').split('\0')) {
      const trimmed = email.trim().toLowerCase();
      if (trimmed) emails.add(trimmed);
    }
    return [...emails].sort();
  }

  /** A three-way merge of two commits without a working tree (`merge-tree --write-tree`). */
  async merge(deploymentId: number, ours: string, theirs: string): Promise<MergeOutcome> {
    assertOid(ours);
    assertOid(theirs);
    const r = await git(
      this.dir(deploymentId),
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs],
      { okCodes: [1] },
    );
    const parts = r.stdout.toString('utf8').split('\0');
    if (r.code === 0) return { clean: true, tree: parts[0].trim() };
    // After the tree id: the conflicted paths, then an empty field before the messages.
    const files: string[] = [];
    for (const part of parts.slice(1)) {
      if (part === '') break;
      files.push(part);
    }
    return { clean: false, files: [...new Set(files)] };
  }

  /** Whether `name` is a branch name by the one rule (`branch-names.ts`). */
  static async isValidBranchName(name: string): Promise<boolean> {
    return (await branchNameProblem(name)) === null;
  }

  /**
   * Pushes `commit` to `branch` of a remote (null: deletes the branch there). Never forced: the
   * remote refuses a commit that does not descend from what it holds (someone pushed there
   * meanwhile), and the caller then changes nothing; `pull` brings the remote's work in first.
   */
  async push(
    deploymentId: number,
    url: string,
    branch: string,
    commit: string | null,
    auth: RemoteAuth | null,
  ): Promise<void> {
    const args = [
      'push',
      '--quiet',
      '--no-verify',
      '--porcelain',
      url,
      `${commit ?? ''}:${branchRef(branch)}`,
    ];
    await git(this.dir(deploymentId), args, { env: authEnv(auth), timeoutMs: 60_000 });
  }

  /**
   * Fetches `branch` of a remote into `refs/remotes/origin/<branch>` and answers its commit, or
   * null when the remote has no such branch.
   */
  async fetch(
    deploymentId: number,
    url: string,
    branch: string,
    auth: RemoteAuth | null,
  ): Promise<string | null> {
    const dir = this.dir(deploymentId);
    const env = authEnv(auth);
    const ref = branchRef(branch);
    const ls = await git(dir, ['ls-remote', '--heads', url, ref], { env, timeoutMs: 60_000 });
    // A pattern also matches by its tail (`refs/heads/x/refs/heads/b`): only the exact ref counts.
    if (
      !text(ls)
        .split('\n')
        .some((line) => line.split('\t')[1] === ref)
    )
      return null;
    const target = `refs/remotes/origin/${branch}`;
    await git(dir, ['fetch', '--quiet', '--no-tags', url, `+${ref}:${target}`], {
      env,
      timeoutMs: 120_000,
    });
    return this.resolve(deploymentId, target);
  }

  /** A content hash of a set of files, the same whatever order they come in. */
  static filesHash(files: Array<{ path: string; oid: string }>): string {
    const h = createHash('sha1');
    for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
      h.update(`${f.oid} ${f.path}\n`);
    return h.digest('hex');
  }
}

/**
 * A commit object's text, as `git commit-tree` writes it: the tree, the parents, the author and
 * the committer (the service) with the time in UTC, a blank line and the message (ending with a
 * newline; git refuses a NUL in it). Names and emails are cleaned as git cleans them (its "crud"
 * at either end and `<`, `>` and newlines inside removed), so the same commit gets the same id.
 */
export function commitText(
  tree: string,
  parents: string[],
  message: string,
  author: CommitAuthor,
  at: Date,
): string {
  assertOid(tree);
  parents.forEach(assertOid);
  const when = `${Math.floor(at.getTime() / 1000)} +0000`;
  const ident = (name: string, email: string) =>
    `${cleanIdent(name) || cleanIdent(email) || COMMITTER.name} <${cleanIdent(email)}> ${when}`;
  const body = message.replace(/\0/g, '');
  return [
    `tree ${tree}`,
    ...parents.map((p) => `parent ${p}`),
    `author ${ident(author.name || author.email, author.email)}`,
    `committer ${ident(COMMITTER.name, COMMITTER.email)}`,
    '',
    body.endsWith('\n') ? body : `${body}\n`,
  ].join('\n');
}

/** git's `strbuf_addstr_without_crud`: no crud at either end, no `<`, `>` or newline inside. */
function cleanIdent(text: string): string {
  // eslint-disable-next-line no-control-regex
  const crud = /^[\u0000-\u0020,:;<>"\\']+|[\u0000-\u0020,:;<>"\\']+$/g;
  return text.replace(crud, '').replace(/[<>\n]/g, '');
}

/** The most tree entries the listings kept in memory hold together (about 100 bytes each). */
const MAX_LISTED_ENTRIES = 200_000;

/** Refs are named in full (`refs/heads/<b>`), never left for git to complete. */
function assertFullRef(ref: string): void {
  if (!ref.startsWith('refs/')) throw new Error(`not a full ref name: ${ref}`);
}

/** rev-parse reads only object ids this service computed, never a name a user typed. */
function assertOid(oid: string): void {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid)) throw new Error(`not an object id: ${oid.slice(0, 80)}`);
}

/**
 * Credentials as configuration passed in the environment (`GIT_CONFIG_COUNT`), not on the command
 * line, where any local user could read them in the process list.
 */
function authEnv(auth: RemoteAuth | null): Record<string, string> {
  if (!auth) return {};
  const basic = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}
