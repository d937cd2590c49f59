/*
 * How a notification's filters, time grains and field switchers change the JSON query of a
 * report before it is sent to the data API (Cube's query format). Pure functions.
 */

export const FILTER_OPERATORS = [
  'equals',
  'not_equals',
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'contains',
  'not_contains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'is_null',
  'is_not_null',
  'is_empty',
  'is_not_empty',
  'between',
  'custom',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface DashboardFilter {
  member: string;
  operator?: FilterOperator | null;
  value?: unknown;
  caseSensitive?: unknown;
  startInclusive?: unknown;
  endInclusive?: unknown;
}

export interface TimeGrain {
  member: string;
  grain: string;
}

export interface MemberSwitcher {
  member: string;
  selected: string;
}

/** The overrides of a notification, as stored. */
export interface QueryOverrides {
  filters?: DashboardFilter[] | null;
  timeGrains?: TimeGrain[] | null;
  memberSwitchers?: MemberSwitcher[] | null;
}

type CubeFilter = Record<string, unknown>;
type Query = Record<string, unknown>;

/** Cube's name of each simple operator (one or more values). */
const SIMPLE: Partial<Record<FilterOperator, string>> = {
  equals: 'equals',
  not_equals: 'notEquals',
  greater_than: 'gt',
  greater_than_or_equal: 'gte',
  less_than: 'lt',
  less_than_or_equal: 'lte',
  contains: 'contains',
  not_contains: 'notContains',
  starts_with: 'startsWith',
  not_starts_with: 'notStartsWith',
  ends_with: 'endsWith',
  not_ends_with: 'notEndsWith',
};

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

function values(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/**
 * The Cube filter of one dashboard filter, or null when it cannot be expressed (`custom`, or a
 * `between` without two bounds): such a filter is not applied, and the email says so.
 */
export function cubeFilter(filter: DashboardFilter): CubeFilter | null {
  const { member } = filter;
  const operator =
    filter.operator ?? (filter.value === undefined || filter.value === null ? 'is_not_null' : 'equals');
  const simple = SIMPLE[operator];
  if (simple) return { member, operator: simple, values: values(filter.value) };
  switch (operator) {
    case 'is_null':
      return { member, operator: 'notSet' };
    case 'is_not_null':
      return { member, operator: 'set' };
    case 'is_empty':
      return {
        or: [
          { member, operator: 'notSet' },
          { member, operator: 'equals', values: [''] },
        ],
      };
    case 'is_not_empty':
      return {
        and: [
          { member, operator: 'set' },
          { member, operator: 'notEquals', values: [''] },
        ],
      };
    case 'between': {
      const bounds = values(filter.value);
      if (bounds.length !== 2) return null;
      if (bounds.every((b) => ISO_DATE.test(b))) return { member, operator: 'inDateRange', values: bounds };
      return {
        and: [
          { member, operator: filter.startInclusive === false ? 'gt' : 'gte', values: [bounds[0]] },
          { member, operator: filter.endInclusive === false ? 'lt' : 'lte', values: [bounds[1]] },
        ],
      };
    }
    default:
      return null;
  }
}

/** The cube (or view) a member belongs to: `Orders` of `Orders.status`. */
function cubeOf(member: string): string {
  return member.slice(0, member.indexOf('.'));
}

/** Every member a query names, with the cubes they belong to. */
function cubesOf(query: Query): Set<string> {
  const out = new Set<string>();
  const add = (m: unknown) => {
    if (typeof m === 'string' && m.includes('.')) out.add(cubeOf(m));
  };
  for (const key of ['measures', 'dimensions', 'segments']) {
    const list = query[key];
    if (Array.isArray(list)) list.forEach(add);
  }
  if (Array.isArray(query.timeDimensions)) {
    for (const td of query.timeDimensions) add((td as { dimension?: unknown })?.dimension);
  }
  return out;
}

function switchMember(member: unknown, switchers: Map<string, string>): unknown {
  return typeof member === 'string' && switchers.has(member) ? switchers.get(member) : member;
}

/**
 * The report's query with the notification's overrides: field switchers replace members in
 * measures, dimensions and order; filters are added (AND) to reports that query the filter
 * member's cube or view (a filter on another view would fail the report); time grains set the
 * granularity of the matching time dimensions. The stored query is never changed.
 */
export function applyOverrides(source: Query, overrides: QueryOverrides): Query {
  const query: Query = structuredClone(source);
  const switchers = new Map(
    (overrides.memberSwitchers ?? []).map((s) => [s.member, `${cubeOf(s.member)}.${s.selected}`]),
  );
  if (switchers.size > 0) {
    for (const key of ['measures', 'dimensions']) {
      if (Array.isArray(query[key]))
        query[key] = (query[key] as unknown[]).map((m) => switchMember(m, switchers));
    }
    if (Array.isArray(query.order)) {
      query.order = (query.order as unknown[]).map((o) =>
        Array.isArray(o) ? [switchMember(o[0], switchers), ...o.slice(1)] : o,
      );
    } else if (query.order && typeof query.order === 'object') {
      query.order = Object.fromEntries(
        Object.entries(query.order as Record<string, unknown>).map(([k, v]) => [
          switchMember(k, switchers) as string,
          v,
        ]),
      );
    }
  }
  const cubes = cubesOf(query);
  const added = (overrides.filters ?? [])
    .filter((f) => cubes.has(cubeOf(f.member)))
    .map(cubeFilter)
    .filter((f): f is CubeFilter => f !== null);
  if (added.length > 0) query.filters = [...(Array.isArray(query.filters) ? query.filters : []), ...added];
  const grains = new Map((overrides.timeGrains ?? []).map((g) => [g.member, g.grain]));
  if (grains.size > 0 && Array.isArray(query.timeDimensions)) {
    query.timeDimensions = (query.timeDimensions as Record<string, unknown>[]).map((td) =>
      typeof td?.dimension === 'string' && grains.has(td.dimension)
        ? { ...td, granularity: grains.get(td.dimension) }
        : td,
    );
  }
  return query;
}

const WORDS: Record<FilterOperator, string> = {
  equals: 'is',
  not_equals: 'is not',
  greater_than: '>',
  greater_than_or_equal: '≥',
  less_than: '<',
  less_than_or_equal: '≤',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  not_starts_with: 'does not start with',
  ends_with: 'ends with',
  not_ends_with: 'does not end with',
  is_null: 'is not set',
  is_not_null: 'is set',
  is_empty: 'is empty',
  is_not_empty: 'is not empty',
  between: 'is between',
  custom: 'custom',
};

/** The filters in words for the email (`Orders.status is completed`); unapplied ones say so. */
export function describeFilters(overrides: QueryOverrides): string[] {
  const out = (overrides.filters ?? []).map((f) => {
    const operator = f.operator ?? (f.value === undefined || f.value === null ? 'is_not_null' : 'equals');
    const shown = values(f.value);
    const text = `${f.member} ${WORDS[operator]}${shown.length ? ' ' + shown.join(operator === 'between' ? ' and ' : ', ') : ''}`;
    return cubeFilter(f) === null ? `${text} (not applied: not expressible as a data API filter)` : text;
  });
  for (const g of overrides.timeGrains ?? []) out.push(`${g.member} by ${g.grain}`);
  for (const s of overrides.memberSwitchers ?? []) out.push(`${s.member} shown as ${s.selected}`);
  return out;
}

/** The ids of the reports a dashboard config shows, in widget order: every numeric `reportId`. */
export function reportIdsOf(config: unknown): number[] {
  const out: number[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'reportId' && typeof v === 'number' && Number.isInteger(v) && v > 0) {
          if (!out.includes(v)) out.push(v);
        } else walk(v);
      }
    }
  };
  const widgets = (config as { widgets?: unknown } | null)?.widgets;
  if (Array.isArray(widgets)) for (const w of widgets) walk((w as { config?: unknown })?.config);
  return out;
}
