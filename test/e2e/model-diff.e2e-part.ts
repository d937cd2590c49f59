import { Redis } from 'ioredis';
import { ModelCompiler } from '../../src/modules/data-model/compiler/model-compiler.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { REDIS_URL } from '../support/database.js';
import { deploymentInput } from '../support/factories.js';

/**
 * The member diff of two branches (issue 33, docs/data-model.md "Reviewing a change"), with real
 * compiles in the sandbox: a branch that renames a measure, removes a dimension, changes a type,
 * adds a member and narrows an access policy, and the diff saying each; the unified file diff;
 * a model that does not compile; the verdict cache serving a second diff; the route's refusals.
 */

const SHOP_BASE = `cubes:
  - name: shop
    sql: >
      SELECT 1 AS id, 'north' AS region, 10 AS amount, 7 AS buyer_id, CURRENT_DATE AS created_at
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: region
        sql: region
        type: string
      - name: amount_band
        sql: "CASE WHEN amount > 5 THEN 'high' ELSE 'low' END"
        type: string
      - name: created_at
        sql: created_at
        type: time
    measures:
      - name: count
        type: count
      - name: total
        sql: amount
        type: sum
    access_policy:
      - group: "*"
        member_level:
          includes: "*"
`;

/** `count` renamed, `region` removed, `total` a sum no more, `buyers` added, `amount_band` excluded. */
const SHOP_HEAD = `cubes:
  - name: shop
    sql: >
      SELECT 1 AS id, 'north' AS region, 10 AS amount, 7 AS buyer_id, CURRENT_DATE AS created_at
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: amount_band
        sql: "CASE WHEN amount > 5 THEN 'high' ELSE 'low' END"
        type: string
      - name: created_at
        sql: created_at
        type: time
    measures:
      - name: order_count
        type: count
      - name: total
        sql: amount
        type: avg
      - name: buyers
        sql: buyer_id
        type: count_distinct
    access_policy:
      - group: "*"
        member_level:
          includes: "*"
          excludes: [amount_band]
`;

const SHOP_VIEW = `views:
  - name: shop_view
    cubes:
      - join_path: shop
        includes: [total, created_at]
`;

const BROKEN = `cubes:
  - name: broken
    sql_table: public.broken
    measures:
      - name: total
        type: not_a_type
`;

interface Side {
  branchName: string;
  commit: string | null;
  valid: boolean;
  errors: Array<{ fileName?: string; message: string }>;
}
interface Diff {
  deploymentId: number;
  base: Side;
  head: Side;
  breaking: boolean;
  cubes: Array<Record<string, unknown>>;
  files: Array<{ path: string; change: string; previousPath?: string }>;
  impact: unknown[];
}

