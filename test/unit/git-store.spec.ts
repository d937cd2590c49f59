import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppConfig } from '../../src/core/config/app-config.js';
import { branchRef, GitStore } from '../../src/modules/data-model/git/git-store.js';
import { normalisePath } from '../../src/modules/data-model/model-paths.js';

/** The git plumbing the data model is built on, against real repositories in a temporary directory. */
describe('GitStore (real git)', () => {
  let root: string;
  let git: GitStore;
  const author = { name: 'Ada', email: 'ada@example.test' };

  /** A commit on `branch` holding `files`, on top of `parent`. */
  const commitFiles = async (id: number, files: Record<string, string>, parent: string | null) => {
    const oids = await git.writeBlobs(
      id,
      Object.values(files).map((c) => Buffer.from(c)),
    );
    const base = parent ? await git.treeOf(id, parent) : null;
    const tree = await git.writeTree(id, base, new Map(Object.keys(files).map((p, i) => [p, oids[i]])));
    return git.commit(id, tree, parent ? [parent] : [], 'change', author);
  };

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-store-'));
    git = new GitStore(new AppConfig('api', { NODE_ENV: 'test', REPOS_DIR: root }), {
      installationId: () => Promise.resolve('test-installation'),
    });
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates a repository once when asked in parallel', async () => {
    const dirs = await Promise.all(Array.from({ length: 5 }, () => git.ensure(1)));
    expect(new Set(dirs)).toEqual(new Set([path.join(root, '1.git')]));
    expect(fs.readdirSync(root).filter((f) => f.startsWith('1.git'))).toEqual(['1.git']);
  });

  it('writes blobs, trees and commits that git itself reads back', async () => {
    const c = await commitFiles(1, { 'model/a.yml': 'a: 1\n', 'b.txt': 'b' }, null);
    expect(await git.updateRef(1, branchRef('main'), c, null)).toBe(true);
    const files = await git.listFiles(1, c);
    expect(files.map((f) => f.path).sort()).toEqual(['b.txt', 'model/a.yml']);
    const blobs = await git.readBlobs(
      1,
      files.map((f) => f.oid),
    );
    expect(files.map((f) => blobs.get(f.oid)!.toString()).sort()).toEqual(['a: 1\n', 'b']);
    expect(
      execFileSync('git', [`--git-dir=${git.dir(1)}`, 'show', 'main:model/a.yml'], { encoding: 'utf8' }),
    ).toBe('a: 1\n');
  });

  it('moves a ref only from the commit the writer read: one of racing writers wins', async () => {
    const head = (await git.resolve(1, branchRef('main')))!;
    const candidates = await Promise.all(
      [1, 2, 3, 4].map((n) => commitFiles(1, { [`f${n}`]: `${n}` }, head)),
    );
    const won = await Promise.all(candidates.map((c) => git.updateRef(1, branchRef('main'), c, head)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await git.resolve(1, branchRef('main'))).toBe(candidates[won.indexOf(true)]);
    // Creating a ref that exists fails the same way.
    expect(await git.updateRef(1, branchRef('main'), head, null)).toBe(false);
  });

  it('merges without a working tree and names the files that conflict', async () => {
    const base = (await git.resolve(1, branchRef('main')))!;
    const ours = await commitFiles(1, { 'model/a.yml': 'a: ours\n', 'x.yml': 'x' }, base);
    const theirs = await commitFiles(1, { 'model/a.yml': 'a: theirs\n' }, base);
    const clean = await commitFiles(1, { 'y.yml': 'y' }, base);
    expect(await git.merge(1, ours, theirs)).toEqual({ clean: false, files: ['model/a.yml'] });
    const merged = await git.merge(1, ours, clean);
    expect(merged.clean).toBe(true);
    const tree = (merged as { tree: string }).tree;
    const paths = (await git.listFiles(1, tree)).map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['x.yml', 'y.yml', 'model/a.yml']));
  });

  it('accepts branch names as git does', async () => {
    for (const ok of ['main', 'feature/orders', 'dbt-sync/main-20260817120000-a1b2c3d4'])
      expect(await GitStore.isValidBranchName(ok)).toBe(true);
    for (const bad of ['-rf', 'a..b', 'x~1', 'has space', 'end.lock', 'a/', '', '@', 'x:y', 'x\\y'])
      expect({ bad, ok: await GitStore.isValidBranchName(bad) }).toEqual({ bad, ok: false });
  });

  it('pushes to and fetches from a bare repository given as a file:// URL, and deletes a remote branch', async () => {
    const remote = path.join(root, 'remote.git');
    execFileSync('git', ['init', '--bare', '--quiet', remote]);
    const head = (await git.resolve(1, branchRef('main')))!;
    await git.push(1, `file://${remote}`, 'main', head, null);
    expect(
      execFileSync('git', [`--git-dir=${remote}`, 'rev-parse', 'main'], { encoding: 'utf8' }).trim(),
    ).toBe(head);
    // A push that does not descend from what the remote holds is refused.
    const parent = (await git.parentOf(1, head))!;
    const diverged = await commitFiles(1, { z: 'z' }, parent);
    await expect(git.push(1, `file://${remote}`, 'main', diverged, null)).rejects.toThrow(
      /rejected|non-fast-forward|fetch first/,
    );
    expect(await git.fetch(1, `file://${remote}`, 'main', null)).toBe(head);
    expect(await git.fetch(1, `file://${remote}`, 'nope', null)).toBeNull();
    await git.push(1, `file://${remote}`, 'main', null, null);
    expect(execFileSync('git', [`--git-dir=${remote}`, 'for-each-ref'], { encoding: 'utf8' })).toBe('');
  });

  it('normalises API paths and refuses the ones that escape', () => {
    expect(normalisePath('/model/cubes/a.yml')).toBe('model/cubes/a.yml');
    expect(normalisePath('model/cubes/a.yml')).toBe('model/cubes/a.yml');
    for (const bad of [
      '',
      '/',
      '../x',
      'a/../../x',
      'a/./b',
      '.git/config',
      'A/.Git/x',
      'a//b',
      'a\\b',
      'a\u0000b',
    ])
      expect(() => normalisePath(bad)).toThrow();
  });
});
