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
import { expectReferenceBody } from '../support/reference-schemas.js';

/** An item of either list, as far as these tests read it. */
interface Item {
  type: 'FOLDER' | 'WORKBOOK' | 'REPORT';
  id: number;
  name: string;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  [key: string]: unknown;
}

interface PageBody {
  items: Item[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

describe('embed tenants’ workbooks and the shared workspace', () => {
  let t: TestApp;
  let other: Actor;
  let viewer: Actor;
  let noRole: Actor;
  let granted: Actor;
  let dep: number;
  let depB: number;
  let otherDep: number;
  /** Embed tokens of tenants cat-a, cat-b and cat-c in `dep`. */
  let tokA: string;
  let tokB: string;
  let tokC: string;
  let seq = 0;

  // The workspace of `dep`:
  //   Alpha / Alpha inner / cat Orders A1       shared with cat-a (published)
  //   Beta / cat Revenue all                    shared with every embed user
  //   Beta / cat Hidden beta                    not shared
  //   Beta / Beta empty                         (a folder holding nothing shared)
  //   Gamma / cat Gamma B1                      shared with cat-b
  //   cat Both root                             shared with cat-a and with every embed user
  //   cat Plain root                            not shared
  //   cat Paging A2, A3, A4                     shared with cat-a
  // and in `depB`: cat Elsewhere, shared with cat-a and every embed user.
  const ids = {} as Record<
    | 'fAlpha'
    | 'fAlphaInner'
    | 'fBeta'
    | 'fBetaEmpty'
    | 'fGamma'
    | 'fOtherDep'
    | 'wA1'
    | 'wAll'
    | 'wHidden'
    | 'wB1'
    | 'wBoth'
    | 'wPlain'
    | 'wA2'
    | 'wA3'
    | 'wA4'
    | 'wElsewhere',
    number
  >;
  let wA1PublicId: string;

  const base = (d: number) => `/api/v1/deployments/${d}`;
  const workbooksOf = (d: number, tenant: string) => `${base(d)}/embed-tenants/${tenant}/workbooks`;
  const shared = (d: number) => `${base(d)}/shared-workspace`;

  const ok = <T>(res: { status: number; body: T }, what: string): T => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  const expectError = (res: { status: number; body: unknown }, status: number, code?: string) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
    expectErrorShape(res.body, status, code);
  };

  const createDeployment = async (actor: Actor) =>
    ok(
      await t.http().post('/build/api/v1/deployments').set(bearer(actor.token)).send(deploymentInput()),
      'deployment',
    ).id as number;

  const folder = async (d: number, name: string, parentId: number | null = null) =>
    ok(
      await t
        .http()
        .post(`${base(d)}/folders`)
        .set(bearer(t.admin.token))
        .send({ name, parentId }),
      'folder',
    ).id as number;

  const workbook = async (d: number, name: string, folderId: number | null = null, meta?: object) =>
    ok(
      await t
        .http()
        .post(`${base(d)}/workbooks`)
        .set(bearer(t.admin.token))
        .send({ name, folderId, ...(meta ? { meta } : {}) }),
      'workbook',
    ).id as number;

  const share = async (d: number, wb: number, target: { tenant: string } | 'all', action = 'read') =>
    ok(
      await t
        .http()
        .put(`${base(d)}/workbooks/${wb}/embed-access`)
        .set(bearer(t.admin.token))
        .send(
          target === 'all' ? { allEmbedUsers: true, action } : { embedTenantName: target.tenant, action },
        ),
      'share',
    );

  const embedToken = async (d: number, tenant: string, extra: Record<string, unknown> = {}) => {
    const session = ok(
      await t
        .http()
        .post('/api/v1/embed/generate-session')
        .set(bearer(t.admin.token))
        .send({ deploymentId: d, embedTenantName: tenant, externalId: `user-${++seq}`, ...extra }),
      'generate-session',
    ).sessionId as string;
    return ok(await t.http().post('/api/v1/embed/session/token').send({ sessionId: session }), 'token')
      .token as string;
  };

  /** GET of the tenant's workbooks as the admin; a 200 body is checked against the reference. */
  const listWorkbooks = async (tenant: string, query: Record<string, unknown> = {}, d = dep) => {
    const res = await t.http().get(workbooksOf(d, tenant)).query(query).set(bearer(t.admin.token));
    if (res.status === 200) expectReferenceBody('listEmbedTenantWorkbooks', 200, res.body);
    return res as { status: number; body: PageBody };
  };

  /** GET of the shared workspace with an embed token; a 200 body is checked against the reference. */
  const feed = async (token: string, query: Record<string, unknown> = {}, d = dep) => {
    const res = await t.http().get(shared(d)).query(query).set(bearer(token));
    if (res.status === 200) expectReferenceBody('sharedWorkspaceObjects', 200, res.body);
    return res as { status: number; body: PageBody };
  };

  /** Every item of a list, walking its pages `first` at a time (bounded). */
  const allPages = async (
    get: (q: Record<string, unknown>) => Promise<{ status: number; body: PageBody }>,
    q: Record<string, unknown>,
    first: number,
  ) => {
    const items: Item[] = [];
    const pages: PageBody[] = [];
    let after: string | undefined;
    for (let i = 0; i < 50; i++) {
      const res = await get({ ...q, first, ...(after ? { after } : {}) });
      expect(res.status).toBe(200);
      pages.push(res.body);
      items.push(...res.body.items);
      if (!res.body.pageInfo.hasNextPage) return { items, pages };
      after = res.body.pageInfo.endCursor!;
    }
    throw new Error('more than 50 pages');
  };

  const idsOf = (items: Item[]) => items.map((i) => i.id);
  const keysOf = (items: Item[]) => items.map((i) => `${i.type}:${i.id}`);
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'globex');
    viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
    granted = await newUser(t, t.admin, { defaultRoles: [] });
    dep = await createDeployment(t.admin);
    depB = await createDeployment(t.admin);
    otherDep = await createDeployment(other);

    // The sessions create the tenants, which shares need.
    tokA = await embedToken(dep, 'cat-a');
    tokB = await embedToken(dep, 'cat-b');
    tokC = await embedToken(dep, 'cat-c');

    ids.fAlpha = await folder(dep, 'Alpha');
    ids.fAlphaInner = await folder(dep, 'Alpha inner', ids.fAlpha);
    ids.fBeta = await folder(dep, 'Beta');
    ids.fBetaEmpty = await folder(dep, 'Beta empty', ids.fBeta);
    ids.fGamma = await folder(dep, 'Gamma');
    ids.fOtherDep = await folder(depB, 'Other deployment');
    ids.wA1 = await workbook(dep, 'cat Orders A1', ids.fAlphaInner, { team: 'ops' });
    ids.wAll = await workbook(dep, 'cat Revenue all', ids.fBeta);
    ids.wHidden = await workbook(dep, 'cat Hidden beta', ids.fBeta);
    ids.wB1 = await workbook(dep, 'cat Gamma B1', ids.fGamma);
    ids.wBoth = await workbook(dep, 'cat Both root');
    ids.wPlain = await workbook(dep, 'cat Plain root');
    ids.wA2 = await workbook(dep, 'cat Paging A2');
    ids.wA3 = await workbook(dep, 'cat Paging A3');
    ids.wA4 = await workbook(dep, 'cat Paging A4');
    ids.wElsewhere = await workbook(depB, 'cat Elsewhere', ids.fOtherDep);

    for (const wb of [ids.wA1, ids.wBoth, ids.wA2, ids.wA3, ids.wA4])
      await share(dep, wb, { tenant: 'cat-a' });
    for (const wb of [ids.wAll, ids.wBoth]) await share(dep, wb, 'all');
    await share(dep, ids.wB1, { tenant: 'cat-b' });
    await share(depB, ids.wElsewhere, { tenant: 'cat-a' });
    await share(depB, ids.wElsewhere, 'all');

    const dash = ok(
      await t
        .http()
        .post(`${base(dep)}/workbooks/${ids.wA1}/publish`)
        .set(bearer(t.admin.token))
        .send({ workbookId: ids.wA1, config: {} }),
      'publish',
    );
    wA1PublicId = dash.publicId as string;

    // Distinct times: updated_at rises with the id order below, created_at falls.
    const order = [ids.wBoth, ids.wA2, ids.wA3, ids.wA4, ids.wA1, ids.wAll, ids.wB1];
    for (const [i, id] of order.entries()) {
      await t.sql(
        `UPDATE workbooks SET updated_at = $2::timestamptz, created_at = $3::timestamptz WHERE id = $1`,
        [
          id,
          new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
          new Date(Date.UTC(2024, 0, 30 - i)).toISOString(),
        ],
      );
    }

    // Another account with a tenant of the same name and a share of its own.
    const theirs = ok(
      await t
        .http()
        .post(`${base(otherDep)}/workbooks`)
        .set(bearer(other.token))
        .send({ name: 'cat Theirs' }),
      'their workbook',
    ).id as number;
    ok(
      await t
        .http()
        .post('/api/v1/embed/generate-session')
        .set(bearer(other.token))
        .send({ deploymentId: otherDep, embedTenantName: 'cat-z', externalId: 'z-1' }),
      'their session',
    );
    ok(
      await t
        .http()
        .put(`${base(otherDep)}/workbooks/${theirs}/embed-access`)
        .set(bearer(other.token))
        .send({ embedTenantName: 'cat-z', action: 'read' }),
      'their share',
    );
  });
  afterAll(() => t.close());

  describe('GET /deployments/{id}/embed-tenants/{name}/workbooks', () => {
    it('lists, by id, the workbooks of the deployment shared with the tenant or with every embed user', async () => {
      const res = await listWorkbooks('cat-a');
      expect(res.status).toBe(200);
      expect(idsOf(res.body.items)).toEqual(
        sorted([ids.wA1, ids.wAll, ids.wBoth, ids.wA2, ids.wA3, ids.wA4]),
      );
      expect(res.body.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: expect.any(String),
        endCursor: expect.any(String),
      });
    });

    it('answers the Workbook shape, owner and published dashboard included', async () => {
      const res = await listWorkbooks('cat-a', { accessSource: 'tenant' });
      const a1 = res.body.items.find((i) => i.id === ids.wA1)!;
      expect(a1).toMatchObject({
        type: 'WORKBOOK',
        name: 'cat Orders A1',
        deploymentId: dep,
        folderId: ids.fAlphaInner,
        folderPath: [
          { id: ids.fAlpha, name: 'Alpha' },
          { id: ids.fAlphaInner, name: 'Alpha inner' },
        ],
        meta: { team: 'ops' },
        userId: t.admin.userId,
        user: expect.objectContaining({ id: t.admin.userId, email: t.admin.email }),
        createdBy: t.admin.userId,
        publishedDashboard: expect.objectContaining({ publicId: wA1PublicId, workbookId: ids.wA1 }),
      });
      const a2 = res.body.items.find((i) => i.id === ids.wA2)!;
      expect(a2.publishedDashboard).toBeNull();
    });

    it.each([
      ['tenant', 'cat-a', ['wA1', 'wBoth', 'wA2', 'wA3', 'wA4']],
      ['allEmbedUsers', 'cat-a', ['wAll', 'wBoth']],
      ['folder', 'cat-a', []],
      ['tenant', 'cat-b', ['wB1']],
      ['allEmbedUsers', 'cat-b', ['wAll', 'wBoth']],
      ['tenant', 'cat-c', []],
    ] as const)(
      'accessSource=%s for %s keeps only the workbooks reached that way',
      async (source, tenant, names) => {
        const res = await listWorkbooks(tenant, { accessSource: source });
        expect(res.status).toBe(200);
        expect(idsOf(res.body.items)).toEqual(sorted(names.map((n) => ids[n])));
      },
    );

    it('never shows one tenant what only another tenant was given', async () => {
      const a = idsOf((await listWorkbooks('cat-a')).body.items);
      const b = idsOf((await listWorkbooks('cat-b')).body.items);
      const c = idsOf((await listWorkbooks('cat-c')).body.items);
      expect(a).not.toContain(ids.wB1);
      expect(b).toEqual(sorted([ids.wAll, ids.wB1, ids.wBoth]));
      expect(c).toEqual(sorted([ids.wAll, ids.wBoth]));
      for (const list of [a, b, c]) {
        expect(list).not.toContain(ids.wHidden);
        expect(list).not.toContain(ids.wPlain);
        expect(list).not.toContain(ids.wElsewhere);
      }
    });

    it('lists only the deployment in the path', async () => {
      const res = await listWorkbooks('cat-a', {}, depB);
      expect(idsOf(res.body.items)).toEqual([ids.wElsewhere]);
    });

    it('pages with first/after: every workbook once, in order, with no gap', async () => {
      const whole = idsOf((await listWorkbooks('cat-a')).body.items);
      for (const first of [1, 2, 4]) {
        const { items, pages } = await allPages((q) => listWorkbooks('cat-a', q), {}, first);
        expect(idsOf(items)).toEqual(whole);
        expect(pages.map((p) => p.items.length).slice(0, -1)).toEqual(
          Array<number>(pages.length - 1).fill(first),
        );
        expect(pages.map((p) => p.pageInfo.hasPreviousPage)).toEqual(pages.map((_, i) => i > 0));
      }
    });

    it('keeps the filter across pages', async () => {
      const { items } = await allPages((q) => listWorkbooks('cat-a', q), { accessSource: 'tenant' }, 2);
      expect(idsOf(items)).toEqual(sorted([ids.wA1, ids.wBoth, ids.wA2, ids.wA3, ids.wA4]));
    });

    it('follows the shares: a share taken back leaves the list', async () => {
      await share(dep, ids.wA4, { tenant: 'cat-a' }, 'none');
      try {
        expect(idsOf((await listWorkbooks('cat-a', { accessSource: 'tenant' })).body.items)).not.toContain(
          ids.wA4,
        );
      } finally {
        await share(dep, ids.wA4, { tenant: 'cat-a' });
      }
    });

    it('reads the tenant name trimmed and lowercased', async () => {
      const res = await listWorkbooks('CAT-B', { accessSource: 'tenant' });
      expect(idsOf(res.body.items)).toEqual([ids.wB1]);
    });

    it('needs a token (401) of an admin (403)', async () => {
      expectError(await t.http().get(workbooksOf(dep, 'cat-a')), 401, 'unauthorized');
      expectError(await t.http().get(workbooksOf(dep, 'cat-a')).set(bearer(tokA)), 401, 'unauthorized');
      expectError(await t.http().get(workbooksOf(dep, 'cat-a')).set(bearer(viewer.token)), 403, 'forbidden');
    });

    it('answers 404 for another account’s or an unknown deployment, and for an unknown tenant', async () => {
      expectError(await listWorkbooks('cat-a', {}, otherDep), 404, 'deployment_not_found');
      expectError(await listWorkbooks('cat-a', {}, 999999), 404, 'deployment_not_found');
      expectError(await listWorkbooks('nobody'), 404, 'embed_tenant_not_found');
      // cat-z is a tenant of the other account only.
      expectError(await listWorkbooks('cat-z'), 404, 'embed_tenant_not_found');
      expectError(await listWorkbooks('cat-z', {}, otherDep), 404, 'deployment_not_found');
    });

    it.each([
      ['an unknown accessSource', { accessSource: 'everyone' }, 'validation_failed'],
      ['an unknown parameter', { orderBy: 'name' }, undefined],
      ['a cursor that is not one', { after: 'not-a-cursor' }, 'invalid_cursor'],
      [
        'a cursor of another list',
        { after: Buffer.from('["name","ASC",1,0,"x",1,5]').toString('base64url') },
        'invalid_cursor',
      ],
      [
        'a cursor beyond the ids',
        { after: Buffer.from('[99999999999]').toString('base64url') },
        'invalid_cursor',
      ],
      ['first=0', { first: 0 }, 'validation_failed'],
      ['first=1001', { first: 1001 }, 'validation_failed'],
    ])('answers 400 for %s', async (_label, query, code) => {
      expectError(await listWorkbooks('cat-a', query), 400, code);
    });

    it('answers 400 for a malformed tenant name or deployment id', async () => {
      expectError(await listWorkbooks('-bad-'), 400, 'invalid_embed_tenant_name');
      const res = await t
        .http()
        .get('/api/v1/deployments/abc/embed-tenants/cat-a/workbooks')
        .set(bearer(t.admin.token));
      expectError(res, 400, 'validation_failed');
    });
  });

  describe('GET /deployments/{id}/shared-workspace', () => {
    it('lists the folders leading to shared workbooks first, then the shared workbooks, newest first', async () => {
      const res = await feed(tokA);
      expect(res.status).toBe(200);
      expect(keysOf(res.body.items)).toEqual([
        `FOLDER:${ids.fAlpha}`,
        `FOLDER:${ids.fBeta}`,
        `WORKBOOK:${ids.wA4}`,
        `WORKBOOK:${ids.wA3}`,
        `WORKBOOK:${ids.wA2}`,
        `WORKBOOK:${ids.wBoth}`,
      ]);
      expect(res.body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    });

    it('leaves every owner out', async () => {
      const all = [
        ...(await feed(tokA)).body.items,
        ...(await feed(tokA, { search: 'cat' })).body.items,
        ...(await feed(tokA, { folderId: ids.fAlpha })).body.items,
      ];
      expect(all.length).toBeGreaterThan(8);
      for (const item of all) {
        expect({
          id: item.id,
          userId: item.userId,
          user: item.user,
          hasCreatedBy: 'createdBy' in item,
        }).toEqual({
          id: item.id,
          userId: null,
          user: null,
          hasCreatedBy: false,
        });
      }
    });

    it('describes folders and workbooks, with the public id of a published dashboard', async () => {
      const root = (await feed(tokA)).body.items;
      expect(root.find((i) => i.id === ids.fAlpha && i.type === 'FOLDER')).toEqual({
        type: 'FOLDER',
        id: ids.fAlpha,
        name: 'Alpha',
        deploymentId: dep,
        folderId: null,
        folderPath: [],
        parentId: null,
        position: expect.any(Number),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        userId: null,
        user: null,
        meta: {},
        calculatedFields: {},
      });
      const [a1] = (await feed(tokA, { folderId: ids.fAlphaInner })).body.items;
      expect(a1).toEqual({
        type: 'WORKBOOK',
        id: ids.wA1,
        name: 'cat Orders A1',
        deploymentId: dep,
        folderId: ids.fAlphaInner,
        folderPath: [
          { id: ids.fAlpha, name: 'Alpha' },
          { id: ids.fAlphaInner, name: 'Alpha inner' },
        ],
        slug: null,
        publicId: wA1PublicId,
        createdAt: '2024-01-26T00:00:00.000Z',
        updatedAt: '2025-01-05T00:00:00.000Z',
        userId: null,
        user: null,
        meta: { team: 'ops' },
        calculatedFields: {},
      });
      expect(root.find((i) => i.id === ids.wA2)?.publicId).toBeNull();
    });

    it('shows inside a folder only what leads to a shared workbook', async () => {
      expect(keysOf((await feed(tokA, { folderId: ids.fAlpha })).body.items)).toEqual([
        `FOLDER:${ids.fAlphaInner}`,
      ]);
      expect(keysOf((await feed(tokA, { folderId: ids.fAlphaInner })).body.items)).toEqual([
        `WORKBOOK:${ids.wA1}`,
      ]);
      // Beta holds a shared workbook, an unshared one and a folder with nothing shared.
      expect(keysOf((await feed(tokA, { folderId: ids.fBeta })).body.items)).toEqual([
        `WORKBOOK:${ids.wAll}`,
      ]);
      expect(keysOf((await feed(tokA, { folderId: 0 })).body.items)).toEqual(
        keysOf((await feed(tokA)).body.items),
      );
    });

    it('answers 404 for a folder holding nothing shared with the tenant, or of another deployment', async () => {
      for (const folderId of [ids.fGamma, ids.fBetaEmpty, ids.fOtherDep, 999999]) {
        expectError(await feed(tokA, { folderId }), 404, 'folder_not_found');
      }
      expect(keysOf((await feed(tokB, { folderId: ids.fGamma })).body.items)).toEqual([
        `WORKBOOK:${ids.wB1}`,
      ]);
    });

    it('gives each tenant its own view, the same for every user of the tenant', async () => {
      expect(keysOf((await feed(tokB)).body.items)).toEqual([
        `FOLDER:${ids.fBeta}`,
        `FOLDER:${ids.fGamma}`,
        `WORKBOOK:${ids.wBoth}`,
      ]);
      expect(keysOf((await feed(tokC)).body.items)).toEqual([`FOLDER:${ids.fBeta}`, `WORKBOOK:${ids.wBoth}`]);
      const another = await embedToken(dep, 'cat-a');
      expect((await feed(another)).body).toEqual((await feed(tokA)).body);
    });

    it('holds exactly the workbooks the tenant’s listing shows', async () => {
      for (const [token, tenant] of [
        [tokA, 'cat-a'],
        [tokB, 'cat-b'],
        [tokC, 'cat-c'],
      ]) {
        const browsed = (await feed(token, { search: 'cat', types: 'WORKBOOK' })).body.items;
        const listed = (await listWorkbooks(tenant)).body.items;
        expect(sorted(idsOf(browsed))).toEqual(idsOf(listed));
      }
    });

    it('keeps the types asked for, repeated or separated by commas', async () => {
      const folders = [`FOLDER:${ids.fAlpha}`, `FOLDER:${ids.fBeta}`];
      const books = [
        `WORKBOOK:${ids.wA4}`,
        `WORKBOOK:${ids.wA3}`,
        `WORKBOOK:${ids.wA2}`,
        `WORKBOOK:${ids.wBoth}`,
      ];
      expect(keysOf((await feed(tokA, { types: 'FOLDER' })).body.items)).toEqual(folders);
      expect(keysOf((await feed(tokA, { types: 'WORKBOOK' })).body.items)).toEqual(books);
      expect(keysOf((await feed(tokA, { types: 'FOLDER,WORKBOOK' })).body.items)).toEqual([
        ...folders,
        ...books,
      ]);
      const repeated = await t
        .http()
        .get(`${shared(dep)}?types=WORKBOOK&types=FOLDER`)
        .set(bearer(tokA));
      expect(keysOf(repeated.body.items)).toEqual([...folders, ...books]);
      // Reports reach embed users only inside a workbook's dashboard: none is an item.
      expect((await feed(tokA, { types: 'REPORT' })).body.items).toEqual([]);
      expect((await feed(tokA, { types: 'REPORT', search: 'cat', folderId: ids.fAlpha })).body.items).toEqual(
        [],
      );
      expect(
        keysOf((await feed(tokA, { types: 'FOLDER', search: 'alpha', folderId: ids.fAlpha })).body.items),
      ).toEqual([`FOLDER:${ids.fAlphaInner}`]);
      expect(keysOf((await feed(tokA, { types: 'WORKBOOK', folderId: ids.fAlpha })).body.items)).toEqual([]);
    });

    it('searches names at every level, below the folder when one is given', async () => {
      const a1 = (await feed(tokA, { search: 'ORDERS' })).body.items;
      expect(keysOf(a1)).toEqual([`WORKBOOK:${ids.wA1}`]);
      expect(a1[0].folderPath.map((f) => f.name)).toEqual(['Alpha', 'Alpha inner']);
      // "Beta empty" and "cat Hidden beta" match too, but hold or are nothing shared.
      expect(keysOf((await feed(tokA, { search: 'beta' })).body.items)).toEqual([`FOLDER:${ids.fBeta}`]);
      expect(keysOf((await feed(tokA, { search: 'alpha', folderId: ids.fAlpha })).body.items)).toEqual([
        `FOLDER:${ids.fAlphaInner}`,
      ]);
      expect(keysOf((await feed(tokA, { search: 'cat', folderId: ids.fAlpha })).body.items)).toEqual([
        `WORKBOOK:${ids.wA1}`,
      ]);
      expect((await feed(tokA, { search: 'gamma' })).body.items).toEqual([]);
      expect((await feed(tokA, { search: '%' })).body.items).toEqual([]);
    });

    it('orders workbooks by the field and direction asked for, folders first', async () => {
      const order = async (q: Record<string, unknown>) =>
        keysOf((await feed(tokA, { types: 'WORKBOOK', search: 'cat', ...q })).body.items);
      const byUpdate = [ids.wAll, ids.wA1, ids.wA4, ids.wA3, ids.wA2, ids.wBoth].map(
        (id) => `WORKBOOK:${id}`,
      );
      expect(await order({})).toEqual(byUpdate);
      expect(await order({ orderByField: 'updated_at', orderByDirection: 'ASC' })).toEqual(
        [...byUpdate].reverse(),
      );
      expect(await order({ orderByField: 'created_at' })).toEqual([...byUpdate].reverse());
      const byName = [ids.wBoth, ids.wA1, ids.wA2, ids.wA3, ids.wA4, ids.wAll].map((id) => `WORKBOOK:${id}`);
      expect(await order({ orderByField: 'name' })).toEqual(byName);
      expect(await order({ orderByField: 'name', orderByDirection: 'DESC' })).toEqual([...byName].reverse());
      // Embed users have no views: every workbook ties, and ties go by id.
      const byId = sorted([ids.wAll, ids.wA1, ids.wA4, ids.wA3, ids.wA2, ids.wBoth]).map(
        (id) => `WORKBOOK:${id}`,
      );
      expect(await order({ orderByField: 'viewer_last_viewed_at' })).toEqual(byId);
      const mixed = keysOf((await feed(tokA, { orderByField: 'name', orderByDirection: 'DESC' })).body.items);
      expect(mixed.slice(0, 2)).toEqual([`FOLDER:${ids.fAlpha}`, `FOLDER:${ids.fBeta}`]);
    });

    it.each([
      [{}, 1],
      [{}, 2],
      [{ search: 'a' }, 3],
      [{ orderByField: 'name' }, 1],
      [{ orderByField: 'name', orderByDirection: 'DESC', search: 'a' }, 2],
      [{ orderByField: 'viewer_last_viewed_at', search: 'cat' }, 2],
      [{ orderByField: 'created_at', orderByDirection: 'ASC', search: 'a' }, 1],
    ])('pages %j %d at a time: every item once, in order, with no gap', async (query, first) => {
      const whole = (await feed(tokA, query)).body.items;
      expect(whole.length).toBeGreaterThan(first);
      const { items, pages } = await allPages((q) => feed(tokA, q), query, first);
      expect(keysOf(items)).toEqual(keysOf(whole));
      expect(new Set(keysOf(items)).size).toBe(items.length);
      expect(pages.map((p) => p.pageInfo.hasPreviousPage)).toEqual(pages.map((_, i) => i > 0));
    });

    it('refuses a cursor of another ordering with 400', async () => {
      const page = await feed(tokA, { first: 1 });
      const after = page.body.pageInfo.endCursor;
      expectError(await feed(tokA, { first: 1, after, orderByField: 'name' }), 400, 'invalid_cursor');
      expectError(await feed(tokA, { first: 1, after, orderByDirection: 'ASC' }), 400, 'invalid_cursor');
    });

    it.each([
      ['an unknown type', { types: 'DASHBOARD' }, 'validation_failed'],
      ['an unknown order field', { orderByField: 'owner' }, 'validation_failed'],
      ['an unknown direction', { orderByDirection: 'UP' }, 'validation_failed'],
      ['an unknown parameter', { accessSource: 'tenant' }, undefined],
      ['a cursor that is not one', { after: 'nope' }, 'invalid_cursor'],
      [
        'a cursor of the tenant listing',
        { after: Buffer.from('[5]').toString('base64url') },
        'invalid_cursor',
      ],
      ['a negative folderId', { folderId: -1 }, 'validation_failed'],
      ['first=0', { first: 0 }, 'validation_failed'],
      ['a search over 255 characters', { search: 'x'.repeat(256) }, 'validation_failed'],
    ])('answers 400 for %s', async (_label, query, code) => {
      expectError(await feed(tokA, query), 400, code);
    });

    it('needs a token: none, or one that is neither an embed token nor a Platform API token, is a 401', async () => {
      expectError(await t.http().get(shared(dep)), 401, 'unauthorized');
      expectError(await feed('not.a.jwt'), 401, 'unauthorized');
      expectError(await feed('x'.repeat(40)), 401, 'unauthorized');
      expectError(await t.http().get(shared(dep)).set('Authorization', `Basic ${tokA}`), 401, 'unauthorized');
    });

    it('answers 404 outside the session’s deployment', async () => {
      expectError(await feed(tokA, {}, depB), 404, 'deployment_not_found');
      expectError(await feed(tokA, {}, otherDep), 404, 'deployment_not_found');
      const inB = await embedToken(depB, 'cat-a');
      expect(keysOf((await feed(inB, {}, depB)).body.items)).toEqual([`FOLDER:${ids.fOtherDep}`]);
    });

    it('answers 403 to a session limited to one dashboard', async () => {
      const token = await embedToken(dep, 'cat-a', { publicDashboardId: wA1PublicId });
      expectError(await feed(token), 403, 'shared_workspace_unavailable');
    });
  });
  describe('GET /deployments/{id}/shared-workspace with a Platform API token', () => {
    it('shows the part every embed user sees: shares with every embed user, and the folders leading to them', async () => {
      const res = await feed(t.admin.token);
      expect(res.status).toBe(200);
      expect(keysOf(res.body.items)).toEqual([`FOLDER:${ids.fBeta}`, `WORKBOOK:${ids.wBoth}`]);
      expect(keysOf((await feed(t.admin.token, { folderId: ids.fBeta })).body.items)).toEqual([
        `WORKBOOK:${ids.wAll}`,
      ]);
      // The same as a tenant with no share of its own sees.
      expect((await feed(t.admin.token, { search: 'cat' })).body).toEqual(
        (await feed(tokC, { search: 'cat' })).body,
      );
      for (const item of (await feed(t.admin.token, { search: 'a' })).body.items) {
        expect({ userId: item.userId, user: item.user, createdBy: 'createdBy' in item }).toEqual({
          userId: null,
          user: null,
          createdBy: false,
        });
      }
    });

    it('keeps to what the caller can read', async () => {
      expect(keysOf((await feed(viewer.token)).body.items)).toEqual([
        `FOLDER:${ids.fBeta}`,
        `WORKBOOK:${ids.wBoth}`,
      ]);
      expect((await feed(noRole.token)).body).toEqual({
        items: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
      ok(
        await t
          .http()
          .put(`/api/v1/users/${granted.userId}/policies`)
          .set(bearer(t.admin.token))
          .send({
            policies: [
              { resourceType: 'Workbook', actions: ['WorkbookRead'], resources: [String(ids.wAll)] },
            ],
          }),
        'grant',
      );
      expect(keysOf((await feed(granted.token, { search: 'cat' })).body.items)).toEqual([
        `WORKBOOK:${ids.wAll}`,
      ]);
      expect(keysOf((await feed(granted.token)).body.items)).toEqual([`FOLDER:${ids.fBeta}`]);
      expectError(await feed(granted.token, { folderId: ids.fAlpha }), 404, 'folder_not_found');
    });

    it('answers 404 for another account’s or an unknown deployment', async () => {
      expectError(await feed(t.admin.token, {}, otherDep), 404, 'deployment_not_found');
      expectError(await feed(t.admin.token, {}, 999999), 404, 'deployment_not_found');
      expectError(await feed(other.token, {}, dep), 404, 'deployment_not_found');
      expectError(await feed(other.token, { folderId: ids.fBeta }, dep), 404, 'deployment_not_found');
    });

    it('answers 400 for bad parameters as for embed users', async () => {
      expectError(await feed(t.admin.token, { types: 'DASHBOARD' }), 400, 'validation_failed');
      expectError(await feed(t.admin.token, { accessSource: 'tenant' }), 400);
      expectError(await feed(t.admin.token, { after: 'nope' }), 400, 'invalid_cursor');
    });
  });
});
