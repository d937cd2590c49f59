// The whole suite: the static checks (type-check of sources and tests, lint, OpenAPI lint), then
// unit and end-to-end tests against the PostgreSQL and Redis of this machine. `npm test` runs it
// after building. The static checks are independent and mostly single-threaded, so they run side
// by side; each one's output is printed whole, in order, once all have finished.
import { spawn, execSync } from 'node:child_process';

const checks = [
  ['type-check', 'npx tsc -p tsconfig.json --noEmit'],
  ['lint', 'npm run --silent lint'],
  // The committed OpenAPI document (a test keeps it equal to the generated one), against redocly.yaml.
  ['openapi lint', 'npm run --silent lint:openapi'],
];

function run(cmd) {
  return new Promise((resolve) => {
    const child = spawn(cmd, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const results = await Promise.all(checks.map(([, cmd]) => run(cmd)));
let failed = false;
for (const [i, [name, cmd]] of checks.entries()) {
  const { code, output } = results[i];
  process.stderr.write(`\n== ${name}: ${cmd}${code === 0 ? '' : ` (failed, exit ${code})`}\n${output}`);
  failed ||= code !== 0;
}
if (failed) process.exit(1);

const tests = `npx jest --ci --maxWorkers=${process.env.JEST_WORKERS ?? 3} ${process.argv.slice(2).join(' ')}`;
process.stderr.write(`\n== tests: ${tests}\n`);
try {
  execSync(tests, { stdio: 'inherit' });
} catch (err) {
  process.exit(err.status ?? 1);
}
