import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer, expectErrorShape, newUser, startApp, type TestApp } from '../support/app.js';
import { TENANTS } from '../support/embedding.js';
import { createUser, expectScimError, scimClient, SCIM, USER_URN } from '../support/scim.js';

/** The defects a sweep of hostile requests found (issue 11, section 1), one test each. */

const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** 1,300 levels in 2.6 KB: enough to overflow the recursive transformer. */
const DEEP = deep(1300);

describe('hostile input', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  const admin = () => bearer(t.admin.token);
  const count = async (table: string) =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  /** Row counts of the tables the requests below could write to. */
  const counts = async () => ({
    users: await count('users'),
    policies: await count('policies'),
    embedTenants: await count('embed_tenants'),
    groups: await count('groups'),
    apiKeys: await count('api_keys'),
  });
  const rawJson = (method: 'post' | 'put', path: string, body: string, type = 'application/json') =>
    t.http()[method](path).set(admin()).set('Content-Type', type).send(body);

  describe('deeply nested JSON', () => {
    it.each([
      [
        'POST /api/v1/users',
        'post',
        (): string => '/api/v1/users',
        `{"email":"d@acme.test","username":"d","settings":${DEEP}}`,
      ],
      [
        'PUT /api/v1/users/{id}/policies',
        'put',
        (): string => `/api/v1/users/${t.admin.userId}/policies`,
        `{"policies":${DEEP}}`,
      ],
      [
        'POST /api/v1/embed-tenants/{name}/users',
        'post',
        (): string => `${TENANTS}/deep/users`,
        `{"users":${DEEP}}`,
      ],
    ] as const)(
      'refuses a body nested 1,300 levels deep on %s with 400, changing nothing',
      async (_, method, path, body) => {
        expect(body.length).toBeLessThan(2700);
        const before = await counts();
        const res = await rawJson(method, path(), body);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(res.body.message).toEqual([expect.stringContaining('deeper than 64 levels')]);
        expect(await counts()).toEqual(before);
      },
    );

    it('refuses it on SCIM in the SCIM error schema', async () => {
      const before = await counts();
      const res = await rawJson(
        'post',
        `${SCIM}/Users`,
        `{"schemas":["${USER_URN}"],"userName":"deep@acme.test","emails":${DEEP}}`,
        'application/scim+json',
      );
      expectScimError(res, 400);
      expect(await counts()).toEqual(before);
    });

    it('accepts 64 levels, refuses 65', async () => {
      // The limit counts the body object itself: `{"name": [[...]]}` with 63 brackets is 64 levels.
      const at = await rawJson('post', '/api/v1/groups', `{"name":${deep(63)}}`);
      expect(at.status).toBe(400);
      expect(at.body.message).toEqual(expect.arrayContaining([expect.stringMatching(/^name /)]));
      const over = await rawJson('post', '/api/v1/groups', `{"name":${deep(64)}}`);
      expect(over.status).toBe(400);
      expect(over.body.message).toEqual([expect.stringContaining('deeper than 64 levels')]);
    });
  });

  describe('strings that are not well-formed Unicode', () => {
    const SURROGATE_EMAIL = '\ud800@x.test';

    it('refuses a lone surrogate in POST /api/v1/users with 400 invalid_characters', async () => {
      const before = await counts();
      const res = await t
        .http()
        .post('/api/v1/users')
        .set(admin())
        .send({ email: SURROGATE_EMAIL, username: 'surrogate' });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_characters');
      expect(await counts()).toEqual(before);
    });

    it('refuses it in embed-user provisioning', async () => {
      const before = await counts();
      const res = await t
        .http()
        .post(`${TENANTS}/surrogates/user`)
        .set(admin())
        .send({ externalId: 'u1', email: SURROGATE_EMAIL });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_characters');
      expect(await counts()).toEqual(before);
    });

    it('refuses it in SCIM POST /Users and PUT /Users/{id}, changing nothing', async () => {
      const scim = scimClient(t);
      const user = await createUser(scim, 'scim.surrogate@acme.test');
      const before = await counts();
      const body = (userName: string) => ({
        schemas: [USER_URN],
        userName,
        emails: [{ value: SURROGATE_EMAIL, type: 'work', primary: true }],
        active: true,
      });
      expectScimError(await scim.post('/Users', body('other@acme.test')), 400, 'invalidValue');
      expectScimError(await scim.put(`/Users/${user.id}`, body(user.userName)), 400, 'invalidValue');
      expect(await counts()).toEqual(before);
      const after = await scim.get(`/Users/${user.id}`);
      expect(after.body.emails).toEqual(user.emails);
      expect(after.body.meta.version).toBe(user.meta.version);
    });

    it('refuses a lone surrogate in a key, and an invalid UTF-8 sequence in the path or query', async () => {
      const key = await rawJson('post', '/api/v1/groups', '{"name":"g","\\udc00":1}');
      expectErrorShape(key.body, 400, 'invalid_characters');
      for (const url of [
        '/api/v1/users/%ED%A0%80',
        '/api/v1/users?search=%ED%A0%80',
        '/api/v1/users?search=%C3',
      ]) {
        const res = await t.http().get(url).set(admin());
        expect({ url, status: res.status }).toEqual({ url, status: 400 });
        expectErrorShape(res.body, 400, 'invalid_characters');
      }
      // Well-formed text outside the BMP is fine.
      const ok = await t.http().get('/api/v1/users?search=%F0%9F%98%80').set(admin());
      expect(ok.status).toBe(200);
    });
  });

  describe('non-object elements in list bodies', () => {
    it.each([[[]], [1], ['x'], [null]])(
      'refuses {"users":[%j]} on bulk embed provisioning with 400, creating nothing',
      async (element) => {
        const before = await counts();
        const res = await t
          .http()
          .post(`${TENANTS}/bulk/users`)
          .set(admin())
          .send({ users: [element] });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(res.body.message).toEqual(expect.arrayContaining([expect.stringMatching(/^users/)]));
        expect(await counts()).toEqual(before);
      },
    );

    it('refuses them in every nested list, e.g. policies', async () => {
      const res = await t
        .http()
        .put(`/api/v1/users/${t.admin.userId}/policies`)
        .set(admin())
        .send({ policies: [[]] });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
    });
  });

  describe('unknown query parameters', () => {
    const SETTINGS = '/api/v1/tenant/settings';

    it('refuses PUT /api/v1/tenant/settings?dryRun=true with 400 and applies nothing', async () => {
      const res = await t
        .http()
        .put(`${SETTINGS}?dryRun=true`)
        .set(admin())
        .send({ maintenanceWindowEnabled: true });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(res.body.message).toEqual(['property dryRun should not exist']);
      const now = await t.http().get(SETTINGS).set(admin());
      expect(now.body.maintenanceWindowEnabled).toBe(false);
    });

    it('still answers 401 and 403 first', async () => {
      expect((await t.http().put(`${SETTINGS}?dryRun=true`).send({})).status).toBe(401);
      const member = await newUser(t, t.admin);
      const res = await t.http().put(`${SETTINGS}?dryRun=true`).set(bearer(member.token)).send({});
      expect(res.status).toBe(403);
    });

    it('refuses them on routes with a query DTO, prototype keys included', async () => {
      const res = await t.http().get('/api/v1/users?first=5&dryRun=1&constructor=x&__proto__=y').set(admin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(res.body.message).toEqual(
        expect.arrayContaining([
          'property __proto__ should not exist',
          'property constructor should not exist',
        ]),
      );
      expect((await t.http().get('/api/v1/users?first=5').set(admin())).status).toBe(200);
    });

    it('refuses prototype keys in bodies instead of dropping them', async () => {
      const before = await counts();
      const res = await rawJson('post', '/api/v1/groups', '{"name":"proto","__proto__":{"x":1}}');
      expect(res.status).toBe(400);
      expect(res.body.message).toEqual(['property __proto__ should not exist']);
      expect(await counts()).toEqual(before);
    });

    it('accepts the SCIM list parameters, and refuses others in the SCIM error schema', async () => {
      const scim = scimClient(t);
      const ok = await scim.get(
        '/Users?filter=userName%20eq%20%22nobody%40acme.test%22&startIndex=1&count=10&sortBy=userName&sortOrder=ascending&attributes=userName',
      );
      expect(ok.status).toBe(200);
      expect(ok.body.totalResults).toBe(0);
      expect((await scim.get('/Groups?excludedAttributes=members')).status).toBe(200);
      expectScimError(await scim.get('/Users?dryRun=true'), 400);
      // (Discovery endpoints ignore them, as RFC 7644 section 4 says: scim-protocol.e2e-part.ts.)
      expectScimError(await scim.get('/Groups/1?x=1'), 400);
    });

    it('leaves the OAuth callback open to the parameters providers add', async () => {
      const res = await t
        .http()
        .get('/api/v1/oauth/callback?state=unknown&code=c&iss=https%3A%2F%2Fidp&session_state=s');
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_oauth_state');
    });
  });

  describe('bodies that are not JSON', () => {
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])(
      'refuses a %s body with 415 and changes nothing',
      async (type) => {
        const before = await counts();
        const created = await t
          .http()
          .post('/api/v1/users')
          .set(admin())
          .set('Content-Type', type)
          .send('{"email":"plain@acme.test","username":"plain"}');
        expect(created.status).toBe(415);
        expectErrorShape(created.body, 415, 'unsupported_media_type');
        const updated = await t
          .http()
          .put('/api/v1/tenant/settings')
          .set(admin())
          .set('Content-Type', type)
          .send('maintenanceWindowEnabled=true');
        expect(updated.status).toBe(415);
        expect(await counts()).toEqual(before);
        expect(
          (await t.http().get('/api/v1/tenant/settings').set(admin())).body.maintenanceWindowEnabled,
        ).toBe(false);
      },
    );

    it('refuses a body without a Content-Type', async () => {
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const body = '{"name":"untyped"}';
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/groups',
            headers: { ...admin(), 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).toBe(415);
      expect(await count(`groups WHERE name = 'untyped'`)).toBe(0);
    });

    it('needs no Content-Type for a request without a body', async () => {
      const key = await t.http().post('/api/v1/api-keys').set(admin()).send({ name: 'to revoke' });
      expect(key.status).toBeLessThan(300);
      const res = await t
        .http()
        .delete(`/api/v1/api-keys/${key.body.id}`)
        .set(admin())
        .set('Content-Type', 'text/plain')
        .set('Content-Length', '0');
      expect(res.status).toBeLessThan(300);
      expect((await t.http().get('/api/v1/users/me').set(admin())).status).toBe(200);
    });

    it('accepts application/scim+json on SCIM and a charset parameter on JSON', async () => {
      const scim = scimClient(t);
      await createUser(scim, 'typed@acme.test');
      const res = await t
        .http()
        .post('/api/v1/groups')
        .set(admin())
        .set('Content-Type', 'application/json; charset=utf-8')
        .send('{"name":"typed"}');
      expect(res.status).toBeLessThan(300);
    });
  });
});
