// The whole suite: the static checks (type-check of sources and tests, lint, OpenAPI lint) and the
// unit, service and end-to-end tests against the PostgreSQL and Redis of this machine. `npm test`
// runs it after building. The static checks are independent and mostly single-threaded, so they
// run side by side, and beside the tests; each one's output is printed whole, in order, at the end.
import { spawn } from 'node:child_process';

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

// The checks run beside the tests, on the part of the CPU the tests leave idle, instead of holding
// the tests back for their 40-odd seconds. Five workers on any machine: much of a test's time is
// waiting (processes starting, compile and lease timeouts, sandboxed children), so on 2 cores the
// suite took 427 s with 3 workers, 362 s with 4 and about 312 s with 5 (2026-11-27, issue 26);
// JEST_WORKERS overrides it. The checks' output is printed before the tests' summary ends; any
// failure fails the run.
const tests = `npx jest --ci --maxWorkers=${process.env.JEST_WORKERS ?? 5} ${process.argv.slice(2).join(' ')}`;
const checking = Promise.all(checks.map(([, cmd]) => run(cmd)));
process.stderr.write(`\n== tests: ${tests}\n`);
const testing = new Promise((resolve) => {
  const child = spawn(tests, { shell: true, stdio: 'inherit' });
  child.on('close', (code) => resolve(code ?? 1));
});
const [results, testCode] = await Promise.all([checking, testing]);
let failed = testCode !== 0;
for (const [i, [name, cmd]] of checks.entries()) {
  const { code, output } = results[i];
  process.stderr.write(`\n== ${name}: ${cmd}${code === 0 ? '' : ` (failed, exit ${code})`}\n${output}`);
  failed ||= code !== 0;
}
if (testCode !== 0) process.stderr.write(`\n== tests failed (exit ${testCode})\n`);
process.exit(failed ? 1 : 0);
