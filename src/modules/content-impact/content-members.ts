/*
 * The members stored content names, read defensively: stored JSON comes from clients over years,
 * so any shape is possible and none may throw. Pure functions; the service decides what breaks.
 */

type Json = Record<string, unknown>;

/** Deeper than any real query or config: a guard against hostile nesting, not a limit on content. */
const MAX_DEPTH = 64;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member path as a query names it: `Cube.member`, or `Cube.member.granularity`. */
function isPath(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 1000 && value.indexOf('.') > 0;
}

/**
 * The stored JSON query of a report, parsed: an object, or null when the text is not JSON or not
 * a JSON object (such a report fails on any model: it is already broken, so never listed).
 */
export function parseQuery(text: string | null): Json | null {
  if (!text) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Every member a Cube query names, in the order met, each once: `measures`, `dimensions`,
 * `segments`, `timeDimensions[].dimension`, `filters[].member` (or the older `dimension`) with
 * nested `and`/`or`, and the keys of `order` (an object, or `[member, direction]` pairs). Entries
 * of another shape are skipped.
 */
export function queryMembers(query: unknown): string[] {
  const out = new Set<string>();
  if (!isRecord(query)) return [];
  const add = (m: unknown) => {
    if (isPath(m)) out.add(m);
  };
  for (const key of ['measures', 'dimensions', 'segments']) {
    const list = query[key];
    if (Array.isArray(list)) list.forEach(add);
  }
  if (Array.isArray(query.timeDimensions)) {
    for (const td of query.timeDimensions) if (isRecord(td)) add(td.dimension);
  }
  const filters = (list: unknown, depth: number): void => {
    if (!Array.isArray(list) || depth > MAX_DEPTH) return;
    for (const f of list) {
      if (!isRecord(f)) continue;
      add(f.member);
      add(f.dimension);
      filters(f.and, depth + 1);
      filters(f.or, depth + 1);
    }
  };
  filters(query.filters, 0);
  const order = query.order;
  if (Array.isArray(order)) {
    for (const o of order) if (Array.isArray(o)) add(o[0]);
  } else if (isRecord(order)) {
    Object.keys(order).forEach(add);
  }
  return [...out];
}

/** Widgets that act on the whole dashboard: its filters, time grain pickers and field switchers. */
const CONTROL_WIDGETS = new Set(['FILTER', 'TIME_GRAIN', 'FIELD']);

/** Keys under which a control widget's config names members (a path, or a list of them). */
const MEMBER_KEYS = new Set(['member', 'members', 'dimension', 'dimensions', 'measure', 'measures']);

function widgetsOf(config: unknown): Json[] {
  const widgets = isRecord(config) ? config.widgets : null;
  return Array.isArray(widgets) ? widgets.filter(isRecord) : [];
}

/**
 * The members the filters of a dashboard config name: in the `config` of its `FILTER`,
 * `TIME_GRAIN` and `FIELD` widgets, every member path (or list of them) under a key `member`,
 * `members`, `dimension`, `dimensions`, `measure` or `measures`, at any depth.
 */
export function dashboardFilterMembers(config: unknown): string[] {
  const out = new Set<string>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, depth + 1);
    } else if (isRecord(value)) {
      for (const [key, v] of Object.entries(value)) {
        if (MEMBER_KEYS.has(key)) {
          if (isPath(v)) out.add(v);
          else if (Array.isArray(v)) for (const m of v) if (isPath(m)) out.add(m);
        }
        walk(v, depth + 1);
      }
    }
  };
  for (const w of widgetsOf(config))
    if (typeof w.type === 'string' && CONTROL_WIDGETS.has(w.type)) walk(w.config, 0);
  return [...out];
}

/**
 * The reports the widgets of a dashboard config show: every numeric `reportId`, at any depth of a
 * widget's `config` (as the workspace repoints them on a copy and notifications render them).
 */
export function dashboardReportIds(config: unknown): number[] {
  const out = new Set<number>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, depth + 1);
    } else if (isRecord(value)) {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'reportId' && Number.isInteger(v) && (v as number) > 0) out.add(v as number);
        else walk(v, depth + 1);
      }
    }
  };
  for (const w of widgetsOf(config)) walk(w.config, 0);
  return [...out];
}

/**
 * The members a notification's overrides name: `filters[].member`, `timeGrains[].member`, and of
 * each `memberSwitchers[]` both `member` and the member it switches to (`selected`, in the same
 * cube or view: `Orders.total` for `{member: "Orders.count", selected: "total"}`).
 */
export function notificationMembers(overrides: {
  filters: unknown;
  timeGrains: unknown;
  memberSwitchers: unknown;
}): string[] {
  const out = new Set<string>();
  const each = (list: unknown, read: (entry: Json) => void) => {
    if (Array.isArray(list)) for (const e of list) if (isRecord(e)) read(e);
  };
  const add = (m: unknown) => {
    if (isPath(m)) out.add(m);
  };
  each(overrides.filters, (f) => add(f.member));
  each(overrides.timeGrains, (g) => add(g.member));
  each(overrides.memberSwitchers, (s) => {
    add(s.member);
    if (isPath(s.member) && typeof s.selected === 'string' && s.selected !== '') {
      add(`${s.member.slice(0, s.member.indexOf('.'))}.${s.selected}`);
    }
  });
  return [...out];
}
