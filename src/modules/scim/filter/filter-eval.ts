import { scimError, type ScimErrorCode } from '../scim.errors.js';
import { subAttr, type AttributeDef } from '../scim.schema.js';
import type { CompValue, FilterNode } from './filter-parser.js';

/**
 * Evaluates the filter of a value path (`emails[type eq "work"]`) against one value of a
 * multi-valued complex attribute held in memory, as PATCH needs. Attribute names inside the
 * brackets are sub-attributes of `parent`.
 */
export function matchesValue(
  filter: FilterNode,
  value: Record<string, unknown>,
  parent: AttributeDef,
  code: ScimErrorCode = 'invalidFilter',
): boolean {
  switch (filter.kind) {
    case 'and':
      return filter.items.every((f) => matchesValue(f, value, parent, code));
    case 'or':
      return filter.items.some((f) => matchesValue(f, value, parent, code));
    case 'not':
      return !matchesValue(filter.item, value, parent, code);
    case 'valuePath':
      throw scimError(code, 'Value filters cannot be nested');
    case 'present':
    case 'compare': {
      const def =
        filter.path.uri === null && filter.path.sub === null ? subAttr(parent, filter.path.name) : undefined;
      if (!def) throw scimError(code, `"${parent.name}" has no sub-attribute "${filter.path.name}"`);
      const actual = value[def.name];
      if (filter.kind === 'present') return actual !== undefined && actual !== null && actual !== '';
      return compare(def, actual, filter.op, filter.value, code);
    }
  }
}

/** `true`/`false`, or the strings Microsoft Entra ID sends for them ("True", "False", any case). */
export function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  return undefined;
}

function compare(
  def: AttributeDef,
  actual: unknown,
  op: string,
  expected: CompValue,
  code: ScimErrorCode,
): boolean {
  const label = def.name;
  if (def.type === 'boolean') {
    if (typeof expected !== 'boolean' || (op !== 'eq' && op !== 'ne')) {
      throw scimError(code, `"${label}" is a boolean: only eq and ne with true or false apply`);
    }
    const equal = asBoolean(actual) === expected;
    return op === 'eq' ? equal : !equal;
  }
  if (expected === null) {
    const unassigned = actual === undefined || actual === null || actual === '';
    if (op === 'eq') return unassigned;
    if (op === 'ne') return !unassigned;
    throw scimError(code, `"${label}" ${op} null: only eq and ne compare with null`);
  }
  if (typeof expected !== 'string' && !(typeof expected === 'number' && def.name === 'value')) {
    throw scimError(code, `"${label}" is a string: compare it with a quoted string`);
  }
  const norm = (s: string) => (def.caseExact ? s : s.toLowerCase());
  const right = norm(String(expected));
  if (typeof actual !== 'string') return op === 'ne';
  const left = norm(actual);
  switch (op) {
    case 'eq':
      return left === right;
    case 'ne':
      return left !== right;
    case 'co':
      return left.includes(right);
    case 'sw':
      return left.startsWith(right);
    case 'ew':
      return left.endsWith(right);
    case 'gt':
      return left > right;
    case 'ge':
      return left >= right;
    case 'lt':
      return left < right;
    default:
      return left <= right;
  }
}

/**
 * The sub-attribute values a filter made only of `eq` comparisons joined by `and` pins down
 * (`type eq "work"` gives `{type: "work"}`), or null for any other filter. PATCH `add` uses it to
 * create the value a path such as `emails[type eq "work"].value` addresses when none exists yet.
 */
export function pinnedValues(filter: FilterNode, parent: AttributeDef): Record<string, unknown> | null {
  const items = filter.kind === 'and' ? filter.items : [filter];
  const out: Record<string, unknown> = {};
  for (const item of items) {
    if (item.kind !== 'compare' || item.op !== 'eq' || item.path.uri !== null || item.path.sub !== null)
      return null;
    const def = subAttr(parent, item.path.name);
    if (!def || item.value === null) return null;
    out[def.name] = item.value;
  }
  return out;
}
