import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { ReportsModule } from '../reports/reports.module.js';
import { ContentAccess } from './content-access.js';
import { DashboardsService } from './dashboards.service.js';
import { Dashboard } from './entities/dashboard.entity.js';
import { Folder } from './entities/folder.entity.js';
import { Workbook } from './entities/workbook.entity.js';
import { FoldersController } from './folders.controller.js';
import { FoldersService } from './folders.service.js';
import { WorkbookCopyService } from './workbook-copy.service.js';
import { WorkbooksController } from './workbooks.controller.js';
import { WorkbooksService } from './workbooks.service.js';
import { WorkbookLookup } from './workbooks.shared.js';
import { WorkspaceController } from './workspace.controller.js';
import { WorkspaceService } from './workspace.service.js';

/**
 * Workspace content of a deployment: folders, workbooks with their draft and published
 * dashboards, and the unified workspace feed with move, bulk move and bulk delete. Reports are
 * their own module; this one moves and deletes them through `ReportsService`.
 */
@Module({
  imports: [DeploymentsModule, TypeOrmModule.forFeature([Folder, Workbook, Dashboard]), ReportsModule],
  controllers: [FoldersController, WorkbooksController, WorkspaceController],
  providers: [
    ContentAccess,
    FoldersService,
    WorkbookLookup,
    WorkbooksService,
    DashboardsService,
    WorkbookCopyService,
    WorkspaceService,
  ],
  exports: [FoldersService, WorkbooksService, WorkbookLookup],
})
export class WorkspaceModule {}
