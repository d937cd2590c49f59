import type { Response } from 'supertest';
import { bearer, type Actor, type TestApp } from './app.js';
import { waitFor } from './factories.js';

export const SCIM = '/api/scim/v2';
export const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_URN = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_URN = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SEARCH_URN = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
export const ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type Headers = Record<string, string>;

export interface ScimMeta {
  resourceType: string;
  created: string;
  lastModified: string;
  location: string;
  version: string;
}

export interface ScimRef {
  value: string;
  display: string;
  $ref: string;
  type: string;
}

export interface ScimUser {
  schemas: string[];
  id: string;
  externalId?: string;
  userName: string;
  name?: { formatted?: string; givenName?: string; familyName?: string };
  displayName?: string;
  title?: string;
  active: boolean;
  emails: Array<{ value: string; type: string; primary: boolean }>;
  groups?: ScimRef[];
  meta: ScimMeta;
}

export interface ScimGroup {
  schemas: string[];
  id: string;
  externalId?: string;
  displayName: string;
  members?: ScimRef[];
  meta: ScimMeta;
}

/**
 * A SCIM client of the test app, sending `application/scim+json` as identity providers do
 * (supertest parses the `+json` responses).
 */
export function scimClient(t: TestApp, actor: Actor | null = t.admin) {
  const auth = (): Headers => (actor ? bearer(actor.token) : {});
  const body = (method: 'post' | 'put' | 'patch', path: string, payload: unknown, headers: Headers = {}) =>
    t
      .http()
      [method](`${SCIM}${path}`)
      .set({ ...auth(), 'Content-Type': 'application/scim+json', ...headers })
      .send(JSON.stringify(payload));
  return {
    get: (path: string, headers: Headers = {}) =>
      t
        .http()
        .get(`${SCIM}${path}`)
        .set({ ...auth(), ...headers }),
    post: (path: string, payload: unknown, headers?: Headers) => body('post', path, payload, headers),
    put: (path: string, payload: unknown, headers?: Headers) => body('put', path, payload, headers),
    patch: (path: string, payload: unknown, headers?: Headers) => body('patch', path, payload, headers),
    delete: (path: string, headers: Headers = {}) =>
      t
        .http()
        .delete(`${SCIM}${path}`)
        .set({ ...auth(), ...headers }),
  };
}

export type ScimClient = ReturnType<typeof scimClient>;

/** A SCIM error response (RFC 7644 section 3.12) in `application/scim+json`. */
export function expectScimError(res: Response, status: number, scimType?: string): void {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
    status,
    type: expect.stringMatching(/^application\/scim\+json/),
  });
  expect(res.body).toEqual({
    schemas: [ERROR_URN],
    status: String(status),
    ...(scimType ? { scimType } : {}),
    detail: expect.any(String),
  });
}

/** A success response in `application/scim+json; charset=utf-8`. */
export function expectScimJson(res: Response, status: number): void {
  expect({ status: res.status, body: res.status >= 400 ? res.body : undefined }).toEqual({
    status,
    body: undefined,
  });
  expect(res.headers['content-type']).toBe('application/scim+json; charset=utf-8');
}

export const patchOp = (...operations: unknown[]) => ({ schemas: [PATCH_URN], Operations: operations });

let seq = 0;
/** A unique user name (an email address) for this test run. */
export const uniqueEmail = (prefix = 'user') => `${prefix}${++seq}.${Date.now().toString(36)}@example.com`;

/** A User resource as Okta and Entra send it. */
export function userBody(userName: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER_URN],
    userName,
    name: { givenName: 'Jane', familyName: 'Doe' },
    emails: [{ value: userName, type: 'work', primary: true }],
    active: true,
    ...fields,
  };
}

export async function createUser(
  client: ScimClient,
  userName = uniqueEmail(),
  fields: Record<string, unknown> = {},
): Promise<ScimUser> {
  const res = await client.post('/Users', userBody(userName, fields));
  if (res.status !== 201) throw new Error(`create user: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createGroup(
  client: ScimClient,
  displayName: string,
  members: string[] = [],
  fields: Record<string, unknown> = {},
): Promise<ScimGroup> {
  const res = await client.post('/Groups', {
    schemas: [GROUP_URN],
    displayName,
    members: members.map((value) => ({ value })),
    ...fields,
  });
  if (res.status !== 201) throw new Error(`create group: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A body with the scheme and host taken out of its URLs (supertest serves each request on its own port). */
export function withoutHost<T>(body: T): T {
  return JSON.parse(JSON.stringify(body).replace(/https?:\/\/[^/"]+(?=\/api\/scim\/v2)/g, '')) as T;
}

/**
 * Holds a row lock in a transaction of the test's own while `during` runs, then commits: the
 * requests `during` starts queue up behind it in a known order. `waitForBlocked(n)` resolves
 * once n statements of the test database wait for a lock.
 */
export async function holdingLock(
  t: TestApp,
  lockSql: string,
  params: unknown[],
  during: (waitForBlocked: (n: number) => Promise<void>) => Promise<void>,
): Promise<void> {
  const runner = t.dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    await runner.query(lockSql, params);
    await during(async (n) => {
      const blocked = await waitFor(
        async () =>
          (
            await t.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          )[0].n,
        (count) => count >= n,
      );
      if (blocked < n) throw new Error(`only ${blocked} of ${n} requests are waiting for a lock`);
    });
  } finally {
    await runner.commitTransaction();
    await runner.release();
  }
}

/** Starts a supertest request now (it is lazy otherwise), for requests that race each other. */
export const started = (test: PromiseLike<Response>): Promise<Response> =>
  Promise.resolve(test.then((r) => r));
