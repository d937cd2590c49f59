import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { deploymentInput } from '../support/factories.js';

interface AuditEvent {
  id: string;
  occurredAt: string;
  actorType: string;
  actorId: number;
  actorEmail: string | null;
  action: string;
  method: string;
  path: string;
  targetType: string | null;
  targetId: string | null;
  requestId: string;
  outcome: string;
  statusCode: number;
  details: Record<string, unknown> | null;
}

describe('audit log', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  const admin = () => bearer(t.admin.token);

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
  });
  afterAll(() => t.close());

  const setAudit = (enabled: boolean, token = t.admin.token) =>
    t.http().put('/api/v1/tenant/settings').set(bearer(token)).send({ auditLogEnabled: enabled });

  async function events(
    query: Record<string, string | number> = {},
    token = t.admin.token,
  ): Promise<AuditEvent[]> {
    const res = await t
      .http()
      .get('/api/v1/audit-log')
      .query({ first: 1000, ...query })
      .set(bearer(token));
    expect(res.status).toBe(200);
    return res.body.items as AuditEvent[];
  }

  const createGroup = (name: string, token = t.admin.token) =>
    t.http().post('/api/v1/groups').set(bearer(token)).send({ name });

  describe('while auditLogEnabled is off', () => {
    it('answers GET /audit-log with 403 audit_log_disabled and records nothing', async () => {
      const made = await createGroup('made-while-off');
      expect(made.status).toBe(200);
      const res = await t.http().get('/api/v1/audit-log').set(admin());
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'audit_log_disabled');
      expect(await t.sql(`SELECT id FROM audit_events`)).toEqual([]);
    });
  });

  describe('GET /api/v1/audit-log access', () => {
    it('is 401 without a token', async () => {
      const res = await t.http().get('/api/v1/audit-log');
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'unauthorized');
    });

    it('is 403 for a user without AuditLogManage', async () => {
      const res = await t.http().get('/api/v1/audit-log').set(bearer(viewer.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'forbidden');
    });

    it('is open to a custom role holding AuditLogManage', async () => {
      expect((await setAudit(true)).status).toBe(200);
      const auditor = await newUser(t, t.admin, { defaultRoles: [] });
      const role = await t
        .http()
        .post('/api/v1/roles')
        .set(admin())
        .send({
          name: 'Auditors',
          policies: [{ resourceType: 'Global', actions: ['AuditLogManage'], resources: ['All'] }],
        });
      expect(role.status).toBe(200);
      expect(
        (await t.http().put(`/api/v1/roles/${role.body.id}/users/${auditor.userId}`).set(admin())).status,
      ).toBe(204);
      const res = await t.http().get('/api/v1/audit-log').set(bearer(auditor.token));
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body.items)).toBe(true);
    });
  });

  describe('recording', () => {
    beforeAll(async () => {
      expect((await setAudit(true)).status).toBe(200);
    });

    it('records the request that turned the log on', async () => {
      const list = await events({ action: 'updateTenantSettings' });
      expect(list[0]).toMatchObject({
        actorType: 'user',
        actorId: t.admin.userId,
        method: 'PUT',
        path: '/api/v1/tenant/settings',
        outcome: 'success',
        statusCode: 200,
      });
    });

    it('records a successful create with actor, action, target, request id and outcome', async () => {
      const res = await createGroup('auditors').set('X-Request-Id', 'req-audit-create-1');
      expect(res.status).toBe(200);
      const [event] = await events({ action: 'createUserGroup', targetId: String(res.body.id) });
      expect(event).toEqual({
        id: expect.any(String),
        occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        actorType: 'user',
        actorId: t.admin.userId,
        actorEmail: t.admin.email,
        action: 'createUserGroup',
        method: 'POST',
        path: '/api/v1/groups',
        targetType: 'groups',
        targetId: String(res.body.id),
        requestId: 'req-audit-create-1',
        outcome: 'success',
        statusCode: 200,
        details: null,
      });
    });

    it('uses the generated request id the response carries when the client sends none', async () => {
      const res = await createGroup('request-id-check');
      const [event] = await events({ targetType: 'groups', targetId: String(res.body.id) });
      expect(event.requestId).toBe(res.headers['x-request-id']);
    });

    it('records deletes (204) with the path id as target', async () => {
      const made = await createGroup('to-delete');
      const del = await t.http().delete(`/api/v1/groups/${made.body.id}`).set(admin());
      expect(del.status).toBe(204);
      const [event] = await events({ action: 'deleteUserGroup' });
      expect(event).toMatchObject({
        method: 'DELETE',
        targetType: 'groups',
        targetId: String(made.body.id),
        outcome: 'success',
        statusCode: 204,
      });
    });

    it('records refused requests: validation (400), not found (404) and a guard refusal (403)', async () => {
      const bad = await t.http().post('/api/v1/groups').set(admin()).send({ name: 'x', color: 'red' });
      expect(bad.status).toBe(400);
      const missing = await t.http().delete('/api/v1/groups/999999').set(admin());
      expect(missing.status).toBe(404);
      const refused = await createGroup('not-allowed', viewer.token);
      expect(refused.status).toBe(403);

      const failures = await events({ outcome: 'failure' });
      expect(failures.find((e) => e.requestId === bad.headers['x-request-id'])).toMatchObject({
        action: 'createUserGroup',
        statusCode: 400,
        outcome: 'failure',
      });
      expect(failures.find((e) => e.requestId === missing.headers['x-request-id'])).toMatchObject({
        action: 'deleteUserGroup',
        targetId: '999999',
        statusCode: 404,
      });
      expect(failures.find((e) => e.requestId === refused.headers['x-request-id'])).toMatchObject({
        action: 'createUserGroup',
        actorId: viewer.userId,
        actorEmail: viewer.email,
        statusCode: 403,
        outcome: 'failure',
      });
      // Nothing was created by the refused requests.
      expect(await t.sql(`SELECT id FROM groups WHERE name IN ('x', 'not-allowed')`)).toEqual([]);
    });

    it('does not record reads or unauthenticated requests', async () => {
      const before = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events`))[0].n;
      expect((await t.http().get('/api/v1/groups').set(admin())).status).toBe(200);
      expect((await t.http().post('/api/v1/groups').send({ name: 'anon' })).status).toBe(401);
      const after = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events`))[0].n;
      expect(after).toBe(before);
    });

    it('covers the mutations of every module: deployments, workspace, users, embedding', async () => {
      const dep = await t.http().post('/build/api/v1/deployments').set(admin()).send(deploymentInput());
      expect(dep.status).toBe(200);
      const folder = await t
        .http()
        .post(`/api/v1/deployments/${dep.body.id}/folders`)
        .set(admin())
        .send({ name: 'Finance' });
      expect(folder.status).toBe(200);
      const user = await t
        .http()
        .post('/api/v1/users')
        .set(admin())
        .send({ email: 'audited@acme.test', username: 'audited@acme.test' });
      expect(user.status).toBe(200);
      const embed = await t
        .http()
        .post('/api/v1/embed-tenants/northwind/user')
        .set(admin())
        .send({ externalId: 'ext-1' });
      expect(embed.status).toBeLessThan(300);
      const key = await t.http().post('/api/v1/api-keys').set(admin()).send({ name: 'ci' });
      expect(key.status).toBeLessThan(300);

      const list = await events();
      const find = (action: string) => list.find((e) => e.action === action);
      expect(find('createDeployment')).toMatchObject({
        targetType: 'deployments',
        targetId: String(dep.body.id),
      });
      expect(find('createFolder')).toMatchObject({ targetType: 'folders', targetId: String(folder.body.id) });
      expect(find('createUser')).toMatchObject({ targetType: 'users', targetId: String(user.body.id) });
      expect(list.find((e) => e.path === '/api/v1/embed-tenants/northwind/user')).toMatchObject({
        method: 'POST',
        outcome: 'success',
      });
      expect(list.find((e) => e.path === '/api/v1/api-keys' && e.method === 'POST')).toMatchObject({
        outcome: 'success',
      });
      // The token itself never lands in the log.
      const raw = JSON.stringify(await t.sql(`SELECT * FROM audit_events`));
      expect(raw).not.toContain(key.body.token ?? 'no-token-in-response');
    });

    it('records every one of 20 parallel mutations', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => createGroup(`parallel-${i}`).set('X-Request-Id', `par-${i}`)),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const rows = await t.sql<{ requestId: string }>(
        `SELECT request_id AS "requestId" FROM audit_events WHERE request_id LIKE 'par-%'`,
      );
      expect(rows.map((r) => r.requestId).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `par-${i}`).sort(),
      );
    });
  });

  describe('filters and paging', () => {
    it('filters by actor, action, target, outcome and time range', async () => {
      expect((await setAudit(true)).status).toBe(200);
      const mark = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const made = await createGroup('filter-target');
      await createGroup('filter-denied', viewer.token);

      const byActor = await events({ actorId: viewer.userId, from: mark });
      expect(byActor.map((e) => e.action)).toEqual(['createUserGroup']);
      expect(byActor[0].outcome).toBe('failure');

      const byTarget = await events({ targetType: 'groups', targetId: String(made.body.id) });
      expect(byTarget).toHaveLength(1);

      const since = await events({ from: mark });
      expect(since.every((e) => e.occurredAt >= mark)).toBe(true);
      expect(since.length).toBeGreaterThanOrEqual(2);
      const before = await events({ to: mark });
      expect(before.every((e) => e.occurredAt < mark)).toBe(true);

      const successes = await events({ outcome: 'success', from: mark });
      expect(successes.every((e) => e.outcome === 'success')).toBe(true);
      const byAction = await events({ action: 'createUserGroup', actorType: 'user' });
      expect(byAction.every((e) => e.action === 'createUserGroup')).toBe(true);
    });

    it('pages newest first with a cursor, without gaps or repeats', async () => {
      const all = await events();
      expect(all.length).toBeGreaterThan(5);
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const res = await t
          .http()
          .get('/api/v1/audit-log')
          .query(after ? { first: 4, after } : { first: 4 })
          .set(admin());
        expect(res.status).toBe(200);
        seen.push(...res.body.items.map((e: AuditEvent) => e.id));
        if (!res.body.pageInfo.hasNextPage) break;
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(all.map((e) => e.id));
      const times = all.map((e) => e.occurredAt);
      expect([...times].sort().reverse()).toEqual(times);
    });

    it.each([
      [{ from: 'yesterday' }, 'validation_failed'],
      [{ actorId: 'abc' }, 'validation_failed'],
      [{ outcome: 'maybe' }, 'validation_failed'],
      [{ after: 'not-a-cursor' }, 'invalid_cursor'],
      [{ first: 0 }, 'validation_failed'],
      [{ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'invalid_time_range'],
      [{ unknown: 'x' }, 'validation_failed'],
    ])('is 400 for %j', async (query, code) => {
      const res = await t.http().get('/api/v1/audit-log').query(query).set(admin());
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
    });
  });

  describe('accounts', () => {
    it("never shows another account's events, and each account has its own switch", async () => {
      const res = await t.http().get('/api/v1/audit-log').set(bearer(other.token));
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'audit_log_disabled');
      expect((await setAudit(true, other.token)).status).toBe(200);
      await createGroup('globex-group', other.token);
      const theirs = await events({}, other.token);
      expect(theirs.every((e) => e.actorId === other.userId)).toBe(true);
      const ours = await events();
      expect(ours.some((e) => e.actorId === other.userId)).toBe(false);
    });

    it('stops recording when turned off again', async () => {
      expect((await setAudit(false)).status).toBe(200);
      const before = (
        await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1`, [
          t.admin.accountId,
        ])
      )[0].n;
      await createGroup('after-off');
      const after = (
        await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1`, [
          t.admin.accountId,
        ])
      )[0].n;
      expect(after).toBe(before);
      const res = await t.http().get('/api/v1/audit-log').set(admin());
      expect(res.status).toBe(403);
    });
  });
});
