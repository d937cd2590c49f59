import { Client } from 'pg';
import { ADMIN_URL, TEST_DB_PREFIX } from './database';

/** Drops the template and any test database a crashed file left behind. */
export default async function globalTeardown(): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [process.env.TEST_TEMPLATE_DATABASE, `${TEST_DB_PREFIX}%`],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
