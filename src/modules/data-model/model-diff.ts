/**
 * The member-level diff of two compiled models (issue 33, docs/data-model.md "Reviewing a
 * change"): cubes and views added, removed, renamed or changed, and per member (measures,
 * dimensions, segments, joins, pre-aggregations) added, removed, renamed or changed, each marked
 * breaking or not with its reasons. Pure: it reads two {@link ModelSummary} and nothing else.
 */
import type { MemberKind, ModelSummary, SummaryCube } from './model-summary.js';

export type DiffMemberKind = MemberKind | 'join' | 'pre_aggregation';
export type DiffChange = 'added' | 'removed' | 'renamed' | 'changed';

/** One attribute that differs; `null` stands for "not set". */
export interface AttributeChange {
  attribute: string;
  before: unknown;
  after: unknown;
}

export interface MemberDiff {
  kind: DiffMemberKind;
  /** The name in head (in base for a removed member). */
  name: string;
  change: DiffChange;
  /** For `renamed`: the name in base. */
  previousName?: string;
  /** For `changed`: what differs (`type`, `public`, then the other attributes by name). */
  attributes: AttributeChange[];
  breaking: boolean;
  /** Why the change is breaking; empty when it is not. */
  reasons: string[];
}

export interface CubeDiff {
  /** The name in head (in base for a removed cube or view). */
  name: string;
  kind: 'cube' | 'view';
  change: DiffChange;
  /** For `renamed`: the name in base. */
  previousName?: string;
  fileName: string | null;
  /** For `changed`: the cube's own attributes that differ (`public`, `sql`, `accessPolicy`...). */
  attributes: AttributeChange[];
  /** For `changed`: its members that differ, by kind then name. */
  members: MemberDiff[];
  /** Whether the cube's change or any of its members' is breaking. */
  breaking: boolean;
  /** Why the cube's own change is breaking (its members carry theirs). */
  reasons: string[];
}

export interface ModelDiff {
  breaking: boolean;
  /** Changed cubes and views only, by name. */
  cubes: CubeDiff[];
  /** `Orders.count` → `Orders.order_count`: queryable members whose path changed by a rename. */
  renames: Map<string, string>;
}

const KIND_ORDER: DiffMemberKind[] = ['measure', 'dimension', 'segment', 'join', 'pre_aggregation'];
const QUERYABLE = new Set<DiffMemberKind>(['measure', 'dimension', 'segment']);

/** A member of any kind, as compared: its name, and the rest as one comparable record. */
interface Item {
  kind: DiffMemberKind;
  name: string;
  fields: Record<string, unknown>;
}

