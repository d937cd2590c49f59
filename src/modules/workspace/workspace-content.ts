import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import type { WorkspaceItemType } from './content.sql.js';
import type { WorkspaceItemDto, WorkspaceOrderField } from './dto/workspace.dto.js';

/** Content that lives in folders and workbooks but is owned by another module. */
export type ContentKindType = Exclude<WorkspaceItemType, 'FOLDER' | 'WORKBOOK'>;

/**
 * What the workspace feed gives a content kind to write its branch of the feed's query. The
 * query binds `:accountId` and `:deploymentId`; a branch adds its own parameters to `params`
 * (names it alone uses).
 */
export interface FeedBranchContext {
  readonly actor: Principal;
  readonly field: WorkspaceOrderField;
  /** The sort key of a row aliased `alias` under the order field (a name or a timestamp). */
  sortKey(alias: string): string;
  /** A timestamp expression as integer microseconds, the sort key of timestamps. */
  micros(expr: string): string;
  /** Where an item must be whose folder column is `column`, its folder joined as `folder`. */
  location(column: string, folder: string): string;
  /** The search on names, over `alias.name`. */
  named(alias: string): string;
  readonly params: Record<string, unknown>;
}

/** A content kind's part of the workspace feed, all in the feed's one query. */
export interface FeedSource {
  /**
   * A `SELECT 1 AS rank, 0 AS pos, <key> AS skey, <tord> AS tord, <alias>.id` of the items the
   * caller can read at the feed's location (`tord` is the kind's type order).
   */
  branch(ctx: FeedBranchContext, tord: number): string;
  /** LEFT JOINs bringing the row of the page row `page` when `page.tord` is `tord`. */
  join(page: string, tord: number): string;
  /** The owner id column of the joined row (NULL when the page row is not of this kind). */
  readonly ownerId: string;
  /** The item's JSON (a WorkspaceItem) from the joined row, its owner joined as `owner`. */
  item(owner: string): string;
}

/**
 * A kind of content owned by another module (reports), plugged into the workspace so that the
 * workspace never imports that module: its feed branch, its move and delete, and what happens
 * to it when the workbook holding it is deleted or copied.
 */
export interface WorkspaceContentKind {
  readonly feed: FeedSource;
  /** Moves one item to a folder (null: the root), with the item's own access rules. */
  move(
    actor: Principal,
    deploymentId: number,
    id: number,
    folderId: number | null,
  ): Promise<WorkspaceItemDto>;
  /** Deletes one item, with the item's own access rules. */
  remove(actor: Principal, deploymentId: number, id: number): Promise<void>;
  /**
   * Inside the unit of work deleting `workbookId`, before its row goes: removes what the
   * foreign keys do not (the grants on the content it holds) and publishes the deletion of that
   * content (docs/webhooks.md).
   */
  workbookDeleting(accountId: number, workbookId: number): Promise<void>;
  /**
   * Inside the unit of work copying workbook `sourceId` into `copy`: copies the content it
   * holds, publishes the creation of each copy, and answers the id of each copy by the id of
   * its original.
   */
  copyWorkbook(
    actor: Principal,
    sourceId: number,
    copy: { id: number; folderId: number | null },
  ): Promise<Map<number, number>>;
}

/**
 * The report snapshots of published dashboards (the Dashboard shape's `reportSnapshots`), kept by
 * the module owning reports and registered here, so the workspace reads and writes them without
 * importing that module.
 */
export interface DashboardSnapshotSource {
  /** The snapshots of the dashboard joined as `d`, as a JSON array (`'[]'` without any). */
  jsonSql(d: string): string;
  /** Inside the publish's unit of work: the dashboard's snapshots become the workbook's reports as they are. */
  replace(at: { accountId: number; dashboardId: number; workbookId: number }): Promise<void>;
  /** Inside a workbook copy: dashboard `fromId`'s snapshots for dashboard `toId`, re-pointed by `ids`. */
  copy(fromId: number, toId: number, ids: Map<number, number>): Promise<void>;
}

/** Where content kinds register (at module init); the workspace services read them here. */
@Injectable()
export class WorkspaceContent {
  private readonly kinds = new Map<ContentKindType, WorkspaceContentKind>();
  private snapshotSource: DashboardSnapshotSource | null = null;

  register(type: ContentKindType, kind: WorkspaceContentKind): void {
    this.kinds.set(type, kind);
  }

  kind(type: ContentKindType): WorkspaceContentKind {
    const kind = this.kinds.get(type);
    if (!kind) throw new Error(`No workspace content registered for ${type}`);
    return kind;
  }

  all(): WorkspaceContentKind[] {
    return [...this.kinds.values()];
  }

  registerSnapshots(source: DashboardSnapshotSource): void {
    this.snapshotSource = source;
  }

  /** The dashboards' report snapshots (registered by the reports module at start-up). */
  snapshots(): DashboardSnapshotSource {
    if (!this.snapshotSource) throw new Error('No dashboard snapshot source registered');
    return this.snapshotSource;
  }
}
