import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OwnedContent } from '../users/owned-content.js';
import { WorkspaceOwnedContent } from './workspace-owned-content.js';
import { ObjectRouteRule } from '../../core/auth/access.guard.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { ContentAccess } from './content-access.js';
import { ContentRouteRule } from './content-route.rule.js';
import { DashboardsRepository } from './dashboards.repository.js';
import { DashboardsService } from './dashboards.service.js';
import { Dashboard } from './entities/dashboard.entity.js';
import { Folder } from './entities/folder.entity.js';
import { Workbook } from './entities/workbook.entity.js';
import { FoldersController } from './folders.controller.js';
import { FoldersRepository } from './folders.repository.js';
import { FoldersService } from './folders.service.js';
import { WorkbookCopyService } from './workbook-copy.service.js';
import { WorkbooksController } from './workbooks.controller.js';
import { WorkbooksRepository } from './workbooks.repository.js';
import { WorkbooksService } from './workbooks.service.js';
import { WorkbookLookup } from './workbooks.shared.js';
import { WorkspaceContent } from './workspace-content.js';
import { WorkspaceFeedRepository } from './workspace-feed.repository.js';
import { WorkspaceController } from './workspace.controller.js';
import { WorkspaceService } from './workspace.service.js';

/**
 * Workspace content of a deployment: folders, workbooks with their draft and published
 * dashboards, and the unified workspace feed with move, bulk move and bulk delete. Content owned
 * by other modules (reports) plugs in through `WorkspaceContent`, so this module imports none of
 * them; they import this one. The workspace's routing rule for content actions is its
 * `ObjectRouteRule`.
 */
@Module({
  imports: [DeploymentsModule, TypeOrmModule.forFeature([Folder, Workbook, Dashboard])],
  controllers: [FoldersController, WorkbooksController, WorkspaceController],
  providers: [
    { provide: ObjectRouteRule, useClass: ContentRouteRule },
    { provide: OwnedContent, useClass: WorkspaceOwnedContent },
    ContentAccess,
    FoldersRepository,
    WorkbooksRepository,
    DashboardsRepository,
    WorkspaceFeedRepository,
    WorkspaceContent,
    FoldersService,
    WorkbookLookup,
    WorkbooksService,
    DashboardsService,
    WorkbookCopyService,
    WorkspaceService,
  ],
  exports: [FoldersService, WorkbooksService, DashboardsService, WorkbookLookup, WorkspaceContent],
})
export class WorkspaceModule {}
