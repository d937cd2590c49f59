/**
 * The statements of placement writes, as text with no framework in it: `PlacementsRepository`
 * runs them, and so does the bench baseline (with `compileNamed`).
 */

/** Locks the report's row: placement writes on one report apply one after another. */
export const LOCK_REPORT_SQL = `SELECT id FROM reports
  WHERE id = :reportId AND deployment_id = :deploymentId AND account_id = :accountId FOR NO KEY UPDATE`;

export const PLACEMENTS_SQL = `SELECT row_id AS "rowId", placement_id AS "placementId",
  external_workbook_id AS "externalWorkbookId", sheet_id AS "sheetId", sheet_name AS "sheetName",
  anchor_cell AS "anchorCell", result_location AS "resultLocation", placed_at AS "placedAt"
FROM report_placements WHERE report_id = :reportId ORDER BY row_id`;

/** `:rowId`, the `ConnectValues` (placement-writes.ts) and `:newId`, an id for a placement that had none. */
export const UPDATE_PLACEMENT_SQL = `UPDATE report_placements SET external_workbook_id = :externalWorkbookId,
  result_location = :resultLocation, sheet_id = COALESCE(:sheetId, sheet_id), sheet_name = :sheetName,
  anchor_cell = :anchorCell, end_result_cell = :endResultCell, host = COALESCE(:host, host),
  workbook_name = COALESCE(:workbookName, workbook_name), placed_at = now(), placed_by_user_id = :userId,
  placement_id = COALESCE(placement_id, :newId)
WHERE row_id = :rowId`;

/** `:accountId`, `:reportId`, `:placementId` and the `ConnectValues` (placement-writes.ts). */
export const INSERT_PLACEMENT_SQL = `INSERT INTO report_placements (account_id, report_id, placement_id,
  external_workbook_id, result_location, sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name,
  placed_at, placed_by_user_id)
VALUES (:accountId, :reportId, :placementId, :externalWorkbookId, :resultLocation, :sheetId, :sheetName, :anchorCell,
  :endResultCell, :host, :workbookName, now(), :userId)`;

export const DELETE_PLACEMENT_SQL = `DELETE FROM report_placements WHERE row_id = :rowId`;

export const REFRESH_PLACEMENT_SQL = `UPDATE report_placements SET refreshed_at = now(), refreshed_by_user_id = :userId
WHERE row_id = :rowId`;

/** Who refreshed it last is not part of the definition: version and updated_at stay. */
export const REFRESHED_BY_SQL = `UPDATE reports SET refreshed_by = :userId WHERE id = :reportId`;
