import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { deploymentInAccountSql } from '../deployments/deployments.fragments.js';
import { folderChainSql, folderJoin } from '../workspace/workspace.fragments.js';
import type { DeletedReport } from './report-events.js';
import type { ReportRow } from './report.mapper.js';
import { READ_REPORT_SQL, REPORT_COUNT_SQL, reportSelectSql } from './report.sql.js';

/** What identifies a deleted report, as `RETURNING` or a select names it. */
const DELETED_COLUMNS = `id, public_id AS "publicId", name, folder_id AS "folderId", workbook_id AS "workbookId",
  deployment_id AS "deploymentId"`;

/** Sort columns of the report list; the id breaks ties so the keyset is total. */
export const REPORT_SORTS = {
  createdAt: { column: 'r.created_at', cursor: 'createdAt', kind: 'date' },
  updatedAt: { column: 'r.updated_at', cursor: 'updatedAt', kind: 'date' },
  name: { column: 'r.name', cursor: 'name', kind: 'string' },
} as const;

/** The definition columns a create or update writes, by DTO field. */
export const DEFINITION_COLUMNS = {
  name: 'name',
  title: 'title',
  description: 'description',
  jsonQuery: 'json_query',
  sqlQuery: 'sql_query',
  pythonCode: 'python_code',
  meta: 'meta',
  pivotItems: 'pivot_items',
  workbookId: 'workbook_id',
} as const;

/** The columns an update may set, by DTO field (`folderId` and `publicId` besides the definition). */
export type ReportChange = Partial<
  Record<keyof typeof DEFINITION_COLUMNS | 'folderId' | 'publicId', unknown>
>;

const CHANGE_COLUMNS: Record<keyof ReportChange, string> = {
  ...DEFINITION_COLUMNS,
  folderId: 'folder_id',
  publicId: 'public_id',
};

export interface NewReport {
  accountId: number;
  deploymentId: number;
  publicId: string | null;
  folderId: number | null;
  workbookId: number | null;
  name: string;
  title: string | null;
  description: string | null;
  jsonQuery: string | null;
  sqlQuery: string | null;
  pythonCode?: string | null;
  meta: unknown;
  pivotItems: unknown;
  source: string | null;
  userId: number;
}

/** A report with its owner and where it inherits grants from. */
export interface ReportChainRow {
  id: number;
  ownerId: number;
  workbookId: number | null;
  chain: Array<number | null> | null;
}

/** A report's stored JSON query (text), with the dashboards whose report snapshots took it. */
export interface ReportQueryRow {
  id: number;
  name: string;
  jsonQuery: string;
  dashboardIds: number[];
}

/** One page of the report list: filters, the caller's visibility, order and where it starts. */
export interface ReportListQuery {
  accountId: number;
  deploymentId: number;
  folderId?: number;
  workbookId?: number;
  externalWorkbookId?: string;
  /** A LIKE pattern over names. */
  search?: string;
  /** Visibility over `r` and its folder `f`. */
  scope: { sql: string; params: SqlParams };
  sort: { by: keyof typeof REPORT_SORTS; after: readonly [unknown, unknown] | null } | { viewerId: number };
  direction: 'ASC' | 'DESC';
  limit: number;
  offset: number;
}

/** All SQL on `reports` (placements: `PlacementsRepository`; views: `ReportViews`). */
@Injectable()
export class ReportsRepository {
  constructor(private readonly db: Database) {}

  /** Passes the reports of `fromUserId` to `toUserId` (the user is being deleted). */
  async handOver(accountId: number, fromUserId: number, toUserId: number): Promise<void> {
    await this.db.query(
      `UPDATE reports SET user_id = :toUserId WHERE account_id = :accountId AND user_id = :fromUserId`,
      { accountId, fromUserId, toUserId },
    );
  }

  /** Owner, workbook and folder chain of each report of `ids` in the account. */
  chains(accountId: number, ids: readonly number[]): Promise<ReportChainRow[]> {
    return this.db.query<ReportChainRow>(
      `SELECT r.id, r.user_id AS "ownerId", r.workbook_id AS "workbookId", ${folderChainSql('f')} AS chain
       FROM reports r ${folderJoin('r.folder_id', 'f')}
       WHERE r.account_id = :accountId AND r.id = ANY(:ids)`,
      { accountId, ids },
    );
  }

  /**
   * The JSON query of every report of the deployment that has one, with the dashboards whose last
   * publish took it (`report_snapshots`); one query, the text unparsed (the content impact).
   */
  jsonQueries(accountId: number, deploymentId: number): Promise<ReportQueryRow[]> {
    return this.db.query<ReportQueryRow>(
      `SELECT r.id, r.name, r.json_query AS "jsonQuery",
         ARRAY(SELECT DISTINCT rs.dashboard_id FROM report_snapshots rs WHERE rs.report_id = r.id) AS "dashboardIds"
       FROM reports r
       WHERE r.account_id = :accountId AND r.deployment_id = :deploymentId AND r.json_query IS NOT NULL`,
      { accountId, deploymentId },
    );
  }

