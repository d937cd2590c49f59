import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OwnedContent } from '../users/owned-content.js';
import { ReportsOwnedContent } from './reports-owned-content.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ReportCount } from './entities/report-count.entity.js';
import { ReportPlacement } from './entities/report-placement.entity.js';
import { ReportSnapshot } from './entities/report-snapshot.entity.js';
import { ReportView } from './entities/report-view.entity.js';
import { Report } from './entities/report.entity.js';
import { PlacementsRepository } from './placements.repository.js';
import { PlacementsService } from './placements.service.js';
import { ReportFoldersController } from './report-folders.controller.js';
import { ReportFoldersRepository } from './report-folders.repository.js';
import { ReportFoldersService } from './report-folders.service.js';
import { ReportListService } from './report-list.service.js';
import { ReportViews } from './report-views.js';
import { ReportsInWorkspace } from './reports-in-workspace.js';
import { ReportsController } from './reports.controller.js';
import { ReportSnapshotsRepository } from './report-snapshots.repository.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

/**
 * Reports and their placements in spreadsheets. Reports live in the workspace's folders and
 * workbooks: this module imports the workspace (never the reverse) and plugs reports into its
 * feed, bulk operations and workbook copy and delete (`ReportsInWorkspace`).
 */
@Module({
  imports: [
    DeploymentsModule,
    WorkspaceModule,
    TypeOrmModule.forFeature([Report, ReportPlacement, ReportView, ReportCount, ReportSnapshot]),
  ],
  controllers: [ReportsController, ReportFoldersController],
  providers: [
    { provide: OwnedContent, useClass: ReportsOwnedContent },
    ReportsRepository,
    ReportSnapshotsRepository,
    PlacementsRepository,
    ReportsService,
    ReportListService,
    PlacementsService,
    ReportViews,
    ReportsInWorkspace,
    ReportFoldersRepository,
    ReportFoldersService,
  ],
  exports: [ReportsService],
})
export class ReportsModule {}
