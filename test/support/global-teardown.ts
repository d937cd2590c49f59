import { Client } from 'pg';

// Jest loads this file outside its module resolver, so it imports nothing of ours.
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Drops this run's template and any database of this run a crashed file left behind. */
export default async function globalTeardown(): Promise<void> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (!template) return;
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $2)`,
      [template, `${template}_f`],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  // Both e2e projects name this file: the second call has nothing left to drop.
  delete process.env.TEST_TEMPLATE_DATABASE;
  // Set by the global set-up (test/support/global-setup.ts).
  const changed = (globalThis as { checkoutReposChanged?: () => boolean }).checkoutReposChanged;
  if (changed?.()) {
    throw new Error(
      "a test wrote to the checkout's .data/repos (the embedded REPOS_DIR): give its app a REPOS_DIR of its own",
    );
  }
}
