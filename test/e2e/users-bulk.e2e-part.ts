import { Client } from 'pg';
import type { Response } from 'supertest';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';

const BULK = '/api/v1/users/bulk';
const SETTINGS = '/api/v1/users/me/settings';
const MISSING = 2_000_000_000;

interface BulkResult {
  action: string;
  succeeded: number[];
  failed: Array<{ userId: number; error: { status: number; message: string } }>;
}

describe('bulk user actions and user settings', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
  });
  afterAll(() => t.close());

  const admin = () => bearer(t.admin.token);
  /** Turns a supertest request into a plain promise, so it can go into Promise.all. */
  const run = (req: PromiseLike<Response>): Promise<Response> => Promise.resolve(req);

  function bulk(body: unknown, token = t.admin.token) {
    return t
      .http()
      .post(BULK)
      .set(bearer(token))
      .send(body as object);
  }

  async function bulkOk(action: string, userIds: number[], token = t.admin.token): Promise<BulkResult> {
    const res = await bulk({ action, userIds }, token);
    expect(res.status).toBe(200);
    return res.body as BulkResult;
  }

  function me(token: string) {
    return t.http().get('/api/v1/users/me').set(bearer(token));
  }

  async function deactivated(userId: number): Promise<boolean | undefined> {
    const rows = await t.sql<{ is_deactivated: boolean }>(`SELECT is_deactivated FROM users WHERE id = $1`, [
      userId,
    ]);
    return rows[0]?.is_deactivated;
  }

  async function storedSettings(userId: number): Promise<Record<string, unknown>> {
    const rows = await t.sql<{ settings: Record<string, unknown> }>(
      `SELECT settings FROM users WHERE id = $1`,
      [userId],
    );
    return rows[0].settings;
  }

  async function createDeployment(name: string, token = t.admin.token): Promise<number> {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(token))
      .send(deploymentInput({ name }));
    expect(res.status).toBe(200);
    return res.body.id as number;
  }

  /** An account whose only built-in admin is `acct`; `helper` is an admin by a Global All grant. */
  async function accountWithPolicyAdmin(slug: string): Promise<{ acct: Actor; helper: Actor }> {
    const acct = await newAccount(t, slug);
    const helper = await newUser(t, acct, { defaultRoles: [] });
    const grant = await t
      .http()
      .put(`/api/v1/users/${helper.userId}/policies`)
      .set(bearer(acct.token))
      .send({ policies: [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }] });
    expect(grant.status).toBe(200);
    return { acct, helper };
  }

  /**
   * Holds a row lock on one user while `work` runs, so requests that touch the row queue up in the
   * order they were sent; resolves once `work` is done and the lock released.
   */
  async function withUserRowLocked(
    userId: number,
    work: (waiting: (n: number) => Promise<void>) => Promise<void>,
  ) {
    const client = new Client({ connectionString: t.databaseUrl });
    await client.connect();
    const waiting = async (n: number) => {
      const seen = await waitFor(
        async () =>
          (
            await t.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          )[0].n,
        (count) => count >= n,
      );
      expect(seen).toBeGreaterThanOrEqual(n);
    };
    try {
      await client.query('BEGIN');
      await client.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      await work(waiting);
    } finally {
      await client.query('COMMIT').catch(() => undefined);
      await client.end();
    }
  }

  describe('POST /api/v1/users/bulk', () => {
    it('deactivates users (their tokens get 401 at once) and ACTIVATE restores the same tokens', async () => {
      const u1 = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const u2 = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await me(u1.token)).status).toBe(200);

      const off = await bulk({ action: 'DEACTIVATE', userIds: [u1.userId, u2.userId] });
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ action: 'DEACTIVATE', succeeded: [u1.userId, u2.userId], failed: [] });
      expect(await deactivated(u1.userId)).toBe(true);
      expect(await deactivated(u2.userId)).toBe(true);
      for (const u of [u1, u2]) {
        const res = await me(u.token);
        expect(res.status).toBe(401);
        expectErrorShape(res.body, 401, 'unauthorized');
      }
      const seen = await t.http().get(`/api/v1/users/${u1.userId}`).set(admin());
      expect(seen.body).toMatchObject({ id: u1.userId, isDeactivated: true });

      const on = await bulk({ action: 'ACTIVATE', userIds: [u1.userId, u2.userId] });
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ action: 'ACTIVATE', succeeded: [u1.userId, u2.userId], failed: [] });
      for (const u of [u1, u2]) {
        const res = await me(u.token);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: u.userId, isDeactivated: false });
      }
    });

    it('collapses repeated ids into one entry each and keeps the order given', async () => {
      const u1 = await newUser(t, t.admin);
      const u2 = await newUser(t, t.admin);
      const res = await bulkOk('DEACTIVATE', [
        u2.userId,
        u1.userId,
        u2.userId,
        u2.userId,
        u1.userId,
        MISSING,
        MISSING,
      ]);
      expect(res.succeeded).toEqual([u2.userId, u1.userId]);
      expect(res.failed.map((f) => f.userId)).toEqual([MISSING]);
      expect(await deactivated(u1.userId)).toBe(true);
      expect(await deactivated(u2.userId)).toBe(true);
    });

    it("reports unknown and other accounts' users as 404 and applies the rest", async () => {
      const u1 = await newUser(t, t.admin);
      const u2 = await newUser(t, t.admin);
      for (const action of ['DEACTIVATE', 'ACTIVATE', 'DELETE']) {
        const res = await bulkOk(action, [u1.userId, MISSING, other.userId, u2.userId]);
        expect(res).toEqual({
          action,
          succeeded: [u1.userId, u2.userId],
          failed: [
            { userId: MISSING, error: { status: 404, message: expect.stringContaining(String(MISSING)) } },
            {
              userId: other.userId,
              error: { status: 404, message: expect.stringContaining(String(other.userId)) },
            },
          ],
        });
      }
      expect(await deactivated(u1.userId)).toBeUndefined();
      expect(await deactivated(other.userId)).toBe(false);
      expect((await me(other.token)).status).toBe(200);
    });

    it('refuses to deactivate yourself (403 in failed) and applies the rest', async () => {
      const u = await newUser(t, t.admin);
      const res = await bulkOk('DEACTIVATE', [t.admin.userId, u.userId]);
      expect(res).toEqual({
        action: 'DEACTIVATE',
        succeeded: [u.userId],
        failed: [{ userId: t.admin.userId, error: { status: 403, message: expect.any(String) } }],
      });
      expect(await deactivated(t.admin.userId)).toBe(false);
      expect((await me(t.admin.token)).status).toBe(200);
      expect(await deactivated(u.userId)).toBe(true);
      // Activating yourself changes nothing and succeeds.
      expect(await bulkOk('ACTIVATE', [t.admin.userId])).toEqual({
        action: 'ACTIVATE',
        succeeded: [t.admin.userId],
        failed: [],
      });
    });

    it('refuses to delete yourself (400 in failed) and applies the rest', async () => {
      const u = await newUser(t, t.admin);
      const res = await bulkOk('DELETE', [u.userId, t.admin.userId]);
      expect(res).toEqual({
        action: 'DELETE',
        succeeded: [u.userId],
        failed: [{ userId: t.admin.userId, error: { status: 400, message: expect.any(String) } }],
      });
      expect((await me(t.admin.token)).status).toBe(200);
      expect(await deactivated(u.userId)).toBeUndefined();
    });

    it('succeeds without a change when the user is already in the requested state', async () => {
      const u = await newUser(t, t.admin);
      const stamp = async () =>
        (await t.sql<{ at: string }>(`SELECT updated_at::text AS at FROM users WHERE id = $1`, [u.userId]))[0]
          .at;
      const active = await stamp();
      expect(await bulkOk('ACTIVATE', [u.userId])).toEqual({
        action: 'ACTIVATE',
        succeeded: [u.userId],
        failed: [],
      });
      expect(await stamp()).toBe(active);

      expect((await bulkOk('DEACTIVATE', [u.userId])).succeeded).toEqual([u.userId]);
      const off = await stamp();
      expect(await bulkOk('DEACTIVATE', [u.userId])).toEqual({
        action: 'DEACTIVATE',
        succeeded: [u.userId],
        failed: [],
      });
      expect(await stamp()).toBe(off);
      expect(await deactivated(u.userId)).toBe(true);
    });

    it('keeps the last active admin (403 in failed) while the rest of the batch applies', async () => {
      const { acct, helper } = await accountWithPolicyAdmin('initech');
      const second = await newUser(t, acct, { defaultRoles: ['Admin'] });
      const plain = await newUser(t, acct, { defaultRoles: ['Viewer'] });

      // `second` goes first and succeeds; `acct` is then the last built-in admin and stays.
      const off = await bulkOk('DEACTIVATE', [second.userId, acct.userId, plain.userId], helper.token);
      expect(off).toEqual({
        action: 'DEACTIVATE',
        succeeded: [second.userId, plain.userId],
        failed: [{ userId: acct.userId, error: { status: 403, message: expect.any(String) } }],
      });
      expect(await deactivated(second.userId)).toBe(true);
      expect(await deactivated(acct.userId)).toBe(false);
      expect((await me(acct.token)).status).toBe(200);

      const del = await bulkOk('DELETE', [acct.userId], helper.token);
      expect(del.failed).toEqual([
        { userId: acct.userId, error: { status: 403, message: expect.any(String) } },
      ]);
      expect(await deactivated(acct.userId)).toBe(false);

      // A deactivated admin does not count, and can be deleted.
      expect((await bulkOk('DELETE', [second.userId], helper.token)).succeeded).toEqual([second.userId]);

      // With another active admin, the first can go; then the other is the last.
      const third = await newUser(t, acct, { defaultRoles: ['Admin'] });
      const both = await bulkOk('DELETE', [acct.userId, third.userId], helper.token);
      expect(both).toEqual({
        action: 'DELETE',
        succeeded: [acct.userId],
        failed: [{ userId: third.userId, error: { status: 403, message: expect.any(String) } }],
      });
      expect(await deactivated(third.userId)).toBe(false);
      const active = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM users
         WHERE account_id = $1 AND is_deactivated = false AND 'Admin' = ANY(default_roles)`,
        [acct.accountId],
      );
      expect(active[0].n).toBe(1);
    });

    it('DELETE removes the users with their memberships and grants', async () => {
      const u1 = await newUser(t, t.admin);
      const u2 = await newUser(t, t.admin);
      const group = await t.http().post('/api/v1/groups').set(admin()).send({ name: 'Bulk deleted members' });
      expect(group.status).toBe(200);
      expect(
        (await t.http().put(`/api/v1/groups/${group.body.id}/users/${u1.userId}`).set(admin())).status,
      ).toBe(204);
      const grant = await t
        .http()
        .put(`/api/v1/users/${u2.userId}/policies`)
        .set(admin())
        .send({ policies: [{ resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] }] });
      expect(grant.status).toBe(200);

      expect(await bulkOk('DELETE', [u1.userId, u2.userId])).toEqual({
        action: 'DELETE',
        succeeded: [u1.userId, u2.userId],
        failed: [],
      });
      for (const u of [u1, u2]) {
        const get = await t.http().get(`/api/v1/users/${u.userId}`).set(admin());
        expect(get.status).toBe(404);
        expectErrorShape(get.body, 404, 'user_not_found');
        expect((await me(u.token)).status).toBe(401);
      }
      expect(await t.sql(`SELECT 1 FROM group_members WHERE user_id = $1`, [u1.userId])).toHaveLength(0);
      expect(
        await t.sql(`SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`, [
          u2.userId,
        ]),
      ).toHaveLength(0);

      const again = await bulkOk('DELETE', [u1.userId]);
      expect(again.failed).toEqual([
        { userId: u1.userId, error: { status: 404, message: expect.any(String) } },
      ]);
    });

    it('DELETE and ACTIVATE work on deactivated users', async () => {
      const u1 = await newUser(t, t.admin);
      const u2 = await newUser(t, t.admin);
      await bulkOk('DEACTIVATE', [u1.userId, u2.userId]);
      expect((await bulkOk('DELETE', [u1.userId])).succeeded).toEqual([u1.userId]);
      expect(await deactivated(u1.userId)).toBeUndefined();
      expect((await bulkOk('ACTIVATE', [u2.userId])).succeeded).toEqual([u2.userId]);
      expect((await me(u2.token)).status).toBe(200);
    });

    it('accepts 100 ids', async () => {
      const u = await newUser(t, t.admin);
      const ids = [u.userId, ...Array.from({ length: 99 }, (_, i) => MISSING + i)];
      const res = await bulkOk('DEACTIVATE', ids);
      expect(res.succeeded).toEqual([u.userId]);
      expect(res.failed).toHaveLength(99);
      expect(res.failed.every((f) => f.error.status === 404)).toBe(true);
      expect(res.failed.map((f) => f.userId)).toEqual(ids.slice(1));
    });

    it('refuses bad input with 400 and changes nothing', async () => {
      const target = await newUser(t, t.admin);
      const many = Array.from({ length: 101 }, (_, i) => (i === 0 ? target.userId : MISSING + i));
      const cases: Array<[unknown, string]> = [
        [{ action: 'DEACTIVATE', userIds: [] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: many }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, '2'] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [String(target.userId)] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, 1.5] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, 0] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, -3] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, 2_147_483_648] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: [target.userId, null] }, 'userIds'],
        [{ action: 'DEACTIVATE', userIds: target.userId }, 'userIds'],
        [{ action: 'DEACTIVATE' }, 'userIds'],
        [{ action: 'SUSPEND', userIds: [target.userId] }, 'action'],
        [{ action: 'deactivate', userIds: [target.userId] }, 'action'],
        [{ action: 5, userIds: [target.userId] }, 'action'],
        [{ userIds: [target.userId] }, 'action'],
        [{ action: 'DEACTIVATE', userIds: [target.userId], dryRun: true }, 'dryRun'],
      ];
      for (const [body, field] of cases) {
        const res = await bulk(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      const notAnObject = await bulk([{ action: 'DEACTIVATE', userIds: [target.userId] }]);
      expect(notAnObject.status).toBe(400);
      expectErrorShape(notAnObject.body, 400);
      expect(await deactivated(target.userId)).toBe(false);
      expect((await me(target.token)).status).toBe(200);
    });

    it('is 401 without a token and 403 for a non-admin, changing nothing', async () => {
      const target = await newUser(t, t.admin);
      const developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
      const body = { action: 'DELETE', userIds: [target.userId] };
      const anon = await t.http().post(BULK).send(body);
      expect(anon.status).toBe(401);
      expectErrorShape(anon.body, 401, 'unauthorized');
      for (const who of [viewer, developer]) {
        const res = await bulk(body, who.token);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
      }
      expect(await deactivated(target.userId)).toBe(false);
    });

    it('parallel batches cannot deactivate the last two admins', async () => {
      const { acct, helper } = await accountWithPolicyAdmin('umbrella');
      const second = await newUser(t, acct, { defaultRoles: ['Admin'] });
      const results = await Promise.all(
        [acct.userId, second.userId].map((id) =>
          run(bulk({ action: 'DEACTIVATE', userIds: [id] }, helper.token)),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      const bodies = results.map((r) => r.body as BulkResult);
      expect(bodies.flatMap((b) => b.succeeded)).toHaveLength(1);
      const failures = bodies.flatMap((b) => b.failed);
      expect(failures).toHaveLength(1);
      expect(failures[0].error.status).toBe(403);
      const active = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM users
         WHERE account_id = $1 AND is_deactivated = false AND 'Admin' = ANY(default_roles)`,
        [acct.accountId],
      );
      expect(active[0].n).toBe(1);
    });

    it('parallel identical batches all succeed and leave the users deactivated', async () => {
      const users = [await newUser(t, t.admin), await newUser(t, t.admin), await newUser(t, t.admin)];
      const ids = users.map((u) => u.userId);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => run(bulk({ action: 'DEACTIVATE', userIds: ids }))),
      );
      for (const r of results) {
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ action: 'DEACTIVATE', succeeded: ids, failed: [] });
      }
      for (const id of ids) expect(await deactivated(id)).toBe(true);
    });

    it('an ACTIVATE racing an admin’s profile edit of the same user is not undone', async () => {
      const u = await newUser(t, t.admin);
      await bulkOk('DEACTIVATE', [u.userId]);
      let activate: Promise<Response> | undefined;
      let edit: Promise<Response> | undefined;
      await withUserRowLocked(u.userId, async (waiting) => {
        activate = run(bulk({ action: 'ACTIVATE', userIds: [u.userId] }));
        await waiting(1);
        edit = run(t.http().put(`/api/v1/users/${u.userId}`).set(admin()).send({ title: 'Analyst' }));
        await waiting(2);
      });
      const [a, e] = await Promise.all([activate!, edit!]);
      expect(a.status).toBe(200);
      expect(a.body.succeeded).toEqual([u.userId]);
      expect(e.status).toBe(200);
      // The edit did not touch isDeactivated: the activation must stand.
      const rows = await t.sql(`SELECT is_deactivated, title FROM users WHERE id = $1`, [u.userId]);
      expect(rows).toEqual([{ is_deactivated: false, title: 'Analyst' }]);
      expect((await me(u.token)).status).toBe(200);
    });
  });

  describe('PATCH /api/v1/users/me/settings', () => {
    let deployment: number;
    let foreignDeployment: number;
    beforeAll(async () => {
      deployment = await createDeployment('Default one');
      foreignDeployment = await createDeployment('Foreign default', other.token);
    });

    function patch(token: string, body: unknown) {
      return t
        .http()
        .patch(SETTINGS)
        .set(bearer(token))
        .send(body as object);
    }

    it('is 401 without a token', async () => {
      const res = await t.http().patch(SETTINGS).send({ theme: 'dark' });
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('lets any user merge a partial patch into their own settings only', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: [] });
      const first = await patch(u.token, { locale: 'en-US', theme: 'dark' });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        id: u.userId,
        email: u.email,
        settings: { locale: 'en-US', theme: 'dark' },
      });

      const second = await patch(u.token, {
        theme: 'light',
        timezone: 'Europe/Berlin',
        alternatingRowColors: true,
      });
      expect(second.status).toBe(200);
      const expected = {
        locale: 'en-US',
        theme: 'light',
        timezone: 'Europe/Berlin',
        alternatingRowColors: true,
      };
      expect(second.body.settings).toEqual(expected);
      expect(await storedSettings(u.userId)).toEqual(expected);
      expect((await me(u.token)).body.settings).toEqual(expected);

      const empty = await patch(u.token, {});
      expect(empty.status).toBe(200);
      expect(empty.body.settings).toEqual(expected);

      // Nobody else's settings changed.
      expect(await storedSettings(viewer.userId)).toEqual({});
      expect(await storedSettings(t.admin.userId)).not.toMatchObject({ timezone: 'Europe/Berlin' });
    });

    it('merges sheets field by field, and null clears them', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await patch(u.token, { theme: 'dark', sheets: { autoRunQueryOnChange: true } })).status).toBe(
        200,
      );
      const merged = await patch(u.token, { sheets: { showAppliedFilters: false, revealSheetOnOpen: true } });
      expect(merged.status).toBe(200);
      expect(merged.body.settings).toEqual({
        theme: 'dark',
        sheets: { autoRunQueryOnChange: true, showAppliedFilters: false, revealSheetOnOpen: true },
      });
      const flipped = await patch(u.token, { sheets: { autoRunQueryOnChange: false } });
      expect(flipped.body.settings.sheets).toEqual({
        autoRunQueryOnChange: false,
        showAppliedFilters: false,
        revealSheetOnOpen: true,
      });
      const cleared = await patch(u.token, { sheets: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.settings).toEqual({ theme: 'dark' });
      expect(await storedSettings(u.userId)).toEqual({ theme: 'dark' });
      const fresh = await patch(u.token, { sheets: { suppressDuplicateValues: true } });
      expect(fresh.body.settings.sheets).toEqual({ suppressDuplicateValues: true });
    });

    it('takes a defaultDeploymentId of the account only (400 unknown_deployment otherwise)', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const ok = await patch(u.token, { defaultDeploymentId: deployment });
      expect(ok.status).toBe(200);
      expect(ok.body.settings).toEqual({ defaultDeploymentId: deployment });
      for (const id of [foreignDeployment, MISSING]) {
        const res = await patch(u.token, { theme: 'dark', defaultDeploymentId: id });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unknown_deployment');
        expect(res.body.message).toContain(String(id));
      }
      expect(await storedSettings(u.userId)).toEqual({ defaultDeploymentId: deployment });
      const unset = await patch(u.token, { defaultDeploymentId: null });
      expect(unset.status).toBe(200);
      expect(unset.body.settings.defaultDeploymentId ?? null).toBeNull();
    });

    it('accepts the deprecated lastSeenChangelogId and does not store it', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const res = await patch(u.token, { lastSeenChangelogId: 42, locale: 'fr-FR' });
      expect(res.status).toBe(200);
      expect(res.body.settings).toEqual({ locale: 'fr-FR' });
      expect(await storedSettings(u.userId)).toEqual({ locale: 'fr-FR' });
      const alone = await patch(u.token, { lastSeenChangelogId: 43 });
      expect(alone.status).toBe(200);
      expect(await storedSettings(u.userId)).toEqual({ locale: 'fr-FR' });
    });

    it('refuses unknown fields and wrong types with 400 naming the field, changing nothing', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      expect((await patch(u.token, { theme: 'dark' })).status).toBe(200);
      const cases: Array<[unknown, string]> = [
        [{ colour: 'red' }, 'colour'],
        [{ theme: 'light', notifications: {} }, 'notifications'],
        [{ sheets: { autoRunQueryOnChange: true, zoom: 2 } }, 'zoom'],
        [{ theme: 5 }, 'theme'],
        [{ locale: 'x'.repeat(36) }, 'locale'],
        [{ alternatingRowColors: 'yes' }, 'alternatingRowColors'],
        [{ defaultDeploymentId: String(deployment) }, 'defaultDeploymentId'],
        [{ defaultDeploymentId: 0 }, 'defaultDeploymentId'],
        [{ defaultDeploymentId: 1.5 }, 'defaultDeploymentId'],
        [{ sheets: 'all' }, 'sheets'],
        [{ sheets: [true] }, 'sheets'],
        [{ sheets: { showAppliedFilters: 'no' } }, 'showAppliedFilters'],
        [{ lastSeenChangelogId: 'latest' }, 'lastSeenChangelogId'],
      ];
      for (const [body, field] of cases) {
        const res = await patch(u.token, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain(field);
      }
      expect(await storedSettings(u.userId)).toEqual({ theme: 'dark' });
    });

    it('keeps every field of parallel patches', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      const patches = [
        { theme: 'dark' },
        { locale: 'de-DE' },
        { timezone: 'Asia/Tokyo' },
        { alternatingRowColors: false },
        { sheets: { autoRunQueryOnChange: true } },
        { sheets: { openExplorationFromSheet: true } },
        { sheets: { revealSheetOnOpen: false } },
        { sheets: { showAppliedFilters: true } },
      ];
      const results = await Promise.all(patches.map((p) => run(patch(u.token, p))));
      expect(results.map((r) => r.status)).toEqual(Array(patches.length).fill(200));
      expect(await storedSettings(u.userId)).toEqual({
        theme: 'dark',
        locale: 'de-DE',
        timezone: 'Asia/Tokyo',
        alternatingRowColors: false,
        sheets: {
          autoRunQueryOnChange: true,
          openExplorationFromSheet: true,
          revealSheetOnOpen: false,
          showAppliedFilters: true,
        },
      });
    });

    it('a patch racing an admin’s settings update of the same user loses neither', async () => {
      const u = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      let mine: Promise<Response> | undefined;
      let theirs: Promise<Response> | undefined;
      await withUserRowLocked(u.userId, async (waiting) => {
        mine = run(patch(u.token, { sheets: { autoRunQueryOnChange: true } }));
        await waiting(1);
        theirs = run(
          t
            .http()
            .put(`/api/v1/users/${u.userId}`)
            .set(admin())
            .send({ settings: { theme: 'dark' } }),
        );
        await waiting(2);
      });
      const [a, b] = await Promise.all([mine!, theirs!]);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(await storedSettings(u.userId)).toEqual({
        theme: 'dark',
        sheets: { autoRunQueryOnChange: true },
      });
    });
  });

  describe('settings on POST /api/v1/users and PUT /api/v1/users/{id}', () => {
    let deployment: number;
    let foreignDeployment: number;
    beforeAll(async () => {
      deployment = await createDeployment('Default two');
      foreignDeployment = await createDeployment('Foreign two', other.token);
    });

    it('POST stores the settings, dropping lastSeenChangelogId', async () => {
      const res = await t
        .http()
        .post('/api/v1/users')
        .set(admin())
        .send({
          email: 'with-settings@acme.test',
          username: 'with-settings',
          settings: {
            theme: 'dark',
            defaultDeploymentId: deployment,
            sheets: { autoRunQueryOnChange: true },
            lastSeenChangelogId: 7,
          },
        });
      expect(res.status).toBe(200);
      const expected = {
        theme: 'dark',
        defaultDeploymentId: deployment,
        sheets: { autoRunQueryOnChange: true },
      };
      expect(res.body.settings).toEqual(expected);
      expect(await storedSettings(res.body.id as number)).toEqual(expected);
    });

    it('POST refuses a defaultDeploymentId of another account or a missing one, creating nobody', async () => {
      for (const id of [foreignDeployment, MISSING]) {
        const res = await t
          .http()
          .post('/api/v1/users')
          .set(admin())
          .send({
            email: 'bad-default@acme.test',
            username: 'bad-default',
            settings: { defaultDeploymentId: id },
          });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unknown_deployment');
      }
      expect(await t.sql(`SELECT 1 FROM users WHERE email = 'bad-default@acme.test'`)).toHaveLength(0);
    });

    it('PUT merges settings with the same rules and checks', async () => {
      const u = await newUser(t, t.admin);
      const put = (settings: unknown) =>
        t.http().put(`/api/v1/users/${u.userId}`).set(admin()).send({ settings });
      expect((await put({ theme: 'dark', sheets: { autoRunQueryOnChange: true } })).status).toBe(200);
      const merged = await put({ sheets: { showAppliedFilters: true }, lastSeenChangelogId: 9 });
      expect(merged.status).toBe(200);
      expect(merged.body.settings).toEqual({
        theme: 'dark',
        sheets: { autoRunQueryOnChange: true, showAppliedFilters: true },
      });
      for (const id of [foreignDeployment, MISSING]) {
        const res = await put({ defaultDeploymentId: id });
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'unknown_deployment');
      }
      const bad = await put({ sheets: { zoom: 1 } });
      expect(bad.status).toBe(400);
      expectErrorShape(bad.body, 400, 'validation_failed');
      expect(await storedSettings(u.userId)).toEqual(merged.body.settings);

      const cleared = await put({ sheets: null, defaultDeploymentId: deployment });
      expect(cleared.status).toBe(200);
      expect(cleared.body.settings).toEqual({ theme: 'dark', defaultDeploymentId: deployment });
      expect(await storedSettings(u.userId)).toEqual(cleared.body.settings);
    });
  });
});
