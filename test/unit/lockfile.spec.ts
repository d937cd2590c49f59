import fs from 'node:fs';

/**
 * `npm ci` installs exactly the committed lockfile, and refuses one that does not describe the
 * whole tree: every optional package (the per-platform binaries of @swc/core, msgpackr-extract,
 * the resolver bindings...) must have its entry, whichever platform wrote the lockfile. A
 * lockfile written with them missing makes `npm ci` fail on a fresh clone, and `npm install`
 * rewrites the tracked file. Scripts and the Dockerfile run `npm ci` only.
 */
interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
};
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as Required<
  Pick<LockEntry, 'dependencies' | 'devDependencies'>
>;

/** Where Node's resolution finds `name` from the package at `from`: the nearest node_modules. */
function resolves(from: string, name: string): boolean {
  let dir = from;
  for (;;) {
    if (lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`]) return true;
    if (!dir) return false;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  it('is a version 3 lockfile whose root is package.json', () => {
    expect(lock.lockfileVersion).toBe(3);
    const root = lock.packages[''];
    expect(root.dependencies).toEqual(pkg.dependencies);
    expect(root.devDependencies).toEqual(pkg.devDependencies);
  });

  it("holds every dependency's entry, optional ones of every platform included", () => {
    const missing: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
        if (!resolves(where, name)) missing.push(`${where || '(root)'} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('is installed by npm ci alone, with no npm install fallback anywhere', () => {
    const prepare = fs.readFileSync('scripts/prepare.mjs', 'utf8');
    const dockerfile = fs.readFileSync('docker/Dockerfile', 'utf8');
    expect(prepare).toContain("run('npm ci --no-audit --no-fund')");
    for (const text of [prepare, dockerfile, fs.readFileSync('.ci/run', 'utf8')]) {
      const commands = text.split('\n').filter((line) => !/^\s*(#|\/\/|\*)/.test(line));
      expect(commands.filter((line) => /npm (install|i)\b/.test(line))).toEqual([]);
    }
    expect(dockerfile.match(/^RUN .*npm ci\b/gm)).toHaveLength(2);
  });
});
