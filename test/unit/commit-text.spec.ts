import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppConfig } from '../../src/core/config/app-config.js';
import { GitStore } from '../../src/modules/data-model/git/git-store.js';

/**
 * GitStore.commit writes commit objects through a kept `hash-object -t commit` (no process per
 * commit); these tests hold its text to what `git commit-tree` writes from the same inputs.
 */
describe('commit objects as commit-tree writes them', () => {
  let root: string;
  let store: GitStore;
  let dir: string;
  const at = new Date('2026-11-27T12:34:56Z');
  const seconds = String(Math.floor(at.getTime() / 1000));
  const gitIn = (args: string[], input: string, env: Record<string, string> = {}) =>
    execFileSync('git', [`--git-dir=${dir}`, ...args], {
      input,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: '/nonexistent',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_COMMITTER_NAME: 'Platform API',
        GIT_COMMITTER_EMAIL: 'platform-api@localhost',
        GIT_AUTHOR_DATE: `${seconds} +0000`,
        GIT_COMMITTER_DATE: `${seconds} +0000`,
        ...env,
      },
    }).trim();

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'commit-text-'));
    store = new GitStore(new AppConfig('api', { NODE_ENV: 'test', REPOS_DIR: root }), {
      installationId: () => Promise.resolve('test-installation'),
    });
    dir = await store.ensure(1);
  });
  afterAll(() => {
    store.onApplicationShutdown();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['a plain email as name and address', 'ada@example.test', 'ada@example.test', 'Update the data model'],
    ['a name with spaces around it and crud at its ends', '  "Ada, Lovelace";  ', 'ada@example.test', 'x\n'],
    ['angle brackets and newlines inside', 'Ada <x>\nL', '<ada@example.test>', 'two\nlines\n\nand more'],
    ['unicode', 'Åsa Øberg', 'åsa@example.test', 'Merge dev-7-0123abcd into master ✓'],
  ])('gives the id commit-tree gives: %s', async (_, name, email, message) => {
    const tree = gitIn(['mktree'], '');
    const parent = gitIn(['commit-tree', tree], 'root\n', { GIT_AUTHOR_NAME: 'r', GIT_AUTHOR_EMAIL: 'r@x' });
    const expected = gitIn(
      ['commit-tree', tree, '-p', parent],
      message.endsWith('\n') ? message : `${message}\n`,
      {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
      },
    );
    expect(await store.commit(1, tree, [parent], message, { name, email }, at)).toBe(expected);
  });

  it('writes a commit git reads back, with two parents', async () => {
    const tree = gitIn(['mktree'], '');
    const a = await store.commit(1, tree, [], 'a', { name: 'a@x.test', email: 'a@x.test' }, at);
    const b = await store.commit(1, tree, [], 'b', { name: 'b@x.test', email: 'b@x.test' }, at);
    const merge = await store.commit(1, tree, [a, b], 'merge', { name: 'm@x.test', email: 'm@x.test' }, at);
    expect(gitIn(['rev-list', '--parents', '-n', '1', merge], '')).toBe(`${merge} ${a} ${b}`);
    expect(gitIn(['fsck', '--strict', '--no-dangling'], '')).toBe('');
  });
});