describe('the member diff of two branches', () => {
  let t: TestApp;
  let developer: Actor;
  let reader: Actor;
  let viewer: Actor;
  let id: number;
  let otherDeployment: number;
  let devBranch: string;
  let reportId: number;
  let compiles: jest.SpyInstance;

  const base = (deployment = id) => `/build/api/v1/deployments/${deployment}`;
  /** Model compiles (calls with model files; an empty model never reaches a sandbox). */
  const compileCount = () => compiles.mock.calls.filter(([files]) => (files as unknown[]).length > 0).length;

  const createDeployment = async (actor: Actor) => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(actor.token))
      .send(deploymentInput());
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const send = async (
    method: 'put' | 'post' | 'delete',
    path: string,
    body: Record<string, unknown>,
    actor = developer,
  ) => {
    const res = await t.http()[method](`${base()}${path}`).set(bearer(actor.token)).send(body);
    expect({ path, status: res.status, body: res.body as unknown }).toMatchObject({ status: 200 });
    return res.body as Record<string, unknown>;
  };
  const diff = async (query: Record<string, string> = {}, actor = developer) => {
    const res = await t.http().get(`${base()}/branches/diff`).query(query).set(bearer(actor.token));
    expect({ status: res.status, body: res.body as unknown }).toMatchObject({ status: 200 });
    return res.body as Diff;
  };
  /** A user of the admin's account holding exactly `actions`, through a custom role. */
  const userWithActions = async (actions: string[]): Promise<Actor> => {
    const role = await t
      .http()
      .post('/api/v1/roles')
      .set(bearer(t.admin.token))
      .send({
        name: `r${Math.random().toString(36).slice(2, 8)}`,
        policies: [{ resourceType: 'Global', actions, resources: ['All'] }],
      });
    expect(role.status).toBe(200);
    const user = await newUser(t, t.admin, {});
    const assign = await t
      .http()
      .put(`/api/v1/roles/${role.body.id}/users/${user.userId}`)
      .set(bearer(t.admin.token))
      .send({});
    expect(assign.status).toBe(204);
    return user;
  };

  beforeAll(async () => {
    t = await startApp({ QUEUE_STALL_SECONDS: '3600' });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    reader = await userWithActions(['SchemaRead', 'DeploymentRead']);
    viewer = await newUser(t, t.admin, { defaultRoles: ['AIBIViewer'] });
    otherDeployment = await createDeployment(await newAccount(t, 'globex'));
    id = await createDeployment(t.admin);
    compiles = jest.spyOn(t.app.get(ModelCompiler), 'compile');

    // The deploy branch gets the shop cube and its view, through a dev branch merged into it.
    devBranch = (await send('post', '/dev-mode', {})).branchName as string;
    await send('put', '/data-model/files', {
      files: [
        { path: '/model/cubes/shop.yml', content: SHOP_BASE },
        { path: '/model/views/shop_view.yml', content: SHOP_VIEW },
      ],
    });
    await send('post', '/commit', { message: 'The shop' });
    await send('post', '/merge', { message: 'The shop' });

    // A report on the deploy branch's model that names a measure the change renames and a
    // dimension it removes (the content impact, through the ContentImpact port).
    const api = `/api/v1/deployments/${id}`;
    const workbook = await t
      .http()
      .post(`${api}/workbooks`)
      .set(bearer(t.admin.token))
      .send({ name: 'Shop' });
    expect(workbook.status).toBe(200);
    const report = await t
      .http()
      .post(`${api}/reports`)
      .set(bearer(t.admin.token))
      .send({
        name: 'Orders by region',
        workbookId: workbook.body.id,
        jsonQuery: JSON.stringify({
          measures: ['shop.count'],
          dimensions: ['shop.region', 'shop.created_at'],
        }),
      });
    expect(report.status).toBe(200);
    reportId = report.body.id as number;
  });
  afterAll(async () => {
    compiles?.mockRestore();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${t.config.queue.prefix}:model-verdict:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await t.close();
  });

  /** The report, as the change breaks it: its measure renamed, its dimension removed. */
  const reportImpact = () => [
    {
      type: 'report',
      id: reportId,
      name: 'Orders by region',
      member: 'shop.count',
      reason: 'member_renamed',
      renamedTo: 'shop.order_count',
      tenants: [],
    },
    {
      type: 'report',
      id: reportId,
      name: 'Orders by region',
      member: 'shop.region',
      reason: 'member_removed',
      tenants: [],
    },
  ];

  /** What the diff of SHOP_HEAD (and the view's file renamed) against SHOP_BASE says. */
  const expectShopChanges = (d: Diff) => {
    expect(d.base).toEqual({
      branchName: 'master',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      valid: true,
      errors: [],
    });
    expect(d.head).toMatchObject({ branchName: devBranch, valid: true, errors: [] });
    expect(d.breaking).toBe(true);
    expect(d.impact).toEqual(reportImpact());
    expect(d.files).toEqual([
      { path: 'model/cubes/shop.yml', change: 'modified' },
      { path: 'model/views/shop_overview.yml', change: 'renamed', previousPath: 'model/views/shop_view.yml' },
    ]);
    expect(d.cubes).toEqual([
      {
        name: 'shop',
        kind: 'cube',
        change: 'changed',
        fileName: 'cubes/shop.yml',
        attributes: [{ attribute: 'accessPolicy', before: expect.any(Array), after: expect.any(Array) }],
        members: [
          { kind: 'measure', name: 'buyers', change: 'added', attributes: [], breaking: false, reasons: [] },
          {
            kind: 'measure',
            name: 'order_count',
            change: 'renamed',
            previousName: 'count',
            attributes: [],
            breaking: true,
            reasons: ['shop.count was renamed to order_count'],
          },
          {
            kind: 'measure',
            name: 'total',
            change: 'changed',
            attributes: [{ attribute: 'type', before: 'sum', after: 'avg' }],
            breaking: true,
            reasons: ['the type of shop.total changed from sum to avg'],
          },
          {
            kind: 'dimension',
            name: 'region',
            change: 'removed',
            attributes: [],
            breaking: true,
            reasons: ['shop.region was removed'],
          },
        ],
        breaking: true,
        reasons: ['the access policy of shop now excludes shop.amount_band for everyone (*)'],
      },
      {
        name: 'shop_view',
        kind: 'view',
        change: 'changed',
        fileName: 'views/shop_overview.yml',
        attributes: [
          { attribute: 'fileName', before: 'views/shop_view.yml', after: 'views/shop_overview.yml' },
        ],
        members: [
          {
            kind: 'measure',
            name: 'total',
            change: 'changed',
            attributes: [{ attribute: 'type', before: 'sum', after: 'avg' }],
            breaking: true,
            reasons: ['the type of shop_view.total changed from sum to avg'],
          },
        ],
        breaking: true,
        reasons: [],
      },
    ]);
    // The policy as the compiler expanded it: `*` is every member, `excludes` named by path.
    const policy = (d.cubes[0].attributes as Array<{ after: unknown }>)[0].after;
    expect(policy).toEqual([
      {
        group: '*',
        memberLevel: {
          includes: [
            'shop.amount_band',
            'shop.buyers',
            'shop.created_at',
            'shop.id',
            'shop.order_count',
            'shop.total',
          ],
          excludes: ['shop.amount_band'],
        },
      },
    ]);
  };

  it('compares your dev branch with its pending changes against its parent, member by member', async () => {
    await send('put', '/data-model/files', {
      files: [{ path: '/model/cubes/shop.yml', content: SHOP_HEAD }],
    });
    await send('post', '/data-model/files/rename', {
      files: [{ path: '/model/views/shop_view.yml', newPath: '/model/views/shop_overview.yml' }],
    });
    const pending = await diff({ devMode: 'true' });
    expectShopChanges(pending);
    expect(pending.deploymentId).toBe(id);

    // Without devMode your active branch is compared as committed: the same model as master.
    const committed = await diff();
    expect(committed).toMatchObject({
      base: { branchName: 'master', valid: true },
      head: { branchName: devBranch, valid: true },
      breaking: false,
      cubes: [],
      files: [],
      impact: [],
    });
    expect(committed.head.commit).not.toBe(pending.head.commit);
  });

  it('serves the same diff of the committed branch from the verdict cache, without compiling', async () => {
    const before = compileCount();
    await send('post', '/commit', { message: 'Review me' });
    // The committed tree is the pending tree compiled above; master's verdict is kept too.
    const named = await diff({ head: devBranch, base: 'master' });
    expectShopChanges(named);
    const again = await diff({ head: devBranch });
    expect(again).toEqual(named);
    expect(compileCount()).toBe(before);
    // Any reader of the model may review; the deploy branch against itself changes nothing.
    const self = await diff({ head: 'master' }, reader);
    expect(self).toMatchObject({ breaking: false, cubes: [], files: [], head: { branchName: 'master' } });
  });

  it('answers the unified diff of the files', async () => {
    const res = await t
      .http()
      .get(`${base()}/branches/diff/patch`)
      .query({ head: devBranch })
      .set(bearer(reader.token));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/x-diff; charset=utf-8');
    const text = res.text;
    expect(text).toContain('diff --git a/model/cubes/shop.yml b/model/cubes/shop.yml\n');
    expect(text).toContain('\n-      - name: count\n');
    expect(text).toContain('\n+      - name: order_count\n');
    expect(text).toContain('\n-      - name: region\n');
    expect(text).toContain('\n+          excludes: [amount_band]\n');
    expect(text).toContain(
      'rename from model/views/shop_view.yml\nrename to model/views/shop_overview.yml\n',
    );
    // Only what differs: the starter project's files are the same on both sides.
    expect(text).not.toContain('orders.yml');

    const same = await t.http().get(`${base()}/branches/diff/patch?head=master`).set(bearer(reader.token));
    expect(same.status).toBe(200);
    expect(same.text).toBe('');
  });

  it('answers 200 with the errors of a side that does not compile, and no member diff', async () => {
    await send('put', '/data-model/files', { files: [{ path: '/model/cubes/broken.yml', content: BROKEN }] });
    const d = await diff({ devMode: 'true' });
    expect(d.base).toMatchObject({ branchName: 'master', valid: true, errors: [] });
    expect(d.head).toMatchObject({ branchName: devBranch, valid: false });
    expect(d.head.errors.length).toBeGreaterThan(0);
    expect(d.head.errors[0]).toMatchObject({ fileName: 'model/cubes/broken.yml' });
    expect(d).toMatchObject({ breaking: true, cubes: [], impact: [] });
    expect(d.files).toContainEqual({ path: 'model/cubes/broken.yml', change: 'added' });

    const patch = await t
      .http()
      .get(`${base()}/branches/diff/patch?devMode=true`)
      .set(bearer(developer.token));
    expect(patch.status).toBe(200);
    expect(patch.text).toContain('+        type: not_a_type\n');

    // Committed, the broken branch as base: nothing breaks that did not compile before.
    await send('post', '/commit', { message: 'Broken' });
    const reverse = await diff({ base: devBranch, head: 'master' });
    expect(reverse.base).toMatchObject({ branchName: devBranch, valid: false });
    expect(reverse.base.errors[0]).toMatchObject({ fileName: 'model/cubes/broken.yml' });
    expect(reverse).toMatchObject({
      head: { branchName: 'master', valid: true },
      breaking: false,
      cubes: [],
      impact: [],
    });
    await send('delete', '/data-model/files', { files: [{ path: '/model/cubes/broken.yml' }] });
    await send('post', '/commit', { message: 'Fixed' });
  });

  it('adds to validate the content a model breaks against the deploy branch', async () => {
    const validate = async (query: Record<string, string>) => {
      const res = await t
        .http()
        .get(`${base()}/data-model/validate`)
        .query(query)
        .set(bearer(developer.token));
      expect(res.status).toBe(200);
      return res.body as { valid: boolean; impact: unknown[] };
    };
    // The deploy branch against itself breaks nothing.
    expect(await validate({})).toMatchObject({ valid: true, impact: [] });
    for (const query of [{ devMode: 'true' }, { branchName: devBranch }] as Array<Record<string, string>>) {
      expect(await validate(query)).toMatchObject({ valid: true, impact: reportImpact() });
    }
    // A model that does not compile breaks nothing that can be told.
    await send('put', '/data-model/files', { files: [{ path: '/model/cubes/broken.yml', content: BROKEN }] });
    expect(await validate({ devMode: 'true' })).toMatchObject({ valid: false, impact: [] });
    await send('delete', '/data-model/files', { files: [{ path: '/model/cubes/broken.yml' }] });
  });

  describe('refusals', () => {
    const routes = ['/branches/diff', '/branches/diff/patch'];

    it.each(routes)(
      '%s: 401 without a token, 403 without SchemaRead, 404 for another account',
      async (route) => {
        expectErrorShape((await t.http().get(`${base()}${route}`)).body, 401, 'unauthorized');
        const forbidden = await t.http().get(`${base()}${route}`).set(bearer(viewer.token));
        expectErrorShape(forbidden.body, 403, 'forbidden');
        const foreign = await t
          .http()
          .get(`${base(otherDeployment)}${route}`)
          .set(bearer(developer.token));
        expectErrorShape(foreign.body, 404, 'deployment_not_found');
        const missing = await t
          .http()
          .get(`${base(999_999)}${route}`)
          .set(bearer(developer.token));
        expectErrorShape(missing.body, 404, 'deployment_not_found');
      },
    );

    it.each(routes)(
      '%s: 400 for unknown parameters, bad names and head with devMode; 404 for no such branch',
      async (route) => {
        const get = (query: string, actor = developer) =>
          t.http().get(`${base()}${route}?${query}`).set(bearer(actor.token));
        expectErrorShape((await get('bogus=1')).body, 400, 'validation_failed');
        expectErrorShape((await get('branchName=master')).body, 400, 'validation_failed');
        expectErrorShape((await get(`head=${devBranch}&devMode=true`)).body, 400, 'validation_failed');
        expectErrorShape((await get('devMode=maybe')).body, 400, 'validation_failed');
        expectErrorShape((await get('base=refs/heads/master')).body, 400, 'invalid_branch_name');
        expectErrorShape((await get('head=a..b')).body, 400, 'invalid_branch_name');
        expectErrorShape((await get('base=no-such-branch')).body, 404, 'branch_not_found');
        expectErrorShape((await get('head=no-such-branch')).body, 404, 'branch_not_found');
        // devMode without dev mode.
        expectErrorShape((await get('devMode=true', reader)).body, 400, 'not_in_dev_mode');
      },
    );
  });
});
