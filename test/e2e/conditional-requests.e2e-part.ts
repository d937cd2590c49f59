import pg from 'pg';
import type request from 'supertest';
import { ConditionalRequests, resourceKey } from '../../src/core/http/conditional/conditional-requests.js';
import { advisoryKey } from '../../src/core/http/conditional/resource-locks.js';
import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { postDeployment, waitFor } from '../support/factories.js';
import { newReport } from '../support/reports.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/** A kind of resource: where it is, and a write that changes it to the `n`th value. */
interface Kind {
  name: string;
  path: string;
  method: 'put' | 'patch';
  body: (n: number) => Json;
  /** The value of the field the write changes, read from the resource. */
  value: (resource: Json) => unknown;
  /** The value the `n`th write gives it. */
  expected: (n: number) => unknown;
}

const STRONG_TAG = /^"[\x21\x23-\x7e]+"$/;

/**
 * Conditional requests over HTTP (docs/api-conventions.md, "Conditional requests"): ETags on GET,
 * 304, and If-Match / If-None-Match on PUT, PATCH and DELETE, on several kinds of resource, with
 * writers one after the other and at once. SCIM keeps its own rules (test/e2e/scim.e2e-spec.ts).
 */
describe('conditional requests (ETag, If-Match, If-None-Match)', () => {
  let t: TestApp;
  let other: Actor;
  let dep: number;
  let kinds: Kind[];
  let counter = 0;
  const as = (actor: Actor = t.admin) => bearer(actor.token);
  const next = () => (counter += 1);

  const read = (path: string, actor: Actor = t.admin) => t.http().get(path).set(as(actor));
  const tagOf = async (path: string): Promise<string> => {
    const res = await read(path).expect(200);
    return res.headers.etag;
  };
  const write = (kind: Kind, n: number, headers: Record<string, string> = {}, actor: Actor = t.admin) =>
    t.http()[kind.method](kind.path).set(as(actor)).set(headers).send(kind.body(n));
  const valueOf = async (kind: Kind) => kind.value((await read(kind.path).expect(200)).body as Json);

  async function newWorkbook(name = `Workbook ${next()}`): Promise<string> {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workbooks`)
      .set(as())
      .send({ name })
      .expect(200);
    return `/api/v1/deployments/${dep}/workbooks/${res.body.id}`;
  }

  async function newGroup(): Promise<string> {
    const res = await t
      .http()
      .post('/api/v1/groups')
      .set(as())
      .send({ name: `Group ${next()}` })
      .expect(200);
    return `/api/v1/groups/${res.body.id}`;
  }

  /** A notification of a published dashboard of `dep`. */
  async function newNotification(): Promise<string> {
    const wb = (
      await t
        .http()
        .post(`/api/v1/deployments/${dep}/workbooks`)
        .set(as())
        .send({ name: 'Sales' })
        .expect(200)
    ).body.id as number;
    const report = await newReport(t, t.admin, dep, { name: 'Orders', workbookId: wb });
    const published = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
      .set(as())
      .send({
        workbookId: wb,
        title: 'Weekly sales',
        config: {
          widgets: [
            {
              id: 'w1',
              type: 'CHART',
              position: { x: 0, y: 0, w: 6, h: 4 },
              config: { reportId: report.id },
            },
          ],
        },
      })
      .expect(200);
    const made = await t
      .http()
      .post(`/api/v1/deployments/${dep}/notifications`)
      .set(as())
      .send({ dashboardId: published.body.id, scheduleType: 'DAILY', hour: 9, minute: 0 })
      .expect(200);
    return `/api/v1/deployments/${dep}/notifications/${made.body.id}`;
  }

  async function newEmbedGroup(): Promise<string> {
    const res = await t
      .http()
      .post('/api/v1/embed-tenants/northwind/groups')
      .set(as())
      .send({ name: `Embed group ${next()}` })
      .expect(200);
    return `/api/v1/embed-tenants/northwind/groups/${res.body.id}`;
  }

  beforeAll(async () => {
    // A long rate-limit window, so the counter read below never restarts between two requests.
    t = await startApp({ OUTBOX_RELAY_INTERVAL_MS: '600000', RATE_LIMIT_WINDOW_SECONDS: '86400' });
    other = await newAccount(t, 'globex');
    dep = (await postDeployment(t, t.admin, { name: 'Conditional' })).id;
    const byName = (label: string) => (n: number) => ({ name: `${label} ${n}` });
    kinds = [
      {
        name: 'deployment',
        path: `/api/v1/deployments/${(await postDeployment(t, t.admin, { name: 'Deployment 0' })).id}`,
        method: 'put',
        body: byName('Deployment'),
        value: (r) => r.name,
        expected: (n) => `Deployment ${n}`,
      },
      {
        name: 'workbook',
        path: await newWorkbook(),
        method: 'put',
        body: byName('Workbook'),
        value: (r) => r.name,
        expected: (n) => `Workbook ${n}`,
      },
      {
        name: 'user group',
        path: await newGroup(),
        method: 'put',
        body: byName('Group'),
        value: (r) => r.name,
        expected: (n) => `Group ${n}`,
      },
      {
        name: 'notification',
        path: await newNotification(),
        method: 'put',
        body: (n) => ({ hour: n % 24 }),
        value: (r) => r.hour,
        expected: (n) => n % 24,
      },
      {
        name: 'embed tenant group (PATCH)',
        path: await newEmbedGroup(),
        method: 'patch',
        body: (n) => ({ description: `Description ${n}` }),
        value: (r) => r.description,
        expected: (n) => `Description ${n}`,
      },
    ];
  });

  afterAll(async () => {
    await t.close();
  });

  describe('GET', () => {
    it('answers a strong ETag, 304 without a body to If-None-Match naming it, and a new tag once changed', async () => {
      for (const kind of kinds) {
        const first = await read(kind.path).expect(200);
        const tag = first.headers.etag;
        expect({ kind: kind.name, strong: STRONG_TAG.test(tag) }).toEqual({ kind: kind.name, strong: true });
        // The same bytes, the same tag.
        expect(await tagOf(kind.path)).toBe(tag);

        const notModified = await read(kind.path).set('If-None-Match', tag);
        expect({ kind: kind.name, status: notModified.status, body: notModified.text }).toEqual({
          kind: kind.name,
          status: 304,
          body: '',
        });
        expect(notModified.headers.etag).toBe(tag);
        expect((await read(kind.path).set('If-None-Match', `"other", ${tag}`)).status).toBe(304);

        // A write without preconditions works as before.
        const n = next();
        const written = await write(kind, n).expect(200);
        // A write's answer is not always the resource as a GET shows it: it carries no tag.
        expect({ kind: kind.name, etag: written.headers.etag }).toEqual({ kind: kind.name, etag: undefined });
        const changed = await read(kind.path).set('If-None-Match', tag);
        expect({ kind: kind.name, status: changed.status }).toEqual({ kind: kind.name, status: 200 });
        expect(kind.value(changed.body as Json)).toEqual(kind.expected(n));
        expect(changed.headers.etag).toMatch(STRONG_TAG);
        expect(changed.headers.etag).not.toBe(tag);
      }
    });
  });

  describe('If-Match', () => {
    it('lets a writer holding the current tag change the resource, then refuses the second writer holding the old one (412, the first change kept)', async () => {
      for (const kind of kinds) {
        const tag = await tagOf(kind.path);
        const firstValue = next();
        const first = await write(kind, firstValue, { 'If-Match': tag });
        expect({ kind: kind.name, status: first.status }).toEqual({ kind: kind.name, status: 200 });
        const current = await tagOf(kind.path);
        expect(current).not.toBe(tag);

        const second = await write(kind, next(), { 'If-Match': tag });
        expect({ kind: kind.name, status: second.status }).toEqual({ kind: kind.name, status: 412 });
        expectErrorShape(second.body, 412, 'precondition_failed');
        // The answer names the current tag, so the client can read again and decide.
        expect(second.headers.etag).toBe(current);
        expect(await valueOf(kind)).toEqual(kind.expected(firstValue));
        expect(await tagOf(kind.path)).toBe(current);
      }
    });

    it('lets exactly one of two writers sent at once with the same tag through; the other gets 412', async () => {
      for (const kind of kinds) {
        for (let round = 0; round < 3; round += 1) {
          const tag = await tagOf(kind.path);
          const [a, b] = [next(), next()];
          const answers = await Promise.all([
            write(kind, a, { 'If-Match': tag }),
            write(kind, b, { 'If-Match': tag }),
          ]);
          const statuses = answers.map((r) => r.status).sort();
          expect({ kind: kind.name, statuses }).toEqual({ kind: kind.name, statuses: [200, 412] });
          const winner = answers[0].status === 200 ? a : b;
          expect(await valueOf(kind)).toEqual(kind.expected(winner));
          expectErrorShape(answers.find((r) => r.status === 412)!.body, 412, 'precondition_failed');
        }
      }
    });

    it('accepts the current tag among others, and * for any current representation', async () => {
      const kind = kinds[1];
      const tag = await tagOf(kind.path);
      await write(kind, next(), { 'If-Match': `"stale", ${tag}` }).expect(200);
      const n = next();
      await write(kind, n, { 'If-Match': '*' }).expect(200);
      expect(await valueOf(kind)).toEqual(kind.expected(n));
    });

    it('never matches a weak tag (strong comparison)', async () => {
      const kind = kinds[2];
      const before = await read(kind.path).expect(200);
      const res = await write(kind, next(), { 'If-Match': `W/${before.headers.etag}` });
      expect(res.status).toBe(412);
      expectErrorShape(res.body, 412, 'precondition_failed');
      expect((await read(kind.path).expect(200)).body).toEqual(before.body);
    });

    it('DELETE with a stale tag answers 412 and leaves the resource; with the current tag it deletes', async () => {
      for (const path of [await newWorkbook(), await newGroup()]) {
        const tag = await tagOf(path);
        await t
          .http()
          .put(path)
          .set(as())
          .send({ name: `Renamed ${next()}` })
          .expect(200);
        const stale = await t.http().delete(path).set(as()).set('If-Match', tag);
        expect({ path, status: stale.status }).toEqual({ path, status: 412 });
        expectErrorShape(stale.body, 412, 'precondition_failed');
        await read(path).expect(200);

        const current = await tagOf(path);
        const deleted = await t.http().delete(path).set(as()).set('If-Match', current);
        expect({ path, deleted: deleted.status === 200 || deleted.status === 204 }).toEqual({
          path,
          deleted: true,
        });
        expect((await read(path)).status).toBe(404);
      }
    });

    it('answers the 404 of a missing resource, and of another account’s, never 412', async () => {
      const gone = await newWorkbook();
      await t.http().delete(gone).set(as()).expect(200);
      const plain = await t.http().put(gone).set(as()).send({ name: 'Back' });
      expect(plain.status).toBe(404);
      for (const ifMatch of ['*', '"some-tag"']) {
        const missing = await t.http().put(gone).set(as()).set('If-Match', ifMatch).send({ name: 'Back' });
        expect({ ifMatch, status: missing.status, code: missing.body.code }).toEqual({
          ifMatch,
          status: 404,
          code: plain.body.code,
        });
      }

      // Another account's workbook and group: the same 404 as without the header.
      for (const kind of [kinds[1], kinds[2]]) {
        const tag = await tagOf(kind.path);
        const without = await write(kind, next(), {}, other);
        expect(without.status).toBe(404);
        for (const ifMatch of [tag, '"stale"', '*']) {
          const res = await write(kind, next(), { 'If-Match': ifMatch }, other);
          expect({ kind: kind.name, ifMatch, status: res.status, code: res.body.code }).toEqual({
            kind: kind.name,
            ifMatch,
            status: 404,
            code: without.body.code,
          });
        }
        const deleted = await t.http().delete(kind.path).set(as(other)).set('If-Match', tag);
        expect(deleted.status).toBe(404);
        expect(await tagOf(kind.path)).toBe(tag);
      }
    });

    it('answers 401 without a valid token and 403 to a caller without the action, changing nothing', async () => {
      const kind = kinds[2];
      const tag = await tagOf(kind.path);
      const anonymous = await t.http().put(kind.path).set('If-Match', tag).send(kind.body(next()));
      expect(anonymous.status).toBe(401);
      expectErrorShape(anonymous.body, 401, 'unauthorized');
      const badToken = await t
        .http()
        .put(kind.path)
        .set(bearer('pat_not-a-token'))
        .set('If-Match', tag)
        .send(kind.body(next()));
      expect(badToken.status).toBe(401);
      const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const refused = await write(kind, next(), { 'If-Match': tag }, viewer);
      const withoutHeader = await write(kind, next(), {}, viewer);
      expect(refused.status).toBe(withoutHeader.status);
      expect([403, 404]).toContain(refused.status);
      expect(await tagOf(kind.path)).toBe(tag);
    });

    it.each([
      ['an unquoted tag', 'abc'],
      ['an unterminated tag', '"abc'],
      ['* in a list', '*, "abc"'],
      ['a list with garbage', '"a" garbage'],
    ])('refuses %s with 400 invalid_precondition, changing nothing', async (_what, value) => {
      const kind = kinds[1];
      const tag = await tagOf(kind.path);
      const res = await write(kind, next(), { 'If-Match': value });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_precondition');
      const noneMatch = await write(kind, next(), { 'If-None-Match': value });
      expect(noneMatch.status).toBe(400);
      expectErrorShape(noneMatch.body, 400, 'invalid_precondition');
      expect(await tagOf(kind.path)).toBe(tag);
    });
  });

  describe('If-None-Match on a write', () => {
    it('refuses * and the current tag with 412 while the resource exists; acts on another tag', async () => {
      const kind = kinds[0];
      const tag = await tagOf(kind.path);
      for (const value of ['*', tag, `W/${tag}`]) {
        const res = await write(kind, next(), { 'If-None-Match': value });
        expect({ value, status: res.status }).toEqual({ value, status: 412 });
        expectErrorShape(res.body, 412, 'precondition_failed');
        expect(res.headers.etag).toBe(tag);
      }
      expect(await tagOf(kind.path)).toBe(tag);
      const n = next();
      await write(kind, n, { 'If-None-Match': '"another"' }).expect(200);
      expect(await valueOf(kind)).toEqual(kind.expected(n));
    });

    it('passes a write of a missing resource to its handler', async () => {
      const gone = await newWorkbook();
      await t.http().delete(gone).set(as()).expect(200);
      const res = await t.http().put(gone).set(as()).set('If-None-Match', '*').send({ name: 'Back' });
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'workbook_not_found');
    });
  });

  describe('routes without a GET of the same path', () => {
    it('refuse If-Match and If-None-Match with 400 precondition_unsupported; without them they write', async () => {
      const folder = (
        await t.http().post(`/api/v1/deployments/${dep}/folders`).set(as()).send({ name: 'F' }).expect(200)
      ).body.id as number;
      const folderPath = `/api/v1/deployments/${dep}/folders/${folder}`;
      // A list's GET (first/after) is no representation of the whole list.
      const envVars = `/api/v1/deployments/${dep}/env-vars`;
      const envTag = await tagOf(envVars);
      for (const [path, body] of [
        [folderPath, { name: 'G' }],
        [envVars, { env_variables: [{ name: 'CUBEJS_DB_HOST', value: 'db.internal' }] }],
      ] as const) {
        for (const header of ['If-Match', 'If-None-Match']) {
          const res = await t.http().put(path).set(as()).set(header, envTag).send(body);
          expect({ path, header, status: res.status }).toEqual({ path, header, status: 400 });
          expectErrorShape(res.body, 400, 'precondition_unsupported');
        }
      }
      expect(await tagOf(envVars)).toBe(envTag);
      await t.http().put(folderPath).set(as()).send({ name: 'G' }).expect(200);
      // DELETE of a folder is a write without a GET too.
      const del = await t.http().delete(folderPath).set(as()).set('If-Match', '*');
      expect(del.status).toBe(400);
      expectErrorShape(del.body, 400, 'precondition_unsupported');
    });

    it('ignore the headers on POST, as before', async () => {
      const res = await t
        .http()
        .post(`/api/v1/deployments/${dep}/workbooks`)
        .set(as())
        .set('If-Match', '"anything"')
        .send({ name: `Posted ${next()}` });
      expect(res.status).toBe(200);
    });
  });

  describe('one conditional write of a resource at a time', () => {
    /** Holds the resource's advisory lock from a connection of the test's own. */
    async function holdLock(path: string) {
      const client = new pg.Client({ connectionString: t.databaseUrl });
      await client.connect();
      await client.query('SELECT pg_advisory_lock($1::bigint)', [advisoryKey(resourceKey(path)).toString()]);
      return client;
    }
    const waitingForLock = async () =>
      (
        await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      )[0].n;

    it('waits for the writer holding the resource, then evaluates against what it left', async () => {
      const kind = kinds[1];
      const tag = await tagOf(kind.path);
      const holder = await holdLock(kind.path);
      let answered: request.Response | null = null;
      const n = next();
      const pending = write(kind, n, { 'If-Match': tag }).then((r) => (answered = r));
      try {
        expect(await waitFor(waitingForLock, (count) => count === 1)).toBe(1);
        expect(answered).toBeNull();
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()');
        await holder.end();
      }
      const res = await pending;
      expect(res.status).toBe(200);
      expect(await valueOf(kind)).toEqual(kind.expected(n));
    });

    it('answers 409 resource_busy with Retry-After when the resource stays held past the wait, changing nothing', async () => {
      const kind = kinds[2];
      const tag = await tagOf(kind.path);
      const holder = await holdLock(kind.path);
      try {
        const res = await write(kind, next(), { 'If-Match': tag });
        expect(res.status).toBe(409);
        expectErrorShape(res.body, 409, 'resource_busy');
        expect(res.headers['retry-after']).toBe('1');
      } finally {
        await holder.end();
      }
      expect(await tagOf(kind.path)).toBe(tag);
      // An unconditional write takes no lock.
      await write(kind, next()).expect(200);
    });
  });

  it('counts a conditional write once against the rate limit (its read is not counted)', async () => {
    const kind = kinds[1];
    const remaining = (res: request.Response) =>
      Number(/; r=(\d+);/.exec(String(res.headers.ratelimit))?.[1] ?? NaN);
    const before = await read(kind.path).expect(200);
    const conditional = await write(kind, next(), { 'If-Match': before.headers.etag }).expect(200);
    const after = await read(kind.path).expect(200);
    expect([remaining(before) - remaining(conditional), remaining(conditional) - remaining(after)]).toEqual([
      1, 1,
    ]);
  });

  it('documents If-Match on exactly the writes that take it, and 400 precondition_unsupported on the others', () => {
    const document = t.app.get(OpenApiDocument).get() as Json;
    const routes = t.app.get(ConditionalRequests).routes.writes();
    expect(routes.length).toBeGreaterThan(40);
    const mismatches: string[] = [];
    for (const { write: route, read: sibling } of routes) {
      const path = route.declared.replace(/:([^/]+)/g, '{$1}');
      const op = document.paths[path]?.[route.method.toLowerCase()] as Json | undefined;
      if (!op || path.startsWith('/api/scim/')) continue;
      const documented = (op.parameters ?? []).some((p: Json) => p.in === 'header' && p.name === 'If-Match');
      const unsupported = Object.keys(
        op.responses['400']?.content?.['application/json']?.examples ?? {},
      ).includes('precondition_unsupported');
      if (documented !== (sibling !== null) || unsupported === (sibling !== null))
        mismatches.push(`${route.method} ${path}`);
    }
    expect(mismatches).toEqual([]);
  });
});
