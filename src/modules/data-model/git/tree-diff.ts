import { git } from '../../../core/git/git.js';
import { EMPTY_TREE } from './tree-plan.js';

/** A file that differs between two trees, named relative to the project root. */
export interface FileChange {
  path: string;
  change: 'added' | 'deleted' | 'modified' | 'renamed';
  /** For `renamed`: where it was. */
  previousPath?: string;
}

/**
 * The arguments common to both diffs: two commits (null: an empty tree), the project's files only
 * and named relative to it (`--relative`), renames found (`-M`), and nothing configurable run (no
 * external diff, no text conversion). Only object ids the service read reach git here.
 */
function diffArgs(base: string | null, head: string | null, prefix: string): string[] {
  for (const oid of [base, head]) {
    if (oid !== null && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid))
      throw new Error(`not an object id: ${oid}`);
  }
  return [
    '-r',
    '-M',
    '--no-ext-diff',
    '--no-textconv',
    ...(prefix ? [`--relative=${prefix}`] : []),
    base ?? EMPTY_TREE,
    head ?? EMPTY_TREE,
  ];
}

/** The files that differ between two commits of a repository (`git diff-tree --name-status`), by path. */
export async function changedFiles(
  gitDir: string,
  base: string | null,
  head: string | null,
  prefix: string,
): Promise<FileChange[]> {
  const r = await git(gitDir, ['diff-tree', '--name-status', '-z', ...diffArgs(base, head, prefix)]);
  const fields = r.stdout.toString('utf8').split('\0');
  const out: FileChange[] = [];
  for (let i = 0; i < fields.length - 1;) {
    const status = fields[i++];
    if (status.startsWith('R')) {
      out.push({ path: fields[i + 1], change: 'renamed', previousPath: fields[i] });
      i += 2;
      continue;
    }
    const path = fields[i++];
    const change = status === 'A' ? 'added' : status === 'D' ? 'deleted' : 'modified';
    out.push({ path, change });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The unified diff of two commits (`git diff-tree -p`), as git prints it. */
export async function unifiedDiff(
  gitDir: string,
  base: string | null,
  head: string | null,
  prefix: string,
): Promise<Buffer> {
  const r = await git(gitDir, ['diff-tree', '-p', '--no-color', ...diffArgs(base, head, prefix)]);
  return r.stdout;
}
