import type { Principal } from '../../src/core/auth/principal.js';
import { ContentImpact, type ImpactItem } from '../../src/modules/data-model/content-impact.port.js';
import type { ModelSummary, SummaryCube, SummaryMember } from '../../src/modules/data-model/model-summary.js';
import { EmbedAccessService } from '../../src/modules/embedding/embed-access.service.js';
import { EmbedTenantsService } from '../../src/modules/embedding/embed-tenants.service.js';
import type { NotificationRecipientInputDto } from '../../src/modules/notifications/dto/recipient.dto.js';
import { NotificationRecipientsService } from '../../src/modules/notifications/notification-recipients.service.js';
import { NotificationsService } from '../../src/modules/notifications/notifications.service.js';
import { ReportsService } from '../../src/modules/reports/reports.service.js';
import { DashboardsService } from '../../src/modules/workspace/dashboards.service.js';
import type { Actor } from '../support/app.js';
import { startServiceApp, type ServiceApp } from '../support/service.js';

/**
 * The content impact of a model change (docs/data-model.md, "Content impact"): stored reports,
 * published dashboards and scheduled notifications, made through their services, checked against
 * two compiled-model summaries written by hand.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies handed to the services */
type Json = Record<string, any>;

const member = (
  name: string,
  kind: SummaryMember['kind'],
  type: string | null,
  pub = true,
): SummaryMember => ({
  name,
  kind,
  type,
  public: pub,
  attributes: {},
});

const cube = (name: string, members: SummaryMember[], pub = true): SummaryCube => ({
  name,
  kind: 'cube',
  fileName: `cubes/${name}.yml`,
  public: pub,
  attributes: {},
  members,
  joins: [],
  preAggregations: [],
  accessPolicy: null,
});

const CUSTOMERS = cube('customers', [member('name', 'dimension', 'string')]);

/** The model content is written against. `orders.secret` and the `staff` cube are hidden already. */
const BASE: ModelSummary = {
  cubes: [
    CUSTOMERS,
    cube('orders', [
      member('count', 'measure', 'count'),
      member('total', 'measure', 'sum'),
      member('status', 'dimension', 'string'),
      member('created_at', 'dimension', 'time'),
      member('amount', 'dimension', 'number'),
      member('secret', 'dimension', 'string', false),
      member('completed', 'segment', null),
    ]),
    cube('staff', [member('name', 'dimension', 'string')], false),
  ],
};

/**
 * The change: `count` renamed to `order_count`, `total` removed, `status` hidden, `amount` now a
 * string; the already hidden `secret` and `staff` removed (nothing could use them).
 */
const HEAD: ModelSummary = {
  cubes: [
    CUSTOMERS,
    cube('orders', [
      member('order_count', 'measure', 'count'),
      member('status', 'dimension', 'string', false),
      member('created_at', 'dimension', 'time'),
      member('amount', 'dimension', 'string'),
      member('completed', 'segment', null),
    ]),
  ],
};

const RENAMES: ReadonlyMap<string, string> = new Map([['orders.count', 'orders.order_count']]);

const q = (query: Json) => JSON.stringify(query);

/** Widget `id` of `type` with `config`. */
const widget = (id: string, type: string, config: Json) => ({
  id,
  type,
  position: { x: 0, y: 0, w: 6, h: 4 },
  config,
});

const COUNT = {
  member: 'orders.count',
  reason: 'member_renamed',
  renamedTo: 'orders.order_count',
} as const;
const TOTAL = { member: 'orders.total', reason: 'member_removed' } as const;
const STATUS = { member: 'orders.status', reason: 'member_hidden' } as const;
const AMOUNT = { member: 'orders.amount', reason: 'type_changed' } as const;

