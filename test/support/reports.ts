import { bearer, type Actor, type TestApp } from './app.js';
import { deploymentInput } from './factories.js';

/** The Report shape as the API answers it (the fields the tests read). */
export interface ReportBody {
  id: number;
  publicId: string;
  deploymentId: number;
  userId: number;
  name: string;
  version: number;
  updatedAt: string;
  createdAt: string;
  canEdit: boolean | null;
  canManage: boolean | null;
  folderId: number | null;
  workbookId: number | null;
  source: string | null;
  refreshedBy: number | null;
  user: { id: number; email: string; firstName: string | null; picture: string | null };
  refreshedByUser: { id: number; email: string; firstName: string | null; picture: string | null };
  externalWorkbookId: string | null;
  resultLocation: string | null;
  endResultCell: string | null;
  externalWorkbookPlacements: PlacementBody[] | null;
  rolesWithAccess: Array<{ id: number; name: string; actions: string[] }> | null;
  [field: string]: unknown;
}

export interface PlacementBody {
  id: string | null;
  workbookId: string;
  resultLocation: string;
  anchorCell: string | null;
  endResultCell: string | null;
  host: string | null;
  sheetId: string | null;
  sheetName: string | null;
  workbookName: string | null;
  placedAt: string | null;
  placedByUserId: number | null;
  refreshedAt: string | null;
  refreshedByUserId: number | null;
}

export const reportsPath = (deploymentId: number | string, rest = ''): string =>
  `/api/v1/deployments/${deploymentId}/reports${rest}`;

/** Creates a deployment over HTTP and answers its id. */
export async function newDeployment(t: TestApp, actor: Actor, name = 'Reports deployment'): Promise<number> {
  const res = await t
    .http()
    .post('/build/api/v1/deployments')
    .set(bearer(actor.token))
    .send(deploymentInput({ name }));
  if (res.status !== 200)
    throw new Error(`could not create deployment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Creates a report over HTTP (`POST .../reports`). */
export async function newReport(
  t: TestApp,
  actor: Actor,
  deploymentId: number,
  body: Record<string, unknown> = {},
): Promise<ReportBody> {
  const res = await t
    .http()
    .post(reportsPath(deploymentId))
    .set(bearer(actor.token))
    .send({ name: 'Report', ...body });
  if (res.status !== 200)
    throw new Error(`could not create report: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Inserts a report row directly, as reports made before stable public ids were (public_id NULL). */
export async function insertReport(
  t: TestApp,
  actor: Actor,
  deploymentId: number,
  fields: {
    name?: string;
    publicId?: string | null;
    folderId?: number | null;
    workbookId?: number | null;
    createdAt?: string;
    updatedAt?: string;
  } = {},
): Promise<number> {
  const [row] = await t.sql<{ id: number }>(
    `INSERT INTO reports (account_id, deployment_id, public_id, folder_id, workbook_id, name, user_id, created_by,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, COALESCE($8::timestamptz, now()), COALESCE($9::timestamptz, now()))
     RETURNING id`,
    [
      actor.accountId,
      deploymentId,
      fields.publicId ?? null,
      fields.folderId ?? null,
      fields.workbookId ?? null,
      fields.name ?? 'Legacy report',
      actor.userId,
      fields.createdAt ?? null,
      fields.updatedAt ?? null,
    ],
  );
  return row.id;
}

/** Inserts a folder (under `parentId` when given) with its materialised ancestor chain. */
export async function insertFolder(
  t: TestApp,
  actor: Actor,
  deploymentId: number,
  name: string,
  parentId: number | null = null,
): Promise<number> {
  const [row] = await t.sql<{ id: number }>(
    `INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, user_id, created_by)
     VALUES ($1, $2, $3::int,
       COALESCE((SELECT p.ancestor_ids || p.id FROM folders p WHERE p.id = $3::int), '{}'), $4, $5, $5)
     RETURNING id`,
    [actor.accountId, deploymentId, parentId, name, actor.userId],
  );
  return row.id;
}

/** Inserts a workbook. */
export async function insertWorkbook(
  t: TestApp,
  actor: Actor,
  deploymentId: number,
  name: string,
  folderId: number | null = null,
): Promise<number> {
  const [row] = await t.sql<{ id: number }>(
    `INSERT INTO workbooks (account_id, deployment_id, folder_id, name, user_id, created_by)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`,
    [actor.accountId, deploymentId, folderId, name, actor.userId],
  );
  return row.id;
}

/** Inserts a placement row directly, e.g. one recorded before placement ids or sheet ids existed. */
export async function insertPlacement(
  t: TestApp,
  accountId: number,
  reportId: number,
  fields: {
    placementId?: string | null;
    externalWorkbookId: string;
    resultLocation: string;
    sheetId?: string | null;
    sheetName?: string | null;
    anchorCell?: string | null;
    endResultCell?: string | null;
    placedAt?: string | null;
  },
): Promise<string> {
  const [row] = await t.sql<{ row_id: string }>(
    `INSERT INTO report_placements (account_id, report_id, placement_id, external_workbook_id, result_location,
       sheet_id, sheet_name, anchor_cell, end_result_cell, placed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING row_id`,
    [
      accountId,
      reportId,
      fields.placementId ?? null,
      fields.externalWorkbookId,
      fields.resultLocation,
      fields.sheetId ?? null,
      fields.sheetName ?? null,
      fields.anchorCell ?? null,
      fields.endResultCell ?? null,
      fields.placedAt ?? null,
    ],
  );
  return row.row_id;
}

/** Creates a custom role with `policies` and assigns it to `user`; answers the role id. */
export async function grantRole(
  t: TestApp,
  admin: Actor,
  user: Actor,
  name: string,
  policies: Array<{ resourceType: string; resources: string[]; actions: string[] }>,
): Promise<number> {
  const role = await t.http().post('/api/v1/roles').set(bearer(admin.token)).send({ name, policies });
  if (role.status !== 200)
    throw new Error(`could not create role: ${role.status} ${JSON.stringify(role.body)}`);
  const assign = await t
    .http()
    .put(`/api/v1/roles/${role.body.id}/users/${user.userId}`)
    .set(bearer(admin.token));
  if (assign.status !== 204)
    throw new Error(`could not assign role: ${assign.status} ${JSON.stringify(assign.body)}`);
  return role.body.id;
}
