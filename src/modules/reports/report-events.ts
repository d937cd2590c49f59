import type { DomainEvent } from '../../core/events/domain-events.js';
import { legacyPublicId, toReport, type ReportRow } from './report.mapper.js';

/*
 * The events the reports module publishes (docs/webhooks.md, Event types): the report as its GET
 * shows it to an account admin, or for a deletion what identifies it. Placements (the spreadsheet
 * add-ins' connect, disconnect and refresh) and reads publish nothing.
 */

/** What a receiver needs to find a deleted report. */
export interface DeletedReport {
  id: number;
  publicId: string | null;
  name: string;
  folderId: number | null;
  workbookId: number | null;
  deploymentId: number;
}

export const reportEvent = (
  accountId: number,
  change: 'created' | 'changed',
  row: ReportRow,
): DomainEvent => ({
  accountId,
  type: change === 'created' ? 'report.created' : 'report.changed',
  resource: { type: 'report', id: row.id },
  data: { ...toReport(row, { canEdit: true, canManage: true }) },
});

/** A deleted report; its `publicId` as the API showed it (a report made before stable ids: its synthesized one). */
export const reportDeleted = (accountId: number, report: DeletedReport): DomainEvent => ({
  accountId,
  type: 'report.deleted',
  resource: { type: 'report', id: report.id },
  data: { ...report, publicId: report.publicId ?? legacyPublicId(report.id) },
});
