import type { SqlParams } from '../../../core/database/named-params.js';
import {
  DIRECTORY_GROUP_ATTRIBUTES,
  DIRECTORY_USER_ATTRIBUTES,
  type DirectoryAttribute,
  type DirectoryColumn,
} from '../../users/users.fragments.js';
import { GROUP_SCHEMA, USER_SCHEMA, resolveAttr, type ResourceSchema } from '../scim.schema.js';
import { scimError } from '../scim.errors.js';
import type { AttrPath, CompValue, CompareOp, FilterNode } from './filter-parser.js';

/**
 * Compiles a parsed filter to a SQL condition over the users module's directory view (its
 * attribute map, `users.fragments.ts`: the SQL naming its tables stays there). Values are always
 * bound parameters (`:f1`, `:f2`, ...); LIKE patterns are escaped. Every condition is a non-null
 * boolean, so `not (...)` also matches resources where the attribute is unassigned.
 */

type SqlColumn = DirectoryColumn;
type SqlAttr = DirectoryAttribute;

export interface FilterColumns {
  schema: ResourceSchema;
  /** By lowercased attribute name. */
  attrs: Readonly<Record<string, SqlAttr>>;
}

export interface SqlCondition {
  sql: string;
  params: SqlParams;
}

/** Users, as alias `u` (see `DirectoryService.findUsers`). */
export const USER_FILTER_COLUMNS: FilterColumns = { schema: USER_SCHEMA, attrs: DIRECTORY_USER_ATTRIBUTES };

/** Groups, as alias `g` (see `DirectoryService.findGroups`). */
export const GROUP_FILTER_COLUMNS: FilterColumns = {
  schema: GROUP_SCHEMA,
  attrs: DIRECTORY_GROUP_ATTRIBUTES,
};

const MAX_INT = 2_147_483_647;

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function pathText(path: AttrPath): string {
  return `${path.uri ? `${path.uri}:` : ''}${path.name}${path.sub ? `.${path.sub}` : ''}`;
}

function invalid(message: string) {
  return scimError('invalidFilter', message);
}

class Compiler {
  readonly params: Record<string, unknown> = {};
  private bound = 0;

  constructor(private readonly columns: FilterColumns) {}

  node(n: FilterNode, scope: { label: string; subs: Record<string, SqlColumn> } | null): string {
    switch (n.kind) {
      case 'and':
      case 'or':
        return `(${n.items.map((i) => this.node(i, scope)).join(n.kind === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(NOT ${this.node(n.item, scope)})`;
      case 'valuePath': {
        if (scope) throw invalid('Value filters cannot be nested');
        const target = this.lookup(n.path);
        if (target.attr.kind === 'column' || n.path.sub !== null) {
          throw invalid(`"${pathText(n.path)}" is not a complex attribute, so it takes no [filter]`);
        }
        const inner = this.node(n.filter, { label: pathText(n.path), subs: target.attr.subs });
        return target.attr.kind === 'multi' ? target.attr.some(inner) : inner;
      }
      case 'present':
      case 'compare':
        return scope ? this.inScope(n, scope) : this.topLevel(n);
    }
  }

  private inScope(
    n: Extract<FilterNode, { kind: 'present' | 'compare' }>,
    scope: { label: string; subs: Record<string, SqlColumn> },
  ): string {
    const column =
      n.path.uri === null && n.path.sub === null ? scope.subs[n.path.name.toLowerCase()] : undefined;
    const label = `${scope.label}.${pathText(n.path)}`;
    if (!column) throw invalid(`Cannot filter on "${label}": not a supported sub-attribute`);
    return this.column(column, n, label);
  }

  private topLevel(n: Extract<FilterNode, { kind: 'present' | 'compare' }>): string {
    const { attr, subName, label } = this.lookup(n.path);
    if (attr.kind === 'column') return this.column(attr, n, label);
    if (subName !== null) {
      const column = attr.subs[subName];
      if (!column) throw invalid(`Cannot filter on "${label}"`);
      const condition = this.column(column, n, label);
      return attr.kind === 'multi' ? attr.some(condition) : condition;
    }
    if (attr.kind === 'multi') {
      // A multi-valued attribute without a sub-attribute stands for its `value`.
      if (n.kind === 'present') return attr.some('TRUE');
      return attr.some(this.column(attr.subs.value, n, `${label}.value`));
    }
    if (n.kind === 'present') {
      const subs = Object.values(attr.subs).map((c) => this.column(c, n, label));
      return `(${subs.join(' OR ')})`;
    }
    throw invalid(`"${label}" is a complex attribute: compare one of its sub-attributes`);
  }

  private lookup(path: AttrPath): { attr: SqlAttr; subName: string | null; label: string } {
    const label = pathText(path);
    const resolved = resolveAttr(this.columns.schema, path);
    if (!resolved) {
      throw invalid(
        `Unknown attribute "${label}"; filterable: ${Object.keys(this.columns.attrs).join(', ')}`,
      );
    }
    const attr = this.columns.attrs[resolved.attr.name.toLowerCase()];
    if (!attr) throw invalid(`Cannot filter on "${label}"`);
    const subName = resolved.sub ? resolved.sub.name.toLowerCase() : null;
    if (subName !== null && attr.kind === 'column') throw invalid(`"${label}" has no sub-attributes`);
    return { attr, subName, label };
  }

