import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
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

interface Dashboard {
  id: number;
  publicId: string;
  workbookId: number;
  deploymentId: number;
  allowEmbed: boolean;
  config: Record<string, unknown>;
}

describe('embed sessions, embed tokens and embed access', () => {
  let t: TestApp;
  let other: Actor;
  let noRole: Actor;
  let depA: number;
  let depB: number;
  let otherDep: number;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const GEN = '/api/v1/embed/generate-session';
  const TOKEN = '/api/v1/embed/session/token';
  const REVOKE = '/api/v1/embed/session/revoke';
  const embedDash = (publicId: string) => `/api/v1/embed/dashboard/${publicId}`;
  const accessPath = (dep: number, wb: number) => `/api/v1/deployments/${dep}/workbooks/${wb}/embed-access`;

  const createDeployment = async (actor: Actor) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    if (res.status !== 200) throw new Error(`deployment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const createWorkbook = async (dep: number, actor: Actor = t.admin) => {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workbooks`)
      .set(bearer(actor.token))
      .send({ name: uid('book') });
    if (res.status !== 200) throw new Error(`workbook: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };

  const publish = async (dep: number, wb: number, actor: Actor = t.admin): Promise<Dashboard> => {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workbooks/${wb}/publish`)
      .set(bearer(actor.token))
      .send({ workbookId: wb, config: {} });
    if (res.status !== 200) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Dashboard;
  };

  /** A workbook of `dep` with a published dashboard. */
  const dashboard = async (dep = depA) => {
    const wb = await createWorkbook(dep);
    return { wb, dash: await publish(dep, wb) };
  };

  const generate = (body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().post(GEN).set(bearer(actor.token)).send(body);

  const sessionId = async (body: Record<string, unknown> = {}, actor: Actor = t.admin) => {
    const res = await generate({ deploymentId: depA, externalId: uid('user'), ...body }, actor);
    if (res.status !== 200) throw new Error(`generate-session: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.sessionId as string;
  };

  const exchange = (id: string) => t.http().post(TOKEN).send({ sessionId: id });

  const embedToken = async (body: Record<string, unknown> = {}, actor: Actor = t.admin) => {
    const res = await exchange(await sessionId(body, actor));
    if (res.status !== 200) throw new Error(`exchange: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token as string;
  };

  const openDash = (token: string, publicId: string) => t.http().get(embedDash(publicId)).set(bearer(token));

  const putAccess = (dep: number, wb: number, body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().put(accessPath(dep, wb)).set(bearer(actor.token)).send(body);

  const getAccess = (dep: number, wb: number, actor: Actor = t.admin) =>
    t.http().get(accessPath(dep, wb)).set(bearer(actor.token));

  const shareWithTenant = async (dep: number, wb: number, tenant: string) => {
    const res = await putAccess(dep, wb, { embedTenantName: tenant, action: 'read' });
    if (res.status !== 200) throw new Error(`share: ${res.status} ${JSON.stringify(res.body)}`);
  };

  const expectError = (res: { status: number; body: unknown }, status: number, code?: string) => {
    expect(res.status).toBe(status);
    expectErrorShape(res.body, status, code);
  };

  const revoke = (id: string, actor: Actor = t.admin) =>
    t.http().post(REVOKE).set(bearer(actor.token)).send({ sessionId: id });

  const hashOf = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');

  const countRows = async (sql: string, params: unknown[]) =>
    Number((await t.sql<{ n: string }>(sql, params))[0].n);

  const tenantCount = (name: string, accountId = t.admin.accountId) =>
    countRows(`SELECT count(*) AS n FROM embed_tenants WHERE account_id = $1 AND name = $2`, [
      accountId,
      name,
    ]);

  const userCount = (externalId: string) =>
    countRows(`SELECT count(*) AS n FROM embed_users WHERE external_id = $1`, [externalId]);

  const deleteTenant = (name: string) =>
    t.http().delete(`/api/v1/embed-tenants/${name}`).set(bearer(t.admin.token)).expect(204);

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'globex');
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
    depA = await createDeployment(t.admin);
    depB = await createDeployment(t.admin);
    otherDep = await createDeployment(other);
    for (const name of ['analysts', 'finance']) {
      await t.http().post('/api/v1/groups').set(bearer(t.admin.token)).send({ name }).expect(200);
    }
  });
  afterAll(() => t.close());

  describe('generate-session', () => {
    it('answers a 32-hex session id and provisions the user in the tenant "default" when none is named', async () => {
      const externalId = uid('dflt');
      const res = await generate({ deploymentId: depA, externalId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ sessionId: expect.stringMatching(/^[0-9a-f]{32}$/) });
      const rows = await t.sql<{ tenant: string; account_id: number }>(
        `SELECT t.name AS tenant, u.account_id FROM embed_users u JOIN embed_tenants t ON t.id = u.tenant_id
         WHERE u.external_id = $1`,
        [externalId],
      );
      expect(rows).toEqual([{ tenant: 'default', account_id: t.admin.accountId }]);
    });

    it('provisions the user in the named tenant and sets the tenant display name from embedTenantProfile', async () => {
      const tenant = uid('named');
      const externalId = uid('named-user');
      await sessionId({
        externalId,
        embedTenantName: tenant,
        embedTenantProfile: { displayName: 'Named Co' },
      });
      const users = await t.sql(
        `SELECT u.id FROM embed_users u JOIN embed_tenants t ON t.id = u.tenant_id
         WHERE t.name = $1 AND u.external_id = $2`,
        [tenant, externalId],
      );
      expect(users).toHaveLength(1);
      const list = await t
        .http()
        .get('/api/v1/embed-tenants')
        .query({ search: tenant })
        .set(bearer(t.admin.token))
        .expect(200);
      expect(list.body.items).toEqual([
        expect.objectContaining({ name: tenant, displayName: 'Named Co', userCount: 1 }),
      ]);
    });

    it('refuses an unknown deployment or another account’s deployment with 404 and creates nothing', async () => {
      for (const deploymentId of [999999, otherDep]) {
        const tenant = uid('nodep');
        const externalId = uid('nodep-user');
        const res = await generate({ deploymentId, externalId, embedTenantName: tenant });
        expectError(res, 404, 'deployment_not_found');
        expect(await tenantCount(tenant)).toBe(0);
        expect(await userCount(externalId)).toBe(0);
      }
    });

    it.each([
      ['externalId missing', { deploymentId: 1 }],
      ['deploymentId missing', { externalId: 'x' }],
      ['an unknown field', { deploymentId: 1, externalId: 'x', nope: true }],
    ])('answers 400 for %s', async (_label, body) => {
      const res = await generate(body);
      expectError(res, 400);
    });

    it('refuses ephemeralTtlSeconds with a message naming it', async () => {
      const externalId = uid('ttl');
      const res = await generate({ deploymentId: depA, externalId, ephemeralTtlSeconds: 60 });
      expectError(res, 400);
      expect(JSON.stringify(res.body.message)).toContain('ephemeralTtlSeconds');
      expect(await userCount(externalId)).toBe(0);
    });

    it('needs creatorMode: true for tenantGroups and tenantGroupDefinitions', async () => {
      for (const extra of [
        { tenantGroups: ['team'] },
        { tenantGroupDefinitions: [{ name: 'team' }] },
        { tenantGroups: ['team'], creatorMode: false },
      ]) {
        const externalId = uid('nocreator');
        const res = await generate({ deploymentId: depA, externalId, ...extra });
        expectError(res, 400, 'tenant_groups_need_creator_mode');
        expect(await userCount(externalId)).toBe(0);
      }
    });

    it('in creatorMode creates the defined tenant groups and makes the user a member', async () => {
      const tenant = uid('creator');
      const externalId = uid('creator-user');
      await sessionId({
        externalId,
        embedTenantName: tenant,
        creatorMode: true,
        tenantGroupDefinitions: [{ name: 'team', description: 'The team' }],
        tenantGroups: ['team'],
      });
      const rows = await t.sql(
        `SELECT g.name, g.description, u.external_id FROM embed_groups g
         JOIN embed_tenants t ON t.id = g.tenant_id
         JOIN embed_group_members m ON m.group_id = g.id JOIN embed_users u ON u.id = m.embed_user_id
         WHERE t.name = $1`,
        [tenant],
      );
      expect(rows).toEqual([{ name: 'team', description: 'The team', external_id: externalId }]);
    });

    it('refuses an unknown account-wide group with 400 and creates neither tenant nor user', async () => {
      const tenant = uid('badgroup');
      const externalId = uid('badgroup-user');
      const res = await generate({
        deploymentId: depA,
        externalId,
        embedTenantName: tenant,
        groups: ['nope'],
      });
      expectError(res, 400, 'unknown_groups');
      expect(await tenantCount(tenant)).toBe(0);
      expect(await userCount(externalId)).toBe(0);
    });

    it('provisions one tenant and one user for 10 parallel sessions of a new external id', async () => {
      const tenant = uid('race');
      const externalId = uid('race-user');
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          generate({ deploymentId: depA, externalId, embedTenantName: tenant }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array<number>(10).fill(200));
      expect(new Set(results.map((r) => r.body.sessionId)).size).toBe(10);
      expect(await tenantCount(tenant)).toBe(1);
      expect(await userCount(externalId)).toBe(1);
      const sessions = await countRows(
        `SELECT count(*) AS n FROM embed_sessions s JOIN embed_tenants t ON t.id = s.tenant_id WHERE t.name = $1`,
        [tenant],
      );
      expect(sessions).toBe(10);
    });

    it('stores the session id only as a hash', async () => {
      const id = await sessionId();
      const rows = await t.sql<{ session_hash: string }>(`SELECT session_hash FROM embed_sessions`);
      expect(rows.map((r) => r.session_hash)).toContain(hashOf(id));
      expect(rows.map((r) => r.session_hash)).not.toContain(id);
      const leaks = await t.sql(`SELECT id FROM embed_sessions s WHERE strpos(s::text, $1) > 0`, [id]);
      expect(leaks).toEqual([]);
    });
  });

  describe('exchanging a session for an embed token', () => {
    it('answers a signed JWT carrying the user, the groups, the security context and the settings', async () => {
      const tenant = uid('claims');
      const externalId = uid('claims-user');
      const securityContext = { tenant_id: 42, regions: ['eu', 'us'], nested: { a: 1 } };
      const settings = { showDashboardChat: true, allowChatWorkspaceAuthoring: false, locale: 'de-DE' };
      const id = await sessionId({
        externalId,
        embedTenantName: tenant,
        groups: ['finance', 'analysts'],
        creatorMode: true,
        tenantGroupDefinitions: [{ name: 'team' }, { name: 'leads' }],
        tenantGroups: ['team', 'leads'],
        securityContext,
        settings,
      });
      const res = await t.http().post(TOKEN).send({ sessionId: id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: expect.any(String) });
      const header = decodeProtectedHeader(res.body.token);
      expect(header).toMatchObject({ alg: 'HS256', kid: `acc-${t.admin.accountId}` });
      const claims = decodeJwt(res.body.token);
      const [user] = await t.sql<{ id: number }>(`SELECT id FROM embed_users WHERE external_id = $1`, [
        externalId,
      ]);
      expect(claims).toMatchObject({
        iss: 'cubecloud',
        aud: 'embed',
        sub: String(user.id),
        acc: t.admin.accountId,
        tnt: tenant,
        ext: externalId,
        dep: depA,
      });
      expect(claims.exp! - claims.iat!).toBe(86400);
      const ctx = claims.ctx as Record<string, unknown>;
      expect(ctx.groups).toEqual(['analysts', 'finance']);
      expect([...(ctx.tenantGroups as string[])].sort()).toEqual([
        `system:tenant:${tenant}:group:leads`,
        `system:tenant:${tenant}:group:team`,
      ]);
      expect(ctx.securityContext).toEqual(securityContext);
      expect(ctx.settings).toEqual(settings);
    });

    it('accepts a session id once: a second exchange answers 401', async () => {
      const id = await sessionId();
      await exchange(id).expect(200);
      const again = await exchange(id);
      expectError(again, 401, 'invalid_embed_session');
    });

    it.each([
      ['an unknown id', () => randomBytes(16).toString('hex')],
      ['a malformed id', () => 'x'],
    ])('answers 401 for %s', async (_label, make) => {
      const res = await exchange(make());
      expectError(res, 401, 'invalid_embed_session');
    });

    it('answers 401 for an expired session id', async () => {
      const id = await sessionId();
      await t.sql(
        `UPDATE embed_sessions SET expires_at = now() - interval '1 second' WHERE session_hash = $1`,
        [hashOf(id)],
      );
      const res = await exchange(id);
      expectError(res, 401, 'invalid_embed_session');
    });

    it('lets exactly one of 10 parallel exchanges of one id win', async () => {
      const id = await sessionId();
      const results = await Promise.all(Array.from({ length: 10 }, () => exchange(id)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(9).fill(401)]);
      const rows = await t.sql<{ exchanged: boolean }>(
        `SELECT exchanged_at IS NOT NULL AS exchanged FROM embed_sessions WHERE session_hash = $1`,
        [hashOf(id)],
      );
      expect(rows).toEqual([{ exchanged: true }]);
    });

    it('sets the user’s lastLogin', async () => {
      const tenant = uid('login');
      const externalId = uid('login-user');
      const id = await sessionId({ externalId, embedTenantName: tenant });
      const users = () =>
        t.http().get(`/api/v1/embed-tenants/${tenant}/users`).set(bearer(t.admin.token)).expect(200);
      expect((await users()).body.items).toEqual([expect.objectContaining({ externalId, lastLogin: null })]);
      await exchange(id).expect(200);
      const [after] = (await users()).body.items;
      expect(after.externalId).toBe(externalId);
      expect(Number.isNaN(Date.parse(after.lastLogin))).toBe(false);
    });

    // The first exchanges of an account make its key; they must not hold a transaction's connection
    // while waiting for another (with more parallel exchanges than pooled connections, that starved).
    it('signs parallel first exchanges of a fresh account with one key that verifies them all', async () => {
      const initech = await newAccount(t, 'initech');
      const dep = await createDeployment(initech);
      const wb = await createWorkbook(dep, initech);
      const dash = await publish(dep, wb, initech);
      await putAccess(dep, wb, { allEmbedUsers: true, action: 'read' }, initech).expect(200);
      const ids = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          sessionId({ deploymentId: dep, externalId: `fresh-${i}` }, initech),
        ),
      );
      const tokens = await Promise.all(ids.map((id) => exchange(id)));
      expect(tokens.map((r) => r.status)).toEqual(Array<number>(10).fill(200));
      const opened = await Promise.all(tokens.map((r) => openDash(r.body.token as string, dash.publicId)));
      expect(opened.map((r) => r.status)).toEqual(Array<number>(10).fill(200));
      const [row] = await t.sql<{ embed_secret: string | null }>(
        `SELECT embed_secret FROM accounts WHERE id = $1`,
        [initech.accountId],
      );
      expect(row.embed_secret).toMatch(/^v1\./);
      const ours = await embedToken();
      const foreign = await openDash(ours, dash.publicId);
      expect(foreign.status).toBe(404);
    });

    it('keeps the account’s embed key sealed and never returns it', async () => {
      const genRes = await generate({ deploymentId: depA, externalId: uid('seal') });
      const tokenRes = await exchange(genRes.body.sessionId).expect(200);
      const [row] = await t.sql<{ embed_secret: string }>(`SELECT embed_secret FROM accounts WHERE id = $1`, [
        t.admin.accountId,
      ]);
      expect(row.embed_secret.startsWith('v1.')).toBe(true);
      const sealedBody = row.embed_secret.slice(3);
      for (const body of [genRes.body, tokenRes.body, decodeJwt(tokenRes.body.token)]) {
        expect(JSON.stringify(body)).not.toContain(sealedBody);
      }
    });
  });

  describe('embed tokens on the embed dashboard route', () => {
    it('opens a dashboard only once it is shared with the tenant and embedding is allowed', async () => {
      const tenant = uid('flow');
      const token = await embedToken({ embedTenantName: tenant });
      const { wb, dash } = await dashboard();
      const notShared = await openDash(token, dash.publicId);
      expectError(notShared, 404, 'dashboard_not_found');

      await shareWithTenant(depA, wb, tenant);
      const notAllowed = await openDash(token, dash.publicId);
      expectError(notAllowed, 403, 'embedding_not_allowed');

      const patch = await t
        .http()
        .patch(embedDash(dash.publicId))
        .set(bearer(t.admin.token))
        .send({ allowEmbed: true });
      expect(patch.status).toBe(200);
      expect(patch.body).toEqual({ publicId: dash.publicId, allowEmbed: true });

      const ok = await openDash(token, dash.publicId);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({
        publicId: dash.publicId,
        workbookId: wb,
        deploymentId: depA,
        allowEmbed: true,
        config: expect.any(Object),
      });
    });

    it('lets a user of any tenant open a dashboard shared with all embed users, even with allowEmbed off', async () => {
      const { wb, dash } = await dashboard();
      await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }).expect(200);
      for (const tenant of [uid('any'), uid('any')]) {
        const res = await openDash(await embedToken({ embedTenantName: tenant }), dash.publicId);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ publicId: dash.publicId, allowEmbed: false });
      }
    });

    it('lets a creatorMode session open a tenant share with allowEmbed off', async () => {
      const tenant = uid('creat');
      const { wb, dash } = await dashboard();
      const plain = await embedToken({ embedTenantName: tenant });
      await shareWithTenant(depA, wb, tenant);
      expect((await openDash(plain, dash.publicId)).status).toBe(403);
      const creator = await embedToken({ embedTenantName: tenant, creatorMode: true });
      const res = await openDash(creator, dash.publicId);
      expect(res.status).toBe(200);
      expect(res.body.publicId).toBe(dash.publicId);
    });

    it('answers 404 to a tenant the dashboard is not shared with', async () => {
      const { wb, dash } = await dashboard();
      const mine = uid('mine');
      await sessionId({ embedTenantName: mine });
      await shareWithTenant(depA, wb, mine);
      await putAccess(depA, wb, { allowEmbed: true }).expect(200);
      const res = await openDash(await embedToken({ embedTenantName: uid('theirs') }), dash.publicId);
      expectError(res, 404, 'dashboard_not_found');
    });

    it('keeps a session to its deployment', async () => {
      const tenant = uid('depb');
      const { wb, dash } = await dashboard(depB);
      await putAccess(depB, wb, { allEmbedUsers: true, action: 'read' }).expect(200);
      const tokenA = await embedToken({ embedTenantName: tenant, deploymentId: depA });
      const res = await openDash(tokenA, dash.publicId);
      expectError(res, 404, 'dashboard_not_found');
      const tokenB = await embedToken({ embedTenantName: tenant, deploymentId: depB });
      expect((await openDash(tokenB, dash.publicId)).status).toBe(200);
    });

    it('keeps a session with publicDashboardId to that one dashboard', async () => {
      const x = await dashboard();
      const y = await dashboard();
      for (const { wb } of [x, y])
        await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }).expect(200);
      const token = await embedToken({ publicDashboardId: x.dash.publicId });
      const res = await openDash(token, y.dash.publicId);
      expectError(res, 404, 'dashboard_not_found');
      expect((await openDash(token, x.dash.publicId)).status).toBe(200);
    });

    describe('revocation and tenant deletion', () => {
      let shared: Dashboard;
      beforeAll(async () => {
        const { wb, dash } = await dashboard();
        await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }).expect(200);
        shared = dash;
      });

      it('ends the token of a revoked session', async () => {
        const id = await sessionId();
        const { token } = (await exchange(id).expect(200)).body as { token: string };
        expect((await openDash(token, shared.publicId)).status).toBe(200);
        await revoke(id).expect(204);
        const res = await openDash(token, shared.publicId);
        expectError(res, 401);
      });

      it('makes a revoked unexchanged session impossible to exchange', async () => {
        const id = await sessionId();
        await revoke(id).expect(204);
        const res = await exchange(id);
        expectError(res, 401, 'invalid_embed_session');
      });

      it('is idempotent for unknown and already revoked ids, and refuses a malformed id with 400', async () => {
        const id = await sessionId();
        for (const sid of [randomBytes(16).toString('hex'), id, id]) {
          await revoke(sid).expect(204);
        }
        const bad = await revoke('x');
        expectError(bad, 400);
      });

      it('ignores another account’s admin revoking our session', async () => {
        const id = await sessionId();
        const { token } = (await exchange(id).expect(200)).body as { token: string };
        await revoke(id, other).expect(204);
        const [row] = await t.sql<{ revoked_at: Date | null }>(
          `SELECT revoked_at FROM embed_sessions WHERE account_id = $1 ORDER BY id DESC LIMIT 1`,
          [t.admin.accountId],
        );
        expect(row.revoked_at).toBeNull();
        expect((await openDash(token, shared.publicId)).status).toBe(200);
      });

      it('ends the tokens of a deleted tenant', async () => {
        const tenant = uid('gone');
        const token = await embedToken({ embedTenantName: tenant });
        expect((await openDash(token, shared.publicId)).status).toBe(200);
        await deleteTenant(tenant);
        const res = await openDash(token, shared.publicId);
        expectError(res, 401);
      });
    });

    describe('foreign and forged credentials', () => {
      let shared: Dashboard;
      let token: string;
      beforeAll(async () => {
        const { wb, dash } = await dashboard();
        await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }).expect(200);
        shared = dash;
        token = await embedToken();
      });

      it('answers 401 to a Platform API token on the embed route', async () => {
        const res = await openDash(t.admin.token, shared.publicId);
        expectError(res, 401);
      });

      it('answers 401 to an embed token on a Platform API route', async () => {
        const res = await t.http().get('/api/v1/users').set(bearer(token));
        expectError(res, 401);
      });

      it('answers 401 without a token', async () => {
        const res = await t.http().get(embedDash(shared.publicId));
        expectError(res, 401);
      });

      it('answers 401 to a token whose signature was tampered with', async () => {
        expect((await openDash(token, shared.publicId)).status).toBe(200);
        const [h, p, s] = token.split('.');
        const i = Math.floor(s.length / 2);
        const tampered = `${h}.${p}.${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
        const res = await openDash(tampered, shared.publicId);
        expectError(res, 401);
      });

      it('answers 401 to a token signed with another key under the account’s kid', async () => {
        const claims = decodeJwt(token);
        const forged = await new SignJWT({ ...claims })
          .setProtectedHeader(decodeProtectedHeader(token) as { alg: string; kid: string })
          .sign(new Uint8Array(randomBytes(32)));
        expect(decodeProtectedHeader(forged).kid).toBe(`acc-${t.admin.accountId}`);
        const res = await openDash(forged, shared.publicId);
        expectError(res, 401);
      });
    });
  });

  describe('workbook embed access', () => {
    it('starts with nothing shared', async () => {
      const wb = await createWorkbook(depA);
      const res = await getAccess(depA, wb);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        allowEmbed: false,
        allEmbedUsers: { enabled: false, action: 'none', groupId: null },
        tenants: [],
      });
    });

    it('shares with a tenant idempotently and unshares it with action none', async () => {
      const tenant = uid('share');
      await sessionId({ embedTenantName: tenant });
      const wb = await createWorkbook(depA);
      const first = await putAccess(depA, wb, { embedTenantName: tenant, action: 'read' });
      expect(first.status).toBe(200);
      expect(first.body.tenants).toEqual([
        { embedTenantName: tenant, groupId: expect.any(Number), action: 'read' },
      ]);
      const again = await putAccess(depA, wb, { embedTenantName: tenant, action: 'read' });
      expect(again.status).toBe(200);
      expect(again.body.tenants).toEqual(first.body.tenants);
      const none = await putAccess(depA, wb, { embedTenantName: tenant, action: 'none' });
      expect(none.status).toBe(200);
      expect(none.body.tenants).toEqual([]);
      expect((await getAccess(depA, wb)).body.tenants).toEqual([]);
    });

    it('shares with all embed users and unshares with action none', async () => {
      const wb = await createWorkbook(depA);
      const on = await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' });
      expect(on.status).toBe(200);
      expect(on.body.allEmbedUsers).toEqual({ enabled: true, action: 'read', groupId: expect.any(Number) });
      const off = await putAccess(depA, wb, { allEmbedUsers: true, action: 'none' });
      expect(off.status).toBe(200);
      expect(off.body.allEmbedUsers).toEqual({ enabled: false, action: 'none', groupId: null });
    });

    it('toggles allowEmbed alone, and needs a published dashboard for it', async () => {
      const { wb, dash } = await dashboard();
      const on = await putAccess(depA, wb, { allowEmbed: true });
      expect(on.status).toBe(200);
      expect(on.body.allowEmbed).toBe(true);
      const [row] = await t.sql<{ allow_embed: boolean }>(
        `SELECT allow_embed FROM dashboards WHERE id = $1`,
        [dash.id],
      );
      expect(row.allow_embed).toBe(true);
      expect((await putAccess(depA, wb, { allowEmbed: false })).body.allowEmbed).toBe(false);

      const unpublished = await createWorkbook(depA);
      const res = await putAccess(depA, unpublished, { allowEmbed: true });
      expectError(res, 400, 'no_published_dashboard');
    });

    it.each([
      [
        'both targets',
        { embedTenantName: 'default', allEmbedUsers: true, action: 'read' },
        'ambiguous_embed_access_target',
      ],
      ['a target without action', { embedTenantName: 'default' }, 'no_embed_access_change'],
      ['an action without target', { action: 'read' }, 'no_embed_access_change'],
      ['an empty body', {}, 'no_embed_access_change'],
    ])('refuses %s with 400', async (_label, body, code) => {
      const wb = await createWorkbook(depA);
      const res = await putAccess(depA, wb, body);
      expectError(res, 400, code);
      expect(
        await countRows(`SELECT count(*) AS n FROM workbook_embed_access WHERE workbook_id = $1`, [wb]),
      ).toBe(0);
    });

    it('keeps one share for 20 parallel shares with the same tenant', async () => {
      const tenant = uid('par');
      await sessionId({ embedTenantName: tenant });
      const wb = await createWorkbook(depA);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          putAccess(
            depA,
            wb,
            i % 2 ? { embedTenantName: tenant, action: 'read' } : { allEmbedUsers: true, action: 'read' },
          ),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array<number>(20).fill(200));
      const rows = await t.sql<{ tenant_id: number | null }>(
        `SELECT tenant_id FROM workbook_embed_access WHERE workbook_id = $1 ORDER BY tenant_id NULLS FIRST`,
        [wb],
      );
      expect(rows).toEqual([{ tenant_id: null }, { tenant_id: expect.any(Number) }]);
      const view = (await getAccess(depA, wb)).body;
      expect(view.tenants).toEqual([
        { embedTenantName: tenant, groupId: expect.any(Number), action: 'read' },
      ]);
      expect(view.allEmbedUsers.enabled).toBe(true);
    });

    it('answers 404 for a workbook addressed under another deployment', async () => {
      const wb = await createWorkbook(depA);
      const res = await getAccess(depB, wb);
      expectError(res, 404);
    });

    it('answers 404 for an unknown tenant', async () => {
      const wb = await createWorkbook(depA);
      const res = await putAccess(depA, wb, { embedTenantName: uid('unknown'), action: 'read' });
      expectError(res, 404, 'embed_tenant_not_found');
    });

    it('answers 404 to another account’s admin and changes nothing', async () => {
      const wb = await createWorkbook(depA);
      expect((await getAccess(depA, wb, other)).status).toBe(404);
      const res = await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }, other);
      expectError(res, 404);
      expect((await getAccess(depA, wb)).body.allEmbedUsers.enabled).toBe(false);
    });

    it('refuses a user without any role with 403 at the route and changes nothing', async () => {
      const wb = await createWorkbook(depA);
      const read = await getAccess(depA, wb, noRole);
      expectError(read, 403);
      const res = await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }, noRole);
      expectError(res, 403);
      expect((await getAccess(depA, wb)).body.allEmbedUsers.enabled).toBe(false);
    });

    it('lets a user with WorkbookRead on the workbook read the access but not change it', async () => {
      const reader = await newUser(t, t.admin, { defaultRoles: [] });
      const wb = await createWorkbook(depA);
      await t.sql(
        `INSERT INTO policies (account_id, principal_type, principal_id, resource_type, resource_id, action)
         VALUES ($1, 'user', $2, 'Workbook', $3, 'WorkbookRead')`,
        [t.admin.accountId, reader.userId, String(wb)],
      );
      const read = await getAccess(depA, wb, reader);
      expect(read.status).toBe(200);
      expect(read.body.tenants).toEqual([]);
      const res = await putAccess(depA, wb, { allEmbedUsers: true, action: 'read' }, reader);
      expectError(res, 403);
      expect((await getAccess(depA, wb)).body.allEmbedUsers.enabled).toBe(false);
    });

    it('drops the share of a deleted tenant from the view', async () => {
      const keep = uid('keep');
      const drop = uid('drop');
      const wb = await createWorkbook(depA);
      for (const tenant of [keep, drop]) {
        await sessionId({ embedTenantName: tenant });
        await shareWithTenant(depA, wb, tenant);
      }
      expect((await getAccess(depA, wb)).body.tenants).toHaveLength(2);
      await deleteTenant(drop);
      expect((await getAccess(depA, wb)).body.tenants).toEqual([
        { embedTenantName: keep, groupId: expect.any(Number), action: 'read' },
      ]);
    });
  });

  describe('PATCH /api/v1/embed/dashboard/{publicId}', () => {
    let dash: Dashboard;
    beforeAll(async () => {
      dash = (await dashboard()).dash;
    });
    const patch = (publicId: string, body: Record<string, unknown>, token?: string) => {
      const req = t.http().patch(embedDash(publicId));
      return (token ? req.set(bearer(token)) : req).send(body);
    };
    const allowEmbed = async () =>
      (
        await t.sql<{ allow_embed: boolean }>(`SELECT allow_embed FROM dashboards WHERE id = $1`, [dash.id])
      )[0].allow_embed;

    it('answers 401 without a token or with a garbage token', async () => {
      for (const token of [undefined, 'garbage']) {
        const res = await patch(dash.publicId, { allowEmbed: true }, token);
        expectError(res, 401);
      }
      expect(await allowEmbed()).toBe(false);
    });

    it('answers 403 to users without the Admin role, even a Viewer, and to embed tokens 401', async () => {
      const viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
      for (const actor of [noRole, viewer]) {
        const res = await patch(dash.publicId, { allowEmbed: true }, actor.token);
        expectError(res, 403);
      }
      expect((await patch(dash.publicId, { allowEmbed: true }, await embedToken())).status).toBe(401);
      expect(await allowEmbed()).toBe(false);
    });

    it('answers 404 for an unknown dashboard and for another account’s admin', async () => {
      const unknown = await patch('nosuchdash', { allowEmbed: true }, t.admin.token);
      expectError(unknown, 404, 'dashboard_not_found');
      const foreign = await patch(dash.publicId, { allowEmbed: true }, other.token);
      expectError(foreign, 404, 'dashboard_not_found');
      expect(await allowEmbed()).toBe(false);
    });

    it('answers 400 without allowEmbed', async () => {
      const res = await patch(dash.publicId, {}, t.admin.token);
      expectError(res, 400);
      expect(await allowEmbed()).toBe(false);
    });

    it('sets and clears allowEmbed for an admin', async () => {
      const on = await patch(dash.publicId, { allowEmbed: true }, t.admin.token);
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ publicId: dash.publicId, allowEmbed: true });
      expect(await allowEmbed()).toBe(true);
      const off = await patch(dash.publicId, { allowEmbed: false }, t.admin.token);
      expect(off.body).toEqual({ publicId: dash.publicId, allowEmbed: false });
      expect(await allowEmbed()).toBe(false);
    });
  });

  describe('authorization of generate-session and revoke', () => {
    it.each([
      ['generate-session', GEN],
      ['revoke', REVOKE],
    ])('%s answers 401 without a token', async (_label, path) => {
      const res = await t
        .http()
        .post(path)
        .send({ sessionId: randomBytes(16).toString('hex') });
      expectError(res, 401);
    });

    it('generate-session answers 403 to a user without the Admin role and creates nothing', async () => {
      const externalId = uid('norole');
      const res = await generate({ deploymentId: depA, externalId }, noRole);
      expectError(res, 403);
      expect(await userCount(externalId)).toBe(0);
    });

    it('revoke answers 403 to a user without the Admin role and leaves the session usable', async () => {
      const id = await sessionId();
      const res = await revoke(id, noRole);
      expectError(res, 403);
      expect((await exchange(id)).status).toBe(200);
    });
  });
});
