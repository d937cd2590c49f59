import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { startProcess, type Proc } from '../support/process.js';

// The build under test: dist/ (`npm test` builds it), or TEST_DIST_DIR's.
const MAIN = path.resolve(process.env.TEST_DIST_DIR ?? 'dist', 'src/main.js');

const production = () => ({
  NODE_ENV: 'production',
  SECRETS_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'info',
  // Production keeps warm Python processes by default; each costs seconds of CPU to start.
  PYTHON_POOL_SIZE: '0',
});

describe('start-up checks of the API process', () => {
  it('refuses to start in production without TLS, a trusted proxy or ALLOW_HTTP, naming them', async () => {
    // Nothing is reachable here: the check comes before any connection.
    const proc = startProcess(MAIN, {
      ...production(),
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      PORT: '0',
    });
    expect(await proc.exit).toBe(1);
    const out = proc.output();
    for (const name of ['TLS_CERT_FILE', 'TLS_KEY_FILE', 'TRUST_PROXY', 'ALLOW_HTTP', 'https_required'])
      expect({ name, found: out.includes(name) }).toEqual({ name, found: true });
    expect(out).not.toContain('listening on');
  });

  it('refuses to start on a REPOS_DIR another installation marked, naming both installations', async () => {
    const db = await createTestDatabase();
    const reposDir = fs.mkdtempSync(path.join(os.tmpdir(), 'startup-repos-'));
    const other = randomUUID();
    fs.writeFileSync(
      path.join(reposDir, 'installation.json'),
      JSON.stringify({ installation: other, database: 'elsewhere:5432/other' }),
    );
    const client = new Client({ connectionString: db.url });
    try {
      await client.connect();
      // A copy of the template holds the template's id: a new database is a new installation.
      const [{ id }] = (
        await client.query<{ id: string }>(`UPDATE installation SET id = gen_random_uuid() RETURNING id`)
      ).rows;
      const proc = startProcess(MAIN, {
        NODE_ENV: 'development',
        DATABASE_URL: db.url,
        REPOS_DIR: reposDir,
        PORT: '0',
        HOST: '127.0.0.1',
        MIGRATIONS_RUN: 'false',
      });
      expect(await proc.exit).toBe(1);
      const out = proc.output();
      for (const part of ['REPOS_DIR', reposDir, other, 'elsewhere:5432/other', id, db.name])
        expect({ part, named: out.includes(part) }).toEqual({ part, named: true });
      expect(out).not.toContain('listening on');
      expect(fs.readdirSync(reposDir)).toEqual(['installation.json']);
    } finally {
      await client.end();
      await dropTestDatabase(db.name);
      fs.rmSync(reposDir, { recursive: true, force: true });
    }
  });

  describe('in production behind a trusted proxy', () => {
    let db: { name: string; url: string };
    let proc: Proc;
    let port: number;
    beforeAll(async () => {
      db = await createTestDatabase();
      proc = startProcess(MAIN, {
        ...production(),
        DATABASE_URL: db.url,
        PORT: '0',
        HOST: '127.0.0.1',
        TRUST_PROXY: 'loopback',
        MIGRATIONS_RUN: 'false',
      });
      port = await proc.listening();
    });
    afterAll(async () => {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGTERM');
        await proc.exit;
      }
      await dropTestDatabase(db.name);
    });

    it('starts, and serves what the proxy forwarded as HTTPS', async () => {
      // Past the HTTPS check, the request reaches authentication (no token sent: 401).
      const viaProxy = await fetch(`http://127.0.0.1:${port}/api/v1/users/me`, {
        headers: { 'X-Forwarded-Proto': 'https' },
      });
      expect(viaProxy.status).toBe(401);
      expect(await viaProxy.json()).toMatchObject({ code: 'unauthorized' });
      const plain = await fetch(`http://127.0.0.1:${port}/api/v1/users/me`);
      expect(plain.status).toBe(403);
      expect(await plain.json()).toMatchObject({ code: 'https_required' });
    });
  });
});
