import { createHash } from 'node:crypto';

/** One entry of a tree listing (`ls-tree -r -t`): a file, a directory or a submodule. */
export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  oid: string;
  /** Repository-relative path. */
  path: string;
}

/** A change to a tree: a path set to a blob (`oid`) or removed (`null`). */
export type TreeChanges = Map<string, string | null>;

/** A tree to write, in `git mktree` input form, with the id git will give it. */
export interface PlannedTree {
  oid: string;
  entries: Array<{ mode: string; type: string; oid: string; name: string }>;
}

/** A change that would put a file where a directory is, or the reverse. */
export class TreePathConflict extends Error {
  constructor(
    readonly path: string,
    readonly existing: 'file' | 'directory',
  ) {
    super(`${path} is a ${existing} on this branch`);
  }
}

/** The id of the tree with no entries, which git knows without storing it. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

interface Node {
  mode: string;
  type: TreeEntry['type'];
  oid: string;
}

/**
 * The trees to write for `base` (its full listing, trees included) with `changes` applied, children
 * before parents, and the id of the new root: only the directories on a changed path are written.
 * Ids are computed here as git computes them (SHA-1 of `tree <size>\0` and the sorted entries), so
 * every tree can go to one `git mktree --batch`, which checks each against the objects it writes.
 * `root` is null when nothing changed (removing a path that is not there).
 */
export function planTrees(
  base: TreeEntry[] | null,
  changes: TreeChanges,
): { trees: PlannedTree[]; root: string | null; listing: () => TreeEntry[] } {
  const dirs = new Map<string, Map<string, Node>>([['', new Map()]]);
  for (const entry of base ?? []) {
    const { parent, name } = split(entry.path);
    dir(dirs, parent).set(name, { mode: entry.mode, type: entry.type, oid: entry.oid });
    if (entry.type === 'tree') dir(dirs, entry.path);
  }
  const dirty = new Set<string>();
  const touch = (path: string): void => {
    for (let p = path; ; p = split(p).parent) {
      dirty.add(p);
      if (p === '') break;
    }
  };
  // Removals first: a change set may replace a file by a directory of the same name.
  const ordered = [...changes].sort(([, a], [, b]) => (a === null ? 0 : 1) - (b === null ? 0 : 1));
  for (const [path, oid] of ordered) {
    const { parent, name } = split(path);
    if (oid === null) {
      const existing = dirs.get(parent)?.get(name);
      // Removing a path that is not a file changes nothing, as in git's index.
      if (existing && existing.type !== 'tree') {
        dirs.get(parent)!.delete(name);
        touch(parent);
      }
      continue;
    }
    // Every directory on the way must be one (or be new), and the file must not be a directory.
    let at = '';
    for (const segment of parent === '' ? [] : parent.split('/')) {
      const node = dirs.get(at)!.get(segment);
      const next = at === '' ? segment : `${at}/${segment}`;
      if (node && node.type !== 'tree') throw new TreePathConflict(next, 'file');
      dir(dirs, next);
      at = next;
    }
    let existing = dirs.get(parent)!.get(name);
    if (existing?.type === 'tree') {
      // A directory whose every file this change removes is gone, as in git's index: the file
      // takes its place.
      if (!holdsFiles(dirs, path)) {
        dropDirectory(dirs, path);
        existing = undefined;
      } else throw new TreePathConflict(path, 'directory');
    }
    // A file keeps its mode (executable, link); a new one is a regular file.
    dirs
      .get(parent)!
      .set(name, { mode: existing?.type === 'blob' ? existing.mode : '100644', type: 'blob', oid });
    touch(parent);
  }

  const trees: PlannedTree[] = [];
  // The new tree's full listing, as `ls-tree -r -t` would give it, once the ids are known.
  const listing = (): TreeEntry[] => {
    const out: TreeEntry[] = [];
    const walk = (path: string): void => {
      for (const [name, node] of dirs.get(path) ?? []) {
        const full = path === '' ? name : `${path}/${name}`;
        out.push({ mode: node.mode, type: node.type, oid: node.oid, path: full });
        if (node.type === 'tree') walk(full);
      }
    };
    walk('');
    return out;
  };
  if (dirty.size === 0) return { trees, root: null, listing };
  // Deepest first: a directory's id is known before its parent's is computed.
  const order = [...dirty].sort((a, b) => depth(b) - depth(a));
  let root = EMPTY_TREE;
  for (const path of order) {
    // A directory a file replaced (dropDirectory) is no longer there to write.
    const held = dirs.get(path);
    if (!held) continue;
    const entries = [...held].map(([name, node]) => ({ ...node, name }));
    const { parent, name } = split(path);
    if (entries.length === 0) {
      // git holds no empty directories: it goes from its parent (an empty root is git's empty
      // tree, which every repository knows without storing it).
      if (path !== '') dirs.get(parent)?.delete(name);
      continue;
    }
    const oid = treeId(entries);
    trees.push({ oid, entries });
    if (path === '') root = oid;
    else dirs.get(parent)!.set(name, { mode: '040000', type: 'tree', oid });
  }
  return { trees, root, listing };
}

/** Whether the directory at `path` holds a file, at any depth. */
function holdsFiles(dirs: Map<string, Map<string, Node>>, path: string): boolean {
  for (const [name, node] of dirs.get(path) ?? []) {
    if (node.type !== 'tree' || holdsFiles(dirs, path === '' ? name : `${path}/${name}`)) return true;
  }
  return false;
}

/** Forgets the directory at `path` and everything under it. */
function dropDirectory(dirs: Map<string, Map<string, Node>>, path: string): void {
  for (const key of [...dirs.keys()]) if (key === path || key.startsWith(`${path}/`)) dirs.delete(key);
  const { parent, name } = split(path);
  dirs.get(parent)?.delete(name);
}

function dir(dirs: Map<string, Map<string, Node>>, path: string): Map<string, Node> {
  let found = dirs.get(path);
  if (!found) {
    found = new Map();
    dirs.set(path, found);
    const { parent, name } = split(path);
    if (path !== '' && !dir(dirs, parent).has(name)) {
      // A placeholder until its id is computed; a new directory is always on a changed path.
      dir(dirs, parent).set(name, { mode: '040000', type: 'tree', oid: EMPTY_TREE });
    }
  }
  return found;
}

function split(path: string): { parent: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash < 0
    ? { parent: '', name: path }
    : { parent: path.slice(0, slash), name: path.slice(slash + 1) };
}

const depth = (path: string): number => (path === '' ? 0 : path.split('/').length);

/**
 * A tree's object id: entries sorted as git sorts them (by name bytes, a directory as if its name
 * ended in `/`), each `<mode without leading zeros> <name>\0<binary id>`.
 */
export function treeId(entries: Array<{ mode: string; type: string; oid: string; name: string }>): string {
  const key = (e: { type: string; name: string }) => Buffer.from(e.type === 'tree' ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  const body = Buffer.concat(
    sorted.map((e) =>
      Buffer.concat([Buffer.from(`${e.mode.replace(/^0+/, '')} ${e.name}\0`), Buffer.from(e.oid, 'hex')]),
    ),
  );
  return createHash('sha1').update(`tree ${body.length}\0`).update(body).digest('hex');
}
