// The whole suite: type-check (sources and tests), lint, OpenAPI lint, then unit and end-to-end tests against
// the PostgreSQL and Redis of this machine. `npm test` runs it after building.
import { execSync } from 'node:child_process';

const steps = [
  ['type-check', 'npx tsc -p tsconfig.json --noEmit'],
  ['lint', 'npm run --silent lint'],
  // The committed OpenAPI document (a test keeps it equal to the generated one), against redocly.yaml.
  ['openapi lint', 'npm run --silent lint:openapi'],
  ['tests', `npx jest --ci --maxWorkers=${process.env.JEST_WORKERS ?? 3} ${process.argv.slice(2).join(' ')}`],
];
for (const [name, cmd] of steps) {
  process.stderr.write(`\n== ${name}: ${cmd}\n`);
  execSync(cmd, { stdio: 'inherit' });
}
