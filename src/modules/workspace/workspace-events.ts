import type { DomainEvent, EventType } from '../../core/events/domain-events.js';
import type { DashboardDto } from './dto/dashboard.dto.js';
import type { FolderDto } from './dto/folder.dto.js';
import type { WorkbookDto } from './dto/workbook.dto.js';

/*
 * The events the workspace publishes (docs/webhooks.md, Event types): the folder, workbook or
 * dashboard as its GET shows it, or for a deletion what identifies it. Published through
 * `DomainEvents` inside the unit of work of the change.
 */

type Change = 'created' | 'changed';

const event = (
  accountId: number,
  type: EventType,
  resource: 'folder' | 'workbook' | 'dashboard',
  id: number,
  data: object,
): DomainEvent => ({ accountId, type, resource: { type: resource, id }, data: { ...data } });

export const folderEvent = (accountId: number, change: Change, folder: FolderDto): DomainEvent =>
  event(accountId, `folder.${change}`, 'folder', folder.id, folder);

export const workbookEvent = (accountId: number, change: Change, workbook: WorkbookDto): DomainEvent =>
  event(accountId, `workbook.${change}`, 'workbook', workbook.id, workbook);

export const dashboardEvent = (accountId: number, change: Change, dashboard: DashboardDto): DomainEvent =>
  event(accountId, `dashboard.${change}`, 'dashboard', dashboard.id, dashboard);

/** A deleted folder: its id, name, parent and deployment. */
export const folderDeleted = (
  accountId: number,
  folder: { id: number; name: string; parentId: number | null; deploymentId: number },
): DomainEvent => event(accountId, 'folder.deleted', 'folder', folder.id, folder);

/** A deleted workbook: its id, name, slug, folder and deployment. */
export const workbookDeleted = (
  accountId: number,
  workbook: { id: number; name: string; slug: string | null; folderId: number | null; deploymentId: number },
): DomainEvent => event(accountId, 'workbook.deleted', 'workbook', workbook.id, workbook);

/** A deleted dashboard (it goes with its workbook): its id, public id, title, workbook and deployment. */
export const dashboardDeleted = (
  accountId: number,
  dashboard: {
    id: number;
    publicId: string;
    title: string | null;
    workbookId: number;
    deploymentId: number;
  },
): DomainEvent => event(accountId, 'dashboard.deleted', 'dashboard', dashboard.id, dashboard);
