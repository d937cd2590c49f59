import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { adminQuery, databaseUrl } from './database';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

/**
 * Migrates a template database once, with the real `migrate` command; every test file copies
 * it into a database of its own. `npm test` builds first, so `dist/` is current.
 */
export default async function globalSetup(): Promise<void> {
  if (!fs.existsSync(CLI))
    throw new Error('dist/ is missing: run the tests with `npm test` (it builds first)');
  const name = `platform_tpl_${process.pid}`;
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  await promisify(execFile)(process.execPath, [CLI, 'migrate'], {
    env: { ...process.env, DATABASE_URL: databaseUrl(name) },
  });
  process.env.TEST_TEMPLATE_DATABASE = name;
}
