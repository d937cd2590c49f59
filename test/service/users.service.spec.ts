import { AuthService } from '../../src/core/auth/auth.service.js';
import type { UserDto } from '../../src/modules/users/dto/user.dto.js';
import { RolesService } from '../../src/modules/users/roles.service.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import { ApiKeysService } from '../../src/modules/users/api-keys.service.js';
import { hashToken } from '../../src/core/auth/token.js';
import type { Actor } from '../support/app.js';
import { expectApiError, expectApiErrorOf, startServiceApp, type ServiceApp } from '../support/service.js';

/** Rules of console users (moved from users.e2e-part) and API keys that need no HTTP request. */
describe('users and API keys', () => {
  let s: ServiceApp;
  let users: UsersService;
  beforeAll(async () => {
    s = await startServiceApp();
    users = s.app.get(UsersService);
  });
  afterAll(() => s.close());

  const ids = (items: UserDto[]) => items.map((u) => u.id).sort((a, b) => a - b);
  const byId = (a: number, b: number) => a - b;

  describe('list', () => {
    let alpha: UserDto;
    let beta: UserDto;
    let gamma: UserDto;
    let other: Actor;
    beforeAll(async () => {
      ({ user: alpha } = await s.make.user({
        email: 'zed.one@acme.test',
        username: 'searchable_alpha',
        firstName: 'Marguerite',
      }));
      ({ user: beta } = await s.make.user({
        email: 'BETA.Person@Acme.test',
        username: 'searchable_beta',
        firstName: 'Bob',
      }));
      ({ user: gamma } = await s.make.user({
        email: 'gamma@acme.test',
        username: 'gamma_user',
        firstName: 'Quixote%',
      }));
      other = await s.make.account('globex');
    });

    async function search(q: string): Promise<number[]> {
      const page = await users.list(await s.make.principal(s.admin), { search: q });
      expect(page.count).toBe(page.items.length);
      return ids(page.items);
    }

    it('searches first name, username and email case-insensitively', async () => {
      expect(await search('MARGUERITE')).toEqual([alpha.id]); // first name
      expect(await search('margue')).toEqual([alpha.id]);
      expect(await search('SEARCHABLE_')).toEqual([alpha.id, beta.id].sort(byId)); // username
      expect(await search('beta.person')).toEqual([beta.id]); // email, stored lower-cased
      expect(await search('ZED.ONE@')).toEqual([alpha.id]);
      expect(await search('no-such-user-anywhere')).toEqual([]);
    });

    it('treats LIKE wildcards in a search literally', async () => {
      expect(await search('%')).toEqual([gamma.id]);
      expect(await search('a_u')).toEqual([gamma.id]);
    });

    it('pages a search with first/after', async () => {
      const admin = await s.make.principal(s.admin);
      const page1 = await users.list(admin, { search: 'searchable', first: 1 });
      expect(page1.items).toHaveLength(1);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      expect(page1.count).toBe(2);
      const page2 = await users.list(admin, {
        search: 'searchable',
        first: 1,
        after: page1.pageInfo.endCursor ?? undefined,
      });
      expect(page2.items).toHaveLength(1);
      expect(page2.pageInfo.hasNextPage).toBe(false);
      expect(ids([...page1.items, ...page2.items])).toEqual([alpha.id, beta.id].sort(byId));
    });

    it("never shows another account's users, even by search", async () => {
      expect(await search('globex')).toEqual([]);
      const theirs = await users.list(await s.make.principal(other), {});
      expect(theirs.items.map((u) => u.id)).toEqual([other.userId]);
    });
  });

  describe('deactivating and deleting admins', () => {
    it('refuses to let an admin deactivate or demote themselves (403 cannot_deactivate_self)', async () => {
      const admin = await s.make.user({ role: 'Admin' });
      const principal = await s.make.principal(admin);
      for (const dto of [{ isDeactivated: true }, { isAdmin: false }, { defaultRoles: ['Viewer'] }]) {
        await expectApiError(users.update(principal, admin.userId, dto), 403, 'cannot_deactivate_self');
      }
      expect(await users.get(principal, admin.userId)).toMatchObject({ isAdmin: true, isDeactivated: false });
    });

    it('refuses to delete yourself with 400 cannot_act_on_self', async () => {
      const admin = await s.make.principal(s.admin);
      await expectApiError(users.remove(admin, s.admin.userId), 400, 'cannot_act_on_self');
      expect(await users.get(admin, s.admin.userId)).toMatchObject({ id: s.admin.userId });
    });

    it('refuses to remove the last active admin with 403 last_admin', async () => {
      // In a fresh account, a second admin (holding All through a Global policy, not the built-in
      // role) tries to remove the only built-in admin.
      const acct = await s.make.account('initech');
      const helper = await s.make.user({ in: acct });
      await s.make.grant(helper, [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }], acct);
      const asHelper = await s.make.principal(helper);
      expect(asHelper.isAdmin).toBe(true);

      await expectApiError(users.remove(asHelper, acct.userId), 403, 'last_admin');
      await expectApiError(users.update(asHelper, acct.userId, { isDeactivated: true }), 403, 'last_admin');
      expect(await s.app.get(AuthService).authenticate(acct.token)).not.toBeNull();

      // With a second built-in admin, the first can go.
      const second = await s.make.user({ in: acct, role: 'Admin' });
      await users.remove(await s.make.principal(second), acct.userId);
      // Now `second` is the last one.
      await expectApiError(users.remove(asHelper, second.userId), 403, 'last_admin');
    });

    it('keeps one admin when two are removed in parallel', async () => {
      const acct = await s.make.account('umbrella');
      const second = await s.make.user({ in: acct, role: 'Admin' });
      const helper = await s.make.user({ in: acct });
      await s.make.grant(helper, [{ resourceType: 'Global', actions: ['All'], resources: ['All'] }], acct);
      const asHelper = await s.make.principal(helper);
      const outcomes = await Promise.all(
        [acct.userId, second.userId].map((id) =>
          users.update(asHelper, id, { isDeactivated: true }).then(
            () => null,
            (err: unknown) => err,
          ),
        ),
      );
      expect(outcomes.filter((e) => e === null)).toHaveLength(1);
      expectApiErrorOf(
        outcomes.find((e) => e !== null),
        403,
        'last_admin',
      );
      const active = await s.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM users
         WHERE account_id = $1 AND is_deactivated = false AND 'Admin' = ANY(default_roles)`,
        [acct.accountId],
      );
      expect(active[0].n).toBe(1);
    });

    it('lets an admin delete another admin when one remains', async () => {
      const extra = await s.make.user({ role: 'Admin' });
      await users.remove(await s.make.principal(s.admin), extra.userId);
      expect(await s.app.get(AuthService).authenticate(extra.token)).toBeNull();
    });

    it("removes the deleted user's direct grants and role assignments", async () => {
      const admin = await s.make.principal(s.admin);
      const victim = await s.make.user();
      await s.make.grant(victim, [
        { resourceType: 'Global', actions: ['PlaygroundRead'], resources: ['All'] },
      ]);
      const role = await s.make.role({ name: 'Doomed' });
      await s.app.get(RolesService).assign(admin, role.id, victim.userId);
      expect(await s.sql(`SELECT 1 FROM user_roles WHERE user_id = $1`, [victim.userId])).toHaveLength(1);

      await users.remove(admin, victim.userId);
      const policies = await s.sql(
        `SELECT 1 FROM policies WHERE principal_type = 'user' AND principal_id = $1`,
        [victim.userId],
      );
      expect(policies).toHaveLength(0);
      expect(await s.sql(`SELECT 1 FROM user_roles WHERE user_id = $1`, [victim.userId])).toHaveLength(0);
    });
  });

  /** Rules of API keys that need no HTTP request (moved from api-keys.e2e-part). */
  describe('ApiKeysService', () => {
    const keys = () => s.app.get(ApiKeysService);
    const authenticate = (token: string) => s.app.get(AuthService).authenticate(token);

    it('stores only the SHA-256 of the token', async () => {
      const key = await s.make.apiKey(s.admin, { name: 'hashed' });
      const rows = await s.sql(`SELECT * FROM api_keys WHERE id = $1`, [key.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toBe(hashToken(key.token));
      expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0].token_prefix).toBe(key.prefix);
      expect(JSON.stringify(await s.sql(`SELECT * FROM api_keys`))).not.toContain(key.token);
    });

    it("answers 404 when revoking another user's key, even as admin, and the key keeps working", async () => {
      const viewer = await s.make.user({ role: 'Viewer' });
      const other = await s.make.account();
      const viewerKey = await s.make.apiKey(viewer, { name: 'mine' });
      const foreignKey = await s.make.apiKey(other, { name: 'theirs' });
      for (const [actor, key] of [
        [s.admin, viewerKey],
        [viewer, foreignKey],
        [s.admin, foreignKey],
      ] as const) {
        await expectApiError(keys().revoke(await s.make.principal(actor), key.id), 404, 'api_key_not_found');
      }
      expect(await authenticate(viewerKey.token)).toMatchObject({ userId: viewer.userId });
      expect(await authenticate(foreignKey.token)).toMatchObject({ userId: other.userId });
      const rows = await s.sql(`SELECT 1 FROM api_keys WHERE id = ANY($1) AND revoked_at IS NOT NULL`, [
        [viewerKey.id, foreignKey.id],
      ]);
      expect(rows).toHaveLength(0);
    });

    it("lists only the caller's own keys", async () => {
      const viewer = await s.make.user({ role: 'Viewer' });
      const other = await s.make.account();
      await s.make.apiKey(viewer);
      await s.make.apiKey(other);
      await s.make.apiKey(s.admin);
      const list = async (actor: Actor) => (await keys().list(await s.make.principal(actor), {})).items;
      const mine = await list(viewer);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.every((k) => k.userId === viewer.userId)).toBe(true);
      const theirs = await list(other);
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.every((k) => k.userId === other.userId)).toBe(true);
      const adminKeys = await list(s.admin);
      expect(adminKeys.every((k) => k.userId === s.admin.userId)).toBe(true);
      const mineIds = new Set(mine.map((k) => k.id));
      expect(adminKeys.some((k) => mineIds.has(k.id))).toBe(false);
    });
  });
});
