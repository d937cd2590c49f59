import { InitialSchema1763780000000 } from './1763780000000-InitialSchema.js';
import { Workspace1763900000000 } from './1763900000000-Workspace.js';
import { Embedding1764000000000 } from './1764000000000-Embedding.js';
import { Identity1764100000000 } from './1764100000000-Identity.js';
import { TenantSettings1764100000001 } from './1764100000001-TenantSettings.js';
import { Integrations1764100000002 } from './1764100000002-Integrations.js';
import { BuiltInRoleNames1764200000010 } from './1764200000010-BuiltInRoleNames.js';
import { JobLeases1764200000020 } from './1764200000020-JobLeases.js';
import { JobRuns1764200000400 } from './1764200000400-JobRuns.js';
import { ReportCounts1764300000000 } from './1764300000000-ReportCounts.js';
import { PrincipalChanges1764300000100 } from './1764300000100-PrincipalChanges.js';
import { DataModel1764400000000 } from './1764400000000-DataModel.js';
import { GitHubInstallations1764400000100 } from './1764400000100-GitHubInstallations.js';
import { ReleasesAndEnvVars1764500000000 } from './1764500000000-ReleasesAndEnvVars.js';
import { DbtSync1764600000000 } from './1764600000000-DbtSync.js';
import { Notifications1764700000100 } from './1764700000100-Notifications.js';
import { PythonRuns1764700000200 } from './1764700000200-PythonRuns.js';
import { NotificationBounds1764800000100 } from './1764800000100-NotificationBounds.js';
import { UploadBounds1764800000200 } from './1764800000200-UploadBounds.js';
import { JobAccounts1764800000300 } from './1764800000300-JobAccounts.js';
import { JobConsumers1764900000100 } from './1764900000100-JobConsumers.js';
import { Installation1764900000500 } from './1764900000500-Installation.js';
import { DbtSyncReadManifests1765000000000 } from './1765000000000-DbtSyncReadManifests.js';
import { EnvironmentsAndTokens1765100000000 } from './1765100000000-EnvironmentsAndTokens.js';
import { RuntimeRollouts1765200000000 } from './1765200000000-RuntimeRollouts.js';
import { DashboardExports1765300000000 } from './1765300000000-DashboardExports.js';
import { EmbedDashboardComments1765300000001 } from './1765300000001-EmbedDashboardComments.js';
import { IdempotencyKeys1765400000000 } from './1765400000000-IdempotencyKeys.js';
import { Webhooks1765400000001 } from './1765400000001-Webhooks.js';
import { NotificationOperations1765400000002 } from './1765400000002-NotificationOperations.js';
import { ModelReviews1765500000000 } from './1765500000000-ModelReviews.js';

/** Every migration, in order. Listed explicitly: ESM builds cannot rely on globbing. */
export const MIGRATIONS = [
  InitialSchema1763780000000,
  Workspace1763900000000,
  Embedding1764000000000,
  Identity1764100000000,
  TenantSettings1764100000001,
  Integrations1764100000002,
  BuiltInRoleNames1764200000010,
  JobLeases1764200000020,
  JobRuns1764200000400,
  ReportCounts1764300000000,
  PrincipalChanges1764300000100,
  DataModel1764400000000,
  GitHubInstallations1764400000100,
  ReleasesAndEnvVars1764500000000,
  DbtSync1764600000000,
  Notifications1764700000100,
  PythonRuns1764700000200,
  NotificationBounds1764800000100,
  UploadBounds1764800000200,
  JobAccounts1764800000300,
  JobConsumers1764900000100,
  Installation1764900000500,
  DbtSyncReadManifests1765000000000,
  EnvironmentsAndTokens1765100000000,
  RuntimeRollouts1765200000000,
  DashboardExports1765300000000,
  EmbedDashboardComments1765300000001,
  IdempotencyKeys1765400000000,
  Webhooks1765400000001,
  NotificationOperations1765400000002,
  ModelReviews1765500000000,
];
