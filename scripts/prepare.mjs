// Makes a fresh clone runnable: installs dependencies when missing or out of date, and builds
// when the sources changed since the last build. `npm start` and `npm test` call it first.
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');
const log = (msg) => quiet || process.stderr.write(`[prepare] ${msg}\n`);
const run = (cmd) => execSync(cmd, { cwd: root, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });

function mtime(p) {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

function newest(dir) {
  let latest = 0;
  if (!fs.existsSync(dir)) return 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : mtime(p));
  }
  return latest;
}

const installed = path.join(root, 'node_modules', '.package-lock.json');
if (mtime(installed) < mtime(path.join(root, 'package-lock.json'))) {
  log('installing dependencies');
  // Exactly the committed lockfile (it holds every platform's optional packages); never
  // `npm install`, which would rewrite it.
  run('npm ci --no-audit --no-fund');
}

const stamp = path.join(root, 'dist', '.build-stamp');
const sources = Math.max(
  newest(path.join(root, 'src')),
  newest(path.join(root, 'migrations')),
  mtime(path.join(root, 'tsconfig.json')),
  mtime(path.join(root, 'tsconfig.build.json')),
  mtime(path.join(root, 'package-lock.json')),
);
if (!args.has('--no-build') && mtime(stamp) < sources) {
  log('building');
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  run('npx tsc -p tsconfig.build.json');
  fs.writeFileSync(stamp, new Date().toISOString());
}
