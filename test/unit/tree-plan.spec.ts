import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { AppConfig } from '../../src/core/config/app-config.js';
import { GitStore } from '../../src/modules/data-model/git/git-store.js';
import { planTrees, type TreeChanges } from '../../src/modules/data-model/git/tree-plan.js';

/**
 * GitStore.writeTree plans the new trees itself (tree-plan.ts) and writes them with one
 * `mktree --batch`; these tests hold it to the trees git's own index builds from the same changes.
 */
describe('tree plans against git’s index', () => {
  let root: string;
  let store: GitStore;
  let dir: string;
  const gitIn = (args: string[], input?: string, env: Record<string, string> = {}) =>
    execFileSync('git', [`--git-dir=${dir}`, ...args], {
      input,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    }).trim();
  /** The tree git's index makes of `base` with `changes` (what writeTree did before). */
  const byIndex = (base: string | null, changes: TreeChanges) => {
    const env = { GIT_INDEX_FILE: path.join(root, `index-${Math.random()}`) };
    gitIn(base ? ['read-tree', base] : ['read-tree', '--empty'], undefined, env);
    const lines = [...changes].map(([p, oid]) => (oid ? `100644 ${oid}\t${p}` : `0 ${'0'.repeat(40)}\t${p}`));
    if (lines.length > 0) gitIn(['update-index', '-z', '--index-info'], lines.join('\0') + '\0', env);
    const tree = gitIn(['write-tree'], undefined, env);
    fs.rmSync(env.GIT_INDEX_FILE, { force: true });
    return tree;
  };

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tree-plan-'));
    store = new GitStore(new AppConfig('api', { NODE_ENV: 'test', REPOS_DIR: root }), {
      installationId: () => Promise.resolve('test-installation'),
    });
    dir = await store.ensure(1);
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('computes the ids git gives the same trees', () => {
    const blob = gitIn(['hash-object', '-w', '--stdin'], 'x\n');
    // Names whose order differs between files and directories (`a.b` sorts before `a/` as a tree).
    const changes: TreeChanges = new Map([
      ['a.b', blob],
      ['a/b', blob],
      ['a-c/d/e.yml', blob],
      ['z', blob],
    ]);
    const { root: planned } = planTrees(null, changes);
    expect(planned).toBe(byIndex(null, changes));
  });

  it('writes the same tree as git’s index for any mix of additions and removals', async () => {
    const blobs = ['a', 'b', 'c'].map((c) => gitIn(['hash-object', '-w', '--stdin'], c));
    const segment = fc.constantFrom('model', 'cubes', 'views', 'a', 'a.b', 'b-c', 'x.yml', 'y.yaml');
    const filePath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(filePath, fc.nat(2)), { selector: ([p]) => p, maxLength: 12 }),
        fc.uniqueArray(fc.tuple(filePath, fc.option(fc.nat(2))), { selector: ([p]) => p, maxLength: 8 }),
        async (initial, edits) => {
          // Only paths git's index accepts as a tree: no file that is also a directory.
          const consistent = (paths: string[]) =>
            !paths.some((p) => paths.some((q) => q.startsWith(`${p}/`)));
          const start = initial;
          fc.pre(consistent(start.map(([p]) => p)));
          const base = byIndex(null, new Map(start.map(([p, b]) => [p, blobs[b]])));
          const present = new Set(start.map(([p]) => p));
          const changes: TreeChanges = new Map(
            edits.map(([p, b]) => [p, b === null ? null : blobs[b]] as [string, string | null]),
          );
          const after = [...present].filter((p) => changes.get(p) !== null);
          for (const [p, oid] of changes) if (oid !== null && !present.has(p)) after.push(p);
          if (!consistent(after)) {
            await expect(store.writeTree(1, base, changes)).rejects.toMatchObject({ code: 'file_exists' });
            return;
          }
          const tree = await store.writeTree(1, base, changes);
          expect(tree).toBe(byIndex(base, changes));
          // The listing kept for the new tree (next writes start from it) is git's own.
          const kept = await store.listing(1, tree);
          const actual = gitIn(['ls-tree', '-r', '-t', '-z', tree])
            .split('\0')
            .filter(Boolean)
            .map((line) => {
              const [meta, p] = line.split('\t');
              const [mode, type, oid] = meta.split(' ');
              return { mode, type, oid, path: p };
            });
          const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
          expect([...kept].sort(byPath)).toEqual(actual.sort(byPath));
        },
      ),
      {
        numRuns: Number(process.env.TREE_PLAN_RUNS ?? 60),
        // Found by a CI run: a directory whose one file the change removes, replaced by a file.
        examples: [
          [
            [['x.yml/x.yml', 0]],
            [
              ['x.yml/x.yml', null],
              ['x.yml', 0],
            ],
          ],
        ],
      },
    );
    // 60 runs of git processes: a loaded 2-core machine (CI runs two Node lines) needs more than
    // the unit tier's default; the runs, not the clock, bound the work.
  }, 180_000);

  it('refuses a file where a directory is, and a directory where a file is, writing nothing', async () => {
    const blob = gitIn(['hash-object', '-w', '--stdin'], 'y');
    const base = byIndex(null, new Map([['model/cubes/a.yml', blob]]));
    await expect(store.writeTree(1, base, new Map([['model', blob]]))).rejects.toMatchObject({
      code: 'file_exists',
    });
    await expect(store.writeTree(1, base, new Map([['model/cubes/a.yml/b', blob]]))).rejects.toMatchObject({
      code: 'file_exists',
    });
  });

  it('drops directories left empty, down to git’s empty tree', async () => {
    const blob = gitIn(['hash-object', '-w', '--stdin'], 'z');
    const base = byIndex(null, new Map([['model/cubes/a.yml', blob]]));
    expect(await store.writeTree(1, base, new Map([['model/cubes/a.yml', null]]))).toBe(
      '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
    );
  });
});
