import { ApiError } from '../../src/core/errors/api-error.js';
import {
  applyOverrides,
  cubeFilter,
  describeFilters,
  reportIdsOf,
  type FilterOperator,
} from '../../src/modules/notifications/notification-query.js';
import { contextHash, securityContextOf } from '../../src/modules/notifications/notification-run.job.js';
import {
  humanReadableSchedule,
  resolveSchedule,
} from '../../src/modules/notifications/notification-schedule.js';
import type { RecipientRow } from '../../src/modules/notifications/notifications.repository.js';

describe('notification filters as data API filters', () => {
  it.each<[FilterOperator, unknown, unknown]>([
    ['equals', 'open', { member: 'O.s', operator: 'equals', values: ['open'] }],
    ['not_equals', ['a', 'b'], { member: 'O.s', operator: 'notEquals', values: ['a', 'b'] }],
    ['greater_than', 5, { member: 'O.s', operator: 'gt', values: ['5'] }],
    ['greater_than_or_equal', 5, { member: 'O.s', operator: 'gte', values: ['5'] }],
    ['less_than', 5, { member: 'O.s', operator: 'lt', values: ['5'] }],
    ['less_than_or_equal', 5, { member: 'O.s', operator: 'lte', values: ['5'] }],
    ['contains', 'x', { member: 'O.s', operator: 'contains', values: ['x'] }],
    ['not_contains', 'x', { member: 'O.s', operator: 'notContains', values: ['x'] }],
    ['starts_with', 'x', { member: 'O.s', operator: 'startsWith', values: ['x'] }],
    ['not_starts_with', 'x', { member: 'O.s', operator: 'notStartsWith', values: ['x'] }],
    ['ends_with', 'x', { member: 'O.s', operator: 'endsWith', values: ['x'] }],
    ['not_ends_with', 'x', { member: 'O.s', operator: 'notEndsWith', values: ['x'] }],
    ['is_null', undefined, { member: 'O.s', operator: 'notSet' }],
    ['is_not_null', undefined, { member: 'O.s', operator: 'set' }],
    [
      'is_empty',
      undefined,
      {
        or: [
          { member: 'O.s', operator: 'notSet' },
          { member: 'O.s', operator: 'equals', values: [''] },
        ],
      },
    ],
    [
      'is_not_empty',
      undefined,
      {
        and: [
          { member: 'O.s', operator: 'set' },
          { member: 'O.s', operator: 'notEquals', values: [''] },
        ],
      },
    ],
    [
      'between',
      ['2027-01-01', '2027-01-31'],
      { member: 'O.s', operator: 'inDateRange', values: ['2027-01-01', '2027-01-31'] },
    ],
    [
      'between',
      [1, 10],
      {
        and: [
          { member: 'O.s', operator: 'gte', values: ['1'] },
          { member: 'O.s', operator: 'lte', values: ['10'] },
        ],
      },
    ],
    ['between', [1], null],
    ['custom', 'x > 1', null],
  ])('%s %j', (operator, value, expected) => {
    expect(cubeFilter({ member: 'O.s', operator, value })).toEqual(expected);
  });

  it('honours exclusive bounds and defaults the operator', () => {
    expect(
      cubeFilter({
        member: 'O.n',
        operator: 'between',
        value: [1, 2],
        startInclusive: false,
        endInclusive: false,
      }),
    ).toEqual({
      and: [
        { member: 'O.n', operator: 'gt', values: ['1'] },
        { member: 'O.n', operator: 'lt', values: ['2'] },
      ],
    });
    expect(cubeFilter({ member: 'O.s', value: 'x' })).toEqual({
      member: 'O.s',
      operator: 'equals',
      values: ['x'],
    });
    expect(cubeFilter({ member: 'O.s' })).toEqual({ member: 'O.s', operator: 'set' });
  });

  it('applies filters to the reports of their cube, grains and switchers, leaving the source alone', () => {
    const source = {
      measures: ['Orders.count'],
      dimensions: ['Orders.status'],
      timeDimensions: [{ dimension: 'Orders.created_at', granularity: 'day' }],
      filters: [{ member: 'Orders.amount', operator: 'gt', values: ['0'] }],
      order: { 'Orders.status': 'asc' },
    };
    const copy = structuredClone(source);
    const out = applyOverrides(source, {
      filters: [
        { member: 'Orders.status', operator: 'equals', value: 'open' },
        { member: 'Users.city', operator: 'equals', value: 'Paris' },
      ],
      timeGrains: [{ member: 'Orders.created_at', grain: 'month' }],
      memberSwitchers: [{ member: 'Orders.status', selected: 'city' }],
    });
    expect(source).toEqual(copy);
    expect(out).toEqual({
      measures: ['Orders.count'],
      dimensions: ['Orders.city'],
      timeDimensions: [{ dimension: 'Orders.created_at', granularity: 'month' }],
      filters: [
        { member: 'Orders.amount', operator: 'gt', values: ['0'] },
        { member: 'Orders.status', operator: 'equals', values: ['open'] },
      ],
      order: { 'Orders.city': 'asc' },
    });
  });

  it('describes the filters, saying which are not applied', () => {
    expect(
      describeFilters({
        filters: [
          { member: 'O.s', operator: 'equals', value: 'open' },
          { member: 'O.n', operator: 'between', value: [1, 5] },
          { member: 'O.x', operator: 'custom', value: 'raw' },
        ],
        timeGrains: [{ member: 'O.t', grain: 'week' }],
      }),
    ).toEqual([
      'O.s is open',
      'O.n is between 1 and 5',
      'O.x custom raw (not applied: not expressible as a data API filter)',
      'O.t by week',
    ]);
  });

  it('finds the reports of a dashboard config in widget order, once each', () => {
    expect(
      reportIdsOf({
        widgets: [
          { id: 'a', config: { reportId: 3 } },
          { id: 'b', config: { nested: [{ reportId: 1 }, { reportId: 3 }], reportId: '9' } },
          { id: 'c' },
        ],
      }),
    ).toEqual([3, 1]);
    expect(reportIdsOf(null)).toEqual([]);
  });
});

