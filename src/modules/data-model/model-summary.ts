/**
 * The compiled model as review compares it (issue 33): what the compile child reports of each cube
 * and view once a model compiles, and the member-level diff of two of them. Shared by the member
 * diff, the content impact and the merge gate; every field here is JSON (it is kept in the verdict
 * cache beside the verdict).
 */

export type MemberKind = 'measure' | 'dimension' | 'segment';

/** One member of a cube or view, named as queries name it: `<cube>.<member>`. */
export interface SummaryMember {
  /** The member's short name (`count`), without the cube. */
  name: string;
  kind: MemberKind;
  /** `count`, `sum`, `number`, `string`, `time`...; null for segments. */
  type: string | null;
  /** Shown by /meta (not `public: false`, not `shown: false`). */
  public: boolean;
  /**
   * The other attributes that matter to a reader, compared one by one: `sql`, `title`,
   * `description`, `format`, `primaryKey`, `granularities`, `drillMembers`... Values are strings,
   * numbers, booleans, arrays or objects of them, as the compiler evaluated them (a function's
   * source text where the compiler keeps a function).
   */
  attributes: Record<string, unknown>;
}

export interface SummaryJoin {
  /** The cube joined. */
  name: string;
  relationship: string | null;
  sql: string | null;
}

export interface SummaryPreAggregation {
  name: string;
  attributes: Record<string, unknown>;
}

export interface SummaryCube {
  name: string;
  kind: 'cube' | 'view';
  /** The model-relative file (`cubes/orders.yml`) that defines it. */
  fileName: string | null;
  public: boolean;
  /** Cube-level attributes compared one by one: `sql`, `sqlTable`, `title`, `dataSource`... */
  attributes: Record<string, unknown>;
  members: SummaryMember[];
  joins: SummaryJoin[];
  preAggregations: SummaryPreAggregation[];
  /**
   * The cube's or view's `access_policy`, as the compiler evaluated it, or null when it has none.
   * Each entry: `{role?, memberLevel?: {includes, excludes}, rowLevel?: {filters, allowAll}, conditions?}`.
   */
  accessPolicy: unknown[] | null;
}

/** A compiled model: its cubes and views in name order. Absent when the model does not compile. */
export interface ModelSummary {
  cubes: SummaryCube[];
}

/** `Orders.count` → the member, over every cube and view of a summary. */
export function membersByPath(summary: ModelSummary): Map<string, SummaryMember & { cube: string }> {
  const out = new Map<string, SummaryMember & { cube: string }>();
  for (const cube of summary.cubes) {
    for (const m of cube.members) out.set(`${cube.name}.${m.name}`, { ...m, cube: cube.name });
  }
  return out;
}
