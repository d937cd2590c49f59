import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { deploymentFoldersSql } from '../workspace/workspace.fragments.js';
import type { ReportFolderDto } from './dto/report-folder.dto.js';

/** A visibility predicate with its parameters (`AccessService.contentScopeSql`). */
interface Scope {
  sql: string;
  params: SqlParams;
}

/** The folders of a deployment with the count of the reports in each (`GET .../report-folders`). */
@Injectable()
export class ReportFoldersRepository {
  constructor(private readonly db: Database) {}

  /**
   * The folders `folderScope` keeps, every level, by id after `afterId`, each with the reports
   * directly in it that `reportScope` keeps (`f` is the folder, `r` the report).
   */
  list(q: {
    accountId: number;
    deploymentId: number;
    folderScope: Scope;
    reportScope: Scope;
    afterId: number | null;
    limit: number;
  }): Promise<ReportFolderDto[]> {
    return this.db.query<ReportFolderDto>(
      `SELECT f.id, f.name, f.parent_id AS "parentId", f.position,
         (SELECT count(*)::int FROM reports r
          WHERE r.account_id = :accountId AND r.folder_id = f.id AND ${q.reportScope.sql}) AS "reportsCount"
       FROM ${deploymentFoldersSql('f', { accountId: ':accountId', deploymentId: ':deploymentId' })}
       WHERE ${q.folderScope.sql} AND ${q.afterId === null ? 'TRUE' : 'f.id > :afterId'}
       ORDER BY f.id LIMIT :limit`,
      {
        accountId: q.accountId,
        deploymentId: q.deploymentId,
        ...q.folderScope.params,
        ...q.reportScope.params,
        ...(q.afterId === null ? {} : { afterId: q.afterId }),
        limit: q.limit,
      },
    );
  }
}
