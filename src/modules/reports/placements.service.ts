import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import type { ConnectReportDto, PlacementTargetDto, ReportDto } from './dto/report.dto.js';
import { findPlacement, readTarget, type StoredPlacement } from './placement-match.js';
import {
  connectMatch,
  connectSpot,
  connectValues,
  DELETE_PLACEMENT_SQL,
  INSERT_PLACEMENT_SQL,
  LOCK_REPORT_SQL,
  PLACEMENTS_SQL,
  REFRESH_PLACEMENT_SQL,
  REFRESHED_BY_SQL,
  UPDATE_PLACEMENT_SQL,
} from './placement-writes.js';
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
    if ('error' in spot) throw reportsError(spot.error, spot.message);
    return this.write(actor, deploymentId, reportId, async (m, placements) => {
      const match = connectMatch(placements, dto, spot);
      const values = connectValues(dto, spot, actor.userId);
      const newId = dto.placementId || randomUUID();
      if (match) await m.query(UPDATE_PLACEMENT_SQL, [match.rowId, ...values, newId]);
      else await m.query(INSERT_PLACEMENT_SQL, [actor.accountId, reportId, newId, ...values]);
    });
  }

  /** Removes the one placement the body addresses; a target that matches nothing changes nothing. */
  disconnect(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: PlacementTargetDto,
  ): Promise<ReportDto> {
    const target = readTarget(dto);
    return this.write(actor, deploymentId, reportId, async (m, placements) => {
      const match = findPlacement(placements, target);
      if (match) await m.query(DELETE_PLACEMENT_SQL, [match.rowId]);
    });
  }

  /** Records that the caller refreshed the placement the body addresses. */
  refresh(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    dto: PlacementTargetDto,
  ): Promise<ReportDto> {
    const target = readTarget(dto);
    return this.write(actor, deploymentId, reportId, async (m, placements) => {
      const match = findPlacement(placements, target);
      if (!match) return;
      await m.query(REFRESH_PLACEMENT_SQL, [match.rowId, actor.userId]);
      await m.query(REFRESHED_BY_SQL, [reportId, actor.userId]);
    });
  }

  /**
   * Checks read access, then in one transaction locks the report's row (404 if it is not in this
   * deployment), reads its placements, applies `change` and answers the report as it now is.
   */
  private async write(
    actor: Principal,
    deploymentId: number,
    reportId: number,
    change: (m: EntityManager, placements: StoredPlacement[]) => Promise<void>,
  ): Promise<ReportDto> {
    const access = await this.reports.checkRead(actor, reportId);
    return this.dataSource.transaction(async (m) => {
      const locked = await queryRows(m, LOCK_REPORT_SQL, [reportId, deploymentId, actor.accountId]);
      if (!locked[0]) throw reportsError('report_not_found', `Report ${reportId} was not found`);
      await change(m, await queryRows<StoredPlacement>(m, PLACEMENTS_SQL, [reportId]));
      return this.reports.read(actor, deploymentId, reportId, access, m);
    });
  }
}
