import {
  dashboardFilterMembers,
  dashboardReportIds,
  notificationMembers,
  parseQuery,
  queryMembers,
} from '../../src/modules/content-impact/content-members.js';
import { memberBreaks } from '../../src/modules/content-impact/member-breaks.js';
import type { ModelSummary, SummaryMember } from '../../src/modules/data-model/model-summary.js';

/** How the content impact reads the members stored content names (docs/data-model.md, "Content impact"). */
describe('members named by stored content', () => {
  it('reads every part of a Cube query, nested filters and both forms of order included', () => {
    expect(
      queryMembers({
        measures: ['A.count'],
        dimensions: ['A.status', 'A.count'],
        segments: ['A.big'],
        timeDimensions: [{ dimension: 'A.at', granularity: 'day' }],
        filters: [
          { member: 'A.f1', operator: 'set' },
          { or: [{ dimension: 'A.f2' }, { and: [{ member: 'A.f3' }] }] },
        ],
        order: { 'A.o1': 'asc' },
      }),
    ).toEqual(['A.count', 'A.status', 'A.big', 'A.at', 'A.f1', 'A.f2', 'A.f3', 'A.o1']);
    expect(queryMembers({ order: [['A.o1', 'asc'], 'A.o2', ['A.o3']] })).toEqual(['A.o1', 'A.o3']);
  });

  it('never throws on what is stored: invalid JSON, other values, odd shapes, deep nesting', () => {
    expect(parseQuery(null)).toBeNull();
    expect(parseQuery('')).toBeNull();
    expect(parseQuery('{"measures": [')).toBeNull();
    expect(parseQuery('[1, 2]')).toBeNull();
    expect(parseQuery('"A.count"')).toBeNull();
    expect(parseQuery('{"measures":["A.count"]}')).toEqual({ measures: ['A.count'] });
    for (const odd of [null, 7, 'A.count', [], ['A.count']]) expect(queryMembers(odd)).toEqual([]);
    expect(
      queryMembers({
        measures: 'A.count',
        dimensions: [null, 7, { member: 'A.x' }, 'nodot', '.lead'],
        segments: { 0: 'A.s' },
        timeDimensions: [null, 'A.t', { dimension: 5 }],
        filters: [null, 'A.f', { member: 3, and: 'A.g', or: [null] }],
        order: 7,
      }),
    ).toEqual([]);
    let deep: unknown = { member: 'A.deep' };
    for (let i = 0; i < 10_000; i++) deep = { and: [deep] };
    expect(queryMembers({ filters: [deep] })).toEqual([]);
    expect(dashboardFilterMembers({ widgets: [{ type: 'FILTER', config: deep }] })).toEqual([]);
  });

  it('reads the filters of a dashboard from its control widgets only', () => {
    const config = {
      widgets: [
        { type: 'FILTER', config: { member: 'A.status', values: ['A.not_a_member_key'] } },
        { type: 'TIME_GRAIN', config: { options: [{ dimension: 'A.at' }] } },
        { type: 'FIELD', config: { members: ['A.count', 'A.total', 3] } },
        { type: 'CHART', config: { member: 'A.chart', reportId: 4 } },
        { type: 'TEXT', config: { measure: 'A.text' } },
        null,
        'FILTER',
      ],
    };
    expect(dashboardFilterMembers(config)).toEqual(['A.status', 'A.at', 'A.count', 'A.total']);
    expect(dashboardFilterMembers(null)).toEqual([]);
    expect(dashboardFilterMembers({ widgets: 'x' })).toEqual([]);
  });

  it('reads the reports a dashboard shows: every positive integer reportId in a widget config', () => {
    expect(
      dashboardReportIds({
        widgets: [
          { config: { reportId: 3 } },
          { config: { tabs: [{ reportId: 5 }, { reportId: '6' }, { reportId: -1 }, { reportId: 2.5 }] } },
          { config: { reportId: 3 } },
          { reportId: 9 },
        ],
      }),
    ).toEqual([3, 5]);
  });

  it('reads a notification’s filters, time grains and both ends of its field switchers', () => {
    expect(
      notificationMembers({
        filters: [{ member: 'A.status' }, null, { member: 4 }],
        timeGrains: [{ member: 'A.at', grain: 'week' }],
        memberSwitchers: [{ member: 'A.count', selected: 'total' }, { member: 'B.x' }],
      }),
    ).toEqual(['A.status', 'A.at', 'A.count', 'A.total', 'B.x']);
    expect(notificationMembers({ filters: null, timeGrains: 'x', memberSwitchers: {} })).toEqual([]);
  });
});

describe('what a model change breaks', () => {
  const m = (
    name: string,
    type: string,
    pub = true,
    kind: SummaryMember['kind'] = 'dimension',
  ): SummaryMember => ({
    name,
    kind,
    type,
    public: pub,
    attributes: {},
  });
  const model = (members: SummaryMember[], cubePublic = true): ModelSummary => ({
    cubes: [
      {
        name: 'A',
        kind: 'cube',
        fileName: null,
        public: cubePublic,
        attributes: {},
        members,
        joins: [],
        preAggregations: [],
        accessPolicy: null,
      },
    ],
  });

  it('gives each usable member of base that head breaks its reason', () => {
    const base = model([
      m('kept', 'string'),
      m('gone', 'string'),
      m('old', 'number'),
      m('typed', 'number'),
      m('shy', 'string'),
      m('kind', 'number'),
      m('hidden', 'string', false),
    ]);
    const head = model([
      m('kept', 'string'),
      m('new', 'number'),
      m('typed', 'string'),
      m('shy', 'string', false),
      m('kind', 'number', true, 'measure'),
    ]);
    const { breaks } = memberBreaks(base, head, new Map([['A.old', 'A.new']]));
    expect(Object.fromEntries(breaks)).toEqual({
      'A.gone': { reason: 'member_removed' },
      'A.old': { reason: 'member_renamed', renamedTo: 'A.new' },
      'A.typed': { reason: 'type_changed' },
      'A.shy': { reason: 'member_hidden' },
      'A.kind': { reason: 'type_changed' },
    });
  });

  it('hides every member of a cube that is no longer public', () => {
    const { breaks } = memberBreaks(model([m('x', 'string')]), model([m('x', 'string')], false), new Map());
    expect(Object.fromEntries(breaks)).toEqual({ 'A.x': { reason: 'member_hidden' } });
  });
});
