import { bearer, expectErrorShape, newAccount, startApp, type Actor, type TestApp } from '../support/app.js';
import { postDeployment } from '../support/factories.js';
import { expectReferenceBody } from '../support/reference-schemas.js';

/**
 * Comments on embedded dashboards through HTTP (`/api/v1/embed/dashboard/{publicId}/comments...`):
 * embed-token authentication, the dashboard's authorisation, the embed tenant's partition,
 * authorship, mentions, resolving, paging, the bounds and the write rate. Answers are checked
 * against the reference's response schemas.
 */

interface Comment {
  id: number;
  dashboardId: string;
  parentId: number | null;
  userId: number | null;
  body: string;
  createdAt: string;
  editedAt: string | null;
  removedAt: string | null;
  isOwn: boolean;
}
interface Thread {
  root: Comment;
  replies: Comment[];
  resolvedAt: string | null;
  resolvedBy: number | null;
}
interface Page<T> {
  items: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
}
interface Viewer {
  token: string;
  id: number;
  externalId: string;
}
type Res = { status: number; body: unknown; headers: Record<string, string> };

/** Writes one embed user may make per minute in this file's app. */
const WRITES_PER_MINUTE = 6;

describe('comments on embedded dashboards', () => {
  let t: TestApp;
  let dep: number;
  let wb: number;
  /** Shared with the tenants `north` and `south`, signed embedding allowed. */
  let publicId: string;
  /** Published in the same deployment, shared with nobody. */
  let hiddenId: string;
  /** Another account's dashboard, shared with every embed user of that account. */
  let foreignId: string;
  let seq = 0;
  const uid = (prefix: string) => `${prefix}-${++seq}`;

  const base = (id = publicId) => `/api/v1/embed/dashboard/${id}/comments`;
  const list = (v: Viewer, query: Record<string, string | number | boolean> = {}, id = publicId) =>
    t.http().get(base(id)).query(query).set(bearer(v.token));
  const post = (v: Viewer, body: unknown, id = publicId) =>
    t
      .http()
      .post(base(id))
      .set(bearer(v.token))
      .send(body as object);
  const patch = (v: Viewer, commentId: number | string, body: unknown) =>
    t
      .http()
      .patch(`${base()}/${commentId}`)
      .set(bearer(v.token))
      .send(body as object);
  const del = (v: Viewer, commentId: number | string) =>
    t.http().delete(`${base()}/${commentId}`).set(bearer(v.token));
  const resolve = (v: Viewer, commentId: number | string, resolved: boolean) =>
    t.http().post(`${base()}/${commentId}/resolve`).set(bearer(v.token)).send({ resolved });
  const mentionable = (v: Viewer, query: Record<string, string | number> = {}) =>
    t.http().get(`${base()}/mentionable-users`).query(query).set(bearer(v.token));

  const expectError = (res: { status: number; body: unknown }, status: number, code?: string) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
    expectErrorShape(res.body, status, code);
  };

  /** Posts a comment and answers it, checked against the reference's schema. */
  const comment = async (v: Viewer, body: string, parentId?: number): Promise<Comment> => {
    const res = await post(v, parentId === undefined ? { body } : { body, parentId });
    if (res.status !== 200) throw new Error(`comment: ${res.status} ${JSON.stringify(res.body)}`);
    expectReferenceBody('createDashboardComment', 200, res.body);
    return res.body as Comment;
  };

  /** The threads of one page, checked against the reference's schema. */
  const threads = async (v: Viewer, query: Record<string, string | number | boolean> = {}) => {
    const res = await list(v, query);
    if (res.status !== 200) throw new Error(`list: ${res.status} ${JSON.stringify(res.body)}`);
    expectReferenceBody('listDashboardComments', 200, res.body);
    return res.body as Page<Thread>;
  };

  const createWorkbook = async (actor: Actor, deployment: number) => {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${deployment}/workbooks`)
      .set(bearer(actor.token))
      .send({ name: uid('book') });
    if (res.status !== 200) throw new Error(`workbook: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as number;
  };
  const publish = async (actor: Actor, deployment: number, workbook: number) => {
    const res = await t
      .http()
      .post(`/api/v1/deployments/${deployment}/workbooks/${workbook}/publish`)
      .set(bearer(actor.token))
      .send({ workbookId: workbook, config: {} });
    if (res.status !== 200) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.publicId as string;
  };
  const putAccess = async (actor: Actor, deployment: number, workbook: number, body: object) => {
    const res = await t
      .http()
      .put(`/api/v1/deployments/${deployment}/workbooks/${workbook}/embed-access`)
      .set(bearer(actor.token))
      .send(body);
    if (res.status !== 200) throw new Error(`embed-access: ${res.status} ${JSON.stringify(res.body)}`);
  };

  /** A new embed user of `tenant` with an embed token for the deployment. */
  const viewer = async (
    tenant: string,
    extra: Record<string, unknown> = {},
    actor: Actor = t.admin,
    deployment = dep,
  ): Promise<Viewer> => {
    const externalId = uid(`${tenant}-user`);
    const session = await t
      .http()
      .post('/api/v1/embed/generate-session')
      .set(bearer(actor.token))
      .send({ deploymentId: deployment, embedTenantName: tenant, externalId, ...extra });
    if (session.status !== 200) throw new Error(`session: ${session.status} ${JSON.stringify(session.body)}`);
    const token = await t
      .http()
      .post('/api/v1/embed/session/token')
      .send({ sessionId: session.body.sessionId });
    if (token.status !== 200) throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
    const [row] = await t.sql<{ id: number }>(
      `SELECT u.id FROM embed_users u JOIN embed_tenants et ON et.id = u.tenant_id
       WHERE et.account_id = $1 AND et.name = $2 AND u.external_id = $3`,
      [actor.accountId, tenant, externalId],
    );
    return { token: token.body.token as string, id: row.id, externalId };
  };

  beforeAll(async () => {
    t = await startApp({ EMBED_COMMENT_WRITES_PER_MINUTE: String(WRITES_PER_MINUTE) });
    dep = (await postDeployment(t, t.admin)).id;
    // The tenants exist once a user of each has a session.
    await viewer('north');
    await viewer('south');
    wb = await createWorkbook(t.admin, dep);
    publicId = await publish(t.admin, dep, wb);
    await putAccess(t.admin, dep, wb, { embedTenantName: 'north', action: 'read', allowEmbed: true });
    await putAccess(t.admin, dep, wb, { embedTenantName: 'south', action: 'read' });
    hiddenId = await publish(t.admin, dep, await createWorkbook(t.admin, dep));

    const other = await newAccount(t, 'comments-other');
    const otherDep = (await postDeployment(t, other)).id;
    const otherWb = await createWorkbook(other, otherDep);
    foreignId = await publish(other, otherDep, otherWb);
    await putAccess(other, otherDep, otherWb, { allEmbedUsers: true, action: 'read' });
  });
  afterAll(() => t?.close());

  describe('authentication and the dashboard', () => {
    it('answers 401 without an embed token, with a bad one, and with an API token', async () => {
      const routes = [
        () => t.http().get(base()),
        () => t.http().post(base()).send({ body: 'hi' }),
        () => t.http().get(`${base()}/mentionable-users`),
        () => t.http().patch(`${base()}/1`).send({ body: 'hi' }),
        () => t.http().delete(`${base()}/1`),
        () => t.http().post(`${base()}/1/resolve`).send({ resolved: true }),
      ];
      for (const route of routes) {
        expectError(await route(), 401, 'unauthorized');
        expectError(await route().set(bearer('not-a-token')), 401, 'unauthorized');
        expectError(await route().set(bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl')), 401);
        // A console user's token names no embed tenant: it reaches no conversation.
        expectError(await route().set(bearer(t.admin.token)), 401, 'unauthorized');
      }
    });

    it('answers 404 for a dashboard not shared with the user, of another account, or unknown', async () => {
      const v = await viewer('north');
      const west = await viewer('west');
      const session = await viewer('north', { publicDashboardId: hiddenId });
      for (const [who, id] of [
        [v, hiddenId],
        [v, foreignId],
        [v, 'Nope0000000'],
        [v, 'not-a-public-id!'],
        [west, publicId],
        [session, publicId],
      ] as const) {
        expectError(await list(who, {}, id), 404, 'dashboard_not_found');
        expectError(await post(who, { body: 'hello' }, id), 404, 'dashboard_not_found');
        expectError(
          await t
            .http()
            .get(`${base(id)}/mentionable-users`)
            .set(bearer(who.token)),
          404,
          'dashboard_not_found',
        );
      }
      expect(await t.sql(`SELECT 1 FROM embed_dashboard_comments`)).toEqual([]);
    });

    it('answers 403 where signed embedding is not allowed for a tenant share', async () => {
      const book = await createWorkbook(t.admin, dep);
      const id = await publish(t.admin, dep, book);
      await putAccess(t.admin, dep, book, { embedTenantName: 'north', action: 'read', allowEmbed: false });
      const v = await viewer('north');
      expectError(await list(v, {}, id), 403, 'embedding_not_allowed');
      expectError(await post(v, { body: 'hello' }, id), 403, 'embedding_not_allowed');
    });
  });

  describe('input', () => {
    it('refuses bad bodies, unknown fields and parameters with 400', async () => {
      const v = await viewer('north');
      for (const body of [
        {},
        { body: '' },
        { body: '   \n\t' },
        { body: 42 },
        { body: null },
        { body: 'hi', parentId: 0 },
        { body: 'hi', parentId: 'x' },
        { body: 'hi', parentId: 1.5 },
        { body: 'hi', mentions: [1] },
        { body: 'hi', userId: 1 },
        { body: 'x'.repeat(10_001) },
      ]) {
        expectError(await post(v, body), 400, 'validation_failed');
      }
      const thread = await comment(v, 'x'.repeat(10_000));
      expect(thread.body).toHaveLength(10_000);
      expectError(await patch(v, thread.id, { body: 'x'.repeat(10_001) }), 400, 'validation_failed');
      expectError(await patch(v, thread.id, { body: 'ok', parentId: 3 }), 400, 'validation_failed');
      expectError(await patch(v, 'abc', { body: 'ok' }), 400, 'validation_failed');
      expectError(await patch(v, '99999999999', { body: 'ok' }), 400, 'validation_failed');
      expectError(await resolve(v, thread.id, 'yes' as unknown as boolean), 400, 'validation_failed');
      expectError(
        await t.http().post(`${base()}/${thread.id}/resolve`).set(bearer(v.token)).send({}),
        400,
        'validation_failed',
      );
      expectError(await list(v, { unknown: 1 }), 400, 'validation_failed');
      expectError(await list(v, { first: 0 }), 400, 'validation_failed');
      expectError(await list(v, { includeResolved: 'maybe' }), 400, 'validation_failed');
      expectError(await list(v, { after: 'garbage!' }), 400, 'invalid_cursor');
      const huge = Buffer.from(JSON.stringify([99_999_999_999])).toString('base64url');
      expectError(await list(v, { after: huge }), 400, 'invalid_cursor');
      expectError(await mentionable(v, { search: 'x'.repeat(256) }), 400, 'validation_failed');
      expectError(await mentionable(v, { after: huge }), 400, 'invalid_cursor');
    });

    it('stores and answers text exactly as written: markup is JSON text, never HTML', async () => {
      const v = await viewer('north');
      const text = `<script>alert("x")</script> <img src=x onerror=alert(1)> & "quotes" 'single' \u2028 ✓`;
      const res = await post(v, { body: text });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.body).toBe(text);
      expect(JSON.parse(res.text).body).toBe(text);
      const page = await threads(v);
      expect(page.items.find((th) => th.root.id === res.body.id)?.root.body).toBe(text);
      const edited = await patch(v, res.body.id, { body: `${text}!` });
      expect(edited.body.body).toBe(`${text}!`);
    });
  });

  describe('threads', () => {
    it('posts threads and replies one level deep, listed newest thread first, replies oldest first', async () => {
      const a = await viewer('north');
      const b = await viewer('north');
      const first = await comment(a, 'first thread');
      expect(first).toEqual({
        id: expect.any(Number),
        dashboardId: publicId,
        parentId: null,
        userId: a.id,
        body: 'first thread',
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        editedAt: null,
        removedAt: null,
        isOwn: true,
      });
      const second = await comment(b, 'second thread');
      const reply1 = await comment(b, 'a reply', first.id);
      const reply2 = await comment(a, 'another reply', first.id);
      expect(reply1).toEqual(expect.objectContaining({ parentId: first.id, userId: b.id, isOwn: true }));

      expectError(await post(a, { body: 'nested', parentId: reply1.id }), 400, 'comment_is_reply');
      expectError(await post(a, { body: 'orphan', parentId: 2_000_000_000 }), 404, 'comment_not_found');

      const page = await threads(a, { first: 1000 });
      const ids = page.items.map((th) => th.root.id);
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
      const thread = page.items.find((th) => th.root.id === first.id)!;
      expect(thread).toEqual({
        root: expect.objectContaining({ id: first.id, isOwn: true }),
        replies: [
          expect.objectContaining({ id: reply1.id, body: 'a reply', isOwn: false, userId: b.id }),
          expect.objectContaining({ id: reply2.id, body: 'another reply', isOwn: true }),
        ],
        resolvedAt: null,
        resolvedBy: null,
      });
      // Replying does not move a thread: it keeps the place its first comment gave it.
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    });

    it('pages threads by cursor', async () => {
      const book = await createWorkbook(t.admin, dep);
      const id = await publish(t.admin, dep, book);
      await putAccess(t.admin, dep, book, { embedTenantName: 'north', action: 'read', allowEmbed: true });
      const v = await viewer('north');
      const made: number[] = [];
      for (const n of [1, 2, 3]) made.push((await post(v, { body: `thread ${n}` }, id)).body.id as number);
      const one = await list(v, { first: 2 }, id);
      expectReferenceBody('listDashboardComments', 200, one.body);
      const page1 = one.body as Page<Thread>;
      expect(page1.items.map((th) => th.root.id)).toEqual([made[2], made[1]]);
      expect(page1.pageInfo).toEqual(expect.objectContaining({ hasNextPage: true, hasPreviousPage: false }));
      const page2 = (await list(v, { first: 2, after: page1.pageInfo.endCursor! }, id)).body as Page<Thread>;
      expect(page2.items.map((th) => th.root.id)).toEqual([made[0]]);
      expect(page2.pageInfo).toEqual(expect.objectContaining({ hasNextPage: false, hasPreviousPage: true }));
    });

    it('stops a page before it holds 1000 comments, and caps replies per thread', async () => {
      const book = await createWorkbook(t.admin, dep);
      const id = await publish(t.admin, dep, book);
      await putAccess(t.admin, dep, book, { embedTenantName: 'north', action: 'read', allowEmbed: true });
      const v = await viewer('north');
      const older = (await post(v, { body: 'older' }, id)).body as Comment;
      const newer = (await post(v, { body: 'newer' }, id)).body as Comment;
      // Bulk replies written directly: 600 on each thread, more than the API lets a thread take.
      for (const root of [older, newer]) {
        await t.sql(
          `INSERT INTO embed_dashboard_comments (account_id, deployment_id, dashboard_id, tenant_id, author_id,
             parent_id, body)
           SELECT c.account_id, c.deployment_id, c.dashboard_id, c.tenant_id, c.author_id, c.id, 'reply ' || n
           FROM embed_dashboard_comments c, generate_series(1, 600) n WHERE c.id = $1`,
          [root.id],
        );
      }
      const first = await list(v, { first: 10 }, id);
      expect(first.status).toBe(200);
      expectReferenceBody('listDashboardComments', 200, first.body);
      const page1 = first.body as Page<Thread>;
      expect(page1.items.map((th) => [th.root.id, th.replies.length])).toEqual([[newer.id, 600]]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await list(v, { first: 10, after: page1.pageInfo.endCursor! }, id)).body as Page<Thread>;
      expect(page2.items.map((th) => [th.root.id, th.replies.length])).toEqual([[older.id, 600]]);
      expect(page2.pageInfo.hasNextPage).toBe(false);

      expectError(await post(v, { body: 'one more', parentId: older.id }, id), 429, 'comment_limit_reached');
    });
  });

  describe('tenants', () => {
    it('keeps each tenant’s conversation to itself', async () => {
      const n = await viewer('north');
      const s = await viewer('south');
      const northThread = await comment(n, 'north only');
      const southThread = await comment(s, 'south only');
      const northIds = (await threads(n, { first: 1000, includeResolved: true })).items.map(
        (th) => th.root.id,
      );
      const southIds = (await threads(s, { first: 1000, includeResolved: true })).items.map(
        (th) => th.root.id,
      );
      expect(northIds).toContain(northThread.id);
      expect(northIds).not.toContain(southThread.id);
      expect(southIds).toContain(southThread.id);
      expect(southIds).not.toContain(northThread.id);

      // Another tenant's comment does not exist for the caller, whatever they try.
      expectError(await post(s, { body: 'sneaky', parentId: northThread.id }), 404, 'comment_not_found');
      expectError(await patch(s, northThread.id, { body: 'sneaky' }), 404, 'comment_not_found');
      expectError(await del(s, northThread.id), 404, 'comment_not_found');
      expectError(await resolve(s, northThread.id, true), 404, 'comment_not_found');
      const [row] = await t.sql<{ body: string; removed: boolean }>(
        `SELECT body, removed_at IS NOT NULL AS removed FROM embed_dashboard_comments WHERE id = $1`,
        [northThread.id],
      );
      expect(row).toEqual({ body: 'north only', removed: false });
    });
  });

  describe('authors', () => {
    it('lets only the author edit and delete a comment', async () => {
      const author = await viewer('north');
      const other = await viewer('north');
      const root = await comment(author, 'my thread');
      const reply = await comment(author, 'my reply', root.id);
      const theirs = await comment(other, 'their reply', root.id);

      expectError(await patch(other, root.id, { body: 'hijacked' }), 403, 'not_comment_author');
      expectError(await del(other, reply.id), 403, 'not_comment_author');

      const edited = await patch(author, root.id, { body: 'my thread, edited' });
      expect(edited.status).toBe(200);
      expectReferenceBody('updateDashboardComment', 200, edited.body);
      expect(edited.body).toEqual(
        expect.objectContaining({ id: root.id, body: 'my thread, edited', editedAt: expect.any(String) }),
      );

      const removed = await del(author, reply.id);
      expect({ status: removed.status, body: removed.body }).toEqual({
        status: 200,
        body: { success: true },
      });
      expectReferenceBody('removeDashboardComment', 200, removed.body);
      expectError(await del(author, reply.id), 404, 'comment_not_found');
      expectError(await patch(other, reply.id, { body: 'back' }), 404, 'comment_not_found');

      const thread = (await threads(other, { first: 1000 })).items.find((th) => th.root.id === root.id)!;
      expect(thread.replies).toEqual([
        expect.objectContaining({ id: reply.id, body: '', removedAt: expect.any(String) }),
        expect.objectContaining({ id: theirs.id, body: 'their reply', removedAt: null }),
      ]);
      const [wiped] = await t.sql<{ body: string }>(
        `SELECT body FROM embed_dashboard_comments WHERE id = $1`,
        [reply.id],
      );
      expect(wiped.body).toBe('');

      // Deleting the thread's first comment takes the whole thread.
      expect((await del(author, root.id)).status).toBe(200);
      const after = await threads(other, { first: 1000, includeResolved: true });
      expect(after.items.map((th) => th.root.id)).not.toContain(root.id);
      expectError(await patch(other, theirs.id, { body: 'still here?' }), 404, 'comment_not_found');
      expectError(await post(other, { body: 'late reply', parentId: root.id }), 404, 'comment_not_found');
    });
  });

  describe('mentions', () => {
    it('lists the other users of the caller’s tenant the dashboard is shared with', async () => {
      const me = await viewer('north', { email: 'me.north@example.test' });
      const dana = await viewer('north', {
        email: 'Dana.Reyes@example.test',
        userProfile: { displayName: 'Dana Reyes' },
      });
      const southern = await viewer('south');
      const res = await mentionable(me, { first: 1000 });
      expect(res.status).toBe(200);
      expectReferenceBody('listMentionableEmbedUsers', 200, res.body);
      const items = (res.body as Page<{ id: number; username: string }>).items;
      const ids = items.map((u) => u.id);
      expect(ids).toContain(dana.id);
      expect(ids).not.toContain(me.id);
      expect(ids).not.toContain(southern.id);
      const usernames = items.map((u) => u.username);
      expect(usernames).toEqual([...usernames].sort());
      expect(items.find((u) => u.id === dana.id)).toEqual({
        id: dana.id,
        username: dana.externalId,
        email: 'dana.reyes@example.test',
        firstName: 'Dana Reyes',
      });
      // A user with only a placeholder address has no email.
      const plain = await viewer('north');
      const found = (await mentionable(me, { search: plain.externalId })).body as Page<{ email: unknown }>;
      expect(found.items).toEqual([
        { id: plain.id, username: plain.externalId, email: null, firstName: null },
      ]);
      const byEmail = (await mentionable(me, { search: 'DANA.REYES@' })).body as Page<{ id: number }>;
      expect(byEmail.items.map((u) => u.id)).toEqual([dana.id]);

      const page1 = (await mentionable(me, { first: 1 })).body as Page<{ id: number }>;
      expect(page1.items).toHaveLength(1);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await mentionable(me, { first: 1, after: page1.pageInfo.endCursor! })).body as Page<{
        id: number;
      }>;
      expect(page2.items[0].id).not.toBe(page1.items[0].id);
    });

    it('accepts mentions of those users only', async () => {
      const me = await viewer('north');
      const dana = await viewer('north');
      const southern = await viewer('south');
      const ok = await comment(me, `@[Dana](${dana.id}) and @[me](${me.id}), please look`);
      expect(ok.body).toContain(`@[Dana](${dana.id})`);

      const refused = await post(me, { body: `hey @[South](${southern.id}) and @[Ghost](2000000000)` });
      expectError(refused, 400, 'unknown_mentions');
      expect(String((refused.body as { message: string }).message)).toContain(`${southern.id}, 2000000000`);
      expectError(await post(me, { body: `@[Big](9999999999)` }), 400, 'unknown_mentions');
      expectError(await patch(me, ok.id, { body: `now @[South](${southern.id})` }), 400, 'unknown_mentions');
      const many = Array.from({ length: 21 }, (_, i) => `@[u${i}](${i + 1})`).join(' ');
      expectError(await post(me, { body: many }), 400, 'too_many_mentions');
      // Text that only looks like a mention is just text.
      await comment(me, `mail @south or see [docs](42) and @[x](y)`);
    });
  });

  describe('resolving', () => {
    it('lets the thread’s author resolve and re-open it, and lists by state', async () => {
      const author = await viewer('north');
      const other = await viewer('north');
      const root = await comment(author, 'to resolve');
      const reply = await comment(other, 'a reply', root.id);

      expectError(await resolve(other, root.id, true), 403, 'not_comment_author');
      expectError(await resolve(other, reply.id, true), 400, 'comment_is_reply');
      expectError(await resolve(author, 2_000_000_000, true), 404, 'comment_not_found');

      const done = await resolve(author, root.id, true);
      expect(done.status).toBe(200);
      expectReferenceBody('setDashboardCommentResolved', 200, done.body);
      const resolved = done.body as Thread;
      expect(resolved).toEqual({
        root: expect.objectContaining({ id: root.id }),
        replies: [expect.objectContaining({ id: reply.id })],
        resolvedAt: expect.any(String),
        resolvedBy: author.id,
      });
      const again = (await resolve(author, root.id, true)).body as Thread;
      expect(again.resolvedAt).toBe(resolved.resolvedAt);

      const open = await threads(other, { first: 1000 });
      expect(open.items.map((th) => th.root.id)).not.toContain(root.id);
      const all = await threads(other, { first: 1000, includeResolved: true });
      expect(all.items.find((th) => th.root.id === root.id)?.resolvedAt).toBe(resolved.resolvedAt);
      const only = await threads(other, { first: 1000, resolvedOnly: true, includeResolved: false });
      expect(only.items.length).toBeGreaterThan(0);
      expect(only.items.every((th) => th.resolvedAt !== null)).toBe(true);
      expect(only.items.map((th) => th.root.id)).toContain(root.id);

      const reopened = (await resolve(author, root.id, false)).body as Thread;
      expect({ resolvedAt: reopened.resolvedAt, resolvedBy: reopened.resolvedBy }).toEqual({
        resolvedAt: null,
        resolvedBy: null,
      });
      expect((await threads(other, { first: 1000 })).items.map((th) => th.root.id)).toContain(root.id);
    });
  });

  describe('write rate', () => {
    it(`refuses an embed user’s writes past ${WRITES_PER_MINUTE} a minute with 429 and Retry-After`, async () => {
      const busy = await viewer('north');
      const calm = await viewer('north');
      const root = await comment(busy, 'write 1');
      for (let n = 2; n <= WRITES_PER_MINUTE; n++) {
        const res =
          n % 2 ? await patch(busy, root.id, { body: `write ${n}` }) : await post(busy, { body: `w${n}` });
        expect({ n, status: res.status }).toEqual({ n, status: 200 });
      }
      const refused = (await post(busy, { body: 'one too many' })) as unknown as Res;
      expectError(refused, 429, 'comment_write_limit_reached');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expectError(await resolve(busy, root.id, true), 429, 'comment_write_limit_reached');
      expectError(await del(busy, root.id), 429, 'comment_write_limit_reached');
      const [count] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_dashboard_comments WHERE author_id = $1 AND body = 'one too many'`,
        [busy.id],
      );
      expect(count.n).toBe(0);
      // Reads are not writes, and another user has a budget of their own.
      expect((await list(busy)).status).toBe(200);
      expect((await post(calm, { body: 'still fine' })).status).toBe(200);
    });

    it('admits exactly the budget of parallel writes', async () => {
      const racer = await viewer('north');
      const results = await Promise.all(
        Array.from({ length: WRITES_PER_MINUTE + 4 }, (_, n) => post(racer, { body: `race ${n}` })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([
        ...Array<number>(WRITES_PER_MINUTE).fill(200),
        ...Array<number>(4).fill(429),
      ]);
      const [count] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM embed_dashboard_comments WHERE author_id = $1`,
        [racer.id],
      );
      expect(count.n).toBe(WRITES_PER_MINUTE);
    });
  });
});
