import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { issueToken } from '../../src/core/auth/token.js';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { startProcess, type Json, type Proc } from '../support/process.js';

const run = promisify(execFile);

/**
 * The principal cache across processes: two API processes on one database, each keeping a
 * token's principal for a minute (PRINCIPAL_CACHE_TTL_MS=60000). A change made through one must
 * hold on that process's very next request, and reach the other through the
 * `principals_changed` notification, long before the minute is up: the other process is
 * polled for at most 15 s, so passing proves the notification, not the expiry, dropped the
 * entry.
 */
describe('principal cache (two API processes)', () => {
  let db: { name: string; url: string };
  const servers: Array<{ proc: Proc; port: number }> = [];
  let admin: string;
  let adminId: number;

  const cli = async (...args: string[]): Promise<Json> =>
    JSON.parse(
      (
        await run(process.execPath, ['dist/src/cli.js', ...args], {
          env: { ...process.env, DATABASE_URL: db.url },
        })
      ).stdout,
    ) as Json;

  const call = async (
    server: number,
    method: string,
    url: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`http://127.0.0.1:${servers[server].port}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
  const status = async (server: number, url: string, token: string) =>
    (await call(server, 'GET', url, token)).status;

  /** Polls `server` until `url` answers `expected`; fails after 15 s (the cache keeps entries 60 s). */
  const eventually = async (server: number, url: string, token: string, expected: number) => {
    const deadline = Date.now() + 15_000;
    let last = await status(server, url, token);
    while (last !== expected && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      last = await status(server, url, token);
    }
    expect(last).toBe(expected);
  };

  /**
   * A key of the user's own, written as ApiKeysService.issue writes it (the token's hash and
   * prefix from `issueToken`): what `cli token` does, without a process start per user.
   */
  const keyFor = async (userId: number): Promise<string> => {
    const issued = issueToken();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO api_keys (account_id, user_id, name, token_hash, token_prefix)
         SELECT account_id, id, 'test', $2, $3 FROM users WHERE id = $1`,
        [userId, issued.hash, issued.prefix],
      );
    } finally {
      await client.end();
    }
    return issued.token;
  };

  /** A new console user of the account with its own token. */
  const newUser = async (email: string, defaultRoles: string[]) => {
    const created = await call(0, 'POST', '/api/v1/users', admin, {
      email,
      username: email,
      defaultRoles,
    });
    expect(created.status).toBe(200);
    return { id: created.body.id as number, token: await keyFor(created.body.id as number) };
  };

  const ME = '/api/v1/users/me';
  /** Needs the All action: 403 for a Viewer, 200 once the user holds All. */
  const adminOnly = () => `/api/v1/users/${adminId}/policies`;

  beforeAll(async () => {
    db = await createTestDatabase();
    const boot = await cli('bootstrap', '--account', 'acme', '--email', 'admin@acme.test');
    admin = boot.token as string;
    adminId = boot.userId as number;
    const procs = [0, 1].map(() =>
      startProcess('dist/src/main.js', {
        DATABASE_URL: db.url,
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        PRINCIPAL_CACHE_TTL_MS: '60000',
        RATE_LIMIT_MAX: '1000000',
      }),
    );
    const ports = await Promise.all(procs.map((proc) => proc.listening(60_000)));
    servers.push(...procs.map((proc, i) => ({ proc, port: ports[i] })));
  });

  afterAll(async () => {
    for (const s of servers) s.proc.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.proc.exit));
    await dropTestDatabase(db.name);
  });

  /** Both processes have served `token` (so both hold its principal) and answer `expected`. */
  const warm = async (url: string, token: string, expected: number) => {
    expect(await status(0, url, token)).toBe(expected);
    expect(await status(1, url, token)).toBe(expected);
    expect(await status(1, url, token)).toBe(expected);
  };

  it('a revoked key is refused at once where it was revoked, and soon in the other process', async () => {
    const user = await newUser('revoke@acme.test', ['Viewer']);
    const key = await call(0, 'POST', '/api/v1/api-keys', user.token, { name: 'second' });
    expect(key.status).toBe(200);
    const token = key.body.token as string;
    await warm(ME, token, 200);
    expect((await call(0, 'DELETE', `/api/v1/api-keys/${key.body.id}`, user.token)).status).toBe(204);
    expect(await status(0, ME, token)).toBe(401);
    await eventually(1, ME, token, 401);
    // The user's other key is unaffected.
    expect(await status(1, ME, user.token)).toBe(200);
  });

  it('a deactivated user is refused, and a reactivated one admitted again', async () => {
    const user = await newUser('deactivate@acme.test', ['Viewer']);
    await warm(ME, user.token, 200);
    expect((await call(0, 'PUT', `/api/v1/users/${user.id}`, admin, { isDeactivated: true })).status).toBe(
      200,
    );
    expect(await status(0, ME, user.token)).toBe(401);
    await eventually(1, ME, user.token, 401);
    expect((await call(1, 'PUT', `/api/v1/users/${user.id}`, admin, { isDeactivated: false })).status).toBe(
      200,
    );
    expect(await status(1, ME, user.token)).toBe(200);
    await eventually(0, ME, user.token, 200);
  });

  it('a changed built-in role applies on the next request', async () => {
    const user = await newUser('promote@acme.test', ['Viewer']);
    await warm(adminOnly(), user.token, 403);
    expect(
      (await call(0, 'PUT', `/api/v1/users/${user.id}`, admin, { defaultRoles: ['Admin'] })).status,
    ).toBe(200);
    expect(await status(0, adminOnly(), user.token)).toBe(200);
    await eventually(1, adminOnly(), user.token, 200);
  });

  it('a custom role given and taken away applies on the next request', async () => {
    const user = await newUser('custom-role@acme.test', ['Viewer']);
    const role = await call(0, 'POST', '/api/v1/roles', admin, {
      name: 'everything',
      policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }],
    });
    expect(role.status).toBe(200);
    await warm(adminOnly(), user.token, 403);
    expect(
      (await call(0, 'PUT', `/api/v1/roles/${role.body.id}/users/${user.id}`, admin)).status,
    ).toBeLessThan(300);
    expect(await status(0, adminOnly(), user.token)).toBe(200);
    await eventually(1, adminOnly(), user.token, 200);
    expect(
      (await call(1, 'DELETE', `/api/v1/roles/${role.body.id}/users/${user.id}`, admin)).status,
    ).toBeLessThan(300);
    expect(await status(1, adminOnly(), user.token)).toBe(403);
    await eventually(0, adminOnly(), user.token, 403);
  });

  it('joining and leaving a group with a grant applies on the next request', async () => {
    const user = await newUser('member@acme.test', ['Viewer']);
    const group = await call(0, 'POST', '/api/v1/groups', admin, { name: 'admins-by-group' });
    expect(group.status).toBe(200);
    const policies = await call(0, 'PUT', `/api/v1/groups/${group.body.id}/policies`, admin, {
      policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }],
    });
    expect(policies.status).toBe(200);
    await warm(adminOnly(), user.token, 403);
    expect(
      (await call(0, 'PUT', `/api/v1/groups/${group.body.id}/users/${user.id}`, admin)).status,
    ).toBeLessThan(300);
    expect(await status(0, adminOnly(), user.token)).toBe(200);
    await eventually(1, adminOnly(), user.token, 200);
    expect(
      (await call(1, 'DELETE', `/api/v1/groups/${group.body.id}/users/${user.id}`, admin)).status,
    ).toBeLessThan(300);
    expect(await status(1, adminOnly(), user.token)).toBe(403);
    await eventually(0, adminOnly(), user.token, 403);
  });

  it('a direct grant given and replaced applies on the next request', async () => {
    const user = await newUser('granted@acme.test', ['Viewer']);
    await warm(adminOnly(), user.token, 403);
    const give = await call(0, 'PUT', `/api/v1/users/${user.id}/policies`, admin, {
      policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }],
    });
    expect(give.status).toBe(200);
    expect(await status(0, adminOnly(), user.token)).toBe(200);
    await eventually(1, adminOnly(), user.token, 200);
    const take = await call(1, 'PUT', `/api/v1/users/${user.id}/policies`, admin, { policies: [] });
    expect(take.status).toBe(200);
    expect(await status(1, adminOnly(), user.token)).toBe(403);
    await eventually(0, adminOnly(), user.token, 403);
  });

  it('a change written outside the API (SQL by hand) reaches both processes', async () => {
    const user = await newUser('by-hand@acme.test', ['Viewer']);
    await warm(ME, user.token, 200);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('UPDATE users SET is_deactivated = true WHERE id = $1', [user.id]);
    } finally {
      await client.end();
    }
    await eventually(0, ME, user.token, 401);
    await eventually(1, ME, user.token, 401);
  });

  it('serves a cached principal until told: a change that skips the triggers goes unseen', async () => {
    const user = await newUser('unseen@acme.test', ['Viewer']);
    await warm(ME, user.token, 200);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // Replica mode runs no triggers: no notification, so both processes keep the entry.
      await client.query(`SET session_replication_role = replica`);
      await client.query('UPDATE users SET is_deactivated = true WHERE id = $1', [user.id]);
      expect(await status(0, ME, user.token)).toBe(200);
      expect(await status(1, ME, user.token)).toBe(200);
      // The next notified change (to anyone) empties both caches.
      await client.query(`SET session_replication_role = origin`);
      await client.query('UPDATE users SET default_roles = default_roles WHERE id = $1', [adminId]);
    } finally {
      await client.end();
    }
    await eventually(0, ME, user.token, 401);
    await eventually(1, ME, user.token, 401);
  });

  it('a rolled-back change notifies no one and changes nothing', async () => {
    const user = await newUser('rolled-back@acme.test', ['Viewer']);
    await warm(ME, user.token, 200);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('LISTEN principals_changed');
      const heard: string[] = [];
      client.on('notification', (n) => heard.push(n.channel));
      await client.query('BEGIN');
      await client.query('UPDATE users SET is_deactivated = true WHERE id = $1', [user.id]);
      await client.query('ROLLBACK');
      // A committed write on the same connection afterwards is heard: the rolled-back one was not.
      await client.query('UPDATE users SET settings = settings WHERE id = $1', [user.id]);
      await client.query('BEGIN');
      await client.query('UPDATE api_keys SET last_used_at = now() WHERE user_id = $1', [user.id]);
      await client.query('COMMIT');
      await client.query('SELECT 1');
      expect(heard).toEqual([]);
      // What a token depends on is heard, once per transaction.
      await client.query('BEGIN');
      await client.query('UPDATE users SET default_roles = default_roles WHERE id = $1', [user.id]);
      await client.query('UPDATE users SET is_deactivated = false WHERE id = $1', [user.id]);
      await client.query('COMMIT');
      await client.query('SELECT 1');
      expect(heard).toEqual(['principals_changed']);
    } finally {
      await client.end();
    }
    expect(await status(0, ME, user.token)).toBe(200);
    expect(await status(1, ME, user.token)).toBe(200);
  });
});
