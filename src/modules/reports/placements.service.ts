import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import type { ConnectReportDto, PlacementTargetDto, ReportDto } from './dto/report.dto.js';
import { findPlacement, readTarget, type StoredPlacement } from './placement-match.js';
import { connectMatch, connectSpot, connectValues } from './placement-writes.js';
import { PlacementsRepository } from './placements.repository.js';
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
    private readonly db: Database,
    private readonly placements: PlacementsRepository,
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
    return this.write(actor, deploymentId, reportId, async (placements) => {
      const match = connectMatch(placements, dto, spot);
      const values = connectValues(dto, spot, actor.userId);
      const newId = dto.placementId || randomUUID();
      if (match) await this.placements.update(match.rowId, values, newId);
      else await this.placements.insert(actor.accountId, reportId, newId, values);
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
    return this.write(actor, deploymentId, reportId, async (placements) => {
      const match = findPlacement(placements, target);
      if (match) await this.placements.delete(match.rowId);
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
    return this.write(actor, deploymentId, reportId, async (placements) => {
      const match = findPlacement(placements, target);
      if (match) await this.placements.refresh(reportId, match.rowId, actor.userId);
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
    change: (placements: StoredPlacement[]) => Promise<void>,
  ): Promise<ReportDto> {
    const access = await this.reports.checkRead(actor, reportId);
    return this.db.transaction(async () => {
      if (!(await this.placements.lockReport(actor.accountId, deploymentId, reportId))) {
        throw notFound('Report', reportId);
      }
      await change(await this.placements.ofReport(reportId));
      return this.reports.read(actor, deploymentId, reportId, access);
    });
  }
}