describe('notification schedules', () => {
  const cron = (input: Parameters<typeof resolveSchedule>[0]) => resolveSchedule(input).cron;

  it('derives the cron of each type and keeps only the fields it uses', () => {
    expect(cron({ scheduleType: 'HOURLY', minute: 5, hour: 3 })).toBe('5 * * * *');
    expect(resolveSchedule({ scheduleType: 'HOURLY', minute: 5, hour: 3 }).fields.hour).toBeNull();
    expect(cron({ scheduleType: 'DAILY' })).toBe('0 0 * * *');
    expect(cron({ scheduleType: 'WEEKLY', dayOfWeek: 0 })).toBe('0 0 * * 0');
    expect(cron({ scheduleType: 'MONTHLY', dayOfMonth: 15, hour: 8 })).toBe('0 8 15 * *');
    expect(cron({ scheduleType: 'CUSTOM', customCron: '*/15  9-17 * * 1-5' })).toBe('*/15 9-17 * * 1-5');
  });

  it('merges an update with the stored schedule', () => {
    const current = resolveSchedule({
      scheduleType: 'WEEKLY',
      dayOfWeek: 2,
      hour: 7,
      timezone: 'Asia/Tokyo',
    }).fields;
    expect(resolveSchedule({ hour: 8 }, current)).toMatchObject({
      cron: '0 8 * * 2',
      fields: { timezone: 'Asia/Tokyo' },
    });
    expect(resolveSchedule({ customCron: '0 6 * * *' }, current).fields.scheduleType).toBe('CUSTOM');
    expect(resolveSchedule({ timezone: null }, current).fields.timezone).toBe('UTC');
  });

  it.each([
    [{ scheduleType: 'WEEKLY' }],
    [{ scheduleType: 'MONTHLY' }],
    [{ scheduleType: 'CUSTOM' }],
    [{ scheduleType: 'CUSTOM', customCron: '0 0 30 2 *' }],
    [{ scheduleType: 'CUSTOM', customCron: '0 0 0 * * *' }],
    [{ scheduleType: 'DAILY', timezone: 'Nowhere/Else' }],
    [{}],
  ] as const)('refuses %j', (input) => {
    expect(() => resolveSchedule(input as Parameters<typeof resolveSchedule>[0])).toThrow(ApiError);
  });

  it('says the schedule in words with its zone', () => {
    expect(humanReadableSchedule('0 9 * * *', 'Europe/Berlin')).toBe('At 09:00 (Europe/Berlin)');
  });
});

describe('security contexts of recipients', () => {
  const row = (fields: Partial<RecipientRow>): RecipientRow => ({
    id: 1,
    type: 'EMBED_USER',
    userId: null,
    username: null,
    email: 'x@y.test',
    embedUserId: 1,
    embedTenantName: 't',
    externalId: 'x',
    securityContext: null,
    userAttributes: null,
    groups: null,
    deactivated: false,
    ...fields,
  });

  it('gives console users an empty context and embed users their own', () => {
    expect(securityContextOf(row({ type: 'USER', userId: 3, securityContext: { a: 1 } }))).toEqual({});
    expect(securityContextOf(row({ securityContext: { store: 7 } }))).toEqual({ store: 7 });
    expect(
      securityContextOf(
        row({
          securityContext: { store: 7 },
          userAttributes: [{ name: 'region', value: 'EU' }],
          groups: ['g'],
        }),
      ),
    ).toEqual({ store: 7, cubeCloud: { userAttributes: { region: 'EU' }, groups: ['g'] } });
  });

  it('hashes equal contexts equally whatever their key order', () => {
    expect(contextHash({ a: 1, b: { c: 2, d: 3 } })).toBe(contextHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(contextHash({ a: 1 })).not.toBe(contextHash({ a: 2 }));
  });
});