describe('content impact', () => {
  let s: ServiceApp;
  let me: Principal;
  let dep: number;
  let impact: ContentImpact;
  const ids: Record<string, number> = {};
  let other: Actor;
  let otherDep: number;

  const report = async (principal: Principal, deploymentId: number, key: string, fields: Json) => {
    const r = await s.app.get(ReportsService).create(principal, deploymentId, { name: key, ...fields });
    ids[key] = r.id;
    return r.id;
  };

  const publish = async (wb: number, title: string | null, widgets: Json[]) =>
    (
      await s.app
        .get(DashboardsService)
        .publish(me, dep, wb, { workbookId: wb, ...(title ? { title } : {}), config: { widgets } as never })
    ).id;

  const notification = async (key: string, dashboardId: number, body: Json) => {
    const n = await s.app.get(NotificationsService).create(me, dep, {
      dashboardId,
      scheduleType: 'DAILY',
      hour: 9,
      minute: 0,
      ...body,
    });
    ids[key] = n.id;
    return n.id;
  };

  const share = (wb: number, target: Json) =>
    s.app.get(EmbedAccessService).update(me, dep, wb, { action: 'read', ...target });

  const between = (accountId = s.admin.accountId, deploymentId = dep) =>
    impact.between(accountId, deploymentId, BASE, HEAD, RENAMES);

  const itemsOf = (items: ImpactItem[], type: ImpactItem['type'], key: string) =>
    items.filter((i) => i.type === type && i.id === ids[key]);

  beforeAll(async () => {
    s = await startServiceApp();
    impact = s.app.get(ContentImpact);
    me = await s.make.principal(s.admin);
    dep = (await s.make.deployment()).id;
    const tenants = s.app.get(EmbedTenantsService);
    for (const name of ['beta-co', 'acme-co', 'gamma-co']) await tenants.ensure(s.admin.accountId, name);

    // Reports outside any workbook: every part of a query, and the ones never listed.
    await report(me, dep, 'everything', {
      jsonQuery: q({
        measures: ['orders.count'],
        dimensions: ['orders.status', 'customers.name'],
        segments: ['orders.completed'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }],
        filters: [
          {
            or: [
              { member: 'orders.amount', operator: 'gt', values: ['5'] },
              { and: [{ dimension: 'orders.status', operator: 'set' }] },
            ],
          },
        ],
        order: { 'orders.total': 'desc' },
      }),
    });
    await report(me, dep, 'orderPairs', {
      jsonQuery: q({ measures: ['orders.total'], order: [['orders.count', 'asc']] }),
    });
    await report(me, dep, 'granularity', {
      jsonQuery: q({ dimensions: ['orders.created_at.day', 'orders.amount'] }),
    });
    await report(me, dep, 'unaffected', {
      jsonQuery: q({ measures: ['customers.name'], timeDimensions: [{ dimension: 'orders.created_at' }] }),
    });
    await report(me, dep, 'alreadyBroken', { jsonQuery: q({ measures: ['orders.count', 'orders.gone'] }) });
    await report(me, dep, 'hiddenOnBase', {
      jsonQuery: q({ dimensions: ['orders.secret'], measures: ['orders.total'] }),
    });
    await report(me, dep, 'hiddenCube', {
      jsonQuery: q({ dimensions: ['staff.name'], measures: ['orders.total'] }),
    });
    await report(me, dep, 'notJson', { jsonQuery: '{"measures": ["orders.count"' });
    await report(me, dep, 'array', { jsonQuery: '["orders.count"]' });
    await report(me, dep, 'oddShapes', {
      jsonQuery: q({
        measures: 'orders.count',
        dimensions: [null, 7, { member: 'orders.total' }],
        segments: [['orders.total']],
        timeDimensions: [null, 'orders.total', { dimension: 5 }],
        filters: { member: 'orders.count' },
        order: 7,
      }),
    });
    await report(me, dep, 'deep', {
      jsonQuery: `{"filters":[${'{"and":['.repeat(3000)}{"member":"orders.total"}${']}'.repeat(3000)}]}`,
    });
    await report(me, dep, 'sqlOnly', { sqlQuery: 'SELECT MEASURE(count) FROM orders' });

    // Workbook "Sales": shared with two tenants; a widget shows `shown`, the publish took `snapshot`
    // too, its filters name a hidden member, other widgets name fine ones (or are no filters).
    const sales = (await s.make.workbook(dep, { name: 'Sales workbook' })).id;
    await report(me, dep, 'shown', { workbookId: sales, jsonQuery: q({ measures: ['orders.count'] }) });
    await report(me, dep, 'snapshot', { workbookId: sales, jsonQuery: q({ dimensions: ['orders.amount'] }) });
    ids.sales = await publish(sales, 'Sales', [
      widget('chart', 'CHART', { reportId: ids.shown }),
      widget('filter', 'FILTER', { member: 'orders.status', operator: 'equals' }),
      widget('grain', 'TIME_GRAIN', { member: 'orders.created_at' }),
      widget('field', 'FIELD', { options: [{ members: ['customers.name'] }] }),
      widget('text', 'TEXT', { member: 'orders.total' }),
    ]);
    await share(sales, { embedTenantName: 'beta-co' });
    await share(sales, { embedTenantName: 'acme-co' });

    // Workbook "Ops" (no title: named by its workbook): shared with every embed user; its filters
    // name a member base does not have, so its own filters are broken already.
    const ops = (await s.make.workbook(dep, { name: 'Ops' })).id;
    ids.ops = await publish(ops, null, [
      widget('f1', 'FILTER', { dimension: 'orders.gone' }),
      widget('f2', 'FILTER', { dimension: 'orders.total' }),
    ]);
    await share(ops, { allEmbedUsers: true });

    // Workbook "Plain": shared with nobody, a filter on a removed member.
    const plain = (await s.make.workbook(dep, { name: 'Plain' })).id;
    ids.plain = await publish(plain, 'Plain', [
      widget('f', 'FILTER', { members: ['orders.total', 'customers.name'] }),
    ]);

    // Notifications.
    await notification('salesDaily', ids.sales, {
      filters: [{ member: 'orders.amount', operator: 'equals', value: '5' }],
      timeGrains: [{ member: 'orders.created_at', grain: 'week' }],
      memberSwitchers: [{ member: 'customers.name', selected: 'name' }],
    });
    await s.app.get(NotificationRecipientsService).add(me, dep, ids.salesDaily, {
      recipients: [
        { type: 'EMBED_USER', embedTenantName: 'retail', externalId: 'carol@retail.test' },
      ] as NotificationRecipientInputDto[],
    });
    await notification('switcher', ids.plain, {
      memberSwitchers: [{ member: 'customers.name', selected: 'count' }],
    });
    await notification('opsFine', ids.ops, {
      filters: [{ member: 'customers.name', operator: 'is_not_null' }],
    });
    await notification('opsTotal', ids.ops, {
      filters: [{ member: 'orders.total', operator: 'is_not_null' }],
    });
    await notification('plainGone', ids.plain, {
      filters: [{ member: 'orders.gone', operator: 'is_not_null' }],
    });
    await notification('salesSwitch', ids.sales, {
      memberSwitchers: [{ member: 'orders.count', selected: 'total' }],
    });

    // Another account: the same names, a tenant and a share with every embed user.
    other = await s.make.account();
    const them = await s.make.principal(other);
    otherDep = (await s.make.deployment({ by: other })).id;
    await report(them, otherDep, 'theirs', { jsonQuery: q({ measures: ['orders.count'] }) });
    await tenants.ensure(other.accountId, 'zeta-co');
  });

  afterAll(() => s?.close());

  it('is provided to the data model through the ContentImpact port', () => {
    expect(impact).toBeInstanceOf(ContentImpact);
  });

  it('lists reports by the members their JSON query names, with every reason', async () => {
    const items = await between();
    expect(itemsOf(items, 'report', 'everything')).toEqual(
      [AMOUNT, COUNT, STATUS, TOTAL].map((m) => ({
        type: 'report',
        id: ids.everything,
        name: 'everything',
        ...m,
        tenants: [],
      })),
    );
    expect(itemsOf(items, 'report', 'orderPairs').map((i) => i.member)).toEqual([
      'orders.count',
      'orders.total',
    ]);
    // `orders.created_at.day` is the time dimension with a granularity: known, and unchanged.
    expect(itemsOf(items, 'report', 'granularity')).toMatchObject([AMOUNT]);
  });

  it('leaves out what already fails on base, what it cannot read, and SQL queries', async () => {
    const listed = new Set((await between()).filter((i) => i.type === 'report').map((i) => i.id));
    for (const key of [
      'unaffected',
      'alreadyBroken',
      'hiddenOnBase',
      'hiddenCube',
      'notJson',
      'array',
      'oddShapes',
      'deep',
      'sqlOnly',
    ]) {
      expect({ key, listed: listed.has(ids[key]) }).toEqual({ key, listed: false });
    }
  });

  it('lists reports shown on published dashboards with the tenants those dashboards are shared with', async () => {
    const items = await between();
    expect(itemsOf(items, 'report', 'shown')).toEqual([
      { type: 'report', id: ids.shown, name: 'shown', ...COUNT, tenants: ['acme-co', 'beta-co'] },
    ]);
    expect(itemsOf(items, 'report', 'snapshot')).toEqual([
      { type: 'report', id: ids.snapshot, name: 'snapshot', ...AMOUNT, tenants: ['acme-co', 'beta-co'] },
    ]);
  });

  it('lists dashboards by their filters and by the broken reports they show', async () => {
    const items = await between();
    expect(itemsOf(items, 'dashboard', 'sales')).toEqual(
      [AMOUNT, COUNT, STATUS].map((m) => ({
        type: 'dashboard',
        id: ids.sales,
        name: 'Sales',
        ...m,
        tenants: ['acme-co', 'beta-co'],
      })),
    );
    expect(itemsOf(items, 'dashboard', 'plain')).toEqual([
      { type: 'dashboard', id: ids.plain, name: 'Plain', ...TOTAL, tenants: [] },
    ]);
    // Its filters name a member base does not have: broken already.
    expect(itemsOf(items, 'dashboard', 'ops')).toEqual([]);
  });

  it('lists notifications by their filters, time grains and switchers, and by their dashboard', async () => {
    const items = await between();
    const salesDaily = itemsOf(items, 'notification', 'salesDaily');
    expect(salesDaily.map(({ member, reason, tenants }) => ({ member, reason, tenants }))).toEqual(
      [AMOUNT, COUNT, STATUS].map(({ member, reason }) => ({
        member,
        reason,
        // Its dashboard's tenants and those of its embed recipients.
        tenants: ['acme-co', 'beta-co', 'retail'],
      })),
    );
    expect(salesDaily[0].name).toMatch(/^Sales: .+/);
    expect(itemsOf(items, 'notification', 'salesSwitch').map((i) => i.member)).toEqual([
      'orders.amount',
      'orders.count',
      'orders.status',
      'orders.total',
    ]);
    // Switched to `customers.count`, which base does not have: broken already; its dashboard's
    // broken filter is still listed.
    expect(itemsOf(items, 'notification', 'switcher')).toMatchObject([{ ...TOTAL, tenants: [] }]);
    expect(itemsOf(items, 'notification', 'plainGone')).toMatchObject([TOTAL]);
    expect(itemsOf(items, 'notification', 'opsFine')).toEqual([]);
    // Shared with every embed user: every tenant of the account (never another account's).
    expect(itemsOf(items, 'notification', 'opsTotal')).toEqual([
      {
        type: 'notification',
        id: ids.opsTotal,
        name: expect.stringMatching(/^Ops: /),
        ...TOTAL,
        tenants: ['acme-co', 'beta-co', 'gamma-co', 'retail'],
      },
    ]);
  });

  it('answers in a stable order: type, id, member', async () => {
    const items = await between();
    const keys = items.map(
      (i) => [['report', 'dashboard', 'notification'].indexOf(i.type), i.id, i.member] as const,
    );
    const sorted = [...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : 1));
    expect(keys).toEqual(sorted);
    expect(new Set(items.map((i) => `${i.type}/${i.id}/${i.member}`)).size).toBe(items.length);
    expect(await between()).toEqual(items);
  });

  it('never lists another account’s content, nor answers for another account’s deployment', async () => {
    const items = await between();
    expect(items.some((i) => i.type === 'report' && i.id === ids.theirs)).toBe(false);
    expect(items.flatMap((i) => i.tenants)).not.toContain('zeta-co');
    expect(await between(other.accountId, dep)).toEqual([]);
    expect(await between(s.admin.accountId, otherDep)).toEqual([]);
    expect(await between(other.accountId, otherDep)).toMatchObject([
      { type: 'report', id: ids.theirs, ...COUNT, tenants: [] },
    ]);
  });

  it('calls a vanished member removed when no rename is known, and lists nothing when nothing breaks', async () => {
    const items = await impact.between(s.admin.accountId, dep, BASE, HEAD, new Map());
    expect(itemsOf(items, 'report', 'shown')).toMatchObject([
      { member: 'orders.count', reason: 'member_removed' },
    ]);
    expect(itemsOf(items, 'report', 'shown')[0]).not.toHaveProperty('renamedTo');
    expect(await impact.between(s.admin.accountId, dep, BASE, BASE, new Map())).toEqual([]);
    // Hidden and removed members of base were never usable: removing them breaks nothing.
    const lessHidden: ModelSummary = {
      cubes: [
        CUSTOMERS,
        { ...BASE.cubes[1], members: BASE.cubes[1].members.filter((m) => m.name !== 'secret') },
      ],
    };
    expect(await impact.between(s.admin.accountId, dep, BASE, lessHidden, new Map())).toEqual([]);
  });
});