  /** The shaped row of one report (one query). */
  read(accountId: number, deploymentId: number, reportId: number): Promise<ReportRow | undefined> {
    return this.db.one<ReportRow>(READ_REPORT_SQL, { reportId, deploymentId, accountId }, { prepare: true });
  }

  /**
   * A page of shaped rows and the count of the whole filter (with whether the deployment is the
   * account's). Unfiltered and account-wide (scope `TRUE`), the count is the deployment's row of
   * `report_counts`, kept exact by triggers on `reports` in the writers' transactions; otherwise
   * it counts the filter.
   */
  async list(q: ReportListQuery): Promise<{ rows: ReportRow[]; total: number; deploymentExists: boolean }> {
    const params: Record<string, unknown> = { deploymentId: q.deploymentId, ...q.scope.params };
    // The count checks that the deployment is the caller's; its rows need no account filter, so a
    // count over the deployment stays an index-only scan.
    let filter = 'r.deployment_id = :deploymentId';
    let filtered = false;
    const add = (condition: string, name: string, value: unknown) => {
      if (value === undefined) return;
      filter += ` AND ${condition}`;
      params[name] = value;
      filtered = true;
    };
    add('r.folder_id = :folderId', 'folderId', q.folderId);
    add('r.workbook_id = :workbookId', 'workbookId', q.workbookId);
    add(
      `EXISTS (SELECT 1 FROM report_placements xp WHERE xp.report_id = r.id
        AND xp.external_workbook_id = :externalWorkbookId)`,
      'externalWorkbookId',
      q.externalWorkbookId,
    );
    add('r.name ILIKE :search', 'search', q.search);
    const wholeDeployment = !filtered && q.scope.sql === 'TRUE';
    filter += ` AND ${q.scope.sql}`;

    const pageParams: Record<string, unknown> = { ...params, accountId: q.accountId };
    let keyset = 'TRUE';
    let order: string;
    if ('viewerId' in q.sort) {
      pageParams.viewerId = q.sort.viewerId;
      order = `(SELECT v.last_viewed_at FROM report_views v WHERE v.report_id = r.id AND v.user_id = :viewerId)
        ${q.direction} NULLS LAST, r.id ${q.direction}`;
    } else {
      const sort = REPORT_SORTS[q.sort.by];
      order = `${sort.column} ${q.direction}, r.id ${q.direction}`;
      if (q.sort.after) {
        const op = q.direction === 'ASC' ? '>' : '<';
        const cast = sort.kind === 'date' ? '::timestamptz' : '';
        keyset = `(${sort.column}, r.id) ${op} (:afterValue${cast}, :afterId::int)`;
        pageParams.afterValue = q.sort.after[0];
        pageParams.afterId = q.sort.after[1];
      }
    }
    pageParams.limit = q.limit;
    pageParams.offset = q.offset;
    // Account-wide readers (the common case) get prepared statements: their text takes one of a
    // few shapes (filters, sort, direction). A narrower scope's text carries the caller's grants.
    const prepare = q.scope.sql === 'TRUE';
    const [rows, [count]] = await Promise.all([
      this.db.query<ReportRow>(
        reportSelectSql(
          `r.account_id = :accountId AND ${filter} AND ${keyset}`,
          `ORDER BY ${order} LIMIT :limit OFFSET :offset`,
        ),
        pageParams,
        { prepare },
      ),
      wholeDeployment
        ? this.db.query<{ n: number; deploymentExists: boolean }>(
            REPORT_COUNT_SQL,
            { deploymentId: q.deploymentId, accountId: q.accountId },
            { prepare: true },
          )
        : this.db.query<{ n: number; deploymentExists: boolean }>(
            `SELECT count(*)::int AS n, ${deploymentInAccountSql(':deploymentId', ':accountId')} AS "deploymentExists"
             FROM reports r ${q.scope.sql === 'TRUE' ? '' : folderJoin('r.folder_id', 'f')} WHERE ${filter}`,
            { ...params, accountId: q.accountId },
            { prepare },
          ),
    ]);
    return { rows, total: count.n, deploymentExists: count.deploymentExists };
  }

