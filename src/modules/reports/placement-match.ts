import { normalizeCell, parseLocation } from './a1-notation.js';

/** The stored fields of a placement that addressing looks at. */
export interface StoredPlacement {
  rowId: string;
  placementId: string | null;
  externalWorkbookId: string;
  sheetId: string | null;
  sheetName: string | null;
  anchorCell: string | null;
  resultLocation: string;
  placedAt: Date | null;
}

/** What a request addresses, once its fields are read. */
export type PlacementTarget =
  | { kind: 'id'; placementId: string; sheetId: string | null }
  | { kind: 'spot'; externalWorkbookId: string; sheet: string; anchor: string; sheetId: string | null }
  | { kind: 'nothing' };

export interface TargetFields {
  placementId?: string | null;
  externalWorkbookId?: string | null;
  sheetName?: string | null;
  anchorCell?: string | null;
  resultLocation?: string | null;
  sheetId?: string | null;
}

const present = (v: string | null | undefined): v is string => typeof v === 'string' && v !== '';

/**
 * Reads the address of a disconnect or refresh. By `placementId`; else by spreadsheet plus
 * sheet name plus anchor, where `resultLocation` may supply either. An address that lacks the
 * sheet name or the anchor (a `sheetId` alone included), or whose parts disagree, addresses
 * nothing.
 */
export function readTarget(fields: TargetFields): PlacementTarget {
  const sheetId = present(fields.sheetId) ? fields.sheetId : null;
  if (present(fields.placementId)) return { kind: 'id', placementId: fields.placementId, sheetId };
  if (!present(fields.externalWorkbookId)) return { kind: 'nothing' };
  let sheet = present(fields.sheetName) ? fields.sheetName : null;
  let anchor: string | null = null;
  if (present(fields.anchorCell)) {
    anchor = normalizeCell(fields.anchorCell);
    if (!anchor) return { kind: 'nothing' };
  }
  if (present(fields.resultLocation)) {
    const loc = parseLocation(fields.resultLocation);
    if (!loc) return { kind: 'nothing' };
    if (loc.sheet !== null) {
      if (sheet !== null && sheet !== loc.sheet) return { kind: 'nothing' };
      sheet = loc.sheet;
    }
    if (anchor !== null && anchor !== loc.anchor) return { kind: 'nothing' };
    anchor = loc.anchor;
  }
  if (sheet === null || anchor === null) return { kind: 'nothing' };
  return { kind: 'spot', externalWorkbookId: fields.externalWorkbookId, sheet, anchor, sheetId };
}

/** The sheet and anchor of a stored placement; older rows may hold them only in the location. */
export function spotOf(p: StoredPlacement): { sheet: string | null; anchor: string | null } {
  const loc = parseLocation(p.resultLocation);
  return {
    sheet: p.sheetName ?? loc?.sheet ?? null,
    anchor: (p.anchorCell !== null ? normalizeCell(p.anchorCell) : null) ?? loc?.anchor ?? null,
  };
}

/** A stored sheet id narrows: a placement recorded under another id is a different tab. */
function sheetIdAgrees(p: StoredPlacement, sheetId: string | null): boolean {
  return sheetId === null || p.sheetId === null || p.sheetId === sheetId;
}

function placedLater(a: StoredPlacement, b: StoredPlacement): boolean {
  const ta = a.placedAt?.getTime() ?? -Infinity;
  const tb = b.placedAt?.getTime() ?? -Infinity;
  return ta !== tb ? ta > tb : BigInt(a.rowId) > BigInt(b.rowId);
}

/** The most recently placed of `placements`, or null. */
export function latest<T extends StoredPlacement>(placements: readonly T[]): T | null {
  return placements.reduce<T | null>((best, p) => (best === null || placedLater(p, best) ? p : best), null);
}

/** The one placement a target addresses (the most recently placed if several agree), or null. */
export function findPlacement<T extends StoredPlacement>(
  placements: readonly T[],
  target: PlacementTarget,
): T | null {
  if (target.kind === 'nothing') return null;
  if (target.kind === 'id') {
    return latest(
      placements.filter((p) => p.placementId === target.placementId && sheetIdAgrees(p, target.sheetId)),
    );
  }
  return latest(
    placements.filter((p) => {
      if (p.externalWorkbookId !== target.externalWorkbookId || !sheetIdAgrees(p, target.sheetId))
        return false;
      const spot = spotOf(p);
      return spot.sheet === target.sheet && spot.anchor === target.anchor;
    }),
  );
}
