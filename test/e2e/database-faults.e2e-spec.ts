import { Client } from 'pg';
import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';
import { ADMIN_URL } from '../support/database.js';
import { waitFor } from '../support/factories.js';
import { TcpProxy } from '../support/tcp-proxy.js';

// Small bounds, so the faults below resolve quickly: statement 1 s (client-side 2 s), lock
// waits 0.5 s, new connections 1 s.
const BOUNDS = {
  DATABASE_STATEMENT_TIMEOUT_MS: '1000',
  DATABASE_LOCK_TIMEOUT_MS: '500',
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
};
/** Longest a request may take to answer during a fault: the bounds above, with room to spare. */
const ANSWER_WITHIN_MS = 8_000;

describe('PostgreSQL faults', () => {
  const target = new URL(ADMIN_URL);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  let t: TestApp;
  /** A connection of the test's own, straight to PostgreSQL (not through the proxy). */
  let direct: Client;

  const listDeployments = () => t.http().get('/api/v1/deployments').set(bearer(t.admin.token));

  /** Sends one request, returning its answer and how long it took. */
  async function timed(send: () => Promise<{ status: number }>) {
    const started = Date.now();
    const res = (await send()) as Awaited<ReturnType<typeof listDeployments>>;
    return { res, ms: Date.now() - started };
  }

  beforeAll(async () => {
    await proxy.listen();
    t = await startApp(
      { ...BOUNDS, REDIS_URL: '' },
      {
        databaseUrl: (url) => {
          const proxied = new URL(url);
          proxied.hostname = '127.0.0.1';
          proxied.port = String(proxy.port);
          return proxied.toString();
        },
      },
    );
    direct = new Client({ connectionString: t.databaseUrl });
    await direct.connect();
  });

  afterAll(async () => {
    proxy.resume();
    if (proxy.port && !proxy.connections) await proxy.listen().catch(() => undefined);
    await direct?.end();
    await t?.close();
    await proxy.close();
  });

  it('sets the statement and lock timeouts on every session of the pool', async () => {
    expect(await t.sql(`SHOW statement_timeout`)).toEqual([{ statement_timeout: '1s' }]);
    expect(await t.sql(`SHOW lock_timeout`)).toEqual([{ lock_timeout: '500ms' }]);
    // PostgreSQL cancels a statement past the bound.
    await expect(t.sql(`SELECT pg_sleep(5)`)).rejects.toMatchObject({ driverError: { code: '57014' } });
  });

  it('answers 503 database_unavailable with Retry-After when a lock wait outlives lock_timeout', async () => {
    await direct.query('BEGIN');
    try {
      await direct.query('LOCK TABLE deployments IN ACCESS EXCLUSIVE MODE');
      const { res, ms } = await timed(() => listDeployments());
      expect(res.status).toBe(503);
      expectErrorShape(res.body, 503, 'database_unavailable');
      expect(res.headers['retry-after']).toBe('5');
      expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    } finally {
      await direct.query('ROLLBACK');
    }
    expect((await listDeployments()).status).toBe(200);
  });

  it('answers 503 within the bound while PostgreSQL is frozen, and recovers once it answers again', async () => {
    expect((await listDeployments()).status).toBe(200);
    proxy.freeze();
    try {
      // A pooled connection whose server stopped answering, then a request needing a new one.
      const first = await timed(() => listDeployments());
      expect(first.res.status).toBe(503);
      expectErrorShape(first.res.body, 503, 'database_unavailable');
      expect(first.ms).toBeLessThan(ANSWER_WITHIN_MS);

      const write = await timed(() =>
        t.http().post('/api/v1/api-keys').set(bearer(t.admin.token)).send({ name: 'during the freeze' }),
      );
      expect(write.res.status).toBe(503);
      expectErrorShape(write.res.body, 503, 'database_unavailable');
      expect(write.ms).toBeLessThan(ANSWER_WITHIN_MS);

      // Input that is wrong whatever the database does stays a client error.
      const malformed = await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(t.admin.token))
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expect(malformed.status).toBe(400);
      expectErrorShape(malformed.body, 400, 'malformed_json');
    } finally {
      proxy.resume();
    }
    const after = await waitFor(
      () => listDeployments(),
      (r) => r.status === 200,
      15_000,
      200,
    );
    expect(after.status).toBe(200);
    // The write that failed left nothing behind, even once its held-back bytes were delivered.
    const keys = await direct.query(`SELECT name FROM api_keys WHERE name = 'during the freeze'`);
    expect(keys.rows).toEqual([]);
  }, 40_000);

  it('answers 503 database_unavailable, not 500, while PostgreSQL is unreachable, and recovers', async () => {
    const port = proxy.port;
    await proxy.close();
    const { res, ms } = await timed(() => listDeployments());
    expect(res.status).toBe(503);
    expectErrorShape(res.body, 503, 'database_unavailable');
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    const again = await listDeployments();
    expect(again.status).toBe(503);
    expectErrorShape(again.body, 503, 'database_unavailable');

    await proxy.listen(port);
    const after = await waitFor(
      () => listDeployments(),
      (r) => r.status === 200,
      15_000,
      200,
    );
    expect(after.status).toBe(200);
  }, 40_000);
});