  private bind(value: unknown): string {
    const name = `f${++this.bound}`;
    this.params[name] = value;
    return `:${name}`;
  }

  private column(
    c: SqlColumn,
    n: Extract<FilterNode, { kind: 'present' | 'compare' }>,
    label: string,
  ): string {
    if (n.kind === 'present') {
      return c.type === 'string' ? this.defined(c, `${c.expr} <> ''`) : `(${c.expr} IS NOT NULL)`;
    }
    const { op, value } = n;
    switch (c.type) {
      case 'string':
        return this.string(c, op, value, label);
      case 'id':
        return this.id(c, op, value, label);
      case 'boolean':
        if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) {
          throw invalid(`"${label}" is a boolean: only eq and ne with true or false apply`);
        }
        return this.defined(c, `(${c.expr}) ${op === 'eq' ? '=' : '<>'} ${this.bind(value)}::boolean`);
      case 'dateTime':
        return this.dateTime(c, op, value, label);
    }
  }

  private string(c: SqlColumn, op: CompareOp, value: CompValue, label: string): string {
    if (value === null) {
      if (op === 'eq') return `COALESCE(${c.expr} = '', TRUE)`;
      if (op === 'ne') return this.defined(c, `${c.expr} <> ''`);
      throw invalid(`"${label}" ${op} null: only eq and ne compare with null`);
    }
    if (typeof value !== 'string') throw invalid(`"${label}" is a string: compare it with a quoted string`);
    if (op === 'co' || op === 'sw' || op === 'ew') {
      const pattern = `${op === 'sw' ? '' : '%'}${escapeLike(value)}${op === 'ew' ? '' : '%'}`;
      return this.defined(c, `${c.expr} ${c.caseExact ? 'LIKE' : 'ILIKE'} ${this.bind(pattern)}`);
    }
    const left = c.caseExact || c.lowered ? c.expr : `lower(${c.expr})`;
    const right = c.caseExact ? this.bind(value) : `lower(${this.bind(value)})`;
    if (op === 'ne') return `(${left} IS DISTINCT FROM ${right})`;
    const sqlOp = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    return this.defined(c, `${left} ${sqlOp} ${right}`);
  }

  /** Ids are strings in SCIM: equality against the integer key, ordering and substrings as text. */
  private id(c: SqlColumn, op: CompareOp, value: CompValue, label: string): string {
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw invalid(`"${label}" is a string: compare it with a quoted string`);
    }
    const text = String(value);
    if (op === 'eq' || op === 'ne') {
      const valid = /^[1-9]\d{0,9}$/.test(text) && Number(text) <= MAX_INT;
      if (!valid) return op === 'eq' ? 'FALSE' : 'TRUE';
      return `(${c.expr} ${op === 'eq' ? '=' : '<>'} ${this.bind(Number(text))}::int)`;
    }
    if (op === 'co' || op === 'sw' || op === 'ew') {
      const pattern = `${op === 'sw' ? '' : '%'}${escapeLike(text)}${op === 'ew' ? '' : '%'}`;
      return `(${c.expr}::text LIKE ${this.bind(pattern)})`;
    }
    const sqlOp = { gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    return `(${c.expr}::text COLLATE "C" ${sqlOp} ${this.bind(text)})`;
  }

  private dateTime(c: SqlColumn, op: CompareOp, value: CompValue, label: string): string {
    if (op === 'co' || op === 'sw' || op === 'ew') {
      throw invalid(`"${label}" is a date-time: use eq, ne, gt, ge, lt, le or pr`);
    }
    const date =
      typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) && value.length <= 64
        ? new Date(value)
        : null;
    // Year 0 parses in JavaScript but is out of PostgreSQL's range (there is no year 0 AD).
    if (!date || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1) {
      throw invalid(`"${label}" is a date-time: compare it with a quoted ISO 8601 date-time`);
    }
    const sqlOp = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    // Output carries milliseconds: compare at that precision so a value read back matches.
    return this.defined(
      c,
      `date_trunc('milliseconds', ${c.expr}) ${sqlOp} ${this.bind(date.toISOString())}::timestamptz`,
    );
  }

  /** A comparison as a non-null boolean: FALSE where the column is NULL. */
  private defined(c: SqlColumn, comparison: string): string {
    return c.notNull ? `(${comparison})` : `COALESCE(${comparison}, FALSE)`;
  }
}

/**
 * The SQL condition of a filter over `columns`, its parameters named `f1`, `f2`, ... 400
 * invalidFilter for an unknown attribute or a value of the wrong type.
 */
export function compileFilter(columns: FilterColumns, filter: FilterNode): SqlCondition {
  const compiler = new Compiler(columns);
  const sql = compiler.node(filter, null);
  return { sql, params: compiler.params };
}
