import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import type { SqlParams } from '../../core/database/named-params.js';
import { isoSql } from '../../core/database/sql.js';
import { resourceOwnerSql, userJoin } from '../users/users.fragments.js';
import type { WorkspaceItemType } from './content.sql.js';
import type { OrderDirection, WorkspaceItemDto, WorkspaceOrderField } from './dto/workspace.dto.js';
import type { FeedBranchContext, FeedSource } from './workspace-content.js';
import {
  FEED_SORT_KEY,
  feedAfterSql,
  feedOrderSql,
  folderJoin,
  folderPathSql,
  microsSql,
  type FeedKey,
} from './workspace.fragments.js';

/** Order of the types among items with the same sort key; also the cursor's type slot. */
export const TYPE_ORDER: Record<WorkspaceItemType, number> = { FOLDER: 0, WORKBOOK: 1, REPORT: 2 };

export interface FeedQuery {
  actor: Principal;
  deploymentId: number;
  /** The folder listed (null: the root); with a search, the subtree searched. */
  folderId: number | null;
  /** A LIKE pattern over names, or null. */
  search: string | null;
  field: WorkspaceOrderField;
  dir: OrderDirection;
  after: FeedKey | null;
  first: number;
  /** Visibility predicates of folders (over `f`, parent `p`) and workbooks (over `w`, folder `wf`). */
  folders: { sql: string; params: SqlParams } | null;
  workbooks: { sql: string; params: SqlParams } | null;
  /** The other kinds listed, each with its type order. */
  kinds: ReadonlyArray<{ tord: number; source: FeedSource }>;
}

/**
 * The workspace feed: one query over the union of the sort keys of folders, workbooks and the
 * registered content kinds; only the page's rows are shaped.
 */
@Injectable()
export class WorkspaceFeedRepository {
  constructor(private readonly db: Database) {}

  page(q: FeedQuery): Promise<Array<FeedKey & { item: WorkspaceItemDto }>> {
    const key = FEED_SORT_KEY[q.field];
    const params: Record<string, unknown> = { accountId: q.actor.accountId, deploymentId: q.deploymentId };
    if (q.folderId !== null) params.folderId = q.folderId;
    if (q.search !== null) params.search = q.search;
    const ctx: FeedBranchContext = {
      actor: q.actor,
      field: q.field,
      params,
      sortKey: (alias) => key.sql(alias),
      micros: microsSql,
      location: (column, folder) => {
        if (q.search === null) return q.folderId === null ? `${column} IS NULL` : `${column} = :folderId`;
        if (q.folderId === null) return 'TRUE';
        return `(${folder}.id = :folderId OR :folderId = ANY(${folder}.ancestor_ids))`;
      },
      named: (alias) => (q.search === null ? 'TRUE' : `${alias}.name ILIKE :search`),
    };

    const branches: string[] = [];
    if (q.folders) {
      Object.assign(params, q.folders.params);
      branches.push(`SELECT 0 AS rank, f.position AS pos, NULL::${key.kind} AS skey, ${TYPE_ORDER.FOLDER} AS tord, f.id
        FROM folders f LEFT JOIN folders p ON p.id = f.parent_id
        WHERE f.account_id = :accountId AND f.deployment_id = :deploymentId
          AND ${ctx.location('f.parent_id', 'p')} AND ${ctx.named('f')} AND ${q.folders.sql}`);
    }
    if (q.workbooks) {
      Object.assign(params, q.workbooks.params);
      branches.push(`SELECT 1 AS rank, 0 AS pos, ${key.sql('w')} AS skey, ${TYPE_ORDER.WORKBOOK} AS tord, w.id
        FROM workbooks w ${folderJoin('w.folder_id', 'wf')}
        WHERE w.account_id = :accountId AND w.deployment_id = :deploymentId
          AND ${ctx.location('w.folder_id', 'wf')} AND ${ctx.named('w')} AND ${q.workbooks.sql}`);
    }
    for (const { tord, source } of q.kinds) branches.push(source.branch(ctx, tord));

    const keyset = feedAfterSql('x', q.after, q.dir, key.kind, params);
    const order = (t: string) => feedOrderSql(t, q.dir);
    const owners = ['f.user_id', 'w.user_id', ...q.kinds.map((k) => k.source.ownerId)];
    const items = q.kinds.map((k) => `WHEN ${k.tord} THEN ${k.source.item('u')}`).join('\n           ');
    return this.db.query<FeedKey & { item: WorkspaceItemDto }>(
      `WITH page AS (
         SELECT x.* FROM (${branches.join('\nUNION ALL\n')}) x
         WHERE ${keyset} ORDER BY ${order('x')} LIMIT ${q.first + 1}
       )
       SELECT page.rank, page.pos, page.skey, page.tord, page.id,
         CASE page.tord
           WHEN ${TYPE_ORDER.FOLDER} THEN json_build_object('type', 'FOLDER', 'id', f.id, 'name', f.name,
             'deploymentId', f.deployment_id, 'folderId', f.parent_id, 'folderPath', ${folderPathSql('p')},
             'parentId', f.parent_id, 'position', f.position, 'createdAt', ${isoSql('f.created_at')},
             'updatedAt', ${isoSql('f.updated_at')}, 'createdBy', f.created_by, 'userId', f.user_id,
             'user', ${resourceOwnerSql('u')})
           WHEN ${TYPE_ORDER.WORKBOOK} THEN json_build_object('type', 'WORKBOOK', 'id', w.id, 'name', w.name,
             'deploymentId', w.deployment_id, 'folderId', w.folder_id, 'folderPath', ${folderPathSql('wf')},
             'slug', w.slug, 'createdAt', ${isoSql('w.created_at')}, 'updatedAt', ${isoSql('w.updated_at')},
             'createdBy', w.created_by, 'userId', w.user_id, 'user', ${resourceOwnerSql('u')})
           ${items}
         END AS item
       FROM page
       LEFT JOIN folders f ON page.tord = ${TYPE_ORDER.FOLDER} AND f.id = page.id
       LEFT JOIN folders p ON p.id = f.parent_id
       LEFT JOIN workbooks w ON page.tord = ${TYPE_ORDER.WORKBOOK} AND w.id = page.id
       ${folderJoin('w.folder_id', 'wf')}
       ${q.kinds.map((k) => k.source.join('page', k.tord)).join('\n       ')}
       ${userJoin(`COALESCE(${owners.join(', ')})`, 'u')}
       ORDER BY ${order('page')}`,
      params,
    );
  }
}
