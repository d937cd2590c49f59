import { accessNarrowing, diffModels } from '../../src/modules/data-model/model-diff.js';
import type { ModelSummary, SummaryCube, SummaryMember } from '../../src/modules/data-model/model-summary.js';

/** Summaries shaped as the compile child writes them (see compile-child.mts). */
const measure = (name: string, type = 'count', attributes: Record<string, unknown> = {}): SummaryMember => ({
  name,
  kind: 'measure',
  type,
  public: true,
  attributes,
});
const dimension = (
  name: string,
  type = 'string',
  attributes: Record<string, unknown> = {},
): SummaryMember => ({
  name,
  kind: 'dimension',
  type,
  public: true,
  attributes: { sql: `() => \`${name}\``, ...attributes },
});
const segment = (name: string, sql: string): SummaryMember => ({
  name,
  kind: 'segment',
  type: null,
  public: true,
  attributes: { sql },
});

function orders(overrides: Partial<SummaryCube> = {}): SummaryCube {
  return {
    name: 'orders',
    kind: 'cube',
    fileName: 'cubes/orders.yml',
    public: true,
    attributes: { sqlTable: '() => `public.orders`', title: 'Orders' },
    members: [
      measure('count'),
      measure('total', 'sum', { sql: '() => `amount`', format: 'currency' }),
      dimension('id', 'number', { primaryKey: true }),
      dimension('status'),
      dimension('created_at', 'time'),
      segment('paid', "CUBE => `${CUBE}.status = 'paid'`"),
    ],
    joins: [
      {
        name: 'customers',
        relationship: 'belongsTo',
        sql: '(CUBE, customers) => `${CUBE}.customer_id = ${customers.id}`',
      },
    ],
    preAggregations: [
      {
        name: 'daily',
        attributes: { type: 'rollup', granularity: 'day', measureReferences: 'count => [count]' },
      },
    ],
    accessPolicy: null,
    ...overrides,
  };
}

const customers = (overrides: Partial<SummaryCube> = {}): SummaryCube => ({
  name: 'customers',
  kind: 'cube',
  fileName: 'cubes/customers.yml',
  public: true,
  attributes: { sqlTable: '() => `public.customers`' },
  members: [measure('count'), dimension('id', 'number', { primaryKey: true }), dimension('name')],
  joins: [],
  preAggregations: [],
  accessPolicy: null,
  ...overrides,
});

const sales = (overrides: Partial<SummaryCube> = {}): SummaryCube => ({
  name: 'sales',
  kind: 'view',
  fileName: 'views/sales.yml',
  public: true,
  attributes: {},
  members: [
    measure('count', 'count', { aliasMember: 'orders.count' }),
    dimension('status', 'string', { aliasMember: 'orders.status' }),
  ],
  joins: [],
  preAggregations: [],
  accessPolicy: null,
  ...overrides,
});

const model = (...cubes: SummaryCube[]): ModelSummary => ({ cubes });
const withMembers = (cube: SummaryCube, edit: (members: SummaryMember[]) => SummaryMember[]) => ({
  ...cube,
  members: edit(cube.members.map((m) => ({ ...m, attributes: { ...m.attributes } }))),
});

