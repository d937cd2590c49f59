import type { ImpactReason } from '../data-model/content-impact.port.js';
import type { ModelSummary } from '../data-model/model-summary.js';

/** How a member of the base model breaks on the head model. */
export interface MemberBreak {
  reason: ImpactReason;
  renamedTo?: string;
}

/** A member as a query can use it: its kind and type, and whether the API lets it be queried. */
export interface Usable {
  kind: string;
  type: string | null;
  /** Shown by /meta: the member and its cube or view both public. A hidden member cannot be queried. */
  visible: boolean;
}

function usableMembers(summary: ModelSummary): Map<string, Usable> {
  const out = new Map<string, Usable>();
  for (const cube of summary.cubes ?? []) {
    for (const m of cube.members ?? []) {
      out.set(`${cube.name}.${m.name}`, {
        kind: m.kind,
        type: m.type ?? null,
        visible: cube.public !== false && m.public !== false,
      });
    }
  }
  return out;
}

/**
 * What each member of `base` that content can use (visible there) becomes on `head`: absent and
 * renamed (`renames` maps its old path to its new one), absent (removed), of another kind or
 * type, or hidden. Members that still work are left out. Members hidden on `base` are not usable
 * by content, so nothing breaks through them.
 */
export function memberBreaks(
  base: ModelSummary,
  head: ModelSummary,
  renames: ReadonlyMap<string, string>,
): { breaks: Map<string, MemberBreak>; usable: Map<string, Usable> } {
  const before = usableMembers(base);
  const after = usableMembers(head);
  const breaks = new Map<string, MemberBreak>();
  for (const [path, was] of before) {
    if (!was.visible) continue;
    const now = after.get(path);
    if (!now) {
      const to = renames.get(path);
      breaks.set(
        path,
        to !== undefined ? { reason: 'member_renamed', renamedTo: to } : { reason: 'member_removed' },
      );
    } else if (now.kind !== was.kind || now.type !== was.type) {
      breaks.set(path, { reason: 'type_changed' });
    } else if (!now.visible) {
      breaks.set(path, { reason: 'member_hidden' });
    }
  }
  return { breaks, usable: before };
}

/**
 * The member a name stands for: itself when the base model has it, else for `Cube.member.grain`
 * (a time dimension with its granularity) `Cube.member` when base has that; null when neither.
 */
export function memberPath(name: string, usable: ReadonlyMap<string, Usable>): string | null {
  if (usable.has(name)) return name;
  const parts = name.split('.');
  if (parts.length === 3) {
    const member = `${parts[0]}.${parts[1]}`;
    if (usable.has(member)) return member;
  }
  return null;
}
