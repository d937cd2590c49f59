import fs from 'node:fs';
import path from 'node:path';
import { branchNameProblem, isDevBranchName } from '../../src/modules/data-model/git/branch-names.js';

/** Every TypeScript file under `dir`, with its text. */
function sources(dir: string): Array<[string, string]> {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') || f.endsWith('.mts'))
    .map((f) => [path.join(dir, f).split(path.sep).join('/'), fs.readFileSync(path.join(dir, f), 'utf8')]);
}

describe('refs move in one place', () => {
  it('calls GitStore.updateRef only from ModelRefs', () => {
    const callers = sources('src')
      .filter(([, text]) => /\.updateRef\s*\(/.test(text))
      .map(([file]) => file);
    expect(callers).toEqual(['src/modules/data-model/model-refs.ts']);
  });

  it('runs update-ref only inside GitStore.updateRef', () => {
    // The command is the repository's kept `update-ref --stdin` (git-sessions.ts)...
    const commands = sources('src')
      .filter(([, text]) => /['"]update-ref['"]/.test(text))
      .map(([file]) => file);
    expect(commands).toEqual(['src/modules/data-model/git/git-sessions.ts']);
    // ...and GitStore.updateRef is the one place that sends it a request.
    const store = fs.readFileSync('src/modules/data-model/git/git-store.ts', 'utf8');
    const requests = [...store.matchAll(/sessions\.request\(\s*this\.dir\(deploymentId\),\s*'refs'/g)];
    expect(requests).toHaveLength(1);
    const updateRef = store.slice(
      store.indexOf('  async updateRef('),
      store.indexOf('\n  }\n', store.indexOf('  async updateRef(')),
    );
    expect(updateRef).toMatch(/sessions\.request\(\s*this\.dir\(deploymentId\),\s*'refs'/);
  });
});

describe('branch names', () => {
  it('accepts short names git accepts, printable Unicode included', async () => {
    for (const ok of [
      'main',
      'feature/orders',
      'dbt-sync/main-20260817120000-a1b2c3d4',
      'feature/café',
      'dev-7-abcdef12',
    ])
      expect({ ok, problem: await branchNameProblem(ok) }).toEqual({ ok, problem: null });
  });

  it('refuses full refs, reflog syntax, HEAD, reserved forms and unprintable characters', async () => {
    const bad = [
      'refs/heads/main',
      'REFS/pending/x',
      'master@{0}',
      '@{-1}',
      'HEAD',
      'head',
      '@',
      'DEV-7-abcdef12',
      'dev-7-ABCDEF12',
      'a\u202Eb',
      'a\u200Bb',
      'a\u0085b',
      'a\u2028b',
      'a\uE000b',
      'a\u0378b',
      'a\u00A0b',
      '-x',
      'a..b',
      '',
      'x'.repeat(256),
    ];
    for (const name of bad)
      expect({ name, refused: (await branchNameProblem(name)) !== null }).toEqual({ name, refused: true });
  });

  it('reserves the dev-branch form for dev mode: refused as a new name, accepted as a lookup', async () => {
    expect(await branchNameProblem('dev-7-abcdef12')).toBeNull();
    expect(await branchNameProblem('dev-7-abcdef12', { isNew: true })).toMatch(/personal dev branch/);
    expect(isDevBranchName('dev-7-abcdef12')).toBe(true);
    expect(isDevBranchName('DEV-7-abcdef12')).toBe(false);
  });

  it('answers a remembered name as git did', async () => {
    expect(await branchNameProblem('remembered/name')).toBeNull();
    expect(await branchNameProblem('remembered/name')).toBeNull();
    expect(await branchNameProblem('remembered..name')).toMatch(/not a valid git branch name/);
  });
});