describe('diffModels', () => {
  it('finds nothing between equal models', () => {
    const diff = diffModels(model(orders(), customers(), sales()), model(orders(), customers(), sales()));
    expect(diff).toEqual({ breaking: false, cubes: [], renames: new Map() });
  });

  it('tells a renamed measure from a remove and an add, and maps its path', () => {
    const head = withMembers(orders(), (ms) =>
      ms.map((m) => (m.name === 'count' ? { ...m, name: 'order_count' } : m)),
    );
    const diff = diffModels(model(orders()), model(head));
    expect(diff.cubes).toEqual([
      expect.objectContaining({
        name: 'orders',
        change: 'changed',
        breaking: true,
        reasons: [],
        attributes: [],
        members: [
          {
            kind: 'measure',
            name: 'order_count',
            change: 'renamed',
            previousName: 'count',
            attributes: [],
            breaking: true,
            reasons: ['orders.count was renamed to order_count'],
          },
        ],
      }),
    ]);
    expect(diff.breaking).toBe(true);
    expect([...diff.renames]).toEqual([['orders.count', 'orders.order_count']]);
  });

  it('does not guess a rename when two added members would fit, nor across kinds or types', () => {
    const ambiguous = withMembers(orders(), (ms) => [
      ...ms.filter((m) => m.name !== 'count'),
      measure('n'),
      measure('how_many'),
    ]);
    const diff = diffModels(model(orders()), model(ambiguous));
    const members = diff.cubes[0].members.map((m) => [m.kind, m.name, m.change, m.breaking]);
    expect(members).toEqual([
      ['measure', 'count', 'removed', true],
      ['measure', 'how_many', 'added', false],
      ['measure', 'n', 'added', false],
    ]);
    expect(diff.renames.size).toBe(0);

    // Another type is not the same member under another name.
    const retyped = withMembers(orders(), (ms) => [
      ...ms.filter((m) => m.name !== 'total'),
      measure('amount', 'avg', { sql: '() => `amount`', format: 'currency' }),
    ]);
    expect(diffModels(model(orders()), model(retyped)).cubes[0].members.map((m) => m.change)).toEqual([
      'added',
      'removed',
    ]);
  });

  it('marks a removed dimension, a changed type and a member made non-public breaking; additions and titles not', () => {
    const head = withMembers(orders(), (ms) => [
      ...ms
        .filter((m) => m.name !== 'status')
        .map((m) => {
          if (m.name === 'total') return { ...m, type: 'avg' };
          if (m.name === 'created_at') return { ...m, public: false };
          if (m.name === 'count') return { ...m, attributes: { title: 'Orders', description: 'How many' } };
          return m;
        }),
      measure('buyers', 'count_distinct', { sql: '() => `buyer_id`' }),
    ]);
    const diff = diffModels(model(orders()), model(head));
    const byName = new Map(diff.cubes[0].members.map((m) => [m.name, m]));
    expect(byName.get('status')).toEqual({
      kind: 'dimension',
      name: 'status',
      change: 'removed',
      attributes: [],
      breaking: true,
      reasons: ['orders.status was removed'],
    });
    expect(byName.get('total')).toEqual({
      kind: 'measure',
      name: 'total',
      change: 'changed',
      attributes: [{ attribute: 'type', before: 'sum', after: 'avg' }],
      breaking: true,
      reasons: ['the type of orders.total changed from sum to avg'],
    });
    expect(byName.get('created_at')).toMatchObject({
      change: 'changed',
      attributes: [{ attribute: 'public', before: true, after: false }],
      breaking: true,
      reasons: ['orders.created_at is no longer public'],
    });
    expect(byName.get('count')).toEqual({
      kind: 'measure',
      name: 'count',
      change: 'changed',
      attributes: [
        { attribute: 'description', before: null, after: 'How many' },
        { attribute: 'title', before: null, after: 'Orders' },
      ],
      breaking: false,
      reasons: [],
    });
    expect(byName.get('buyers')).toMatchObject({ change: 'added', breaking: false, reasons: [] });
    // Members in kind order, then by name.
    expect(diff.cubes[0].members.map((m) => m.name)).toEqual([
      'buyers',
      'count',
      'total',
      'created_at',
      'status',
    ]);
    expect(diff.breaking).toBe(true);
  });

  it('marks a removed join breaking, a changed or added join and any pre-aggregation change not', () => {
    const head = orders({
      joins: [
        {
          name: 'stores',
          relationship: 'belongsTo',
          sql: '(CUBE, stores) => `${CUBE}.store_id = ${stores.id}`',
        },
      ],
      preAggregations: [{ name: 'monthly', attributes: { type: 'rollup', granularity: 'month' } }],
    });
    const diff = diffModels(model(orders()), model(head));
    expect(diff.cubes[0].members).toEqual([
      {
        kind: 'join',
        name: 'customers',
        change: 'removed',
        attributes: [],
        breaking: true,
        reasons: ['the join to customers was removed'],
      },
      { kind: 'join', name: 'stores', change: 'added', attributes: [], breaking: false, reasons: [] },
      {
        kind: 'pre_aggregation',
        name: 'daily',
        change: 'removed',
        attributes: [],
        breaking: false,
        reasons: [],
      },
      {
        kind: 'pre_aggregation',
        name: 'monthly',
        change: 'added',
        attributes: [],
        breaking: false,
        reasons: [],
      },
    ]);

    const relinked = orders({
      joins: [
        {
          name: 'customers',
          relationship: 'hasMany',
          sql: '(CUBE, customers) => `${CUBE}.id = ${customers.order_id}`',
        },
      ],
      preAggregations: [
        {
          name: 'daily',
          attributes: { type: 'rollup', granularity: 'hour', measureReferences: 'count => [count]' },
        },
      ],
    });
    const changed = diffModels(model(orders()), model(relinked));
    expect(changed.breaking).toBe(false);
    expect(changed.cubes[0].members).toEqual([
      expect.objectContaining({
        kind: 'join',
        change: 'changed',
        breaking: false,
        attributes: [
          { attribute: 'relationship', before: 'belongsTo', after: 'hasMany' },
          { attribute: 'sql', before: orders().joins[0].sql, after: relinked.joins[0].sql },
        ],
      }),
      expect.objectContaining({
        kind: 'pre_aggregation',
        change: 'changed',
        breaking: false,
        attributes: [{ attribute: 'granularity', before: 'day', after: 'hour' }],
      }),
    ]);
  });

  it('reports cubes and views added, removed and renamed; a renamed cube maps each of its members', () => {
    const renamed = customers({ name: 'clients', fileName: 'cubes/clients.yml' });
    const view = sales({ name: 'sales_v2' });
    const diff = diffModels(model(orders(), customers(), sales()), model(renamed, orders()));
    expect(diff.cubes).toEqual([
      {
        name: 'clients',
        kind: 'cube',
        change: 'renamed',
        previousName: 'customers',
        fileName: 'cubes/clients.yml',
        attributes: [],
        members: [],
        breaking: true,
        reasons: ['the cube customers was renamed to clients'],
      },
      expect.objectContaining({
        name: 'sales',
        kind: 'view',
        change: 'removed',
        breaking: true,
        reasons: ['the view sales was removed'],
      }),
    ]);
    expect(diff.renames).toEqual(
      new Map([
        ['customers.count', 'clients.count'],
        ['customers.id', 'clients.id'],
        ['customers.name', 'clients.name'],
      ]),
    );
    // A view renamed is a rename; one added is not breaking.
    const views = diffModels(model(sales()), model(view, customers()));
    expect(views.cubes.map((c) => [c.name, c.kind, c.change, c.breaking])).toEqual([
      ['customers', 'cube', 'added', false],
      ['sales_v2', 'view', 'renamed', true],
    ]);
    // A cube and a view with the same members are not one renamed into the other.
    const kinds = diffModels(model(sales({ name: 'a' })), model({ ...sales({ name: 'b' }), kind: 'cube' }));
    expect(kinds.cubes.map((c) => c.change)).toEqual(['removed', 'added']);
  });

  it('diffs the members of a view and its own attributes', () => {
    const head = sales({
      attributes: { title: 'Sales' },
      members: [
        measure('orders_count', 'count', { aliasMember: 'orders.count' }),
        dimension('state', 'string', { aliasMember: 'orders.state' }),
      ],
    });
    const diff = diffModels(model(sales()), model(head));
    expect(diff.cubes[0]).toMatchObject({
      name: 'sales',
      kind: 'view',
      change: 'changed',
      attributes: [{ attribute: 'title', before: null, after: 'Sales' }],
      members: [
        // The same cube member under another name in the view.
        { name: 'orders_count', change: 'renamed', previousName: 'count', breaking: true },
        // Another cube member: not the same one renamed.
        { name: 'state', change: 'added', breaking: false },
        { name: 'status', change: 'removed', breaking: true, reasons: ['sales.status was removed'] },
      ],
    });
    expect([...diff.renames]).toEqual([['sales.count', 'sales.orders_count']]);
  });

  it('marks a cube made non-public breaking, with its members', () => {
    const hidden = orders({ public: false });
    hidden.members = hidden.members.map((m) => ({ ...m, public: false }));
    const diff = diffModels(model(orders()), model(hidden));
    expect(diff.cubes[0].reasons).toEqual(['orders is no longer public']);
    expect(diff.cubes[0].attributes).toEqual([{ attribute: 'public', before: true, after: false }]);
    expect(
      diff.cubes[0].members.every((m) => m.breaking && m.reasons[0].endsWith('is no longer public')),
    ).toBe(true);
  });
});

