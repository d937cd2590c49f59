import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { ReportPlacement } from './entities/report-placement.entity.js';
import { ReportView } from './entities/report-view.entity.js';
import { Report } from './entities/report.entity.js';
import { PlacementsService } from './placements.service.js';
import { ReportListService } from './report-list.service.js';
import { ReportViews } from './report-views.js';
import { ReportsController } from './reports.controller.js';
import { ReportsService } from './reports.service.js';

/** Reports and their placements in spreadsheets. */
@Module({
  imports: [DeploymentsModule, TypeOrmModule.forFeature([Report, ReportPlacement, ReportView])],
  controllers: [ReportsController],
  providers: [ReportsService, ReportListService, PlacementsService, ReportViews],
  exports: [ReportsService],
})
export class ReportsModule {}
