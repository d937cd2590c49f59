import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import type { Response } from 'supertest';
import { bearer, expectErrorShape, newAccount, startApp, type TestApp } from '../support/app.js';
import { REDIS_URL } from '../support/database.js';
import { postDeployment } from '../support/factories.js';
import { expectScimError, SCIM } from '../support/scim.js';
import { freePort } from '../support/process.js';
import { RedisProcess } from '../support/redis-process.js';

const JUNK = () => `Bearer pat_${randomBytes(32).toString('base64url').slice(0, 43)}`;
const ME = '/api/v1/users/me';

/** Polls until `check` holds, for at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('rate limiting', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_SECONDS: '60' });
  });
  afterAll(() => t.close());

  it('limits per token with standard headers and 429 + Retry-After', async () => {
    const responses = [];
    for (let i = 0; i < 6; i++)
      responses.push(await t.http().get('/api/v1/users/me').set(bearer(t.admin.token)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    const last = responses[5];
    expect(last.headers['retry-after']).toMatch(/^\d+$/);
    expect(last.headers['ratelimit']).toContain('r=0');
    expect(last.headers['ratelimit-policy']).toContain('q=5');
    expectErrorShape(last.body, 429, 'rate_limited');
  });

  it('counts each token on its own', async () => {
    const { token } = await t.app
      .get((await import('../../src/modules/users/accounts.service.js')).AccountsService)
      .token('acme', 'admin@acme.test');
    expect((await t.http().get('/api/v1/users/me').set(bearer(token))).status).toBe(200);
  });

  it('does not limit the probes', async () => {
    for (let i = 0; i < 8; i++) expect((await t.http().get('/health/live')).status).toBe(200);
  });
});

describe.each([
  ['in process memory (no REDIS_URL)', { REDIS_URL: undefined }],
  ['in Redis', {}],
])('failed authentication per client address, counted %s', (_, env) => {
  let t: TestApp;
  beforeAll(async () => {
    // Clients are told apart by X-Forwarded-For, which counts because the test client is a trusted proxy.
    t = await startApp({ ...env, AUTH_FAILURE_LIMIT_MAX: '3', TRUST_PROXY: 'loopback' });
  });
  afterAll(() => t.close());

  const from = (address: string) => ({ 'X-Forwarded-For': address });

  /** 429 `rate_limited` with a Retry-After within the window, and no challenge. */
  const expectLockedOut = (res: Response) => {
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(res.headers['www-authenticate']).toBeUndefined();
  };

  it('refuses an address’s failed authentications with 429 after N junk tokens, never its valid ones', async () => {
    const client = from('203.0.113.10');
    for (let i = 0; i < 3; i++) {
      // Every junk token is new, so the per-token limit alone would never refuse them.
      const res = await t.http().get(ME).set(client).set('Authorization', JUNK());
      expect(res.status).toBe(401);
    }
    for (const auth of [JUNK(), 'Bearer not-even-a-token', undefined]) {
      const req = t.http().get(ME).set(client);
      const res = auth ? await req.set('Authorization', auth) : await req;
      expectLockedOut(res);
      expectErrorShape(res.body, 429, 'rate_limited');
    }
    expect((await t.http().get(ME).set(client).set(bearer(t.admin.token))).status).toBe(200);
    // The probes stay open to it, and other addresses are not affected.
    expect((await t.http().get('/health/live').set(client)).status).toBe(200);
    expect((await t.http().get(ME).set(from('203.0.113.11')).set('Authorization', JUNK())).status).toBe(401);
  });

  it('lets every valid credential through from an address 40 junk tokens locked out, of any account', async () => {
    // One company behind one NAT: a stale client floods the address with bad tokens, while the
    // users of two accounts, an identity provider's SCIM client and an embedded dashboard go on.
    const client = from('203.0.113.40');
    const other = await newAccount(t, `nat${randomBytes(3).toString('hex')}`);
    const deployment = await postDeployment(t, t.admin);
    const generated = await t
      .http()
      .post('/api/v1/embed/generate-session')
      .set(bearer(t.admin.token))
      .send({ deploymentId: deployment.id, externalId: 'nat-user' });
    expect(generated.status).toBe(200);
    const exchange = (sessionId: string) =>
      t.http().post('/api/v1/embed/session/token').set(client).send({ sessionId });

    const statuses = [];
    for (let i = 0; i < 40; i++)
      statuses.push((await t.http().get(ME).set(client).set('Authorization', JUNK())).status);
    expect(statuses).toEqual([...Array<number>(3).fill(401), ...Array<number>(37).fill(429)]);

    for (const actor of [t.admin, other])
      expect((await t.http().get(ME).set(client).set(bearer(actor.token))).body.email).toBe(actor.email);
    const scim = await t.http().get(`${SCIM}/Users?count=1`).set(client).set(bearer(other.token));
    expect(scim.status).toBe(200);
    const session = await exchange(generated.body.sessionId);
    expect(session.status).toBe(200);
    // A valid embed token passes the guard: the unknown dashboard is the route's own 404.
    const embedded = await t
      .http()
      .get('/api/v1/embed/dashboard/R00000000000')
      .set(client)
      .set(bearer(session.body.token));
    expect(embedded.status).toBe(404);

    // Every failure from the address is still refused, in the shape of the route's protocol.
    const junk = await t.http().get(ME).set(client).set('Authorization', JUNK());
    expectLockedOut(junk);
    expectErrorShape(junk.body, 429, 'rate_limited');
    const scimJunk = await t.http().get(`${SCIM}/Users`).set(client).set('Authorization', JUNK());
    expectLockedOut(scimJunk);
    expectScimError(scimJunk, 429);
    expectLockedOut(await exchange(randomBytes(16).toString('hex')));
    expectLockedOut(await exchange(generated.body.sessionId)); // used: a failure now
    const [head, payload] = (session.body.token as string).split('.');
    const forged = `${head}.${payload}.${randomBytes(32).toString('base64url')}`;
    expectLockedOut(
      await t.http().get('/api/v1/embed/dashboard/R00000000000').set(client).set(bearer(forged)),
    );
  });

  it('counts only failures: successful requests never spend the budget', async () => {
    const client = from('203.0.113.20');
    for (let i = 0; i < 10; i++)
      expect((await t.http().get(ME).set(client).set(bearer(t.admin.token))).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await t.http().get(ME).set(client).set('Authorization', JUNK())).status).toBe(401);
    expect((await t.http().get(ME).set(client).set(bearer(t.admin.token))).status).toBe(200);
  });

  it('counts failed session exchanges and missing tokens too', async () => {
    const client = from('203.0.113.30');
    const exchange = () =>
      t
        .http()
        .post('/api/v1/embed/session/token')
        .set(client)
        .send({ sessionId: randomBytes(16).toString('hex') });
    expect((await exchange()).status).toBe(401);
    expect((await t.http().get(ME).set(client)).status).toBe(401);
    expect((await exchange()).status).toBe(401);
    expect((await exchange()).status).toBe(429);
  });
});

