import { Module, type DynamicModule } from '@nestjs/common';
import { AuditModule } from './core/audit/audit.module.js';
import { AuthModule } from './core/auth/auth.module.js';
import type { AppConfig } from './core/config/app-config.js';
import { ConfigModule } from './core/config/config.module.js';
import { DatabaseModule } from './core/database/database.module.js';
import { HealthModule } from './core/health/health.module.js';
import { HttpCoreModule } from './core/http/http-core.module.js';
import { IdempotencyModule } from './core/http/idempotency/idempotency.module.js';
import { ConditionalRequestsModule } from './core/http/conditional/conditional-requests.module.js';
import { InstallationModule } from './core/installation/installation.module.js';
import { TenancyModule } from './core/tenancy/tenancy.module.js';
import { LoggingModule } from './core/logging/logging.module.js';
import { QueueModule } from './core/queue/queue.module.js';
import { CryptoModule } from './core/crypto/crypto.module.js';
import { EmbeddingModule } from './modules/embedding/embedding.module.js';
import { DeploymentsModule } from './modules/deployments/deployments.module.js';
import { ReportsModule } from './modules/reports/reports.module.js';
import { UsersModule } from './modules/users/users.module.js';
import { WorkspaceModule } from './modules/workspace/workspace.module.js';
import { OAuthModule } from './modules/oauth/oauth.module.js';
import { ScimModule } from './modules/scim/scim.module.js';
import { SettingsModule } from './modules/settings/settings.module.js';
import { UsageModule } from './modules/usage/usage.module.js';
import { UserAttributesModule } from './modules/user-attributes/user-attributes.module.js';
import { DataModelModule } from './modules/data-model/data-model.module.js';
import { DeploymentRuntimeModule } from './modules/deployment-runtime/deployment-runtime.module.js';
import { DbtSyncModule } from './modules/dbt-sync/dbt-sync.module.js';
import { DataApiClientModule } from './modules/data-api-client/data-api-client.module.js';
import { DataApiTokensModule } from './modules/data-api-tokens/data-api-tokens.module.js';
import { PythonRunsModule } from './modules/python-runs/python-runs.module.js';
import { EmbedCommentsModule } from './modules/embed-comments/embed-comments.module.js';
import { NotificationsModule } from './modules/notifications/notifications.module.js';
import { DashboardExportsModule } from './modules/dashboard-exports/dashboard-exports.module.js';
import { WebhooksModule } from './modules/webhooks/webhooks.module.js';
import { ContentImpactModule } from './modules/content-impact/content-impact.module.js';

/** The core plus every domain module. The API, the worker and the CLI all start from this. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        DatabaseModule.forRoot(config),
        InstallationModule,
        TenancyModule,
        QueueModule.forRoot(config),
        CryptoModule,
        AuthModule,
        AuditModule,
        HttpCoreModule,
        IdempotencyModule,
        ConditionalRequestsModule,
        HealthModule,
        // First of the domain modules: Express tries routes in the order they were registered,
        // and the report routes are the ones the spreadsheet add-ins call all day.
        ReportsModule,
        UsersModule,
        DeploymentsModule,
        WorkspaceModule,
        EmbeddingModule,
        SettingsModule,
        UserAttributesModule,
        OAuthModule,
        UsageModule,
        ScimModule,
        DataModelModule,
        DeploymentRuntimeModule,
        DbtSyncModule,
        DataApiClientModule,
        DataApiTokensModule,
        PythonRunsModule,
        EmbedCommentsModule,
        NotificationsModule,
        DashboardExportsModule,
        WebhooksModule,
        ContentImpactModule,
      ],
    };
  }
}
