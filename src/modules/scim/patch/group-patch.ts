import { parsePath, type FilterNode } from '../filter/filter-parser.js';
import { memberValues } from '../scim-groups.mapper.js';
import { scimError } from '../scim.errors.js';
import { GROUP_SCHEMA, resolveAttr } from '../scim.schema.js';
import type { PatchOperation } from './patch-request.js';

/** A change of a group's membership, applied as a set operation in SQL. */
export type MemberStep =
  | { kind: 'add'; values: string[] }
  | { kind: 'remove'; values: string[] }
  | { kind: 'removeAll' }
  | { kind: 'replace'; values: string[] }
  | { kind: 'removeWhere'; filter: FilterNode };

export interface GroupPatchPlan {
  /** Operations on the other attributes, for the in-memory engine. */
  attributeOps: PatchOperation[];
  memberSteps: MemberStep[];
}

/** Whether a key of a path-less value names `members` (`members`, `members.value`, `members[...]`). */
function membersKey(key: string): { whole: boolean } | null {
  let path;
  try {
    path = parsePath(key);
  } catch {
    return null;
  }
  const resolved = resolveAttr(GROUP_SCHEMA, path.attr);
  if (resolved?.attr.name !== 'members') return null;
  return { whole: resolved.sub === null && path.filter === null };
}

function whole(op: PatchOperation['op'], value: unknown, hasValue: boolean, where: string): MemberStep {
  if (op === 'remove') {
    // With a value (Entra), just those members, and none for an empty list; without, all.
    return hasValue && value !== null
      ? { kind: 'remove', values: memberValues(value, where) }
      : { kind: 'removeAll' };
  }
  if (op === 'replace')
    return value === null ? { kind: 'removeAll' } : { kind: 'replace', values: memberValues(value, where) };
  return { kind: 'add', values: memberValues(value, where) };
}

/**
 * Splits a group PATCH: operations on `members` become set operations (add these users, remove
 * those, remove the ones a filter selects, replace all), so adding one member to a large group
 * never rewrites its membership; the rest go to the in-memory engine. Order is kept within each.
 */
export function planGroupPatch(ops: readonly PatchOperation[]): GroupPatchPlan {
  const attributeOps: PatchOperation[] = [];
  const memberSteps: MemberStep[] = [];
  for (const op of ops) {
    if (op.path === null) {
      const rest: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(op.value as Record<string, unknown>)) {
        const members = key.toLowerCase() === 'schemas' ? null : membersKey(key);
        // Only whole `members` values change the membership; sub-attribute keys are ignored.
        if (!members) rest[key] = value;
        else if (members.whole) memberSteps.push(whole(op.op, value, true, key));
      }
      if (Object.keys(rest).length > 0) attributeOps.push({ ...op, value: rest });
      continue;
    }
    const resolved = resolveAttr(GROUP_SCHEMA, op.path.attr);
    if (resolved?.attr.name !== 'members') {
      attributeOps.push(op);
      continue;
    }
    if (resolved.sub !== null || op.path.sub !== null) {
      throw scimError('mutability', `${op.pathText}: a member cannot be changed, only added or removed`);
    }
    if (op.path.filter) {
      if (op.op !== 'remove') {
        throw scimError('invalidPath', `${op.pathText}: a filter on members can only be used to remove them`);
      }
      memberSteps.push({ kind: 'removeWhere', filter: op.path.filter });
      continue;
    }
    memberSteps.push(whole(op.op, op.value, 'value' in op, 'value'));
  }
  return { attributeOps, memberSteps };
}
