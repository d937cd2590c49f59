import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import { normalizeCell, parseLocation } from './a1-notation.js';
import type { ConnectReportDto, DisconnectReportDto, RefreshReportDto, ReportDto } from './dto/report.dto.js';
import { findPlacement, readTarget, type StoredPlacement } from './placement-match.js';
import { reportsError } from './reports.errors.js';
import { ReportsService } from './reports.service.js';

/**
 * Placements of reports in spreadsheets: connect (an upsert of one spot), disconnect (removes
 * exactly one spot) and refresh. They need only read access to the report and never touch its
 * definition, `version` or `updatedAt`. Each runs in one transaction that first locks the
 * report's row, so parallel calls on one report apply one after another and lose nothing.
 */
@Injectable()
export class PlacementsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly reports: ReportsService,
  ) {}

  async connect(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: ConnectReportDto,
  ): Promise<ReportDto> {
    const spot = connectSpot(dto);
    const access = await this.reports.checkRead(actor, reportId);
    return this.dataSource.transaction(async (m) => {
      const placements = await this.lockPlacements(m, actor, deploymentId, reportId);
      const sheetId = dto.sheetId || null;
      // The same id is the same placement whatever tab it is on now: connect records the new sheet id.
      const byId = dto.placementId
        ? findPlacement(placements, { kind: 'id', placementId: dto.placementId, sheetId: null })
        : null;
      const match =
        byId ??
        findPlacement(placements, {
          kind: 'spot',
          externalWorkbookId: dto.externalWorkbookId,
          sheet: spot.sheet,
          anchor: spot.anchor,
          sheetId,
        });
      const values = [
        dto.externalWorkbookId,
        dto.resultLocation.trim(),
        sheetId,
        spot.sheet,
        spot.anchor,
        spot.end,
        dto.host ?? null,
        dto.workbookName ?? null,
        actor.userId,
      ];
      if (match) {
        await m.query(
          `UPDATE report_placements SET external_workbook_id = $2, result_location = $3,
             sheet_id = COALESCE($4, sheet_id), sheet_name = $5, anchor_cell = $6, end_result_cell = $7,
             host = COALESCE($8, host), workbook_name = COALESCE($9, workbook_name),
             placed_at = now(), placed_by_user_id = $10, placement_id = COALESCE(placement_id, $11)
           WHERE row_id = $1`,
          [match.rowId, ...values, dto.placementId || randomUUID()],
        );
      } else {
        await m.query(
          `INSERT INTO report_placements (account_id, report_id, placement_id, external_workbook_id, result_location,
             sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name, placed_at, placed_by_user_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), $12)`,
          [actor.accountId, reportId, dto.placementId || randomUUID(), ...values],
        );
      }
      return this.reports.read(actor, deploymentId, reportId, access, m);
    });
  }

  /** Removes the one placement the body addresses; a target that matches nothing changes nothing. */
  async disconnect(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: DisconnectReportDto,
  ): Promise<ReportDto> {
    const target = readTarget(dto);
    const access = await this.reports.checkRead(actor, reportId);
    return this.dataSource.transaction(async (m) => {
      const placements = await this.lockPlacements(m, actor, deploymentId, reportId);
      const match = findPlacement(placements, target);
      if (match) await m.query(`DELETE FROM report_placements WHERE row_id = $1`, [match.rowId]);
      return this.reports.read(actor, deploymentId, reportId, access, m);
    });
  }

  /** Records that the caller refreshed the placement the body addresses. */
  async refresh(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: RefreshReportDto,
  ): Promise<ReportDto> {
    const target = readTarget(dto);
    const access = await this.reports.checkRead(actor, reportId);
    return this.dataSource.transaction(async (m) => {
      const placements = await this.lockPlacements(m, actor, deploymentId, reportId);
      const match = findPlacement(placements, target);
      if (match) {
        await m.query(
          `UPDATE report_placements SET refreshed_at = now(), refreshed_by_user_id = $2 WHERE row_id = $1`,
          [match.rowId, actor.userId],
        );
        // Who refreshed it last is not part of the definition: version and updated_at stay.
        await m.query(`UPDATE reports SET refreshed_by = $2 WHERE id = $1`, [reportId, actor.userId]);
      }
      return this.reports.read(actor, deploymentId, reportId, access, m);
    });
  }

  /** Locks the report's row (404 if it is not in this deployment) and reads its placements. */
  private async lockPlacements(
    m: EntityManager,
    actor: Principal,
    deploymentId: number,
    reportId: number,
  ): Promise<StoredPlacement[]> {
    const locked = await queryRows(
      m,
      `SELECT id FROM reports WHERE id = $1 AND deployment_id = $2 AND account_id = $3 FOR NO KEY UPDATE`,
      [reportId, deploymentId, actor.accountId],
    );
    if (!locked[0]) throw coreError('not_found', `Report ${reportId} was not found`);
    return queryRows<StoredPlacement>(
      m,
      `SELECT row_id AS "rowId", placement_id AS "placementId", external_workbook_id AS "externalWorkbookId",
         sheet_id AS "sheetId", sheet_name AS "sheetName", anchor_cell AS "anchorCell",
         result_location AS "resultLocation", placed_at AS "placedAt"
       FROM report_placements WHERE report_id = $1 ORDER BY row_id`,
      [reportId],
    );
  }
}

/**
 * The spot a connect names. `resultLocation` must be A1 notation; the sheet comes from
 * `sheetName` or the location, the anchor from `anchorCell` or the location, and where both
 * are sent they must agree. A placement must name its sheet: it could never be addressed by
 * name otherwise.
 */
function connectSpot(dto: ConnectReportDto): { sheet: string; anchor: string; end: string | null } {
  const loc = parseLocation(dto.resultLocation);
  if (!loc) {
    throw reportsError(
      'invalid_location',
      "resultLocation must be A1 notation: Sheet!A1, 'Sheet name'!A1 or Sheet!A1:D20",
    );
  }
  const sheet = dto.sheetName || loc.sheet;
  if (!sheet) throw reportsError('invalid_location', 'Name the sheet in resultLocation or in sheetName');
  if (dto.sheetName && loc.sheet !== null && loc.sheet !== dto.sheetName) {
    throw reportsError('location_mismatch', 'sheetName and resultLocation name different sheets');
  }
  let anchor = loc.anchor;
  if (dto.anchorCell) {
    const cell = normalizeCell(dto.anchorCell);
    if (!cell)
      throw reportsError('invalid_location', 'anchorCell must be one cell in A1 notation, such as B3');
    if (cell !== loc.anchor) {
      throw reportsError('location_mismatch', 'anchorCell and the first cell of resultLocation differ');
    }
    anchor = cell;
  }
  let end = loc.end;
  if (dto.endResultCell) {
    end = normalizeCell(dto.endResultCell);
    if (!end) throw reportsError('invalid_location', 'endResultCell must be one cell in A1 notation');
  }
  return { sheet, anchor, end };
}