/** JSON with object keys sorted: two equal values give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

const equal = (a: unknown, b: unknown): boolean => canonical(a ?? null) === canonical(b ?? null);

function itemsOf(cube: SummaryCube): Item[] {
  return [
    ...cube.members.map((m) => ({
      kind: m.kind,
      name: m.name,
      fields: { type: m.type, public: m.public, ...m.attributes },
    })),
    ...cube.joins.map((j) => ({
      kind: 'join' as const,
      name: j.name,
      fields: { relationship: j.relationship, sql: j.sql },
    })),
    ...cube.preAggregations.map((p) => ({
      kind: 'pre_aggregation' as const,
      name: p.name,
      fields: { ...p.attributes },
    })),
  ];
}

/** The fields that differ: `type` and `public` first, then the others by name. */
function attributeChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): AttributeChange[] {
  const first = ['type', 'public'];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort((a, b) => {
    const [i, j] = [first.indexOf(a), first.indexOf(b)];
    if (i !== j) return (i < 0 ? first.length : i) - (j < 0 ? first.length : j);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return keys
    .filter((k) => !equal(before[k], after[k]))
    .map((attribute) => ({ attribute, before: before[attribute] ?? null, after: after[attribute] ?? null }));
}

function memberRemoved(kind: DiffMemberKind, path: string): MemberDiff['reasons'] {
  if (kind === 'pre_aggregation') return [];
  return [kind === 'join' ? `the join to ${path.split('.')[1]} was removed` : `${path} was removed`];
}

function memberChanged(kind: DiffMemberKind, path: string, changes: AttributeChange[]): string[] {
  if (!QUERYABLE.has(kind)) return [];
  const reasons: string[] = [];
  for (const c of changes) {
    if (c.attribute === 'type') {
      reasons.push(`the type of ${path} changed from ${String(c.before)} to ${String(c.after)}`);
    } else if (c.attribute === 'public' && c.before === true && c.after === false) {
      reasons.push(`${path} is no longer public`);
    }
  }
  return reasons;
}

/**
 * Pairs the removed and added items of one kind whose other fields are all equal, where exactly
 * one removed and one added item share them (anything else cannot be told from a remove and an add).
 */
function pairRenames<T>(removed: T[], added: T[], key: (item: T) => string): Array<[T, T]> {
  const group = (items: T[]) => {
    const out = new Map<string, T[]>();
    for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
    return out;
  };
  const from = group(removed);
  const to = group(added);
  const pairs: Array<[T, T]> = [];
  for (const [k, olds] of from) {
    const news = to.get(k);
    if (olds.length === 1 && news?.length === 1) pairs.push([olds[0], news[0]]);
  }
  return pairs;
}

function diffMembers(base: SummaryCube, head: SummaryCube, renames: Map<string, string>): MemberDiff[] {
  const id = (i: Item) => `${i.kind}\u0000${i.name}`;
  const before = new Map(itemsOf(base).map((i) => [id(i), i]));
  const after = new Map(itemsOf(head).map((i) => [id(i), i]));
  const out: MemberDiff[] = [];
  const removed = [...before.values()].filter((i) => !after.has(id(i)));
  const added = [...after.values()].filter((i) => !before.has(id(i)));
  const renamed = pairRenames(removed, added, (i) => `${i.kind}\u0000${canonical(i.fields)}`);
  const paired = new Set(renamed.flat());
  for (const [old, next] of renamed) {
    const path = `${base.name}.${old.name}`;
    const breaking = next.kind !== 'pre_aggregation';
    if (QUERYABLE.has(next.kind)) renames.set(path, `${head.name}.${next.name}`);
    out.push({
      kind: next.kind,
      name: next.name,
      change: 'renamed',
      previousName: old.name,
      attributes: [],
      breaking,
      reasons: breaking
        ? [`${next.kind === 'join' ? 'the join ' : ''}${path} was renamed to ${next.name}`]
        : [],
    });
  }
  for (const item of removed) {
    if (paired.has(item)) continue;
    const reasons = memberRemoved(item.kind, `${base.name}.${item.name}`);
    out.push({
      kind: item.kind,
      name: item.name,
      change: 'removed',
      attributes: [],
      breaking: reasons.length > 0,
      reasons,
    });
  }
  for (const item of added) {
    if (paired.has(item)) continue;
    out.push({
      kind: item.kind,
      name: item.name,
      change: 'added',
      attributes: [],
      breaking: false,
      reasons: [],
    });
  }
  for (const [key, next] of after) {
    const old = before.get(key);
    if (!old) continue;
    const attributes = attributeChanges(old.fields, next.fields);
    if (attributes.length === 0) continue;
    const reasons = memberChanged(next.kind, `${head.name}.${next.name}`, attributes);
    out.push({
      kind: next.kind,
      name: next.name,
      change: 'changed',
      attributes,
      breaking: reasons.length > 0,
      reasons,
    });
  }
  return out.sort((a, b) =>
    a.kind !== b.kind
      ? KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind)
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0,
  );
}

// --- Access policies ------------------------------------------------------------------------------

interface PolicyEntry {
  role?: unknown;
  group?: unknown;
  groups?: unknown;
  memberLevel?: { includes?: unknown; excludes?: unknown };
  rowLevel?: { filters?: unknown; allowAll?: unknown };
  conditions?: unknown;
}

/** What one group (or role) may see of a cube under its policies. */
interface GroupAccess {
  /** Member paths it sees. */
  members: Set<string>;
  /** Member paths an entry excludes outright. */
  excluded: Set<string>;
  /** Row-level filters (as JSON), or null when some entry lets every row through. */
  filters: Set<string> | null;
  /** Conditions (as JSON) of its entries; none when an entry has no condition. */
  conditions: Set<string> | null;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** Who an entry applies to: its `role`, `group` or `groups` (Cube's words over versions); `*` is everyone. */
function groupsOf(entry: PolicyEntry): string[] {
  if (typeof entry.role === 'string') return [entry.role];
  if (typeof entry.group === 'string') return [entry.group];
  const groups = list(entry.groups);
  return groups.length > 0 ? groups : ['*'];
}

/** Each group's access under a cube's policies; null when the cube has no policy (all see all). */
function accessByGroup(cube: SummaryCube): Map<string, GroupAccess> | null {
  if (!cube.accessPolicy) return null;
  const all = cube.members.map((m) => `${cube.name}.${m.name}`);
  const out = new Map<string, GroupAccess>();
  for (const raw of cube.accessPolicy) {
    const entry = (raw ?? {}) as PolicyEntry;
    for (const group of groupsOf(entry)) {
      const access = out.get(group) ?? {
        members: new Set<string>(),
        excluded: new Set<string>(),
        filters: new Set<string>(),
        conditions: new Set<string>(),
      };
      out.set(group, access);
      // Policies that apply to one user add up: each entry grants what it grants.
      const excludes = new Set(list(entry.memberLevel?.excludes));
      const includes = entry.memberLevel ? list(entry.memberLevel.includes) : all;
      for (const m of includes) if (!excludes.has(m)) access.members.add(m);
      for (const m of excludes) access.excluded.add(m);
      const row = entry.rowLevel;
      if (!row || row.allowAll === true) access.filters = null;
      else if (access.filters) for (const f of list2(row.filters)) access.filters.add(canonical(f));
      if (entry.conditions === undefined || entry.conditions === null) access.conditions = null;
      else if (access.conditions)
        for (const c of list2(entry.conditions)) access.conditions.add(canonical(c));
    }
  }
  return out;
}

const list2 = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

const quote = (group: string): string => (group === '*' ? 'everyone (*)' : `group ${group}`);

/**
 * Why a cube's access policy is narrower in head than in base: a policy where there was none, a
 * group that lost its entry, members a group no longer sees (no longer included, or excluded),
 * row-level filters or conditions a group did not have. Members that head no longer has are left
 * out (their removal is reported with the member). Widening (a group added, a policy removed,
 * more members, fewer filters) is not a reason.
 */
export function accessNarrowing(base: SummaryCube, head: SummaryCube): string[] {
  const before = accessByGroup(base);
  const after = accessByGroup(head);
  if (!after) return [];
  const name = head.name;
  if (!before) {
    return [
      `an access policy was added to ${name}: only ${[...after.keys()].sort().map(quote).join(', ')} may query it`,
    ];
  }
  const rename = (path: string) =>
    base.name === head.name ? path : path.replace(`${base.name}.`, `${head.name}.`);
  const headMembers = new Set(head.members.map((m) => `${name}.${m.name}`));
  const reasons: string[] = [];
  for (const group of [...before.keys()].sort()) {
    const was = before.get(group)!;
    const now = after.get(group);
    if (!now) {
      reasons.push(`the access policy of ${name} no longer has an entry for ${quote(group)}`);
      continue;
    }
    const lost = [...was.members]
      .map(rename)
      .filter((m) => headMembers.has(m) && !now.members.has(m))
      .sort();
    const excluded = lost.filter((m) => now.excluded.has(m) && !was.excluded.has(m));
    const notIncluded = lost.filter((m) => !excluded.includes(m));
    if (excluded.length > 0) {
      reasons.push(`the access policy of ${name} now excludes ${excluded.join(', ')} for ${quote(group)}`);
    }
    if (notIncluded.length > 0) {
      reasons.push(
        `the access policy of ${name} no longer includes ${notIncluded.join(', ')} for ${quote(group)}`,
      );
    }
    if (now.filters && (!was.filters || [...now.filters].some((f) => !was.filters!.has(f)))) {
      reasons.push(`the access policy of ${name} adds row-level filters for ${quote(group)}`);
    }
    if (now.conditions && (!was.conditions || [...now.conditions].some((c) => !was.conditions!.has(c)))) {
      reasons.push(`the access policy of ${name} adds conditions for ${quote(group)}`);
    }
  }
  return reasons;
}

// --- Cubes ----------------------------------------------------------------------------------------

/** A cube's own fields, compared one by one. */
function cubeFields(cube: SummaryCube): Record<string, unknown> {
  return { public: cube.public, ...cube.attributes, accessPolicy: cube.accessPolicy };
}

/**
 * Everything of a cube but its name and file, with the access policy's member paths relative to
 * the cube: two cubes with the same key are the same definition under another name.
 */
function definitionKey(cube: SummaryCube): string {
  const own = `${cube.name}.`;
  const relative = JSON.parse(JSON.stringify(cube.accessPolicy ?? null), (_k, v: unknown) =>
    typeof v === 'string' && v.startsWith(own) ? `\u0000${v.slice(own.length)}` : v,
  ) as unknown;
  return canonical([
    cube.kind,
    cube.public,
    cube.attributes,
    cube.members,
    cube.joins,
    cube.preAggregations,
    relative,
  ]);
}

function changedCube(base: SummaryCube, head: SummaryCube, renames: Map<string, string>): CubeDiff | null {
  const attributes = attributeChanges(cubeFields(base), cubeFields(head));
  if (base.fileName !== head.fileName) {
    attributes.push({ attribute: 'fileName', before: base.fileName, after: head.fileName });
  }
  const members = diffMembers(base, head, renames);
  if (attributes.length === 0 && members.length === 0) return null;
  const reasons: string[] = [];
  if (base.kind !== head.kind) reasons.push(`${head.name} changed from a ${base.kind} to a ${head.kind}`);
  if (base.public && !head.public) reasons.push(`${head.name} is no longer public`);
  reasons.push(...accessNarrowing(base, head));
  return {
    name: head.name,
    kind: head.kind,
    change: 'changed',
    fileName: head.fileName,
    attributes,
    members,
    breaking: reasons.length > 0 || members.some((m) => m.breaking),
    reasons,
  };
}

/** The member diff of two compiled models (see the file's comment). */
export function diffModels(base: ModelSummary, head: ModelSummary): ModelDiff {
  const before = new Map(base.cubes.map((c) => [c.name, c]));
  const after = new Map(head.cubes.map((c) => [c.name, c]));
  const renames = new Map<string, string>();
  const cubes: CubeDiff[] = [];
  const removed = base.cubes.filter((c) => !after.has(c.name));
  const added = head.cubes.filter((c) => !before.has(c.name));
  const renamed = pairRenames(removed, added, definitionKey);
  const paired = new Set(renamed.flat());
  for (const [old, next] of renamed) {
    for (const m of next.members) {
      if (QUERYABLE.has(m.kind)) renames.set(`${old.name}.${m.name}`, `${next.name}.${m.name}`);
    }
    cubes.push({
      name: next.name,
      kind: next.kind,
      change: 'renamed',
      previousName: old.name,
      fileName: next.fileName,
      attributes: [],
      members: [],
      breaking: true,
      reasons: [`the ${old.kind} ${old.name} was renamed to ${next.name}`],
    });
  }
  for (const cube of removed) {
    if (paired.has(cube)) continue;
    cubes.push({
      name: cube.name,
      kind: cube.kind,
      change: 'removed',
      fileName: cube.fileName,
      attributes: [],
      members: [],
      breaking: true,
      reasons: [`the ${cube.kind} ${cube.name} was removed`],
    });
  }
  for (const cube of added) {
    if (paired.has(cube)) continue;
    cubes.push({
      name: cube.name,
      kind: cube.kind,
      change: 'added',
      fileName: cube.fileName,
      attributes: [],
      members: [],
      breaking: false,
      reasons: [],
    });
  }
  for (const [name, next] of after) {
    const old = before.get(name);
    const changed = old ? changedCube(old, next, renames) : null;
    if (changed) cubes.push(changed);
  }
  cubes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { breaking: cubes.some((c) => c.breaking), cubes, renames };
}
