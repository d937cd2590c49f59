import { bearer, expectErrorShape, type Actor, type TestApp } from '../support/app.js';
import { setupIdentityApp } from '../support/identity.js';
import { waitFor } from '../support/factories.js';

interface KeyBody {
  id: number;
  name: string;
  prefix: string;
  userId: number;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  token?: string;
}

describe('api keys', () => {
  let t: TestApp;
  let viewer: Actor;
  beforeAll(async () => {
    ({ t, viewer } = await setupIdentityApp());
  });
  afterAll(() => t.close());

  function createKey(token: string, body: Record<string, unknown> = { name: 'CI' }) {
    return t.http().post('/api/v1/api-keys').set(bearer(token)).send(body);
  }

  async function listKeys(token: string, query: Record<string, unknown> = {}) {
    const res = await t.http().get('/api/v1/api-keys').query(query).set(bearer(token));
    expect(res.status).toBe(200);
    return res.body as { items: KeyBody[]; pageInfo: Record<string, unknown> };
  }

  const whoAmI = (token: string) => t.http().get('/api/v1/users/me').set(bearer(token));

  it('is 401 without a token on every route', async () => {
    for (const res of [
      await t.http().get('/api/v1/api-keys'),
      await t.http().post('/api/v1/api-keys').send({ name: 'x' }),
      await t.http().delete('/api/v1/api-keys/1'),
    ]) {
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    }
  });

  it('creates a key (200) whose token is shown once and never listed', async () => {
    const res = await createKey(t.admin.token, { name: 'Deploy bot' });
    expect(res.status).toBe(200);
    const key = res.body as KeyBody;
    expect(key).toEqual({
      id: expect.any(Number),
      name: 'Deploy bot',
      prefix: expect.any(String),
      userId: t.admin.userId,
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: null,
      token: expect.stringMatching(/^pat_[A-Za-z0-9_-]{43}$/),
    });
    expect(key.token!.startsWith(key.prefix)).toBe(true);
    expect(key.prefix.length).toBeLessThan(key.token!.length);

    const list = await listKeys(t.admin.token);
    const listed = list.items.find((k) => k.id === key.id);
    const { token: _token, ...withoutToken } = key;
    expect(listed).toEqual(withoutToken);
    for (const item of list.items) expect(item).not.toHaveProperty('token');
    expect(JSON.stringify(list)).not.toContain(key.token!);
  });

  it('issues a distinct token each time', async () => {
    const a = await createKey(t.admin.token, { name: 'a' });
    const b = await createKey(t.admin.token, { name: 'a' });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.token).not.toBe(b.body.token);
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('accepts the new token as Bearer, acting as its owner', async () => {
    const key = (await createKey(viewer.token, { name: 'viewer key' })).body as KeyBody;
    expect(key.userId).toBe(viewer.userId);
    const me = await whoAmI(key.token!);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: viewer.userId, email: viewer.email, isAdmin: false });
    // It carries the owner's rights, no more.
    const forbidden = await t
      .http()
      .post('/api/v1/users')
      .set(bearer(key.token!))
      .send({ email: 'x@acme.test', username: 'x' });
    expect(forbidden.status).toBe(403);
    expectErrorShape(forbidden.body, 403, 'forbidden');
  });

  it('revokes a key (204): its token stops working and it leaves the list', async () => {
    const key = (await createKey(t.admin.token, { name: 'to revoke' })).body as KeyBody;
    expect((await whoAmI(key.token!)).status).toBe(200);

    const res = await t.http().delete(`/api/v1/api-keys/${key.id}`).set(bearer(t.admin.token));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    const me = await whoAmI(key.token!);
    expect(me.status).toBe(401);
    expectErrorShape(me.body, 401, 'unauthorized');
    expect((await listKeys(t.admin.token)).items.map((k) => k.id)).not.toContain(key.id);
    const rows = await t.sql<{ revoked_at: Date | null }>(`SELECT revoked_at FROM api_keys WHERE id = $1`, [
      key.id,
    ]);
    expect(rows[0].revoked_at).toBeInstanceOf(Date);
    // The admin's other token is unaffected.
    expect((await whoAmI(t.admin.token)).status).toBe(200);

    const again = await t.http().delete(`/api/v1/api-keys/${key.id}`).set(bearer(t.admin.token));
    expect(again.status).toBe(404);
    expectErrorShape(again.body, 404, 'api_key_not_found');
  });

  it('lets a key revoke itself', async () => {
    const key = (await createKey(viewer.token, { name: 'self-revoking' })).body as KeyBody;
    const res = await t.http().delete(`/api/v1/api-keys/${key.id}`).set(bearer(key.token!));
    expect(res.status).toBe(204);
    expect((await whoAmI(key.token!)).status).toBe(401);
  });

  it('pages the list with first/after', async () => {
    for (const name of ['page 1', 'page 2', 'page 3'])
      expect((await createKey(t.admin.token, { name })).status).toBe(200);
    const all = (await listKeys(t.admin.token)).items.map((k) => k.id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const page1 = await listKeys(t.admin.token, { first: 2 });
    expect(page1.items.map((k) => k.id)).toEqual(all.slice(0, 2));
    expect(page1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const page2 = await listKeys(t.admin.token, { first: 2, after: page1.pageInfo.endCursor });
    expect(page2.items.map((k) => k.id)).toEqual(all.slice(2, 4));
    expect(page2.pageInfo.hasPreviousPage).toBe(true);
    const bad = await t.http().get('/api/v1/api-keys').query({ after: '%%%' }).set(bearer(t.admin.token));
    expect(bad.status).toBe(400);
    expectErrorShape(bad.body, 400, 'invalid_cursor');
  });

  it('accepts a future expiresAt and echoes it', async () => {
    const when = new Date(Date.now() + 86_400_000).toISOString();
    const res = await createKey(t.admin.token, { name: 'expiring', expiresAt: when });
    expect(res.status).toBe(200);
    expect(res.body.expiresAt).toBe(when);
    expect((await whoAmI(res.body.token)).status).toBe(200);
    const never = await createKey(t.admin.token, { name: 'never', expiresAt: null });
    expect(never.status).toBe(200);
    expect(never.body.expiresAt).toBeNull();
  });

  it('refuses an expiresAt in the past with 400', async () => {
    const before = await t.sql(`SELECT 1 FROM api_keys WHERE name = 'past'`);
    for (const expiresAt of [new Date(Date.now() - 60_000).toISOString(), '2000-01-01T00:00:00Z']) {
      const res = await createKey(t.admin.token, { name: 'past', expiresAt });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('expiresAt');
    }
    expect(await t.sql(`SELECT 1 FROM api_keys WHERE name = 'past'`)).toHaveLength(before.length);
  });

  it.each([
    ['missing name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name a number', { name: 5 }, 'name'],
    ['name too long', { name: 'x'.repeat(256) }, 'name'],
    ['expiresAt not a date', { name: 'k', expiresAt: 'tomorrow' }, 'expiresAt'],
    ['expiresAt a number', { name: 'k', expiresAt: 1893456000000 }, 'expiresAt'],
    ['unknown field', { name: 'k', scopes: ['all'] }, 'scopes'],
    ['userId (cannot mint for others)', { name: 'k', userId: 1 }, 'userId'],
  ])('refuses bad input (%s) with 400 naming the field', async (_, body, field) => {
    const res = await createKey(viewer.token, body);
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'validation_failed');
    expect(JSON.stringify(res.body.message)).toContain(field);
  });

  it.each(['abc', '0', '-1', '99999999999'])('answers 400 when revoking the id %s', async (id) => {
    const res = await t.http().delete(`/api/v1/api-keys/${id}`).set(bearer(t.admin.token));
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'validation_failed');
  });

  it('refuses a key whose expires_at has passed with 401', async () => {
    const key = (await createKey(viewer.token, { name: 'soon expired' })).body as KeyBody;
    expect((await whoAmI(key.token!)).status).toBe(200);
    await t.sql(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    // A change by hand reaches the principal cache through LISTEN/NOTIFY, a moment later.
    const res = await waitFor(
      () => whoAmI(key.token!).then((r) => r),
      (r) => r.status === 401,
      5_000,
      50,
    );
    expect(res.status).toBe(401);
    expectErrorShape(res.body, 401, 'unauthorized');
    // The owner's other credentials are unaffected.
    expect((await whoAmI(viewer.token)).status).toBe(200);
  });

  it('records last_used_at after the key is used', async () => {
    const key = (await createKey(viewer.token, { name: 'tracked' })).body as KeyBody;
    const read = async () =>
      (
        await t.sql<{ last_used_at: Date | null }>(`SELECT last_used_at FROM api_keys WHERE id = $1`, [
          key.id,
        ])
      )[0].last_used_at;
    expect(await read()).toBeNull();

    const started = Date.now();
    expect((await whoAmI(key.token!)).status).toBe(200);
    // The write is off the request path: wait for it.
    let lastUsed: Date | null = null;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      lastUsed = await read();
      if (!lastUsed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lastUsed).toBeInstanceOf(Date);
    expect(Math.abs(lastUsed!.getTime() - started)).toBeLessThan(60_000);

    const listed = (await listKeys(viewer.token)).items.find((k) => k.id === key.id);
    expect(listed?.lastUsedAt).toBe(lastUsed!.toISOString());
  });
});
