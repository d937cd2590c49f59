import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';

/**
 * All SQL writing `report_snapshots`: the reports of a workbook as a publish of its dashboard
 * takes them, and their copy with a copied workbook. Reached by the workspace through the
 * snapshot source `ReportsInWorkspace` registers (`WorkspaceContent.snapshots()`).
 */
@Injectable()
export class ReportSnapshotsRepository {
  constructor(private readonly db: Database) {}

  /** Replaces the snapshots of the dashboard with the reports of its workbook as they are now. */
  async replace(at: { accountId: number; dashboardId: number; workbookId: number }): Promise<void> {
    await this.db.query(`DELETE FROM report_snapshots WHERE dashboard_id = :dashboardId`, {
      dashboardId: at.dashboardId,
    });
    await this.db.query(
      `INSERT INTO report_snapshots (account_id, dashboard_id, report_id, version_number, name, title,
         description, sql_query, json_query, python_code, meta)
       SELECT :accountId, :dashboardId, r.id, r.version, r.name, r.title, r.description, r.sql_query,
         r.json_query, r.python_code, r.meta
       FROM reports r WHERE r.workbook_id = :workbookId ORDER BY r.id`,
      { ...at },
    );
  }

  /**
   * Copies the snapshots of dashboard `fromId` to dashboard `toId` (a copied workbook's), each
   * re-pointed at the copy of its report (`reportIds`: original id to copy's id); snapshots of
   * reports without a copy are left out.
   */
  async copy(fromId: number, toId: number, reportIds: Map<number, number>): Promise<void> {
    if (reportIds.size === 0) return;
    await this.db.query(
      `INSERT INTO report_snapshots (account_id, dashboard_id, report_id, version_number, name, title,
         description, sql_query, json_query, python_code, meta)
       SELECT s.account_id, :toId, m.new_id, s.version_number, s.name, s.title, s.description, s.sql_query,
         s.json_query, s.python_code, s.meta
       FROM report_snapshots s JOIN unnest(:oldIds::int[], :newIds::int[]) AS m(old_id, new_id) ON m.old_id = s.report_id
       WHERE s.dashboard_id = :fromId ORDER BY s.id`,
      { fromId, toId, oldIds: [...reportIds.keys()], newIds: [...reportIds.values()] },
    );
  }
}