describe('access policies', () => {
  const all = orders()
    .members.map((m) => `orders.${m.name}`)
    .sort();
  const policy = (...entries: unknown[]) => orders({ accessPolicy: entries });
  const level = (includes: string[], excludes: string[] = []) => ({ includes, excludes });
  const paidOnly = { member: 'orders.status', operator: 'equals', values: '() => [`paid`]' };

  it('narrowed: fewer members included, more excluded, row-level filters added, a group removed', () => {
    const base = policy(
      { group: '*', memberLevel: level(all) },
      { group: 'finance', memberLevel: level(all), rowLevel: { filters: [], allowAll: true } },
      { group: 'sales', memberLevel: level(all) },
    );
    const head = policy(
      { group: '*', memberLevel: level(all.filter((m) => m !== 'orders.total')) },
      {
        group: 'finance',
        memberLevel: level(all, ['orders.id']),
        rowLevel: { filters: [paidOnly], allowAll: false },
      },
    );
    expect(accessNarrowing(base, head)).toEqual([
      'the access policy of orders no longer includes orders.total for everyone (*)',
      'the access policy of orders now excludes orders.id for group finance',
      'the access policy of orders adds row-level filters for group finance',
      'the access policy of orders no longer has an entry for group sales',
    ]);
    const diff = diffModels(model(base), model(head));
    expect(diff.breaking).toBe(true);
    expect(diff.cubes[0]).toMatchObject({
      change: 'changed',
      breaking: true,
      members: [],
      attributes: [{ attribute: 'accessPolicy', before: base.accessPolicy, after: head.accessPolicy }],
    });
    expect(diff.cubes[0].reasons).toHaveLength(4);
  });

  it('a policy where there was none narrows; removing one, adding a group or members widens', () => {
    const some = policy({ group: 'finance', memberLevel: level(all) });
    expect(diffModels(model(orders()), model(some)).cubes[0].reasons).toEqual([
      'an access policy was added to orders: only group finance may query it',
    ]);
    const widened = policy(
      { group: 'finance', memberLevel: level(all) },
      { group: 'sales', memberLevel: level(all) },
    );
    const fewer = policy({ group: 'finance', memberLevel: level(['orders.count']) });
    for (const [base, head] of [
      [some, orders()],
      [some, widened],
      [fewer, some],
      [policy({ group: '*', rowLevel: { filters: [paidOnly], allowAll: false } }), policy({ group: '*' })],
    ]) {
      const diff = diffModels(model(base), model(head));
      expect(diff.cubes[0]).toMatchObject({ change: 'changed', breaking: false, reasons: [] });
    }
  });

  it('counts a role or groups as the groups they name; a removed member is not counted again', () => {
    const base = policy(
      { role: 'analyst', memberLevel: level(all) },
      { groups: ['a', 'b'], memberLevel: level(all) },
    );
    const head = withMembers(
      policy(
        { role: 'analyst', memberLevel: level(all.filter((m) => m !== 'orders.status')) },
        { groups: ['a'], memberLevel: level(all.filter((m) => m !== 'orders.status')) },
      ),
      (ms) => ms.filter((m) => m.name !== 'status'),
    );
    expect(accessNarrowing(base, head)).toEqual([
      'the access policy of orders no longer has an entry for group b',
    ]);
  });

  it('conditions added narrow a policy', () => {
    const base = policy({ group: '*', memberLevel: level(all) });
    const head = policy({ group: '*', memberLevel: level(all), conditions: [{ if: '() => true' }] });
    expect(accessNarrowing(base, head)).toEqual([
      'the access policy of orders adds conditions for everyone (*)',
    ]);
    expect(accessNarrowing(head, base)).toEqual([]);
  });

  it('sees a renamed cube with the same policy as a rename', () => {
    const base = policy({ group: '*', memberLevel: level(all, ['orders.id']) });
    const head = orders({
      name: 'purchases',
      accessPolicy: [
        {
          group: '*',
          memberLevel: level(
            all.map((m) => m.replace('orders.', 'purchases.')),
            ['purchases.id'],
          ),
        },
      ],
    });
    const diff = diffModels(model(base), model(head));
    expect(diff.cubes.map((c) => [c.name, c.change, c.previousName])).toEqual([
      ['purchases', 'renamed', 'orders'],
    ]);
    expect(diff.renames.get('orders.total')).toBe('purchases.total');
  });
});
