import { normalizeCell, parseLocation } from './a1-notation.js';
import { findPlacement, type StoredPlacement } from './placement-match.js';

/**
 * What connect, disconnect and refresh write, as plain functions and SQL with no framework in
 * them, so the service and the bench baseline run the very same statements.
 */

/** Locks the report's row: placement writes on one report apply one after another. */
export const LOCK_REPORT_SQL = `SELECT id FROM reports WHERE id = $1 AND deployment_id = $2 AND account_id = $3
  FOR NO KEY UPDATE`;

export const PLACEMENTS_SQL = `SELECT row_id AS "rowId", placement_id AS "placementId",
  external_workbook_id AS "externalWorkbookId", sheet_id AS "sheetId", sheet_name AS "sheetName",
  anchor_cell AS "anchorCell", result_location AS "resultLocation", placed_at AS "placedAt"
FROM report_placements WHERE report_id = $1 ORDER BY row_id`;

/** `$1` row; `$2`…`$10` the {@link connectValues}; `$11` an id for a placement that had none. */
export const UPDATE_PLACEMENT_SQL = `UPDATE report_placements SET external_workbook_id = $2, result_location = $3,
  sheet_id = COALESCE($4, sheet_id), sheet_name = $5, anchor_cell = $6, end_result_cell = $7,
  host = COALESCE($8, host), workbook_name = COALESCE($9, workbook_name),
  placed_at = now(), placed_by_user_id = $10, placement_id = COALESCE(placement_id, $11)
WHERE row_id = $1`;

/** `$1` account, `$2` report, `$3` placement id; `$4`…`$12` the {@link connectValues}. */
export const INSERT_PLACEMENT_SQL = `INSERT INTO report_placements (account_id, report_id, placement_id,
  external_workbook_id, result_location, sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name,
  placed_at, placed_by_user_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), $12)`;

export const DELETE_PLACEMENT_SQL = `DELETE FROM report_placements WHERE row_id = $1`;

export const REFRESH_PLACEMENT_SQL = `UPDATE report_placements SET refreshed_at = now(), refreshed_by_user_id = $2
WHERE row_id = $1`;

/** Who refreshed it last is not part of the definition: version and updated_at stay. */
export const REFRESHED_BY_SQL = `UPDATE reports SET refreshed_by = $2 WHERE id = $1`;

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

/** The values `$2`…`$10` of an update, or `$4`…`$12` of an insert. */
export function connectValues(dto: ConnectFields, spot: Spot, userId: number): unknown[] {
  return [
    dto.externalWorkbookId,
    dto.resultLocation.trim(),
    dto.sheetId || null,
    spot.sheet,
    spot.anchor,
    spot.end,
    dto.host ?? null,
    dto.workbookName ?? null,
    userId,
  ];
}
