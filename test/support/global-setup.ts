import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

// Jest loads this file outside its module resolver, so it imports nothing of ours.
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// TEST_DIST_DIR: a build in another directory (`npx tsc -p tsconfig.build.json --outDir .build/x`), whose
// migrations then make the template.
const CLI = path.resolve(process.cwd(), process.env.TEST_DIST_DIR ?? 'dist', 'src/cli.js');

/**
 * Migrates a template database once, with the real `migrate` command; every test file copies
 * it into a database of its own. `npm test` builds first, so `dist/` is current.
 */
export default async function globalSetup(): Promise<void> {
  // The service and both e2e projects name this file; Jest runs each project's setup in this one process.
  if (process.env.TEST_TEMPLATE_DATABASE) return;
  // Jest shares the globals of its global set-up with its global teardown (its documented way).
  const before = checkoutRepos();
  (globalThis as { checkoutReposChanged?: () => boolean }).checkoutReposChanged = () =>
    checkoutRepos() !== before;
  if (!fs.existsSync(CLI))
    throw new Error('dist/ is missing: run the tests with `npm test` (it builds first)');
  const name = `platform_tpl_${process.pid}_${Date.now().toString(36)}`;
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await promisify(execFile)(process.execPath, [CLI, 'migrate'], {
    env: { ...process.env, DATABASE_URL: url.toString() },
  });
  process.env.TEST_TEMPLATE_DATABASE = name;
}

/**
 * The checkout's own REPOS_DIR (`.data/repos`, the embedded default of `npm start`) as the run
 * found it: its entries and its installation marker. Tests give every app a REPOS_DIR of its own;
 * the teardown fails the run if one of them used this one (it would claim, or be refused by, the
 * developer's installation).
 */
function checkoutRepos(): string {
  const dir = path.resolve(process.cwd(), '.data/repos');
  if (!fs.existsSync(dir)) return 'absent';
  const marker = path.join(dir, 'installation.json');
  return JSON.stringify({
    entries: fs.readdirSync(dir).sort(),
    marker: fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : null,
  });
}
