import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { declareJobs } from '../../core/queue/job-definition.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { UserAttributesModule } from '../user-attributes/user-attributes.module.js';
import { UsersModule } from '../users/users.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { DashboardExportClock } from './dashboard-export-clock.js';
import {
  DASHBOARD_EXPORT_JOB,
  DASHBOARD_EXPORT_PRUNE_JOB,
  DashboardExportJobs,
} from './dashboard-export.job.js';
import { DashboardExportsController } from './dashboard-exports.controller.js';
import { DashboardExportsRepository } from './dashboard-exports.repository.js';
import { DashboardExportsService } from './dashboard-exports.service.js';
import { DashboardExport } from './entities/dashboard-export.entity.js';

/**
 * Dashboard exports (`/deployments/{id}/dashboard-exports`): a published dashboard rendered to PNG
 * or PDF on request, by the notifications module's `DashboardRendering`, as the caller or as a
 * console or embed user. Each export is a `dashboard-export.render` job with a run record; the
 * file is kept in `dashboard_exports` until it expires, and `dashboard-export.prune` (a schedule
 * made at the first export) deletes expired ones. Embed users and shares come from the embedding
 * module, which is global.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([DashboardExport]),
    DeploymentsModule,
    NotificationsModule,
    WorkspaceModule,
    SettingsModule,
    UsersModule,
    UserAttributesModule,
  ],
  controllers: [DashboardExportsController],
  providers: [
    DashboardExportClock,
    DashboardExportsRepository,
    DashboardExportsService,
    DashboardExportJobs,
    declareJobs(DASHBOARD_EXPORT_JOB, DASHBOARD_EXPORT_PRUNE_JOB),
  ],
})
export class DashboardExportsModule {}
