import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

/** The server the tests use: PostgreSQL on 127.0.0.1:5432 unless TEST_DATABASE_ADMIN_URL says otherwise. */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Databases of one run share the prefix of its template, so parallel runs never touch each other's. */
export function runPrefix(): string {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (!template) throw new Error('TEST_TEMPLATE_DATABASE is not set: run through jest (global setup)');
  return `${template}_f`;
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file: a copy of the migrated template (fast), or empty. */
export async function createTestDatabase(
  options: { empty?: boolean } = {},
): Promise<{ name: string; url: string }> {
  const name = `${runPrefix()}${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = process.env.TEST_TEMPLATE_DATABASE!;
  await adminQuery(
    options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${template}"`,
  );
  return { name, url: databaseUrl(name) };
}

export async function dropTestDatabase(name: string): Promise<void> {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  // The REPOS_DIR that processes started on it were given (test/support/process.ts).
  fs.rmSync(path.join(os.tmpdir(), 'platform-test-repos', name), { recursive: true, force: true });
}
