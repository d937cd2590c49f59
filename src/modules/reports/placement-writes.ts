import { normalizeCell, parseLocation } from './a1-notation.js';
import { findPlacement, type StoredPlacement } from './placement-match.js';

/**
 * What connect, disconnect and refresh decide, as plain functions with no framework in them, so
 * the service and the bench baseline apply the very same rules (the SQL is in
 * `placement.sql.ts`).
 */

export interface ConnectFields {
  externalWorkbookId: string;
  resultLocation: string;
  endResultCell?: string | null;
  placementId?: string | null;
  sheetId?: string | null;
  sheetName?: string | null;
  anchorCell?: string | null;
  workbookName?: string | null;
  host?: string | null;
}

export interface Spot {
  sheet: string;
  anchor: string;
  end: string | null;
}

export type SpotResult = Spot | { error: 'invalid_location' | 'location_mismatch'; message: string };

/**
 * The spot a connect names. `resultLocation` must be A1 notation; the sheet comes from
 * `sheetName` or the location, the anchor from `anchorCell` or the location, and where both
 * are sent they must agree. A placement must name its sheet: it could never be addressed by
 * name otherwise.
 */
export function connectSpot(dto: ConnectFields): SpotResult {
  const invalid = (message: string) => ({ error: 'invalid_location' as const, message });
  const mismatch = (message: string) => ({ error: 'location_mismatch' as const, message });
  const loc = parseLocation(dto.resultLocation);
  if (!loc) return invalid("resultLocation must be A1 notation: Sheet!A1, 'Sheet name'!A1 or Sheet!A1:D20");
  const sheet = dto.sheetName || loc.sheet;
  if (!sheet) return invalid('Name the sheet in resultLocation or in sheetName');
  if (dto.sheetName && loc.sheet !== null && loc.sheet !== dto.sheetName) {
    return mismatch('sheetName and resultLocation name different sheets');
  }
  let anchor = loc.anchor;
  if (dto.anchorCell) {
    const cell = normalizeCell(dto.anchorCell);
    if (!cell) return invalid('anchorCell must be one cell in A1 notation, such as B3');
    if (cell !== loc.anchor) return mismatch('anchorCell and the first cell of resultLocation differ');
    anchor = cell;
  }
  let end = loc.end;
  if (dto.endResultCell) {
    end = normalizeCell(dto.endResultCell);
    if (!end) return invalid('endResultCell must be one cell in A1 notation');
  }
  return { sheet, anchor, end };
}

/**
 * The placement a connect updates: the same `placementId` whatever tab it is on now (connect
 * records the new sheet id), else the same spreadsheet, sheet and anchor. Null: a new one.
 */
export function connectMatch<T extends StoredPlacement>(
  placements: readonly T[],
  dto: ConnectFields,
  spot: Spot,
): T | null {
  const byId = dto.placementId
    ? findPlacement(placements, { kind: 'id', placementId: dto.placementId, sheetId: null })
    : null;
  return (
    byId ??
    findPlacement(placements, {
      kind: 'spot',
      externalWorkbookId: dto.externalWorkbookId,
      sheet: spot.sheet,
      anchor: spot.anchor,
      sheetId: dto.sheetId || null,
    })
  );
}

/** The fields a connect writes to the placement it updates or inserts. */
export interface ConnectValues {
  externalWorkbookId: string;
  resultLocation: string;
  sheetId: string | null;
  sheetName: string;
  anchorCell: string;
  endResultCell: string | null;
  host: string | null;
  workbookName: string | null;
  userId: number;
}

/** What a connect writes, from the request and the spot it names. */
export function connectValues(dto: ConnectFields, spot: Spot, userId: number): ConnectValues {
  return {
    externalWorkbookId: dto.externalWorkbookId,
    resultLocation: dto.resultLocation.trim(),
    sheetId: dto.sheetId || null,
    sheetName: spot.sheet,
    anchorCell: spot.anchor,
    endResultCell: spot.end,
    host: dto.host ?? null,
    workbookName: dto.workbookName ?? null,
    userId,
  };
}
