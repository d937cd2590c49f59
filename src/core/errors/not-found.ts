import { ApiError } from './api-error.js';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * A missing resource, in the one shape every route answers: `<kind>_not_found` (404) with the
 * message "<Kind> <id> was not found". Declared once here, so a module reporting a missing
 * resource of another module's kind (the deployment in `/deployments/{id}/reports`) does not
 * list that module's codes.
 */
const KINDS = {
  Account: 'account_not_found',
  ApiKey: 'api_key_not_found',
  Branch: 'branch_not_found',
  Comment: 'comment_not_found',
  Dashboard: 'dashboard_not_found',
  DashboardExport: 'dashboard_export_not_found',
  DbtSync: 'dbt_sync_not_found',
  Deployment: 'deployment_not_found',
  EmbedGroup: 'embed_group_not_found',
  EmbedTenant: 'embed_tenant_not_found',
  EmbedUser: 'embed_user_not_found',
  Environment: 'environment_not_found',
  Folder: 'folder_not_found',
  GitHubInstallation: 'github_installation_not_found',
  GitHubRepository: 'github_repository_not_found',
  Group: 'group_not_found',
  Notification: 'notification_not_found',
  NotificationDelivery: 'notification_delivery_not_found',
  OAuthIntegration: 'oauth_integration_not_found',
  OAuthToken: 'oauth_token_not_found',
  OidcTokenConfig: 'oidc_token_config_not_found',
  Pod: 'pod_not_found',
  Report: 'report_not_found',
  Role: 'role_not_found',
  UploadTransaction: 'upload_transaction_not_found',
  UserAttribute: 'user_attribute_not_found',
  User: 'user_not_found',
  Webhook: 'webhook_not_found',
  WebhookDelivery: 'webhook_delivery_not_found',
  Workbook: 'workbook_not_found',
} as const satisfies Record<string, ErrorCode>;

export type ResourceKind = keyof typeof KINDS;

/** Words for the message where the kind's name is not how users read it. */
const LABELS: Partial<Record<ResourceKind, string>> = {
  ApiKey: 'API key',
  DashboardExport: 'Dashboard export',
  DbtSync: 'dbt sync',
  GitHubInstallation: 'GitHub installation',
  GitHubRepository: 'GitHub repository',
  UploadTransaction: 'Upload transaction',
  EmbedGroup: 'Embed group',
  EmbedTenant: 'Embed tenant',
  EmbedUser: 'Embed user',
  OAuthIntegration: 'OAuth integration',
  OAuthToken: 'OAuth token',
  OidcTokenConfig: 'OIDC token config',
  NotificationDelivery: 'Notification delivery',
  UserAttribute: 'User attribute',
  Webhook: 'Webhook endpoint',
  WebhookDelivery: 'Webhook delivery',
};

export function notFound(kind: ResourceKind, id: string | number): ApiError {
  const code = KINDS[kind];
  return new ApiError(ERROR_CODES[code].status, code, `${LABELS[kind] ?? kind} ${id} was not found`);
}

/** Whether `err` reports a missing resource of `kind` (for a module that maps one to another). */
export function isNotFound(err: unknown, kind: ResourceKind): boolean {
  return err instanceof ApiError && err.code === KINDS[kind];
}
