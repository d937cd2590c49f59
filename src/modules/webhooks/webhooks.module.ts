import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEvents } from '../../core/events/domain-events.js';
import { declareJobs } from '../../core/queue/job-definition.js';
import { NotificationDeliveryModule } from '../notifications/delivery/delivery.module.js';
import { WebhookDeliveryAttempt } from './entities/webhook-delivery-attempt.entity.js';
import { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { WebhookEndpoint } from './entities/webhook-endpoint.entity.js';
import { WebhookEvent } from './entities/webhook-event.entity.js';
import { WebhookDeliverJob } from './webhook-deliver.job.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookEventPublisher } from './webhook-event-publisher.service.js';
import { WEBHOOK_DELIVER_JOB, WEBHOOK_PRUNE_JOB, WEBHOOK_RETRY_JOB } from './webhook-jobs.js';
import { WebhookMaintenance } from './webhook-maintenance.job.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * What core needs of this module, provided globally (core never imports a module): the
 * implementation of {@link DomainEvents}, which every module that publishes injects.
 */
@Global()
@Module({
  providers: [WebhookDeliveriesRepository, { provide: DomainEvents, useClass: WebhookEventPublisher }],
  exports: [DomainEvents],
})
class WebhookEventsForCoreModule {}

/**
 * Signed outbound webhooks (docs/webhooks.md): an account's endpoints, the events the modules
 * publish (`DomainEvents`), one delivery per event and subscribed endpoint, sent by
 * `webhook.deliver` (signed, under the outbound rule, retried with back-off by the
 * `webhook.retry` sweep), pruned by `webhook.prune`. An endpoint failing too long is disabled and
 * its creator mailed (SMTP through the notifications module's `Mailer`).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpoint, WebhookEvent, WebhookDelivery, WebhookDeliveryAttempt]),
    WebhookEventsForCoreModule,
    NotificationDeliveryModule,
  ],
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    WebhookDeliveriesRepository,
    WebhooksService,
    WebhookDeliveriesService,
    WebhookSecrets,
    WebhookSender,
    WebhookMaintenance,
    WebhookDeliverJob,
    declareJobs(WEBHOOK_DELIVER_JOB, WEBHOOK_RETRY_JOB, WEBHOOK_PRUNE_JOB),
  ],
})
export class WebhooksModule {}
