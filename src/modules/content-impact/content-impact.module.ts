import { Global, Module } from '@nestjs/common';
import { ContentImpact } from '../data-model/content-impact.port.js';
import { EmbeddingModule } from '../embedding/embedding.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ReportsModule } from '../reports/reports.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ContentImpactService } from './content-impact.service.js';

/**
 * The content impact of a model change (issue 33): what stored reports, dashboards and
 * notifications of a deployment a change of its model would break, and which embed tenants see
 * them. The data model declares the port ({@link ContentImpact}) and consumes it (the member
 * diff, validate, the merge gate) but sits below the content modules, so this module, above
 * them, provides it globally (as the webhooks module provides `DomainEvents`).
 */
@Global()
@Module({
  imports: [ReportsModule, WorkspaceModule, NotificationsModule, EmbeddingModule],
  providers: [ContentImpactService, { provide: ContentImpact, useExisting: ContentImpactService }],
  exports: [ContentImpact],
})
export class ContentImpactModule {}
