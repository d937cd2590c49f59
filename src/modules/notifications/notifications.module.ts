import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { declareJobs } from '../../core/queue/job-definition.js';
import { DataApiClientModule } from '../data-api-client/data-api-client.module.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { ReportsModule } from '../reports/reports.module.js';
import { UserAttributesModule } from '../user-attributes/user-attributes.module.js';
import { UsersModule } from '../users/users.module.js';
import { DashboardRendering } from './dashboard-rendering.service.js';
import { NotificationDeliveryModule } from './delivery/delivery.module.js';
import { NotificationDeliveryCount } from './entities/notification-delivery-count.entity.js';
import { NotificationDelivery } from './entities/notification-delivery.entity.js';
import { NotificationRecipient } from './entities/notification-recipient.entity.js';
import { NotificationRender } from './entities/notification-render.entity.js';
import { NotificationRun } from './entities/notification-run.entity.js';
import { Notification } from './entities/notification.entity.js';
import { NotificationDeliverJob } from './notification-deliver.job.js';
import { NotificationEvents } from './notification-events.js';
import { NOTIFICATION_DELIVER_JOB, NOTIFICATION_RUN_JOB } from './notification-jobs.js';
import { NotificationOperationsService } from './notification-operations.service.js';
import { NotificationRecipientsService } from './notification-recipients.service.js';
import { NotificationRunEnding } from './notification-run-ending.js';
import { NotificationRunJob } from './notification-run.job.js';
import { NotificationRunsRepository } from './notification-runs.repository.js';
import { NotificationsController } from './notifications.controller.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';

/**
 * Scheduled notifications: a published dashboard mailed to console and embed users on a schedule
 * (`job_schedules`, fired by the relay's tick). `notification.run` renders it per security context
 * (reports' data from the data API, the attachment from `delivery/`), `notification.deliver`
 * mails each recipient once; an admin runs one now, resends a failed delivery, pauses and resumes
 * (`NotificationOperationsService`), and runs and failed deliveries publish their events
 * (`DomainEvents`, provided by the webhooks module). Embed users are provisioned through the embedding module, which is
 * global. Exports {@link DashboardRendering} (a published dashboard rendered to PDF or PNG under
 * one security context), which the runs use and dashboard exports share, and
 * {@link NotificationsService}, whose `overridesOfDeployment` the content impact reads.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      Notification,
      NotificationRecipient,
      NotificationRun,
      NotificationRender,
      NotificationDelivery,
      NotificationDeliveryCount,
    ]),
    DeploymentsModule,
    UsersModule,
    ReportsModule,
    DataApiClientModule,
    NotificationDeliveryModule,
    UserAttributesModule,
  ],
  controllers: [NotificationsController],
  providers: [
    NotificationsRepository,
    NotificationRunsRepository,
    NotificationsService,
    NotificationRecipientsService,
    NotificationOperationsService,
    NotificationRunEnding,
    NotificationEvents,
    DashboardRendering,
    NotificationRunJob,
    NotificationDeliverJob,
    declareJobs(NOTIFICATION_RUN_JOB, NOTIFICATION_DELIVER_JOB),
  ],
  exports: [DashboardRendering, NotificationsService],
})
export class NotificationsModule {}
