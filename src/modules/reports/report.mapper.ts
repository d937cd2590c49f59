import { randomInt } from 'node:crypto';
import type { ReportDto, ReportPlacementDto, RoleWithAccessDto } from './dto/report.dto.js';
import type { ResourceOwner } from '../users/users.fragments.js';
import type { FolderPathEntry } from '../workspace/workspace.fragments.js';

/** A row of {@link reportSelectSql}. */
export interface ReportRow {
  id: number;
  publicId: string | null;
  deploymentId: number;
  userId: number;
  user: ResourceOwner;
  refreshedByUser: ResourceOwner | null;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  createdBy: number;
  description: string | null;
  title: string | null;
  jsonQuery: string | null;
  sqlQuery: string | null;
  pythonCode: string | null;
  meta: Record<string, unknown> | null;
  pivotItems: ReportDto['pivotItems'];
  refreshedBy: number | null;
  source: string | null;
  version: number;
  workbookId: number | null;
  folderId: number | null;
  folderPath: FolderPathEntry[];
  placements: ReportPlacementDto[] | null;
  rolesWithAccess: RoleWithAccessDto[] | null;
}

/** The shape of the ids shown for reports made before stable ids: `R` and the id, 12 characters. */
const LEGACY_PUBLIC_ID = /^R[0-9]{11}$/;

/** Whether `publicId` has the reserved shape, whichever report (if any) it would stand for. */
export const isReservedPublicId = (publicId: string): boolean => LEGACY_PUBLIC_ID.test(publicId);

export const legacyPublicId = (id: number): string => `R${String(id).padStart(11, '0')}`;

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh public id: 12 letters or digits, uniform, from the CSPRNG (a copied report's). */
export function randomReportPublicId(): string {
  let out = '';
  for (let i = 0; i < 12; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** The report id a synthesized public id stands for, or null when `publicId` is not one. */
export function legacyReportId(publicId: string): number | null {
  if (!LEGACY_PUBLIC_ID.test(publicId)) return null;
  const id = Number(publicId.slice(1));
  return id >= 1 && id <= 2_147_483_647 ? id : null;
}

/** The most recently placed placement: the latest `placedAt`, then the latest recorded. */
function mostRecent(placements: readonly ReportPlacementDto[]): ReportPlacementDto | null {
  let best: ReportPlacementDto | null = null;
  let bestAt = -Infinity;
  for (const p of placements) {
    const at = p.placedAt ? Date.parse(p.placedAt) : -Infinity;
    if (best === null || at >= bestAt) {
      best = p;
      bestAt = at;
    }
  }
  return best;
}

export interface ReportAccess {
  canEdit: boolean;
  canManage: boolean;
}

export function toReport(row: ReportRow, access: ReportAccess): ReportDto {
  const placements = row.placements ?? [];
  const last = mostRecent(placements);
  return {
    id: row.id,
    publicId: row.publicId ?? legacyPublicId(row.id),
    deploymentId: row.deploymentId,
    userId: row.userId,
    user: row.user,
    refreshedByUser: row.refreshedByUser ?? row.user,
    name: row.name,
    type: 'REPORT',
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    canEdit: access.canEdit,
    canManage: access.canManage,
    createdBy: row.createdBy,
    description: row.description,
    title: row.title,
    endResultCell: last?.endResultCell ?? null,
    resultLocation: last?.resultLocation ?? null,
    externalWorkbookId: last?.workbookId ?? null,
    externalWorkbookPlacements: placements,
    folderId: row.folderId,
    folderPath: row.folderPath,
    jsonQuery: row.jsonQuery,
    sqlQuery: row.sqlQuery,
    pythonCode: row.pythonCode,
    meta: row.meta,
    pivotItems: row.pivotItems,
    refreshedBy: row.refreshedBy,
    rolesWithAccess: access.canManage ? (row.rolesWithAccess ?? []) : null,
    source: row.source,
    version: row.version,
    workbookId: row.workbookId,
  };
}