describe('limits shared by replicas through Redis', () => {
  const prefix = `rl${randomBytes(5).toString('hex')}`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    const env = {
      QUEUE_PREFIX: prefix,
      RATE_LIMIT_MAX: '4',
      AUTH_FAILURE_LIMIT_MAX: '2',
      RUN_JOBS_IN_PROCESS: 'false',
    };
    a = await startApp(env);
    b = await startApp(env);
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await redis.quit();
  });

  it('spends one budget of failed authentications across both instances', async () => {
    expect((await a.http().get(ME).set('Authorization', JUNK())).status).toBe(401);
    expect((await b.http().get(ME).set('Authorization', JUNK())).status).toBe(401);
    // Each instance now refuses the address's failures: the two were counted together.
    for (const t of [a, b]) {
      const refused = await t.http().get(ME).set('Authorization', JUNK());
      expect(refused.status).toBe(429);
      expectErrorShape(refused.body, 429, 'rate_limited');
    }
    // A valid token still passes. (Two apps in one Jest process look tokens up in the database
    // of the last one started, b: nestjs-cls keeps one transaction host per process.)
    expect((await b.http().get(ME).set(bearer(b.admin.token))).status).toBe(200);
    expect(await redis.keys(`${prefix}:auth-failures:*`)).toHaveLength(1);
    // Free the address again for the next test.
    await redis.del(...(await redis.keys(`${prefix}:auth-failures:*`)));
  });

  it('spends one budget of requests across both instances', async () => {
    // Without a token requests count per address; an unknown route answers 404, never 401.
    const unknownRoute = (t: TestApp) => t.http().get('/api/v1/no-such-route');
    const statuses = [];
    for (const t of [a, b, a, b, a, b]) statuses.push((await unknownRoute(t)).status);
    expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
    expect(await redis.keys(`${prefix}:rate-limit:ip:*`)).toHaveLength(1);
  });
});

describe('with Redis unavailable', () => {
  let server: RedisProcess;
  let t: TestApp;
  beforeAll(async () => {
    server = new RedisProcess(await freePort());
    await server.start();
    t = await startApp({ REDIS_URL: server.url, RATE_LIMIT_MAX: '3', AUTH_FAILURE_LIMIT_MAX: '2' });
  });
  afterAll(async () => {
    await t.close();
    await server.kill();
  });

  it('lets requests through unlimited, without errors or waits, and limits again once it is back', async () => {
    const { token } = await t.app.get(AccountsService).token('acme', 'admin@acme.test');
    const first = await t.http().get(ME).set(bearer(token));
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit']).toContain('r=2');

    await server.kill();
    // Past the budget of 3 requests and of 2 failures: nothing is refused, nothing fails.
    for (let i = 0; i < 5; i++) {
      const ok = await t.http().get(ME).set(bearer(token)).timeout(10_000);
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit']).toBeUndefined();
      const junk = await t.http().get(ME).set('Authorization', JUNK()).timeout(10_000);
      expect(junk.status).toBe(401);
      expectErrorShape(junk.body, 401, 'unauthorized');
    }

    await server.start();
    // ioredis reconnects in the background; a fresh token's first counted request shows r=2.
    const { token: fresh } = await t.app.get(AccountsService).token('acme', 'admin@acme.test');
    await eventually(async () => {
      const res = await t.http().get(ME).set(bearer(fresh));
      return res.headers['ratelimit'] !== undefined;
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.http().get(ME).set(bearer(fresh))).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
