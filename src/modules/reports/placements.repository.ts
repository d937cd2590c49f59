import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { StoredPlacement } from './placement-match.js';
import type { ConnectValues } from './placement-writes.js';
import {
  DELETE_PLACEMENT_SQL,
  INSERT_PLACEMENT_SQL,
  LOCK_REPORT_SQL,
  PLACEMENTS_SQL,
  REFRESH_PLACEMENT_SQL,
  REFRESHED_BY_SQL,
  UPDATE_PLACEMENT_SQL,
} from './placement.sql.js';

/**
 * All SQL on `report_placements`, and the two statements on `reports` that placement writes
 * make (the lock, who refreshed last); the text is in `placement.sql.ts`. Every statement is
 * prepared: connect and disconnect are hot paths of the spreadsheet add-ins.
 */
@Injectable()
export class PlacementsRepository {
  constructor(private readonly db: Database) {}

  /** Locks the report's row; false when it is not in the deployment. */
  async lockReport(accountId: number, deploymentId: number, reportId: number): Promise<boolean> {
    const rows = await this.db.query(
      LOCK_REPORT_SQL,
      { reportId, deploymentId, accountId },
      { prepare: true },
    );
    return rows.length > 0;
  }

  ofReport(reportId: number): Promise<StoredPlacement[]> {
    return this.db.query<StoredPlacement>(PLACEMENTS_SQL, { reportId }, { prepare: true });
  }

  async update(rowId: string, values: ConnectValues, newId: string): Promise<void> {
    await this.db.query(UPDATE_PLACEMENT_SQL, { ...values, rowId, newId }, { prepare: true });
  }

  async insert(
    accountId: number,
    reportId: number,
    placementId: string,
    values: ConnectValues,
  ): Promise<void> {
    await this.db.query(
      INSERT_PLACEMENT_SQL,
      { ...values, accountId, reportId, placementId },
      { prepare: true },
    );
  }

  async delete(rowId: string): Promise<void> {
    await this.db.query(DELETE_PLACEMENT_SQL, { rowId }, { prepare: true });
  }

  /** Records a refresh of the placement and, on the report, who refreshed it last. */
  async refresh(reportId: number, rowId: string, userId: number): Promise<void> {
    await this.db.query(REFRESH_PLACEMENT_SQL, { rowId, userId }, { prepare: true });
    await this.db.query(REFRESHED_BY_SQL, { reportId, userId }, { prepare: true });
  }
}