  /** Inserts a report (version 1, created by its owner); returns its id. */
  async insert(r: NewReport): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO reports (account_id, deployment_id, public_id, folder_id, workbook_id, name, title, description,
         json_query, sql_query, python_code, meta, pivot_items, source, user_id, created_by)
       VALUES (:accountId, :deploymentId, :publicId, :folderId, :workbookId, :name, :title, :description,
         :jsonQuery, :sqlQuery, :pythonCode, :meta, :pivotItems, :source, :userId, :userId) RETURNING id`,
      { ...r, pythonCode: r.pythonCode ?? null },
    );
    return row!.id;
  }

  /** Locks a report of the deployment for an update and reads what the update checks. */
  lockForUpdate(
    accountId: number,
    deploymentId: number,
    reportId: number,
  ): Promise<{ version: number; publicId: string | null; folderId: number | null } | undefined> {
    return this.db.one(
      `SELECT version, public_id AS "publicId", folder_id AS "folderId" FROM reports
       WHERE id = :reportId AND deployment_id = :deploymentId AND account_id = :accountId FOR UPDATE`,
      { reportId, deploymentId, accountId },
    );
  }

  /** Writes `change` (every key present); `version` and `updated_at` move. Nothing when it is empty. */
  async update(reportId: number, change: ReportChange): Promise<void> {
    const fields = Object.keys(change) as Array<keyof ReportChange>;
    if (fields.length === 0) return;
    const sets = fields.map((field) => `${CHANGE_COLUMNS[field]} = :${field}`);
    await this.db.query(
      `UPDATE reports SET ${sets.join(', ')}, version = version + 1, updated_at = now() WHERE id = :reportId`,
      { ...change, reportId },
    );
  }

  /**
   * The report of the account with `publicId`, or the report made before stable ids whose
   * synthesized id it is (`legacyId`, 0 for none).
   */
  byPublicId(
    accountId: number,
    publicId: string,
    legacyId: number,
  ): Promise<{ id: number; deploymentId: number } | undefined> {
    return this.db.one(
      `SELECT id, deployment_id AS "deploymentId" FROM reports
       WHERE account_id = :accountId AND (public_id = :publicId OR (public_id IS NULL AND id = :legacyId))
       ORDER BY public_id NULLS LAST LIMIT 1`,
      { accountId, publicId, legacyId },
    );
  }

  /** Moves a report to a folder (null: the root); false when it is not in the deployment. */
  async move(
    accountId: number,
    deploymentId: number,
    reportId: number,
    folderId: number | null,
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE reports SET folder_id = :folderId, updated_at = now()
       WHERE id = :reportId AND deployment_id = :deploymentId AND account_id = :accountId RETURNING id`,
      { reportId, deploymentId, accountId, folderId },
    );
    return rows.length > 0;
  }

  /**
   * Deletes a report (placements and views follow by foreign key); what identifies it, or
   * undefined when not found.
   */
  delete(accountId: number, deploymentId: number, reportId: number): Promise<DeletedReport | undefined> {
    return this.db.one<DeletedReport>(
      `DELETE FROM reports WHERE id = :reportId AND deployment_id = :deploymentId AND account_id = :accountId
       RETURNING ${DELETED_COLUMNS}`,
      { reportId, deploymentId, accountId },
    );
  }

  /** The reports of a workbook (about to go with it), with what identifies each. */
  inWorkbook(workbookId: number): Promise<DeletedReport[]> {
    return this.db.query<DeletedReport>(
      `SELECT ${DELETED_COLUMNS} FROM reports WHERE workbook_id = :workbookId ORDER BY id`,
      { workbookId },
    );
  }

  /** The shaped rows of the account's reports `ids` (one query), in id order. */
  readMany(accountId: number, ids: readonly number[]): Promise<ReportRow[]> {
    return this.db.query<ReportRow>(
      reportSelectSql('r.id = ANY(:ids::int[]) AND r.account_id = :accountId', 'ORDER BY r.id'),
      { ids, accountId },
    );
  }

  /**
   * Copies the reports of a workbook into another (at version 1, owned by `userId`, in the
   * copy's folder when the original was in one, a fresh public id where the original had one).
   * Returns the id of each copy by the id of its original.
   */
  async copyWorkbookReports(
    sourceId: number,
    copy: { workbookId: number; folderId: number | null },
    userId: number,
    newPublicId: () => string,
  ): Promise<Map<number, number>> {
    const reports = await this.db.query<{ oldId: number; newId: number; hasPublicId: boolean }>(
      `SELECT id AS "oldId", nextval(pg_get_serial_sequence('reports', 'id'))::int AS "newId",
              public_id IS NOT NULL AS "hasPublicId"
       FROM reports WHERE workbook_id = :sourceId ORDER BY id`,
      { sourceId },
    );
    if (reports.length > 0) {
      await this.db.query(
        `INSERT INTO reports (id, account_id, deployment_id, public_id, folder_id, workbook_id, name, title,
           description, json_query, sql_query, python_code, meta, pivot_items, source, version, user_id, created_by)
         SELECT c.new_id, r.account_id, r.deployment_id, c.public_id,
                CASE WHEN r.folder_id IS NULL THEN NULL ELSE :folderId::int END, :workbookId, r.name, r.title,
                r.description, r.json_query, r.sql_query, r.python_code, r.meta, r.pivot_items, r.source, 1, :userId,
                :userId
         FROM unnest(:oldIds::int[], :newIds::int[], :publicIds::text[]) AS c(old_id, new_id, public_id)
         JOIN reports r ON r.id = c.old_id`,
        {
          oldIds: reports.map((r) => r.oldId),
          newIds: reports.map((r) => r.newId),
          publicIds: reports.map((r) => (r.hasPublicId ? newPublicId() : null)),
          folderId: copy.folderId,
          workbookId: copy.workbookId,
          userId,
        },
      );
    }
    return new Map(reports.map((r) => [r.oldId, r.newId]));
  }
}
